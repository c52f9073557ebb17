/**
 * The run of `neardup dedup`: its flags settled, the input prepared, the near-duplicate search in
 * memory or streamed, the keep policy, the outputs and the summary. Its parts live beside it
 * (./output.ts, ./exact.ts, ./against.ts); the command's definition is ./command.ts.
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { streamsByDefault } from '../heap.js';
import type { DedupOptions, DedupResult } from '../../dedup/dedup.js';
import { UsageError } from '../../common/errors.js';
import { TooManyPairsError } from '../../lsh/tooManyPairs.js';
import { tooManyPairsMessage } from '../tooManyPairs.js';
import type { ReadOptions } from '../../io/read/read.js';
import type { OutputSink } from '../../io/write/output.js';
import type { PairFormat } from '../../io/write/write.js';
import { refuseAliasedOutputs, type NamedPath } from '../../io/write/alias.js';
import { resolveShards } from '../../io/read/shards.js';
import { isS3Url } from '../../io/s3/client.js';
import { PARALLEL_MIN_CHARS } from '../engine.js';
import { removeCopies, spoolInput, type Corpus, type InputCopy } from '../corpus.js';
import { refuseForRoute } from '../options.js';
import { pipelineOptionsFrom, requireOutForJson } from '../pipelineOptions.js';
import { int, ms, Reporter } from '../report.js';
import { runInMemory, runStreamed, type EngineResult, type EngineRun } from './search.js';
import { runAgainst } from './against.js';
import { autoChoice, needsKinds } from '../../dedup/kinds.js';
import { applyKeep } from '../../cluster/keepValues.js';
import { decideRemoval, summarizeRemoval } from '../../dedup/verifiedGraph.js';
import type { KeepRanking } from '../../cluster/removal.js';
import { keepNeedsValues, parseKeepPolicy, type KeepPolicy } from '../../cluster/keepPolicy.js';
import { rangeableFormat } from '../../io/ranges/lineRanges.js';
import { checkAuditFlags, writeResult } from './output.js';
import { checkAuditTarget } from '../../io/write/audit.js';
import { runExact } from './exact.js';
import { printDedupSummary } from './summary.js';
import type { DedupFlags } from './flags.js';
import { inputsSize, severalInputs } from './inputs.js';

/** A dedup run once its flags are settled: what every step after reads. */
interface SettledRun {
  /** The input as named (several inputs: their shard list's name). */
  fileArg: string;
  flags: DedupFlags;
  options: DedupOptions;
  readOptions: ReadOptions;
  pairFormat: PairFormat;
  reporter: Reporter;
}

/** Runs `neardup dedup` on its inputs `args`, as its flags ask. */
export async function runDedup(args: string[], flags: DedupFlags): Promise<void> {
  const reporter = new Reporter(flags);
  // Pipes copied to temp files (the input, several inputs' named pipes, --against's two): removed
  // however the run ends (a signal removes them too, src/cli/corpus.ts).
  const copies: InputCopy[] = [];
  try {
    const run = await settleRun(args, flags, reporter, copies);
    if (flags.against !== undefined) return await againstRoute(run, flags.against, copies);
    await searchRoute(run, copies);
  } finally {
    await removeCopies(copies);
  }
}

/** The near-duplicate search of a settled run (not `--against`), or `--exact`'s; a pipe's copy joins `copies`. */
async function searchRoute(run: SettledRun, copies: InputCopy[]): Promise<void> {
  const { flags, options, reporter } = run;
  // Clusters and deduplicated copies need no pair list: groups of copies then cost O(m), not m².
  options.pairs = flags.output === 'pairs';
  // Word and stopword shingles of short documents are where the exact join is both exact and
  // measured faster than LSH: without --candidates, auto decides there (it keeps LSH for longer
  // documents; char shingles always stay on LSH, docs/duplicate-kinds.md).
  if (
    flags.candidates === undefined && options.candidates === undefined && options.verify === 'exact'
    && (options.shingle?.kind === 'word' || options.shingle?.kind === 'spot')
  ) {
    options.candidates = 'auto';
  }
  const tStart = performance.now();
  let sink: OutputSink | undefined;
  // Read by the error's message: whether the run that failed was streamed.
  const state = { streaming: false };
  try {
    const input = await prepareInput(run.fileArg, flags, run.readOptions, copies);
    if (flags.exact) {
      sink = await runExact({ file: input.file, fileArg: run.fileArg, name: input.name, flags, readOptions: run.readOptions, reporter, tStart });
      return;
    }
    await searchAndWrite(run, input, state, tStart);
  } catch (e) {
    await sink?.abort();
    if (e instanceof TooManyPairsError) throw tooManyPairsUsage(e, flags, options, state.streaming);
    throw e;
  }
}

