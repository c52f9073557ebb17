/**
 * The summary `neardup dedup` prints after a near-duplicate run: human lines on stderr, or one JSON
 * object on stdout with --json.
 * @module
 */
import path from 'node:path';
import type { DedupOptions, DedupResult } from '../../dedup/dedup.js';
import { removalLine, type RemovalSummary } from '../../dedup/verifiedGraph.js';
import type { StreamDedupExtra } from '../../dedup/streamDedup.js';
import { DEFAULT_SKETCH_BUCKETS } from '../../dedup/kinds.js';
import { formatLabel, type Corpus } from '../corpus.js';
import { pairFormatOf } from '../options.js';
import { int, ms, type Reporter } from '../report.js';
import type { DedupFlags } from './flags.js';
import type { RecallEstimate } from '../../lsh/recallEstimate.js';
import { defaultK } from '../../text/shingler.js';
import { docsLine, outputJson, outputLine, printSummary, removedJson, summaryLine, type OutputJson, type SummaryJson } from '../summary.js';

/**
 * The recall of a run for --json: the Horvitz–Thompson estimate with its standard error (LSH), 1 for
 * the exact join, or null with the reason.
 */
export function recallJson(estimate: RecallEstimate | undefined, why: string | undefined): Record<string, unknown> {
  if (estimate && estimate.found > 0) {
    return {
      recall: {
        estimate: estimate.recall,
        stdError: estimate.stdError,
        verifiedPairs: estimate.found,
        estimatedPairs: estimate.estimatedPairs,
        estimatedPairsStdError: estimate.estimatedPairsStdError,
      },
    };
  }
  return { recall: null, recallNote: why ?? 'no verified pairs to estimate it from' };
}

/**
 * The summary's recall line: `recall      ~0.9978 ± 0.0012 estimated from the 168,943 verified
 * pairs (P(0.8) = 0.9923)`, or why there is no estimate.
 */
export function recallLine(estimate: RecallEstimate | undefined, why: string | undefined, threshold: number, pAtThreshold: number): string {
  if (estimate && estimate.found > 0) {
    return `recall      ~${estimate.recall.toFixed(4)} ± ${estimate.stdError.toFixed(4)} estimated from the ${
      int(estimate.found)
    } verified pairs (P(${threshold}) = ${pAtThreshold.toFixed(4)})`;
  }
  return `recall      not estimated: ${why ?? 'no verified pairs to estimate it from'}`;
}

/** Why a run verified otherwise than exactly has no recall estimate. */
export const inexactWhy = (verify: string | undefined): string => `--verify ${verify} gives no exact similarities to weigh the pairs by`;

/** Why a run of dedup has no recall estimate (undefined when it has one, or found nothing). */
function noRecallWhy(options: DedupOptions, result: DedupResult): string | undefined {
  const s = result.stats;
  const method = s.candidateMethod ?? 'lsh';
  if (method === 'exact') return undefined;
  if (method === 'sketch') return 'sketch candidates have no banding to weigh the pairs by';
  if (options.verify !== 'exact') return inexactWhy(options.verify);
  if (s.counts === 'verified') return 'past --max-pairs only the pairs that joined two clusters were kept';
  return undefined;
}

/** What a finished run reports. */
export interface DedupRunReport {
  /** The input as named in messages (`<stdin>` for -). */
  name: string;
  corpus: Corpus;
  options: DedupOptions;
  result: DedupResult;
  /** Streamed runs: passes and memory. */
  extra: StreamDedupExtra | undefined;
  /** Records written. */
  written: number;
  /** Time writing the output, and since the command started (ms). */
  writeMs: number;
  total: number;
  /** Rows of the `--removed` audit, when one was written. */
  removed?: number;
  /** What each removal rule drops (outputs other than pairs). */
  removal?: RemovalSummary;
}

/** Prints the summary of a near-duplicate run (human lines, or JSON with --json). */
export function printDedupSummary(flags: DedupFlags, reporter: Reporter, run: DedupRunReport): void {
  printSummary(reporter, flags.json, { json: () => dedupJson(flags, run), lines: () => dedupLines(flags, run) });
}

/** Documents in clusters, and those beyond one per cluster. */
function clusterCounts(result: DedupResult): { inCluster: number; dupDocs: number } {
  return {
    inCluster: result.clusters.reduce((a, c) => a + c.members.length, 0),
    dupDocs: result.clusters.reduce((a, c) => a + c.members.length - 1, 0),
  };
}

/** The shingle length that ran (the shingler's default when -k was not given). */
function shingleLength(options: DedupOptions): number {
  const sh = options.shingle!;
  return sh.k ?? defaultK(sh.kind ?? 'char');
}

