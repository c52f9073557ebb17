/**
 * `neardup dedup <input>`: near-duplicate pairs, clusters, a deduplicated copy, or an annotated copy.
 * @module
 */
import { Command, Option } from 'commander';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import type { DedupResult } from '../../dedup/dedup.js';
import { UsageError } from '../../io/errors.js';
import { TooManyPairsError } from '../../lsh/tooManyPairs.js';
import { tooManyPairsMessage } from '../tooManyPairs.js';
import { openInput } from '../../io/read.js';
import { openOutput, type OutputSink } from '../../io/output.js';
import { refuseAliasedOutputs } from '../../io/alias.js';
import { formatCluster, formatPair, pairHeader, type PairFormat } from '../../io/write.js';
import { rewriteFile, rewriteRecords, rewriteShards, type RowVerdict } from '../../io/rewrite.js';
import type { InputRecord } from '../../io/record.js';
import { findDuplicates, PARALLEL_MIN_CHARS } from '../engine.js';
import { idOf, loadCorpus, spoolStdin, streamCorpus, type Corpus } from '../corpus.js';
import { dedupStream, type StreamDedupExtra } from '../../dedup/streamDedup.js';
import { defaultWorkers } from '../../parallel/signPool.js';
import { addEngineOptions, addLogOptions, dedupOptionsFrom, parseCount, pairFormatOf, readOptionsFrom, type EngineFlags, type InputFlags } from '../options.js';
import { int, ms, Reporter, type LogFlags } from '../report.js';
import { runAgainst } from '../against.js';
import { DEFAULT_SKETCH_BUCKETS, needsKinds } from '../../dedup/kinds.js';
import { exactDuplicates } from '../../dedup/exactDups.js';
import type { ReadOptions } from '../../io/read.js';

/** What `dedup` writes. */
export type OutputMode = 'pairs' | 'clusters' | 'dedup' | 'annotate';

interface DedupFlags extends InputFlags, EngineFlags, LogFlags {
  exact?: boolean;
  workers?: number;
  stream?: boolean;
  output: OutputMode;
  out?: string;
  outputFormat?: PairFormat;
  against?: string;
}

/** Writes the chosen output; returns the number of records written. */
async function writeOutput(flags: DedupFlags, file: string, corpus: Corpus, result: DedupResult, sink: OutputSink | undefined, target: OutputTarget): Promise<number> {
  const id = (i: number): string | number => idOf(corpus, i);
  if (flags.output === 'pairs') {
    const fmt = pairFormatOf(flags);
    const withEstimate = result.pairs.some((p) => p.estimate !== undefined);
    await sink!.write(pairHeader(fmt, withEstimate));
    for (const p of result.pairs) await sink!.write(formatPair(fmt, id(p.a), id(p.b), p.similarity, p.estimate));
    return result.pairs.length;
  }
  if (flags.output === 'clusters') {
    for (let c = 0; c < result.clusters.length; c++) {
      const cl = result.clusters[c]!;
      await sink!.write(formatCluster(c, cl.members.map(id), id(cl.representative ?? cl.members[0]!)));
    }
    return result.clusters.length;
  }
  // dedup / annotate: a second streaming pass over the input, in the same order as the first.
  const n = corpus.count;
  const clusterNo = new Int32Array(n).fill(-1);
  result.clusters.forEach((c, k) => {
    for (const m of c.members) clusterNo[m] = k;
  });
  let i = 0;
  const name = corpus.input.name;
  const verdict = (r: InputRecord): RowVerdict => {
    if (i >= n || r.row !== corpus.rows[i]) throw new Error(`${name} changed while it was being read (record ${i})`);
    const c = clusterNo[i]!;
    const rep = c >= 0 ? (result.clusters[c]!.representative ?? result.clusters[c]!.members[0]!) : i;
    const v: RowVerdict = { keep: rep === i, cluster: c >= 0 ? c : undefined, duplicateOf: rep !== i ? String(id(rep)) : undefined };
    i++;
    return v;
  };
  const mode = flags.output;
  // Sharded input: a directory of output shards; Parquet: a Parquet file; both need --out.
  const readOptions = { ...readOptionsFrom(flags), displayName: corpus.input.shards ? undefined : name, raw: true };
  let written: number;
  if (target.kind === 'shards') {
    written = await rewriteShards(corpus.input.shards!, target.path, readOptions, mode, verdict);
  } else if (target.kind === 'file') {
    written = await rewriteFile(file, target.path, { ...readOptions, format: corpus.input.format }, mode, verdict);
  } else {
    const input = await openInput(file, { ...readOptions, format: corpus.input.format });
    written = await rewriteRecords(input, sink!, mode, verdict);
  }
  if (i !== n) throw new Error(`${name} changed while it was being read (${i} records instead of ${n})`);
  return written;
}