/**
 * The flags checked and turned into options before anything is read: `--out-dir`, the audit flags,
 * several inputs as one shard list, and no output that replaces a file of the read set.
 */
async function settleRun(args: string[], flags: DedupFlags, reporter: Reporter, copies: InputCopy[]): Promise<SettledRun> {
  const outDirGiven = flags.outDir !== undefined;
  if (flags.outDir !== undefined) {
    if (flags.out !== undefined) throw new UsageError('--out-dir and --out name the same output: give one');
    flags.out = flags.outDir;
  }
  checkAuditFlags(flags);
  if (flags.removed !== undefined) await checkAuditTarget(flags.removed);
  // A dry run writes no output: its --json summary goes to stdout alone.
  if (!flags.dryRun) requireOutForJson(flags);
  const { dedup: options, read: readOptions, pairFormat } = pipelineOptionsFrom(flags);
  let fileArg = args[0]!;
  if (args.length > 1) {
    // --against loads and rewrites its input as one file or one directory (src/cli/dedup/against.ts).
    if (flags.against !== undefined)
      throw new UsageError('--against takes one input in one process: give one file, directory or glob, or run "neardup job dedup A B --against REF"');
    // Every reader of the run (each pass, the keep policy's, the copy's) reads these shards in order.
    readOptions.inputs = await severalInputs(args, readOptions.format ?? 'auto', copies);
    fileArg = readOptions.inputs.name;
  }
  // Before anything is read or written: no output may replace a file of the read set.
  await refuseAliasedOutputs(
    await dedupOutputs(flags, fileArg, outDirGiven, readOptions),
    [...args, ...(flags.against !== undefined ? [flags.against] : [])].map((p) => ({ what: p === flags.against ? '--against' : 'the input', path: p })),
  );
  // --representative first|longest are --keep policies, applied after either route (applyKeep).
  if (options.representative !== 'central') delete options.representative;
  return { fileArg, flags, options, readOptions, pairFormat, reporter };
}

/** `--against <reference>`: pairs across the two inputs, both in memory (./against.ts). */
async function againstRoute(run: SettledRun, against: string, copies: InputCopy[]): Promise<void> {
  const { flags } = run;
  if (flags.stream)
    throw new UsageError('--against holds both inputs in memory: --stream does not apply (use "neardup job dedup --against" for inputs larger than memory)');
  // --against finds MinHash-LSH candidates across the two inputs, verified by Jaccard: its table refuses the other kinds by name.
  refuseForRoute('against', { ...flags });
  return runAgainst(
    {
      file: run.fileArg,
      against,
      output: flags.output,
      out: flags.out,
      pairFormat: run.pairFormat,
      json: flags.json,
      tagPrefix: flags.tagPrefix,
      removed: flags.removed,
      dryRun: flags.dryRun,
      copies,
    },
    run.readOptions,
    run.options,
    run.reporter,
  );
}

/** The near-duplicate search (in memory or streamed), the keep policy and removal rule, the outputs and the summary. */
async function searchAndWrite(run: SettledRun, input: PreparedInput, state: { streaming: boolean }, tStart: number): Promise<void> {
  const { fileArg, flags, options, readOptions, reporter } = run;
  const { file, name } = input;
  state.streaming = input.stream;
  // Large plain line-format files: the workers read them in byte ranges (same output; the main
  // thread neither parses nor copies the texts), unless --no-stream asks for memory.
  const rangedDefault = !state.streaming && flags.stream === undefined && fileArg !== '-' && (await rangedByDefault(file, flags, options, readOptions));
  if (rangedDefault) state.streaming = true;
  // Streamed, the exact join cannot run (it holds every set): auto runs LSH, and after pass 1 the
  // run is refused if auto would have chosen the join for these texts in memory (one answer).
  const autoStreamed = state.streaming && options.candidates === 'auto' && options.measure !== 'containment';
  if (autoStreamed) options.candidates = 'lsh';
  if (state.streaming) refuseForStream(flags, options);
  const engineRun: EngineRun = { file, fileArg, name, flags, options, readOptions, reporter };
  let engine: EngineResult;
  try {
    engine = await (state.streaming ? runStreamed : runInMemory)(engineRun);
  } catch (e) {
    // Past --max-pairs the in-memory route clusters bucket by bucket; the streamed one cannot.
    // (The cluster removal rule only: the verified rule needs every pair in memory too.)
    if (!(rangedDefault && e instanceof TooManyPairsError && options.removal === 'cluster')) throw e;
    reporter.verbose('too many candidate pairs to verify streamed: reading the texts into memory instead');
    state.streaming = false;
    engine = await runInMemory(engineRun);
  }
  const { corpus, result, target, extra } = engine;
  if (autoStreamed && state.streaming) settleAutoStreamed(run, result, corpus.count);
  // The keep policy ranks the documents after either route, from one more pass over the input; the
  // removal rule then decides what --output dedup drops.
  let ranking: KeepRanking | undefined;
  if (flags.output !== 'pairs') {
    ranking = await rankForKeep(run, file, corpus, result);
    decideRemoval(result, options.removal ?? 'verified', ranking);
  }
  const s = result.stats;
  reporter.verbose(
    `stages: shingle ${ms(s.timings.shingle)}, sign ${ms(s.timings.sign)}, lsh ${ms(s.timings.lsh)}, verify ${ms(s.timings.verify)}, cluster ${
      ms(s.timings.cluster)
    }`,
  );
  const tw = performance.now();
  // The copy names the input itself (displayName), so the spool's name does not leak into it.
  const { written, removed, lowestSimilarity } = await writeResult({ flags, file, corpus, result, target, read: readOptions }, { options, reporter });
  const removal = ranking ? summarizeRemoval(result, ranking, lowestSimilarity) : undefined;
  const writeMs = performance.now() - tw;
  reporter.verbose(`write: ${ms(writeMs)} (${int(written)} records to ${flags.out ?? '<stdout>'})`);
  printDedupSummary(flags, reporter, { name, corpus, options, result, extra, written, writeMs, total: performance.now() - tStart, removed, removal });
}

