/**
 * One typed builder for the summary every dedup route prints (in memory or streamed, `--exact`,
 * `--against`, sharded jobs): the human lines on stderr, each a label in one column then its text,
 * and the `--json` object on stdout, whose keys come in one order for every route.
 * @module
 */
import type { PairFormat } from '../io/write/write.js';
import type { RemovalSummary } from '../dedup/verifiedGraph.js';
import { int, type Reporter } from './report.js';

/** The labels of the summary's lines. */
export type SummaryLabel =
  | 'docs'
  | 'skipped'
  | 'shingles'
  | 'auto'
  | 'method'
  | 'lsh'
  | 'candidates'
  | 'pairs'
  | 'copies'
  | 'clusters'
  | 'matched'
  | 'reference'
  | 'stream'
  | 'time'
  | 'cpu'
  | 'tasks'
  | 'buckets'
  | 'throughput'
  | 'output';

/** Width of the label column, spaces included. */
const LABEL_COLUMN = 12;

/** A summary line: `label` padded to the label column, then `text`. */
export function summaryLine(label: SummaryLabel, text: string): string {
  return `${label.padEnd(LABEL_COLUMN - 1)} ${text}`;
}

/** What the docs line says of the input. */
export interface DocsLine {
  /** Documents read. */
  docs: number;
  /** Where from: `ads.tsv [tsv]`, `4 shards`. */
  from: string;
  /** Documents without shingles. */
  empty: number;
  /** Invalid records skipped (0: not said). */
  skipped?: number;
}

/** `docs        1,234 from ads.tsv [tsv]: 3 empty, 2 invalid skipped`. */
export function docsLine(d: DocsLine): string {
  return summaryLine('docs', `${int(d.docs)} from ${d.from}: ${int(d.empty)} empty${d.skipped ? `, ${int(d.skipped)} invalid skipped` : ''}`);
}

/** `output      dedup: 1,200 records → out.tsv`. */
export function outputLine(mode: string, records: number, where: string): string {
  return summaryLine('output', `${mode}: ${int(records)} records → ${where}`);
}

/** The `output` object of `--json`. */
export interface OutputJson {
  mode: string;
  path: string | undefined;
  records: number;
  /** The pair format, for `--output pairs` (routes that name it). */
  format?: PairFormat;
  /** Set for `--dry-run`. */
  dryRun?: true;
}

/** The `output` object of `--json` (`dryRun` only when set). */
export function outputJson(o: { mode: string; path: string | undefined; records: number; format?: PairFormat; dryRun?: boolean }): OutputJson {
  return { mode: o.mode, path: o.path, records: o.records, ...('format' in o ? { format: o.format } : {}), ...(o.dryRun ? { dryRun: true as const } : {}) };
}

/**
 * The `--json` summary of a dedup route. Every field is optional but `command`: a route gives those
 * it has, and {@link summaryJson} writes them in this order, the same for every route.
 */
export interface SummaryJson {
  command: 'dedup' | 'job dedup';
  /** Sharded jobs: the work dir. */
  workDir?: string;
  input: Record<string, unknown>;
  /** Sharded jobs: shards that failed to read and were skipped. */
  skippedShards?: unknown[];
  /** `--against`: the reference input. */
  against?: Record<string, unknown>;
  options?: Record<string, unknown>;
  /** The banding (null when LSH did not find the candidates). */
  lsh?: Record<string, unknown> | null;
  candidates?: number;
  pairs: number;
  /** The recall estimate (null with `recallNote` when there is none). */
  recall?: unknown;
  recallNote?: string;
  counts?: 'all' | 'verified';
  copies?: number;
  clusters?: number;
  docsInClusters?: number;
  duplicates?: number;
  removal?: RemovalSummary;
  /** `--against`: input documents with a reference match, and reference documents with an input match. */
  matched?: number;
  referenceMatched?: number;
  output: OutputJson;
  /** The `--removed` audit written. */
  removed?: { path: string | undefined; records: number };
  timings: Record<string, unknown>;
  /** Streamed runs: passes and memory. */
  stream?: Record<string, unknown>;
}

/** The keys of {@link SummaryJson}, in the order `--json` writes them. */
const JSON_ORDER: readonly (keyof SummaryJson)[] = [
  'command',
  'workDir',
  'input',
  'skippedShards',
  'against',
  'options',
  'lsh',
  'candidates',
  'pairs',
  'recall',
  'recallNote',
  'counts',
  'copies',
  'clusters',
  'docsInClusters',
  'duplicates',
  'removal',
  'matched',
  'referenceMatched',
  'output',
  'removed',
  'timings',
  'stream',
];

/** The `--json` object of a route's summary: its fields in the one order, those it lacks left out. */
export function summaryJson(s: SummaryJson): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of JSON_ORDER) if (s[key] !== undefined) out[key] = s[key];
  return out;
}

/** The `removed` field of `--json`: set when the audit was written. */
export function removedJson(path: string | undefined, records: number | undefined): Pick<SummaryJson, 'removed'> {
  return records !== undefined ? { removed: { path, records } } : {};
}

/** Prints a route's summary: the JSON object with `--json`, else the lines (undefined ones skipped). */
export function printSummary(reporter: Reporter, json: boolean | undefined, build: { json: () => SummaryJson; lines: () => (string | undefined)[] }): void {
  if (json) {
    reporter.json(summaryJson(build.json()));
    return;
  }
  for (const line of build.lines()) if (line !== undefined) reporter.summary(line);
}
