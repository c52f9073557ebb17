/**
 * `neardup dedup NEW --against OLD` in one process: pairs (NEW document, OLD document) only, and the
 * NEW input without (dedup) or annotated with (annotate) its near duplicates of OLD.
 * @module
 */
import path from 'node:path';
import { dedupAgainst, type AgainstResult } from '../../dedup/against.js';
import { openAudit, type AuditWriter } from '../../io/write/audit.js';
import { s3NameOf } from '../../io/s3/staging.js';
import { UsageError } from '../../common/errors.js';
import { openInput, type ReadOptions } from '../../io/read/read.js';
import { openOutput, PendingCommits, type OutputSink } from '../../io/write/output.js';
import { pairHeader, type PairFormat } from '../../io/write/write.js';
import type { DedupOptions } from '../../dedup/dedup.js';
import { TooManyPairsError } from '../../lsh/tooManyPairs.js';
import { idOf, loadCorpus, spoolInput, type Corpus, type InputCopy } from '../corpus.js';
import { int, ms, type Reporter } from '../report.js';
import { tooManyPairsMessage } from '../tooManyPairs.js';
import { writePairLines } from '../../io/write/pairLines.js';
import { estimateRecall } from '../../lsh/recallEstimate.js';
import { inexactWhy, recallJson, recallLine, removedLines } from './summary.js';
import { docsLine, outputJson, outputLine, printSummary, removedJson, summaryLine } from '../summary.js';
import { outputTarget, type OutputTarget } from './output.js';
import { writeVerdicts } from '../../dedup/dedupFile.js';
import type { RowVerdict } from '../../io/write/rewrite.js';

/** What runAgainst needs from the dedup flags. */
export interface AgainstRun {
  file: string;
  against: string;
  output: 'pairs' | 'clusters' | 'dedup' | 'annotate';
  out?: string;
  pairFormat: PairFormat;
  json?: boolean;
  /** `--tag-prefix` of annotate. */
  tagPrefix?: string;
  /** `--removed FILE`: the audit of the documents dropped. */
  removed?: string;
  /** `--dry-run`: the summary and the audit only. */
  dryRun?: boolean;
  /** Where the copies of named pipes among the two go ({@link spoolInput}), for the caller to remove. */
  copies: InputCopy[];
}

/** One of the two inputs as read: its path (a named pipe's copy, or the input itself) and the read options that name it as given. */
interface Side {
  path: string;
  read: ReadOptions;
}

/**
 * Input `name` as read: a named pipe (`<(zcat a.gz)`) is copied first, as without --against (the
 * readers sniff a format by a positional read, and dedup|annotate read the input again).
 */
async function sideOf(name: string, readOptions: ReadOptions, copies: InputCopy[]): Promise<Side> {
  const copy = await spoolInput(name, { copies });
  return copy ? { path: copy.file, read: { ...readOptions, displayName: copy.displayName } } : { path: name, read: readOptions };
}

/**
 * The file each reference document was read from (absolute, as a sharded job names its shards; an
 * `s3://` name for an object read from S3): the input itself, or for a directory or glob of shards,
 * a pass over it noting each record's shard.
 */
async function referenceSources(file: string, ref: Corpus, readOptions: ReadOptions): Promise<(d: number) => string> {
  // A reference in S3 is read from its local copy: the audit names the s3:// object.
  if (!ref.input.shards) {
    const whole = s3NameOf(path.resolve(file));
    return () => whole;
  }
  const shardOf = new Int32Array(ref.count);
  const input = await openInput(file, { ...readOptions, raw: false });
  let i = 0;
  for await (const r of input.records) {
    if (i >= ref.count) break;
    shardOf[i++] = r.shard ?? 0;
  }
  const paths = input.shards!.shards.map((s) => s3NameOf(path.resolve(s.path)));
  return (d) => paths[shardOf[d]!]!;
}