/**
 * A streamed run whose auto ran LSH: refused if auto would have chosen the exact join for these
 * texts in memory, else its stats say why LSH ran.
 */
function settleAutoStreamed(run: SettledRun, result: DedupResult, count: number): void {
  const { flags, options } = run;
  const why = (options.verify ?? 'exact') !== 'exact'
    ? { method: 'lsh' as const, reason: `--verify ${options.verify}: the join always scores exactly` }
    : autoChoice('jaccard', result.stats.chars, count, options.shingle?.kind);
  if (why.method === 'exact') {
    throw new UsageError(
      `--candidates auto (the default for ${options.shingle?.kind} shingles) chooses the exact join for this input (${why.reason}), which needs the texts in memory, but the run is streamed${
        flags.stream ? ' (--stream)' : ' (the input is over a quarter of the heap)'
      }: add --no-stream, or --candidates lsh to run LSH`,
    );
  }
  result.stats.candidateMethod = 'lsh';
  result.stats.candidateReason = why.reason;
}

/** The documents ranked by the keep policy (none given: an empty ranking), read from the input once more when the policy ranks by a value. */
async function rankForKeep(run: SettledRun, file: string, corpus: Corpus, result: DedupResult): Promise<KeepRanking> {
  const { readOptions, reporter } = run;
  const keep = run.options.keep as KeepPolicy | undefined;
  let ranking: KeepRanking = {};
  if (keep === undefined) return ranking;
  const rule = parseKeepPolicy(keep);
  // A policy that ranks by a value reads the input once more: a pass as long as the others, with its bar.
  const bar = keepNeedsValues(rule) ? reporter.progress('keep', 'docs', corpus.count) : undefined;
  try {
    ({ value: ranking } = await reporter.stage(
      'keep',
      () =>
        applyKeep(
          {
            file,
            read: corpus.input.shards ? readOptions : { ...readOptions, format: corpus.input.format },
            onProgress: bar && ((done) => bar.update(done)),
          },
          result.clusters,
          corpus.count,
          rule,
        ),
      () => `--keep ${keep}`,
    ));
  } finally {
    bar?.stop();
  }
  return ranking;
}

/** Too many candidate or verified pairs, as a usage error that says what to change. */
function tooManyPairsUsage(e: TooManyPairsError, flags: DedupFlags, options: DedupOptions, streaming: boolean): UsageError {
  // Streamed, the clusters cannot be built bucket by bucket (the texts are not in memory).
  const clustersOnly = flags.output !== 'pairs' && e.what === 'candidates';
  const hint = !clustersOnly
    ? ''
    : options.removal === 'cluster'
    ? streaming ? ' With --no-stream the clusters are built bucket by bucket in memory instead.' : ''
    : flags.stream
    ? ''
    : ' The default --removal verified needs every verified pair; --removal cluster (one kept per cluster) clusters bucket by bucket in memory instead.';
  return new UsageError(tooManyPairsMessage(e, flags.output === 'pairs', streaming) + hint);
}

/**
 * What a dedup run writes, for the alias check: `--removed`, and `--out` as a file, or as the
 * directory of output shards of a sharded input (`--out-dir`), or as the directory an input file's
 * copy goes into (its name there).
 */