/** The `--json` summary of a near-duplicate run. */
function dedupJson(flags: DedupFlags, run: DedupRunReport): SummaryJson {
  const { name, corpus, options, result, extra, written, writeMs, total, removed, removal } = run;
  const s = result.stats;
  const b = result.bands;
  const sh = options.shingle!;
  const { inCluster, dupDocs } = clusterCounts(result);
  return {
    command: 'dedup',
    input: { path: name, format: corpus.input.format, docs: corpus.count, emptyDocs: s.emptyDocs, skipped: corpus.input.skips.count, bytes: corpus.bytes },
    options: {
      threshold: options.threshold,
      shingle: { kind: sh.kind, k: shingleLength(options), normalize: flags.normalize, multiset: !!flags.multiset },
      minhash: { method: flags.method, numPerm: flags.numPerm, seed: flags.seed },
      verify: options.verify,
      measure: s.measure ?? 'jaccard',
      candidates: s.candidateMethod ?? 'lsh',
      ...(s.candidateReason ? { candidatesReason: s.candidateReason } : {}),
      fingerprintBits: options.fingerprintBits ?? 32,
      clusterMode: options.clusters ?? 'components',
      representative: options.representative ?? 'first',
      keep: options.keep ?? 'first',
      removal: options.removal ?? 'verified',
    },
    // The banding only when LSH found the candidates: the exact join misses nothing, and sketch
    // candidates have no banding recall.
    lsh: (s.candidateMethod ?? 'lsh') === 'lsh'
      ? {
        bands: b.bands,
        rows: b.rows,
        rule: b.rule,
        recallAtThreshold: b.recallAtThreshold,
        falsePositiveArea: b.falsePositiveArea,
        falseNegativeArea: b.falseNegativeArea,
      }
      : null,
    candidates: s.candidates,
    pairs: s.pairs,
    // The exact join misses nothing: its recall is 1, not an estimate.
    ...((s.candidateMethod ?? 'lsh') === 'exact'
      ? { recall: { estimate: 1, stdError: 0, verifiedPairs: s.pairs } }
      : recallJson(s.recall, noRecallWhy(options, result))),
    counts: s.counts,
    copies: s.copies,
    clusters: s.clusters,
    docsInClusters: inCluster,
    duplicates: dupDocs,
    ...(removal ? { removal } : {}),
    output: dedupOutputJson(flags, written),
    ...removedJson(flags.removed, removed),
    timings: { read: corpus.readMs, ...s.timings, write: writeMs, total },
    ...(extra
      ? { stream: { passes: extra.passes, indexBytes: extra.indexBytes, peakSetBytes: extra.peakSetBytes, setDocs: extra.setDocs, ranged: extra.ranged } }
      : {}),
  };
}

/** The line of the candidate method: the banding (LSH), the exact join, or the sketch. */
function methodLine(flags: DedupFlags, run: DedupRunReport): string {
  const { options, result } = run;
  const s = result.stats;
  const b = result.bands;
  const method = s.candidateMethod ?? 'lsh';
  if (method === 'lsh') {
    return summaryLine(
      'lsh',
      `${b.bands} bands × ${b.rows} rows (${b.bands * b.rows} of ${b.numPerm} hashes): P(${b.threshold}) = ${
        b.recallAtThreshold.toFixed(4)
      }, the expected recall at the threshold${b.rule === 'best-effort' ? ' (best effort: the recall target is out of reach)' : ''}`,
    );
  }
  if (method === 'exact') {
    return summaryLine(
      'method',
      `exact prefix-filtering join${
        s.candidateReason ? (flags.candidates === 'auto' ? ' (chosen by --candidates auto)' : ' (chosen automatically)') : ''
      }: every pair with ${s.measure ?? 'jaccard'} ≥ ${options.threshold}, no misses`,
    );
  }
  return summaryLine(
    'method',
    `bucket sketch: ${options.buckets ?? DEFAULT_SKETCH_BUCKETS} buckets (hash mod n), documents sharing a bucket minimum are candidates`,
  );
}

/** The candidates and pairs lines. */
function pairLines(run: DedupRunReport): string[] {
  const { options, result } = run;
  const s = result.stats;
  if (s.counts === 'verified') {
    return [
      summaryLine(
        'candidates',
        `${int(s.candidates)} verified (more than --max-pairs candidate pairs: clustered bucket by bucket, skipping pairs already in one cluster)`,
      ),
      summaryLine(
        'pairs',
        `${int(s.pairs)} joined two clusters (${options.verify === 'none' ? 'unverified candidates' : `${options.verify} Jaccard ≥ ${options.threshold}`})`,
      ),
    ];
  }
  const measure = s.measure ?? 'jaccard';
  return [
    summaryLine('candidates', `${int(s.candidates)}`),
    summaryLine(
      'pairs',
      `${int(s.pairs)} (${
        options.verify === 'none'
          ? 'unverified candidates'
          : measure === 'containment'
          ? `exact containment ≥ ${options.threshold}, smaller document first`
          : `${options.verify} Jaccard ≥ ${options.threshold}`
      })`,
    ),
  ];
}