/** What an --against run's audit is written from: both corpora, the run's result, how the inputs were read, and the run's pending commits. */
interface AgainstAuditSource {
  corpus: Corpus;
  ref: Corpus;
  result: AgainstResult;
  readOptions: ReadOptions;
  commits: PendingCommits;
}

/** Writes the audit of an --against run: each corpus document with a reference match, in order. */
async function writeAgainstAudit(run: AgainstRun, from: AgainstAuditSource): Promise<AuditWriter> {
  const { corpus, ref, result, readOptions, commits } = from;
  const audit = await openAudit(run.removed!, true, commits);
  try {
    const sourceOf = await referenceSources(run.against, ref, readOptions);
    for (let i = 0; i < corpus.count; i++) {
      const m = result.bestMatch[i]!;
      if (m < 0) continue;
      const refId = String(idOf(ref, m));
      await audit.write({
        id: String(idOf(corpus, i)),
        keptId: refId,
        similarity: result.bestSimilarity[i]!,
        cluster: null,
        referenceId: refId,
        referenceSource: sourceOf(m),
      });
    }
  } catch (e) {
    await audit.abort();
    throw e;
  }
  return audit;
}

/** Runs dedup of `run.file` against `run.against`. */
export async function runAgainst(run: AgainstRun, readOptions: ReadOptions, options: DedupOptions, reporter: Reporter): Promise<void> {
  if (run.output === 'clusters')
    throw new UsageError('--against reports pairs across the two inputs: --output clusters does not apply (use pairs, dedup or annotate)');
  if (run.file === '-' || run.against === '-') throw new UsageError('--against reads files or directories, not standard input');
  const t0 = performance.now();
  const input = await sideOf(run.file, readOptions, run.copies);
  const reference = await sideOf(run.against, readOptions, run.copies);
  const corpus = await loadCorpus(input.path, input.read, reporter);
  // Before the work, as without --against: a directory or glob of shards writes a directory of
  // shards, a Parquet input a Parquet file, an existing directory as --out the input's name in it.
  const target = await outputTarget(run, run.file, corpus.input);
  const ref = await loadCorpus(reference.path, reference.read, reporter);
  let result;
  try {
    result = dedupAgainst(corpus.texts, ref.texts, options);
  } catch (e) {
    if (e instanceof TooManyPairsError) throw new UsageError(tooManyPairsMessage(e, true));
    throw e;
  }
  // The output and the audit are written whole to temp files, then both put in place (output first).
  const commits = new PendingCommits();
  const audit = run.removed !== undefined ? await writeAgainstAudit(run, { corpus, ref, result, readOptions, commits }) : undefined;
  const written = await writeAgainstOutputs(run, { corpus, ref, result, readOptions, commits, target, reporter, audit, input });
  const total = performance.now() - t0;
  printAgainstSummary(run, { corpus, ref, result, options, reporter, written, total, auditRows: audit?.rows });
}

/** What an --against run's outputs are written from: the audit's sources, the output's target, the audit itself (committed with them). */
interface AgainstOutputs extends AgainstAuditSource {
  target: OutputTarget;
  reporter: Reporter;
  audit: AuditWriter | undefined;
  /** The input as read (a pipe's copy, named as given). */
  input: Side;
}

/**
 * Writes the pairs, or the input's copy (a document's verdict is its best reference match), and
 * puts them and the audit in place; with --dry-run, the audit only. Returns the records written.
 */