async function dedupOutputs(flags: DedupFlags, fileArg: string, outDirGiven: boolean, readOptions: ReadOptions): Promise<NamedPath[]> {
  const outs: NamedPath[] = [{ what: '--removed', path: flags.removed }];
  const out = flags.out;
  if (out === undefined || out === '-' || flags.dryRun) return outs;
  const what = outDirGiven ? '--out-dir' : '--out';
  const copies = flags.output === 'dedup' || flags.output === 'annotate';
  const sharded = copies && fileArg !== '-'
    && (readOptions.inputs !== undefined || isS3Url(fileArg)
      || (await resolveShards(fileArg, readOptions.format ?? 'auto').catch(() => undefined)) !== undefined);
  if (outDirGiven || sharded) outs.push({ what, path: out, dir: true });
  else if (copies && !isS3Url(out) && (await stat(out).catch(() => undefined))?.isDirectory())
    outs.push({ what, path: path.join(out, path.basename(fileArg)) });
  else outs.push({ what, path: out });
  return outs;
}

/**
 * A streamed run refuses (by the stream route's table) the kinds of duplicates that need the texts
 * in memory: those the engine options still ask for once first|longest became --keep policies and
 * auto was resolved; the other options as given.
 */
function refuseForStream(flags: DedupFlags, options: DedupOptions): void {
  const fingerprintBits = options.fingerprintBits === undefined ? undefined : String(options.fingerprintBits);
  refuseForRoute('stream', {
    ...flags,
    measure: options.measure,
    candidates: options.candidates,
    clusterMode: options.clusters,
    representative: options.representative,
    fingerprintBits,
  });
}

/** The input a run reads: its file (a pipe's copy), its name in messages, whether to stream. */
interface PreparedInput {
  file: string;
  name: string;
  stream: boolean;
}

/**
 * Copies a pipe given as the one input (into `copies`, for the caller to remove) and decides
 * whether to stream. Standard input is copied when it must be read more than once (dedup/annotate
 * outputs, a keep policy that ranks by a value, --stream, --exact): a temp copy keeps memory at one
 * copy of the texts (or none). A named pipe (`<(zcat x.gz)`) is copied whatever the output: the
 * readers sniff a format and read ranges by position; the copy is then sized and streamed as a file
 * is. Sets `readOptions.displayName` so messages name the pipe as given (`<stdin>` for `-`).
 */
async function prepareInput(fileArg: string, flags: DedupFlags, readOptions: ReadOptions, copies: InputCopy[]): Promise<PreparedInput> {
  // A keep policy that ranks by a value reads the input once more, also for --output clusters.
  const keep = flags.keep ?? (flags.representative === 'longest' ? 'longest' : 'first');
  const twoPass = flags.output === 'dedup' || flags.output === 'annotate' || (flags.output === 'clusters' && keepNeedsValues(parseKeepPolicy(keep)));
  const several = readOptions.inputs;
  const copy = several ? undefined : await spoolInput(fileArg, { stdin: twoPass || flags.stream === true || flags.exact === true, copies });
  if (copy) readOptions.displayName = copy.displayName;
  const file = copy?.file ?? fileArg;
  // Texts held in memory take about their size in the file, or twice that: past what the heap has
  // room for (src/cli/heap.ts), keep them on disk instead. Standard input streams only if asked.
  const size = several ? await inputsSize(several) : await fileSize(file);
  const stream = flags.stream ?? (fileArg !== '-' && streamsByDefault(size));
  return { file, name: copy?.displayName ?? (fileArg === '-' ? '<stdin>' : fileArg), stream };
}

/**
 * Whether to stream an input that fits in memory: yes for a plain line-format file that can be read
 * in byte ranges (by the workers, or by this thread without them), large enough for workers ({@link PARALLEL_MIN_CHARS} bytes), when nothing
 * asked needs the texts in memory (LSH candidates, components, no --limit).
 */
async function rangedByDefault(file: string, flags: DedupFlags, options: DedupOptions, readOptions: ReadOptions): Promise<boolean> {
  // Also without workers: this thread then reads the ranges, faster than the sequential reader and in
  // a third of the memory (bench/RESULTS.md, round 6).
  if (readOptions.limit !== undefined || readOptions.raw || readOptions.inputs) return false;
  if ((options.candidates !== undefined && options.candidates !== 'lsh') || needsKinds(options)) return false;
  if ((await fileSize(file)) < PARALLEL_MIN_CHARS) return false;
  return rangeableFormat(file, readOptions.format ?? 'auto', readOptions.tsvQuotes) !== undefined;
}

/** Size of a file in bytes (0 for a directory or when it cannot be read: reading then says why). */
async function fileSize(file: string): Promise<number> {
  try {
    const st = await stat(file);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}
