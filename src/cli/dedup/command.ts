/**
 * `neardup dedup <input...>`: near-duplicate pairs, clusters, a deduplicated copy, or an annotated copy.
 *
 * Why this file is long: the command's definition (about 30 options, each help text wrapped by the
 * formatter) and the run that reads them; the run's parts live beside it (./output.ts, ./exact.ts, ./against.ts).
 * @module
 */
import { Command, Option } from 'commander';
import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import { heapRoom, streamsByDefault } from '../heap.js';
import type { DedupOptions, DedupResult } from '../../dedup/dedup.js';
import { UsageError } from '../../common/errors.js';
import { TooManyPairsError } from '../../lsh/tooManyPairs.js';
import { tooManyPairsMessage } from '../tooManyPairs.js';
import type { ReadOptions } from '../../io/read/read.js';
import type { OutputSink } from '../../io/write/output.js';
import { refuseAliasedOutputs, type NamedPath } from '../../io/write/alias.js';
import { resolveShards } from '../../io/read/shards.js';
import { isS3Url } from '../../io/s3/client.js';
import path from 'node:path';
import { findDuplicates, PARALLEL_MIN_CHARS } from '../engine.js';
import { loadCorpus, rangedCorpus, spoolStdin, streamCorpus, type Corpus } from '../corpus.js';
import { dedupStream, type StreamDedupExtra } from '../../dedup/streamDedup.js';
import { defaultWorkers } from '../../parallel/signPool.js';
import {
  addEngineOptions,
  addLogOptions,
  addZstdLevelOption,
  engineCliOption,
  markRouteLimits,
  parseCount,
  parsePositiveInt,
  refuseForRoute,
} from '../options.js';
import { engineOption } from '../../engine/options.js';
import { pipelineOptionsFrom, requireOutForJson } from '../pipelineOptions.js';
import { int, ms, Reporter } from '../report.js';
import { runAgainst } from './against.js';
import { autoChoice, needsKinds } from '../../dedup/kinds.js';
import { applyKeep } from '../../cluster/keepValues.js';
import { decideRemoval, summarizeRemoval } from '../../dedup/verifiedGraph.js';
import type { KeepRanking } from '../../cluster/removal.js';
import { keepNeedsValues, parseKeepPolicy, type KeepPolicy } from '../../cluster/keepPolicy.js';
import { rangeableFormat } from '../../io/ranges/lineRanges.js';
import { checkAuditFlags, outputTarget, writeResult, type OutputTarget } from './output.js';
import { checkAuditTarget } from '../../io/write/audit.js';
import { runExact } from './exact.js';
import { printDedupSummary } from './summary.js';
import type { DedupFlags } from './flags.js';
import { inputsSize, severalInputs } from './inputs.js';

export type { OutputMode } from './flags.js';

/** Options of {@link dedupCommand}. */
export interface DedupCommandOptions {
  /** Mark in `--help` what a streamed run, `--exact` and `--against` do not take (default true; a job marks its own route). */
  routeMarks?: boolean;
}