async function writeAgainstOutputs(run: AgainstRun, w: AgainstOutputs): Promise<number> {
  const { corpus, ref, result, commits, target, reporter, audit, input } = w;
  let sink: OutputSink | undefined;
  let written = 0;
  try {
    sink = run.dryRun || target.kind !== 'sink' ? undefined : await openOutput(run.out, commits);
    if (run.dryRun) {
      // --dry-run: the audit only.
    } else if (run.output === 'pairs') {
      await sink!.write(pairHeader(run.pairFormat, false));
      await writePairLines(sink!, run.pairFormat, result.pairs, { a: (a) => idOf(corpus, a), b: (b) => idOf(ref, b) });
      written = result.pairs.length;
    } else {
      // The writer of the route without --against (records byte for byte, line ends and BOM kept);
      // no clusters across two corpora: a document's verdict is its best reference match, if any.
      const verdictOf = (i: number): RowVerdict => {
        const m = result.bestMatch[i]!;
        return m >= 0 ? { keep: false, duplicateOf: String(idOf(ref, m)), similarity: result.bestSimilarity[i]! } : { keep: true };
      };
      const bar = reporter.progress('write', 'docs', corpus.count);
      try {
        written = await writeVerdicts({
          file: input.path,
          corpus,
          mode: run.output === 'annotate' ? 'annotate' : 'dedup',
          target,
          sink,
          read: input.read,
          tagPrefix: run.tagPrefix,
          commits,
          onProgress: (done) => bar.update(done),
        }, verdictOf);
      } finally {
        bar.stop();
      }
    }
    await sink?.close();
    sink = undefined;
    await audit?.close();
    await commits.commit();
  } catch (e) {
    await sink?.abort();
    await audit?.abort();
    await commits.discard();
    throw e;
  }
  return written;
}

/** What an --against run's summary says. */
interface AgainstSummary {
  corpus: Corpus;
  ref: Corpus;
  result: AgainstResult;
  options: DedupOptions;
  reporter: Reporter;
  /** Records written. */
  written: number;
  /** Wall time, ms. */
  total: number;
  /** Rows of the audit, if one was written. */
  auditRows: number | undefined;
}

/** Prints an --against run's summary (human, or --json). */
function printAgainstSummary(run: AgainstRun, r: AgainstSummary): void {
  const { corpus, ref, result, options, reporter, written, total } = r;
  // Each corpus document with its reference matches is one unit of the standard error.
  const exact = (options.verify ?? 'exact') === 'exact';
  const recall = exact
    ? estimateRecall(result.pairs.map((p) => p.similarity), result.bands.bands, result.bands.rows, { units: result.pairs.map((p) => p.a) })
    : undefined;
  const noRecall = exact ? undefined : inexactWhy(options.verify);
  printSummary(reporter, run.json, {
    json: () => ({
      command: 'dedup',
      input: { path: run.file, format: corpus.input.format, docs: corpus.count },
      against: { path: run.against, format: ref.input.format, docs: ref.count },
      lsh: { bands: result.bands.bands, rows: result.bands.rows },
      candidates: result.candidates,
      pairs: result.pairs.length,
      ...recallJson(recall, noRecall),
      matched: result.matched,
      referenceMatched: result.referenceMatched,
      output: outputJson({ mode: run.output, path: run.out, records: written, dryRun: run.dryRun }),
      ...removedJson(run.removed, r.auditRows),
      timings: { total },
    }),
    lines: () => [
      docsLine({
        docs: corpus.count,
        from: `${run.file} [${corpus.input.format}], against ${int(ref.count)} from ${run.against} [${ref.input.format}]`,
        empty: result.emptyDocs,
      }),
      summaryLine('lsh', `${result.bands.bands} bands × ${result.bands.rows} rows`),
      summaryLine('candidates', `${int(result.candidates)} (only across the two inputs)`),
      summaryLine('pairs', `${int(result.pairs.length)} (${options.verify ?? 'exact'} Jaccard ≥ ${options.threshold})`),
      recallLine(recall, noRecall, result.bands.threshold, result.bands.recallAtThreshold),
      summaryLine('matched', `${int(result.matched)} of ${int(corpus.count)} documents of ${run.file} are near duplicates of a document of ${run.against}`),
      summaryLine(
        'reference',
        `${int(result.referenceMatched)} of ${int(ref.count)} documents of ${run.against} are near duplicates of a document of ${run.file}`,
      ),
      summaryLine('time', `total ${ms(total)}`),
      run.out ? outputLine(run.output, written, path.normalize(run.out)) : undefined,
      ...removedLines(run, corpus.count - result.matched, r.auditRows),
    ],
  });
}