/** The summary lines of a near-duplicate run (undefined: a line this run does not print). */
function dedupLines(flags: DedupFlags, run: DedupRunReport): (string | undefined)[] {
  const { name, corpus, options, result, extra, written, writeMs, total, removed, removal } = run;
  const n = corpus.count;
  const s = result.stats;
  const b = result.bands;
  const sh = options.shingle!;
  const { inCluster, dupDocs } = clusterCounts(result);
  const method = s.candidateMethod ?? 'lsh';
  const chooser = flags.candidates === 'auto' ? '--candidates auto' : 'default for word/spot shingles; --candidates lsh forces LSH';
  // --keep none keeps no member of a cluster.
  const dropped = result.removal ? result.removal.dropped : result.clusters.reduce((a, c) => a + c.members.length - ((c.representative ?? 0) >= 0 ? 1 : 0), 0);
  return [
    docsLine({ docs: n, from: `${name} [${formatLabel(corpus.input)}]`, empty: s.emptyDocs, skipped: corpus.input.skips.count }),
    summaryLine(
      'shingles',
      `${sh.kind} k=${shingleLength(options)}, normalize ${flags.normalize}${flags.multiset ? ', multiset' : ''}${
        options.fingerprintBits === 64 ? ', 64-bit fingerprints' : ''
      }; MinHash ${flags.method}, ${flags.numPerm} hashes, seed ${flags.seed}`,
    ),
    s.candidateReason ? summaryLine('auto', `${method === 'exact' ? 'exact join' : method} (chosen by ${chooser}): ${s.candidateReason}`) : undefined,
    methodLine(flags, run),
    ...pairLines(run),
    method === 'lsh' ? recallLine(s.recall, noRecallWhy(options, result), b.threshold, b.recallAtThreshold) : undefined,
    s.copies > 0 && flags.verbose ? summaryLine('copies', `${int(s.copies)} documents identical to an earlier one (checked once)`) : undefined,
    summaryLine(
      'clusters',
      `${int(s.clusters)}, holding ${int(inCluster)} docs (${int(dupDocs)} duplicates beyond one per cluster)${
        options.clusters === 'centre' ? '; centre clusters' : ''
      }${(options.representative ?? 'first') !== 'first' ? `; representative: ${options.representative}` : ''}${
        (options.keep ?? 'first') !== 'first' ? `; keep: ${options.keep}` : ''
      }`,
    ),
    removal ? removalLine(removal) : undefined,
    extra
      ? summaryLine(
        'stream',
        `${extra.passes} passes over the input; in memory: index ${(extra.indexBytes / 1e6).toFixed(1)} MB (${
          Math.round(extra.indexBytes / Math.max(n, 1))
        } bytes/doc), sets at most ${(extra.peakSetBytes / 1e6).toFixed(1)} MB; verification read ${int(extra.setDocs)} documents again${
          extra.ranged ? ' (the input read in byte ranges)' : ''
        }`,
      )
      : undefined,
    summaryLine(
      'time',
      `${
        extra ? `read, shingle and sign ${ms(s.timings.sign)}` : `read ${ms(corpus.readMs)} · shingle ${ms(s.timings.shingle)} · sign ${ms(s.timings.sign)}`
      } · ${method === 'lsh' ? 'lsh' : method === 'exact' ? 'join' : 'sketch'} ${ms(s.timings.lsh)} · verify ${ms(s.timings.verify)} · cluster ${
        ms(s.timings.cluster)
      } · write ${ms(writeMs)} · total ${ms(total)}`,
    ),
    flags.verbose
      ? summaryLine(
        'buckets',
        `${int(s.buckets.sharedBuckets)} shared, ${int(s.buckets.repeatedBuckets)} repeated (skipped), largest ${int(s.buckets.largestBucket)} docs`,
      )
      : undefined,
    flags.verbose
      ? summaryLine('throughput', `${(corpus.bytes / 1e3 / Math.max(total, 1e-3)).toFixed(1)} MB/s, ${int((n * 1000) / Math.max(total, 1e-3))} docs/s overall`)
      : undefined,
    flags.out ? outputLine(flags.output, written, path.normalize(flags.out)) : undefined,
    ...removedLines(flags, n - dropped, removed),
  ];
}

/** The summary lines of `--dry-run` and `--removed` (none when neither applies). */
export function removedLines(flags: Pick<DedupFlags, 'dryRun' | 'removed' | 'output'>, kept: number, removed: number | undefined): string[] {
  const lines: string[] = [];
  if (flags.dryRun) lines.push(`dry run     nothing written but the audit: --output ${flags.output} would keep ${int(kept)} records`);
  if (removed !== undefined) lines.push(`removed     ${int(removed)} dropped documents listed → ${path.normalize(flags.removed!)}`);
  return lines;
}

/** Prints the summary lines of `--dry-run` and `--removed`. */
export function printRemovedLines(
  flags: Pick<DedupFlags, 'dryRun' | 'removed' | 'output'>,
  reporter: Reporter,
  kept: number,
  removed: number | undefined,
): void {
  for (const line of removedLines(flags, kept, removed)) reporter.summary(line);
}

/** The `--json` summary's `output` of `neardup dedup` (in memory, streamed or `--exact`): what it wrote, and where. */
export function dedupOutputJson(flags: DedupFlags, written: number): OutputJson {
  return outputJson({
    mode: flags.output,
    path: flags.out,
    records: written,
    format: flags.output === 'pairs' ? pairFormatOf(flags) : undefined,
    dryRun: flags.dryRun,
  });
}