/** The `dedup` command. */
export function dedupCommand(options: DedupCommandOptions = {}): Command {
  const cmd = new Command('dedup')
    .description('find near-duplicate documents in a file, a directory, or standard input (-); several inputs are one corpus, read in the order given')
    .argument(
      '<input...>',
      "TSV, CSV, JSONL, text, id⇥text or Parquet file (.gz/.zst ok), a directory, a quoted glob of shards ('shards/*.jsonl.zst'), or - for stdin; several: one corpus in this order, as neardup job dedup reads them (record files, directories and globs of shards; ids unique across them)",
    );
  addEngineOptions(cmd);
  cmd
    .option('--exact', 'exact duplicates only (equal after --normalize): no shingles, no MinHash, one streaming pass; the fastest mode, same outputs')
    .addOption(engineCliOption(engineOption('verify')!))
    .addOption(
      new Option(
        '--output <mode>',
        'what to write: pairs, clusters (JSONL), dedup (the input without duplicates), annotate (the input with the tags cluster, cluster_size, duplicate_of, similarity, kept)',
      ).choices(['pairs', 'clusters', 'dedup', 'annotate']).default('pairs'),
    )
    .option(
      '-o, --out <file>',
      'write here (atomically: temp file, then rename; .gz/.zst compress) instead of stdout; for --output dedup|annotate of shards or several inputs: a directory, one output shard per input file, named as neardup job dedup names them',
    )
    .option('--out-dir <dir>', 'for --output dedup|annotate of shards: the directory of output shards (--out DIR by the name neardup job uses)')
    .option(
      '--stream',
      `keep the texts on disk and read the input again for each pass (memory: ~130 bytes per document plus ids); default for inputs over a quarter of the heap left (${
        (heapRoom() / 4e9).toFixed(2)
      } GB here), and for plain JSONL/text/TSV files over 16 MB, read in byte ranges (LSH candidates, component clusters)`,
    )
    .option('--no-stream', 'hold every text in memory, whatever the input size')
    .option(
      '--workers <n>',
      `worker threads for signing and verification; 0 = this thread (default: all ${availableParallelism()} cores for inputs over ${
        PARALLEL_MIN_CHARS / 1e6
      } M characters, else 0)`,
      parseCount('workers'),
    )
    .option(
      '--memory-budget <MB>',
      'streaming: megabytes of fingerprint sets held at once while verifying; less memory, more passes over the input (default 1024)',
      parsePositiveInt('--memory-budget', 1 << 20),
    )
    .option('--batch-size <n>', 'streaming: documents per batch sent to a worker (default 1024)', parsePositiveInt('--batch-size', 1 << 20))
    .option(
      '--against <reference>',
      'report (pairs) or drop (--output dedup) or mark (annotate) the documents of <input> that are near duplicates of a document of <reference>; pairs only across the two',
    )
    .option(
      '--tag-prefix <prefix>',
      'for --output annotate: prepended to the names of the tags cluster, cluster_size, duplicate_of, similarity and kept, e.g. nd_ (default: those names, or neardup_<name> when the input already has a field of one of them)',
    )
    .option(
      '--removed <file>',
      'for --output dedup: also write one row per dropped document (id, kept_id, similarity, cluster; with --against also reference_id, reference_source) to <file>, .tsv, .jsonl or .parquet (TSV and JSONL may end in .gz/.zst), atomically',
    )
    .option('--dry-run', 'for --output dedup: print the summary and write only the --removed audit, not the deduplicated copy')
    .addOption(
      new Option('--output-format <format>', 'pairs as tsv (a⇥b⇥similarity, no header), csv or jsonl (default: from --out extension, else tsv)').choices([
        'tsv',
        'csv',
        'jsonl',
      ]),
    );
  addZstdLevelOption(cmd);
  addLogOptions(cmd, 'print a machine-readable summary on stdout (needs --out)');
  if (options.routeMarks ?? true) markRouteLimits(cmd, ['stream', 'exact', 'against']);
  cmd.addHelpText(
    'after',
    `
Output (default: pairs as "a<TAB>b<TAB>similarity" lines, a < b in input order, sorted; ids are
0-based row numbers unless --id/--id-field). With --measure containment, "a<TAB>b<TAB>c" means a
(the document with fewer shingles) is contained in b: c = |A∩B|/|A|; sorted by a. With --exact,
similarity is 1. A summary goes to stderr, with the candidate method that ran.

Examples:
  $ neardup dedup ads.tsv --text 'Title,Short Description'
  $ neardup dedup ads.tsv --text 'Title,Short Description' -k 10 --normalize lowercase-collapse --threshold 0.8 --out pairs.tsv
  $ neardup dedup ads.csv --text body --id ad_id --output dedup --out unique.csv
  $ neardup dedup news.jsonl --text-field title,body --id-field meta.id --output clusters --out clusters.jsonl
  $ neardup dedup rcv1.txt --format idtext --output annotate --out annotated.txt
  $ neardup dedup crawl.parquet --text body --id url --output dedup --out crawl.dedup.parquet
  $ neardup dedup 'shards/*.jsonl.zst' --id id --output dedup --out shards-dedup/
  $ neardup dedup 's3://corpus/crawl/*.jsonl.zst' --id id --output dedup --out-dir s3://corpus/clean/
  $ neardup dedup ads.tsv --text 'Title,Short Description' --exact --output clusters
  $ neardup dedup ads.tsv --text 'Title,Short Description' --measure containment --threshold 0.9
  $ neardup dedup ads.tsv --text 'Title,Short Description' --threshold 0.5 --candidates exact
  $ neardup dedup ads.tsv --text 'Title,Short Description' --candidates sketch --buckets 25
  $ neardup dedup ads.tsv --text 'Title,Short Description' --cluster-mode centre --representative longest --output dedup
  $ neardup dedup news.jsonl --id-field id --keep max:quality --output dedup --out best.jsonl
  $ neardup dedup fineweb-edu/ dclm/ extra.parquet --id id --keep source --output dedup --out clean/
  $ neardup dedup ads.tsv --text 'Title,Short Description' --limit 500
  $ zcat big.tsv.gz | neardup dedup - --format tsv --text text --json --out pairs.tsv
  $ neardup dedup train.jsonl --against test.jsonl --output dedup --out train-clean.jsonl`,
  );
  cmd.action(async (files: string[], flags: DedupFlags) => {
    await runDedup(files, flags);
  });
  return cmd;
}