/** Where `dedup`/`annotate` output goes: the sink (stdout or a text file), a file rewritten in place of a sink (Parquet), or a directory of shards. */
type OutputTarget = { kind: 'sink' } | { kind: 'file'; path: string } | { kind: 'shards'; path: string };

/**
 * Chooses where `--output dedup|annotate` writes. A sharded input (glob or directory of shards)
 * writes one output shard per input shard into `--out DIR`; a Parquet input writes a Parquet file
 * (`--out FILE.parquet`, or `--out DIR` for DIR/<input name>); an existing directory as `--out` gets
 * the input's file name; anything else goes to the sink as before.
 */
async function outputTarget(flags: DedupFlags, fileArg: string, input: Corpus['input']): Promise<OutputTarget> {
  if (flags.output !== 'dedup' && flags.output !== 'annotate') return { kind: 'sink' };
  const out = flags.out === '-' ? undefined : flags.out;
  if (input.shards) {
    if (!out) throw new UsageError(`${input.name} is ${input.shards.shards.length} shard(s): --output ${flags.output} writes one output shard per input shard, so it needs --out DIR`);
    return { kind: 'shards', path: out };
  }
  const st = out ? await stat(out).catch(() => undefined) : undefined;
  if (input.format === 'parquet') {
    if (!out) throw new UsageError(`--output ${flags.output} of a Parquet input writes Parquet, so it needs --out FILE.parquet (or --out DIR)`);
    const target = st?.isDirectory() ? path.join(out, path.basename(fileArg)) : out;
    if (!st?.isDirectory() && !/\.(parquet|pq)$/i.test(out)) throw new UsageError(`--out ${out}: the output of a Parquet input is Parquet, so name it .parquet`);
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  if (st?.isDirectory() && fileArg !== '-') {
    // --out DIR writes DIR/<input name>: DIR must not be the input's own directory.
    const target = path.join(out!, path.basename(fileArg));
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  return { kind: 'sink' };
}

/** The `dedup` command. */
export function dedupCommand(): Command {
  const cmd = new Command('dedup')
    .description('find near-duplicate documents in a file, a directory, or standard input (-)')
    .argument('<input>', "TSV, CSV, JSONL, text, id⇥text or Parquet file (.gz/.zst ok), a directory, a quoted glob of shards ('shards/*.jsonl.zst'), or - for stdin");
  addEngineOptions(cmd);
  cmd
    .option('--exact', 'exact duplicates only (equal after --normalize): no shingles, no MinHash, one streaming pass; the fastest mode, same outputs')
    .addOption(new Option('--verify <mode>', 'check candidates by exact Jaccard, by the MinHash estimate, or not at all').choices(['exact', 'estimate', 'none']).default('exact'))
    .addOption(new Option('--output <mode>', 'what to write: pairs, clusters (JSONL), dedup (the input without duplicates), annotate (the input with cluster and duplicate_of)').choices(['pairs', 'clusters', 'dedup', 'annotate']).default('pairs'))
    .option('-o, --out <file>', 'write here (atomically: temp file, then rename; .gz/.zst compress) instead of stdout; for --output dedup|annotate of shards: a directory, one output shard per input shard')
    .option('--stream', `keep the texts on disk and read the input again for each pass (memory: ~130 bytes per document plus ids); default for inputs over a quarter of the heap limit (${(getHeapStatistics().heap_size_limit / 4e9).toFixed(1)} GB here)`)
    .option('--no-stream', 'hold every text in memory, whatever the input size')
    .option('--workers <n>', `worker threads for signing and verification; 0 = this thread (default: all ${availableParallelism()} cores for inputs over ${PARALLEL_MIN_CHARS / 1e6} M characters, else 0)`, parseCount('workers'))
    .option('--against <reference>', 'report (pairs) or drop (--output dedup) or mark (annotate) the documents of <input> that are near duplicates of a document of <reference>; pairs only across the two')
    .addOption(new Option('--output-format <format>', 'pairs as tsv (a⇥b⇥similarity, no header), csv or jsonl (default: from --out extension, else tsv)').choices(['tsv', 'csv', 'jsonl']));
  addLogOptions(cmd, 'print a machine-readable summary on stdout (needs --out)');
  cmd.addHelpText(
    'after',
    `
Output (default: pairs as "a<TAB>b<TAB>similarity" lines, a < b in input order, sorted; ids are
0-based row numbers unless --id/--id-field). With --measure containment, "a<TAB>b<TAB>c" means a
(the document with fewer shingles) is contained in b: c = |A∩B|/|A|; sorted by a. With --exact,
similarity is 1. A summary goes to stderr, with the candidate method that ran.

Examples:
  $ neardup dedup ads.tsv --text 'Title,Short Description'
  $ neardup dedup ads.tsv --text 'Title,Short Description' -k 10 --normalize seed000 --threshold 0.8 --out pairs.tsv
  $ neardup dedup ads.csv --text body --id ad_id --output dedup --out unique.csv
  $ neardup dedup news.jsonl --text-field title,body --id-field meta.id --output clusters --out clusters.jsonl
  $ neardup dedup rcv1.txt --format idtext --output annotate --out annotated.txt
  $ neardup dedup crawl.parquet --text body --id url --output dedup --out crawl.dedup.parquet
  $ neardup dedup 'shards/*.jsonl.zst' --id id --output dedup --out shards-dedup/
  $ neardup dedup ads.tsv --text 'Title,Short Description' --exact --output clusters
  $ neardup dedup ads.tsv --text 'Title,Short Description' --measure containment --threshold 0.9
  $ neardup dedup ads.tsv --text 'Title,Short Description' --threshold 0.5 --candidates exact
  $ neardup dedup ads.tsv --text 'Title,Short Description' --candidates sketch --buckets 25
  $ neardup dedup ads.tsv --text 'Title,Short Description' --cluster-mode centre --representative longest --output dedup
  $ neardup dedup ads.tsv --text 'Title,Short Description' --limit 500
  $ zcat big.tsv.gz | neardup dedup - --format tsv --text text --json --out pairs.tsv
  $ neardup dedup train.jsonl --against test.jsonl --output dedup --out train-clean.jsonl`,
  );
  cmd.action(async (file: string, flags: DedupFlags) => {
    await runDedup(file, flags);
  });
  return cmd;
}

async function runDedup(fileArg: string, flags: DedupFlags): Promise<void> {
  const reporter = new Reporter(flags);
  if (flags.json && (flags.out === undefined || flags.out === '-')) throw new UsageError('--json prints the summary on stdout, so the output needs --out <file>');
  if (flags.outputFormat && flags.output !== 'pairs') throw new UsageError('--output-format applies to --output pairs only');
  const options = dedupOptionsFrom(flags);
  if (flags.against !== undefined) {
    if (flags.stream) throw new UsageError('--against holds both inputs in memory: --stream does not apply (use "neardup job dedup --against" for inputs larger than memory)');
    return runAgainst({ file: fileArg, against: flags.against, output: flags.output, out: flags.out, pairFormat: pairFormatOf(flags), json: flags.json }, readOptionsFrom(flags), options, reporter);
  }
  // Clusters and deduplicated copies need no pair list: groups of copies then cost O(m), not m².
  options.pairs = flags.output === 'pairs';
  const readOptions = readOptionsFrom(flags);
  await refuseAliasedOutputs([{ what: '--out', path: flags.out }], [{ what: 'the input', path: fileArg }]);
  const tStart = performance.now();
  let file = fileArg;
  let cleanup: (() => Promise<void>) | undefined;
  const twoPass = flags.output === 'dedup' || flags.output === 'annotate';
  let sink: OutputSink | undefined;
  let streaming = false;
  try {
    // Texts held in memory take about their size in the file, or twice that: past a quarter of the
    // heap limit, keep them on disk instead.
    const stream = flags.stream ?? (fileArg !== '-' && (await fileSize(fileArg)) > getHeapStatistics().heap_size_limit / 4);
    if (fileArg === '-' && (twoPass || stream)) {
      // These read the input more than once; a temp copy keeps memory at one copy of the texts (or none).
      const spool = await spoolStdin();
      file = spool.file;
      cleanup = spool.cleanup;
      readOptions.displayName = '<stdin>';
    }
    const name = fileArg === '-' ? '<stdin>' : fileArg;
    if (flags.exact) {
      if (fileArg === '-' && !cleanup) {
        const spool = await spoolStdin();
        file = spool.file;
        cleanup = spool.cleanup;
        readOptions.displayName = '<stdin>';
      }
      sink = await runExact(file, fileArg, name, flags, readOptions, reporter, tStart);
      return;
    }
    if (stream && options.candidates === 'auto' && options.measure !== 'containment') options.candidates = 'lsh';
    if (stream && needsKinds(options)) {
      throw new UsageError('--measure containment, --candidates exact/sketch, --cluster-mode centre and --representative need the texts in memory: add --no-stream');
    }
    let corpus: Corpus;
    let signBar: ReturnType<Reporter['progress']> | undefined;
    let verifyBar: ReturnType<Reporter['progress']> | undefined;
    const onProgress = (stage: 'sign' | 'verify', done: number, total: number): void => {
      if (stage === 'sign') signBar?.update(done);
      else {
        signBar?.stop();
        verifyBar ??= reporter.progress('verify', 'pairs', total);
        verifyBar.update(done);
      }
    };
    let result: DedupResult;
    let target: OutputTarget;
    let extra: StreamDedupExtra | undefined;
    if (stream) {
      streaming = true;
      reporter.verbose(`streaming ${name}: texts stay on disk, read again for each pass`);
      const streamed = await streamCorpus(file, readOptions, reporter);
      corpus = streamed.corpus;
      target = await outputTarget(flags, fileArg, corpus.input);
      // Pass 1 signs while it reads (its own progress bar); the later passes verify.
      ({ value: result } = await reporter.stage(
        'dedup',
        () => dedupStream(streamed.source, { ...options, workers: flags.workers ?? defaultWorkers(), onProgress: (st, d, t) => st === 'verify' && onProgress(st, d, t) }),
        (r) => `${int(r.stats.candidates)} candidates, ${int(r.stats.pairs)} pairs`,
      ));
      extra = (result as DedupResult & { extra: StreamDedupExtra }).extra;
    } else {
      corpus = await loadCorpus(file, readOptions, reporter);
      // Before the work: a missing or wrong --out is a usage error now, not after the dedup.
      target = await outputTarget(flags, fileArg, corpus.input);
      signBar = reporter.progress('sign', 'docs', corpus.count);
      ({ value: result } = await reporter.stage(
        'dedup',
        () => findDuplicates(corpus.texts, { ...options, workers: flags.workers, onProgress }),
        (r) => `${int(r.stats.candidates)} candidates, ${int(r.stats.pairs)} pairs`,
      ));
    }
    const n = corpus.count;
    signBar?.stop();
    verifyBar?.stop();
    const s = result.stats;
    reporter.verbose(
      `stages: shingle ${ms(s.timings.shingle)}, sign ${ms(s.timings.sign)}, lsh ${ms(s.timings.lsh)}, verify ${ms(s.timings.verify)}, cluster ${ms(s.timings.cluster)}`,
    );
    const tw = performance.now();
    if (target.kind === 'sink') sink = await openOutput(flags.out);
    const written = await writeOutput(flags, file, corpus, result, sink, target);
    await sink?.close();
    sink = undefined;
    const writeMs = performance.now() - tw;
    reporter.verbose(`write: ${ms(writeMs)} (${int(written)} records to ${flags.out ?? '<stdout>'})`);
    const total = performance.now() - tStart;
    const dupDocs = result.clusters.reduce((a, c) => a + c.members.length - 1, 0);
    const inCluster = result.clusters.reduce((a, c) => a + c.members.length, 0);
    const b = result.bands;
    const sh = options.shingle!;
    const k = sh.k ?? (sh.kind === 'char' ? 5 : 3);
    if (flags.json) {
      reporter.json({
        command: 'dedup',
        input: { path: name, format: corpus.input.format, docs: n, emptyDocs: s.emptyDocs, skipped: corpus.input.skips.count, bytes: corpus.bytes },
        options: {
          threshold: options.threshold,
          shingle: { kind: sh.kind, k, normalize: flags.normalize, multiset: !!flags.multiset },
          minhash: { method: flags.method, numPerm: flags.numPerm, seed: flags.seed },
          verify: options.verify,
          measure: s.measure ?? 'jaccard',
          candidates: s.candidateMethod ?? 'lsh',
          ...(s.candidateReason ? { candidatesReason: s.candidateReason } : {}),
          fingerprintBits: options.fingerprintBits ?? 32,
          clusterMode: options.clusters ?? 'components',
          representative: options.representative ?? 'first',
        },
        lsh: { bands: b.bands, rows: b.rows, rule: b.rule, recallAtThreshold: b.recallAtThreshold, falsePositiveArea: b.falsePositiveArea, falseNegativeArea: b.falseNegativeArea },
        candidates: s.candidates,
        pairs: s.pairs,
        counts: s.counts,
        copies: s.copies,
        clusters: s.clusters,
        docsInClusters: inCluster,
        duplicates: dupDocs,
        output: { mode: flags.output, path: flags.out, records: written, format: flags.output === 'pairs' ? pairFormatOf(flags) : undefined },
        timings: { read: corpus.readMs, ...s.timings, write: writeMs, total },
        ...(extra ? { stream: { passes: extra.passes, indexBytes: extra.indexBytes, peakSetBytes: extra.peakSetBytes } } : {}),
      });
      return;
    }
    const skipped = corpus.input.skips.count;
    reporter.summary(`docs        ${int(n)} from ${name} [${corpus.input.format}]: ${int(s.emptyDocs)} empty${skipped ? `, ${int(skipped)} invalid skipped` : ''}`);
    reporter.summary(
      `shingles    ${sh.kind} k=${k}, normalize ${flags.normalize}${flags.multiset ? ', multiset' : ''}${options.fingerprintBits === 64 ? ', 64-bit fingerprints' : ''}; MinHash ${flags.method}, ${flags.numPerm} hashes, seed ${flags.seed}`,
    );
    const method = s.candidateMethod ?? 'lsh';
    const measure = s.measure ?? 'jaccard';
    if (s.candidateReason) reporter.summary(`auto        ${method === 'exact' ? 'exact join' : method} (chosen by --candidates auto): ${s.candidateReason}`);
    if (method === 'lsh') {
      reporter.summary(
        `lsh         ${b.bands} bands × ${b.rows} rows (${b.bands * b.rows} of ${b.numPerm} hashes): P(${b.threshold}) = ${b.recallAtThreshold.toFixed(4)}, the expected recall at the threshold${b.rule === 'best-effort' ? ' (best effort: the recall target is out of reach)' : ''}`,
      );
    } else if (method === 'exact') {
      reporter.summary(`method      exact prefix-filtering join${flags.candidates === 'auto' ? ' (chosen by --candidates auto)' : ''}: every pair with ${measure} ≥ ${options.threshold}, no misses`);
    } else {
      reporter.summary(`method      seed 002 sketch: ${options.buckets ?? DEFAULT_SKETCH_BUCKETS} buckets (hash mod n), documents sharing a bucket minimum are candidates`);
    }
    if (s.counts === 'verified') {
      reporter.summary(`candidates  ${int(s.candidates)} verified (more than --max-pairs candidate pairs: clustered bucket by bucket, skipping pairs already in one cluster)`);
      reporter.summary(`pairs       ${int(s.pairs)} joined two clusters (${options.verify === 'none' ? 'unverified candidates' : `${options.verify} Jaccard ≥ ${options.threshold}`})`);
    } else {
      reporter.summary(`candidates  ${int(s.candidates)}`);
      reporter.summary(`pairs       ${int(s.pairs)} (${options.verify === 'none' ? 'unverified candidates' : measure === 'containment' ? `exact containment ≥ ${options.threshold}, smaller document first` : `${options.verify} Jaccard ≥ ${options.threshold}`})`);
    }
    if (s.copies > 0 && flags.verbose) reporter.summary(`copies      ${int(s.copies)} documents identical to an earlier one (checked once)`);
    reporter.summary(
      `clusters    ${int(s.clusters)}, holding ${int(inCluster)} docs (${int(dupDocs)} duplicates beyond one per cluster)${options.clusters === 'centre' ? '; centre clusters' : ''}${(options.representative ?? 'first') !== 'first' ? `; representative: ${options.representative}` : ''}`,
    );
    if (extra) {
      reporter.summary(
        `stream      ${extra.passes} passes over the input; in memory: index ${(extra.indexBytes / 1e6).toFixed(1)} MB (${Math.round(extra.indexBytes / Math.max(n, 1))} bytes/doc), sets at most ${(extra.peakSetBytes / 1e6).toFixed(1)} MB`,
      );
    }
    reporter.summary(
      `time        ${extra ? `read, shingle and sign ${ms(s.timings.sign)}` : `read ${ms(corpus.readMs)} · shingle ${ms(s.timings.shingle)} · sign ${ms(s.timings.sign)}`} · ${method === 'lsh' ? 'lsh' : method === 'exact' ? 'join' : 'sketch'} ${ms(s.timings.lsh)} · verify ${ms(s.timings.verify)} · cluster ${ms(s.timings.cluster)} · write ${ms(writeMs)} · total ${ms(total)}`,
    );
    if (flags.verbose) {
      reporter.summary(`buckets     ${int(s.buckets.sharedBuckets)} shared, ${int(s.buckets.repeatedBuckets)} repeated (skipped), largest ${int(s.buckets.largestBucket)} docs`);
      reporter.summary(`throughput  ${((corpus.bytes / 1e3) / Math.max(total, 1e-3)).toFixed(1)} MB/s, ${int((n * 1000) / Math.max(total, 1e-3))} docs/s overall`);
    }
    if (flags.out) reporter.summary(`output      ${flags.output}: ${int(written)} records → ${path.normalize(flags.out)}`);
  } catch (e) {
    await sink?.abort();
    if (e instanceof TooManyPairsError) {
      // Streamed, the clusters cannot be built bucket by bucket (the texts are not in memory).
      const hint = streaming && flags.output !== 'pairs' && e.what === 'candidates' ? ' With --no-stream the clusters are built bucket by bucket in memory instead.' : '';
      throw new UsageError(tooManyPairsMessage(e, flags.output === 'pairs') + hint);
    }
    throw e;
  } finally {
    await cleanup?.();
  }
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

/**
 * `dedup --exact`: one streaming pass that hashes each normalized text (texts stay on disk), then
 * the chosen output. Returns undefined once the output is closed (the sink to abort on failure is
 * handled inside).
 */
async function runExact(file: string, fileArg: string, name: string, flags: DedupFlags, readOptions: ReadOptions, reporter: Reporter, tStart: number): Promise<undefined> {
  if (flags.measure === 'containment' || flags.candidates !== undefined || flags.buckets !== undefined || (flags.clusterMode ?? 'components') !== 'components' || (flags.representative ?? 'first') !== 'first') {
    throw new UsageError('--exact finds identical documents: it takes no --measure, --candidates, --buckets, --cluster-mode or --representative');
  }
  const streamed = await streamCorpus(file, readOptions, reporter);
  // Before the work: a missing or wrong --out is a usage error now.
  const target = await outputTarget(flags, fileArg, streamed.corpus.input);
  const { value: result } = await reporter.stage(
    'exact',
    () => exactDuplicates(streamed.source(), { normalize: { preset: flags.normalize }, pairs: flags.output === 'pairs', ...(flags.maxPairs !== undefined ? { maxPairs: flags.maxPairs } : {}) }),
    (r) => `${int(r.stats.pairs)} pairs`,
  );
  const corpus = streamed.corpus;
  const tw = performance.now();
  let sink: OutputSink | undefined = target.kind === 'sink' ? await openOutput(flags.out) : undefined;
  try {
    const written = await writeOutput(flags, file, corpus, result, sink, target);
    await sink?.close();
    sink = undefined;
    const writeMs = performance.now() - tw;
    const total = performance.now() - tStart;
    const s = result.stats;
    const dupDocs = result.clusters.reduce((a, c) => a + c.members.length - 1, 0);
    const inCluster = result.clusters.reduce((a, c) => a + c.members.length, 0);
    if (flags.json) {
      reporter.json({
        command: 'dedup',
        input: { path: name, format: corpus.input.format, docs: corpus.count, emptyDocs: s.emptyDocs, skipped: corpus.input.skips.count, bytes: corpus.bytes },
        options: { exact: true, normalize: flags.normalize },
        pairs: s.pairs,
        clusters: s.clusters,
        docsInClusters: inCluster,
        duplicates: dupDocs,
        output: { mode: flags.output, path: flags.out, records: written, format: flags.output === 'pairs' ? pairFormatOf(flags) : undefined },
        timings: { hash: s.timings.sign, cluster: s.timings.cluster, write: writeMs, total },
      });
      return undefined;
    }
    const skipped = corpus.input.skips.count;
    reporter.summary(`docs        ${int(corpus.count)} from ${name} [${corpus.input.format}]: ${int(s.emptyDocs)} empty${skipped ? `, ${int(skipped)} invalid skipped` : ''}`);
    reporter.summary(`method      exact duplicates: equal after normalize ${flags.normalize} (64-bit hash of the text; no shingles, no MinHash; one streaming pass)`);
    reporter.summary(`pairs       ${int(s.pairs)} (identical, similarity 1)`);
    reporter.summary(`clusters    ${int(s.clusters)}, holding ${int(inCluster)} docs (${int(dupDocs)} duplicates beyond one per cluster)`);
    reporter.summary(`time        read and hash ${ms(s.timings.sign)} · cluster ${ms(s.timings.cluster)} · write ${ms(writeMs)} · total ${ms(total)}`);
    if (flags.out) reporter.summary(`output      ${flags.output}: ${int(written)} records → ${path.normalize(flags.out)}`);
    return undefined;
  } catch (e) {
    await sink?.abort();
    throw e;
  }
}