async function runDedup(args: string[], flags: DedupFlags): Promise<void> {
  const reporter = new Reporter(flags);
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
    readOptions.inputs = await severalInputs(args, readOptions.format ?? 'auto');
    fileArg = readOptions.inputs.name;
  }
  // Before anything is read or written: no output may replace a file of the read set.
  await refuseAliasedOutputs(
    await dedupOutputs(flags, fileArg, outDirGiven, readOptions),
    [...args, ...(flags.against !== undefined ? [flags.against] : [])].map((p) => ({ what: p === flags.against ? '--against' : 'the input', path: p })),
  );
  // --representative first|longest are --keep policies, applied after either route (applyKeep).
  if (options.representative !== 'central') delete options.representative;
  if (flags.against !== undefined) {
    if (flags.stream)
      throw new UsageError('--against holds both inputs in memory: --stream does not apply (use "neardup job dedup --against" for inputs larger than memory)');
    // --against finds MinHash-LSH candidates across the two inputs, verified by Jaccard: its table refuses the other kinds by name.
    refuseForRoute('against', { ...flags });
    return runAgainst(
      {
        file: fileArg,
        against: flags.against,
        output: flags.output,
        out: flags.out,
        pairFormat,
        json: flags.json,
        tagPrefix: flags.tagPrefix,
        removed: flags.removed,
        dryRun: flags.dryRun,
      },
      readOptions,
      options,
      reporter,
    );
  }
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
  let cleanup: (() => Promise<void>) | undefined;
  let sink: OutputSink | undefined;
  let streaming = false;
  try {
    const input = await prepareInput(fileArg, flags, readOptions);
    cleanup = input.cleanup;
    const { file, name } = input;
    if (flags.exact) {
      sink = await runExact({ file, fileArg, name, flags, readOptions, reporter, tStart });
      return;
    }
    streaming = input.stream;
    // Large plain line-format files: the workers read them in byte ranges (same output; the main
    // thread neither parses nor copies the texts), unless --no-stream asks for memory.
    const rangedDefault = !streaming && flags.stream === undefined && fileArg !== '-' && (await rangedByDefault(file, flags, options, readOptions));
    if (rangedDefault) streaming = true;
    // Streamed, the exact join cannot run (it holds every set): auto runs LSH, and after pass 1 the
    // run is refused if auto would have chosen the join for these texts in memory (one answer).
    const autoStreamed = streaming && options.candidates === 'auto' && options.measure !== 'containment';
    if (autoStreamed) options.candidates = 'lsh';
    if (streaming) refuseForStream(flags, options);
    const run: EngineRun = { file, fileArg, name, flags, options, readOptions, reporter };
    let engine: EngineResult;
    try {
      engine = await (streaming ? runStreamed : runInMemory)(run);
    } catch (e) {
      // Past --max-pairs the in-memory route clusters bucket by bucket; the streamed one cannot.
      // (The cluster removal rule only: the verified rule needs every pair in memory too.)
      if (!(rangedDefault && e instanceof TooManyPairsError && options.removal === 'cluster')) throw e;
      reporter.verbose('too many candidate pairs to verify streamed: reading the texts into memory instead');
      streaming = false;
      engine = await runInMemory(run);
    }
    const { corpus, result, target, extra } = engine;
    if (autoStreamed && streaming) {
      const why = (options.verify ?? 'exact') !== 'exact'
        ? { method: 'lsh' as const, reason: `--verify ${options.verify}: the join always scores exactly` }
        : autoChoice('jaccard', result.stats.chars, corpus.count, options.shingle?.kind);
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
    // The keep policy ranks the documents after either route, from one more pass over the input; the
    // removal rule then decides what --output dedup drops.
    let ranking: KeepRanking | undefined;
    if (flags.output !== 'pairs') {
      const keep = options.keep as KeepPolicy | undefined;
      ranking = {};
      if (keep !== undefined) {
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
      }
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
  } catch (e) {
    await sink?.abort();
    if (e instanceof TooManyPairsError) {
      // Streamed, the clusters cannot be built bucket by bucket (the texts are not in memory).
      const clustersOnly = flags.output !== 'pairs' && e.what === 'candidates';
      const hint = !clustersOnly
        ? ''
        : options.removal === 'cluster'
        ? streaming ? ' With --no-stream the clusters are built bucket by bucket in memory instead.' : ''
        : flags.stream
        ? ''
        : ' The default --removal verified needs every verified pair; --removal cluster (one kept per cluster) clusters bucket by bucket in memory instead.';
      throw new UsageError(tooManyPairsMessage(e, flags.output === 'pairs', streaming) + hint);
    }
    throw e;
  } finally {
    await cleanup?.();
  }
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

/**
 * Decides whether to stream, and spools standard input to a temp file when it must be read more
 * than once (dedup/annotate outputs, streaming, --exact): a temp copy keeps memory at one copy of
 * the texts (or none). Sets `readOptions.displayName` so messages still say `<stdin>`.
 */
async function prepareInput(
  fileArg: string,
  flags: DedupFlags,
  readOptions: ReadOptions,
): Promise<{ file: string; name: string; stream: boolean; cleanup: (() => Promise<void>) | undefined }> {
  // Texts held in memory take about their size in the file, or twice that: past what the heap has
  // room for (src/cli/heap.ts), keep them on disk instead.
  const size = readOptions.inputs ? await inputsSize(readOptions.inputs) : await fileSize(fileArg);
  const stream = flags.stream ?? (fileArg !== '-' && streamsByDefault(size));
  // A keep policy that ranks by a value reads the input once more, also for --output clusters.
  const keep = flags.keep ?? (flags.representative === 'longest' ? 'longest' : 'first');
  const twoPass = flags.output === 'dedup' || flags.output === 'annotate' || (flags.output === 'clusters' && keepNeedsValues(parseKeepPolicy(keep)));
  const name = fileArg === '-' ? '<stdin>' : fileArg;
  if (fileArg === '-' && (twoPass || stream || flags.exact)) {
    const spool = await spoolStdin();
    readOptions.displayName = '<stdin>';
    return { file: spool.file, name, stream, cleanup: spool.cleanup };
  }
  return { file: fileArg, name, stream, cleanup: undefined };
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

/** What the two ways of running the near-duplicate search take. */
interface EngineRun {
  file: string;
  fileArg: string;
  name: string;
  flags: DedupFlags;
  options: DedupOptions;
  readOptions: ReadOptions;
  reporter: Reporter;
}

/** What they give back. */
interface EngineResult {
  corpus: Corpus;
  result: DedupResult;
  target: OutputTarget;
  extra: StreamDedupExtra | undefined;
}

/** Progress bars of the sign and verify stages, fed by the engine's onProgress. */
function progressBars(reporter: Reporter): { onProgress: NonNullable<DedupOptions['onProgress']>; startSign: (total: number) => void; stop: () => void } {
  let signBar: ReturnType<Reporter['progress']> | undefined;
  let verifyBar: ReturnType<Reporter['progress']> | undefined;
  return {
    onProgress: (stage, done, total) => {
      if (stage === 'sign') signBar?.update(done);
      else {
        signBar?.stop();
        verifyBar ??= reporter.progress('verify', 'pairs', total);
        verifyBar.update(done);
      }
    },
    startSign: (total) => {
      signBar = reporter.progress('sign', 'docs', total);
    },
    stop: () => {
      signBar?.stop();
      verifyBar?.stop();
    },
  };
}

/** Texts in memory: read them all, then the dedup (worker threads for large inputs). */
async function runInMemory(r: EngineRun): Promise<EngineResult> {
  const { flags, reporter } = r;
  const bars = progressBars(reporter);
  const corpus = await loadCorpus(r.file, r.readOptions, reporter);
  // Before the work: a missing or wrong --out is a usage error now, not after the dedup.
  const target = await outputTarget(flags, r.fileArg, corpus.input);
  bars.startSign(corpus.count);
  const { value: result } = await reporter.stage(
    'dedup',
    () => findDuplicates(corpus.texts, { ...r.options, keep: undefined, workers: flags.workers, onProgress: bars.onProgress }),
    (x) => `${int(x.stats.candidates)} candidates, ${int(x.stats.pairs)} pairs`,
  );
  bars.stop();
  return { corpus, result, target, extra: undefined };
}

/** Texts on disk: the input is read again for each pass. */
async function runStreamed(r: EngineRun): Promise<EngineResult> {
  const { flags, reporter } = r;
  const bars = progressBars(reporter);
  reporter.verbose(`streaming ${r.name}: texts stay on disk, read again for each pass`);
  const ranged = await rangedCorpus(r.file, r.readOptions, reporter);
  if (ranged) reporter.verbose(flags.workers === 0 ? `this thread reads ${r.name} in byte ranges` : `the workers read ${r.name} themselves, in byte ranges`);
  const streamed = ranged ?? (await streamCorpus(r.file, r.readOptions, reporter));
  const corpus = streamed.corpus;
  const target = await outputTarget(flags, r.fileArg, corpus.input);
  // Pass 1 signs while it reads (its own progress bar); the later passes verify.
  const { value: result } = await reporter.stage(
    'dedup',
    () =>
      dedupStream(streamed.source, {
        ...r.options,
        workers: flags.workers ?? defaultWorkers(),
        memoryBudget: flags.memoryBudget === undefined ? undefined : flags.memoryBudget * 2 ** 20,
        batchSize: flags.batchSize,
        onProgress: (st, d, t) => st === 'verify' && bars.onProgress(st, d, t),
      }),
    (x) => `${int(x.stats.candidates)} candidates, ${int(x.stats.pairs)} pairs`,
  );
  bars.stop();
  return { corpus, result, target, extra: (result as DedupResult & { extra: StreamDedupExtra }).extra };
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
