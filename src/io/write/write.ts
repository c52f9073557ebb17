/**
 * Formatting results: pairs, clusters, and input rows rewritten with annotations.
 * @module
 */
import type { InputFormat } from '../read/formats.js';
import { excerpt, InputError, UsageError } from '../../common/errors.js';
import { appendJsonFields, jsonTopNames } from '../read/jsonRaw.js';

/** Output formats of pairs. */
export type PairFormat = 'tsv' | 'csv' | 'jsonl';

/** Similarities are printed with at most 6 decimals, trailing zeros dropped (0.8, 0.923077). */
export function formatSimilarity(s: number): string {
  const r = Math.round(s * 1e6);
  // String(r / 1e6) for the usual 0 < r < 10^6, from the integer (number-to-string was a sixth of
  // writing a million pairs): "0." and six digits without trailing zeros.
  if (r > 0 && r < 1e6) {
    let digits = String(r + 1e6).slice(1);
    let end = 6;
    while (digits.charCodeAt(end - 1) === 48) end--;
    if (end < 6) digits = digits.slice(0, end);
    return `0.${digits}`;
  }
  return String(r / 1e6);
}

/** A CSV field, quoted when it holds the delimiter, a quote, or a line break. */
export function csvField(v: string, delimiter = ','): string {
  return v.includes(delimiter) || v.includes('"') || v.includes('\n') || v.includes('\r') ? `"${v.replace(/"/g, '""')}"` : v;
}

/**
 * A TSV field: literal unless it holds a tab or a line break, or starts with a quote (which a
 * quote-aware reader could take for quoting); then quoted CSV-style.
 */
export function tsvField(v: string): string {
  return v.includes('\t') || v.includes('\n') || v.includes('\r') || v.startsWith('"') ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The header line of a pair file (empty for TSV, which has none), with its newline. */
export function pairHeader(format: PairFormat, withEstimate: boolean): string {
  if (format === 'csv') return withEstimate ? 'a,b,similarity,estimate\n' : 'a,b,similarity\n';
  return '';
}

/**
 * One pair as a line, with its newline. Ids are the input's ids (or row numbers).
 * Why these parameters: called once per pair written; an options object would be an allocation per output line.
 */
export function formatPair(format: PairFormat, a: string | number, b: string | number, similarity: number, estimate?: number): string {
  const est = estimate === undefined ? undefined : formatSimilarity(estimate);
  if (format === 'jsonl') {
    // What JSON.stringify({ a, b, similarity, estimate? }) gives, without the object.
    const e = estimate === undefined ? '' : `,"estimate":${est}`;
    return `{"a":${JSON.stringify(a)},"b":${JSON.stringify(b)},"similarity":${formatSimilarity(similarity)}${e}}\n`;
  }
  const sim = formatSimilarity(similarity);
  if (format === 'csv') {
    return `${csvField(String(a))},${csvField(String(b))},${sim}${est === undefined ? '' : ',' + est}\n`;
  }
  // Row numbers need no quoting check.
  const ta = typeof a === 'number' ? String(a) : tsvField(a);
  const tb = typeof b === 'number' ? String(b) : tsvField(b);
  return `${ta}\t${tb}\t${sim}${est === undefined ? '' : '\t' + est}\n`;
}

/** One cluster as a JSON line; the representative defaults to the first member (null: none kept, `--keep none`). */
export function formatCluster(
  cluster: number,
  members: readonly (string | number)[],
  representative: string | number | null | undefined = members[0],
  verdicts?: ClusterVerdicts,
): string {
  if (!verdicts) return JSON.stringify({ cluster, size: members.length, representative, members }) + '\n';
  return JSON.stringify({ cluster, size: members.length, representative, members, duplicate_of: verdicts.duplicateOf, similarity: verdicts.similarity }) + '\n';
}

/**
 * What the verified removal rule says of each member of a cluster, in `members` order: the id of
 * the kept member it duplicates (null when it is kept) and their verified similarity (null when kept).
 */
export interface ClusterVerdicts {
  duplicateOf: (string | number | null)[];
  similarity: (number | null)[];
}

/**
 * The tags `annotate` adds to each record: its cluster, the cluster's size, the kept member's id
 * (`duplicate_of`), its similarity to that member, and whether it is kept. A field left undefined
 * is written as null (JSONL, Parquet) or an empty field (TSV, CSV, text).
 */
export interface RecordTags {
  /** Cluster number; undefined for a document in no cluster (or with --against, where there are none). */
  cluster?: number;
  /** Members of the cluster; undefined when `cluster` is. */
  clusterSize?: number;
  /** The kept member's id (the reference document's with --against); undefined for a kept or unclustered document, and under --keep none. */
  duplicateOf?: string;
  /** Exact similarity to `duplicateOf`; undefined when it is. */
  similarity?: number;
  /** Whether `--output dedup` keeps the record. */
  kept: boolean;
}

/** The tag names, in the order they are appended. */
export const TAG_NAMES = ['cluster', 'cluster_size', 'duplicate_of', 'similarity', 'kept'] as const;

/**
 * Names of the five tag columns: `prefix` + each name. Without a prefix, today's names, or all
 * prefixed with `neardup_` when the input already has a column of one of those names (a record
 * must not get two fields of one name). Names are compared as TSV/CSV readers tend to (trimmed,
 * any case). When the names chosen are taken too (`--tag-prefix P` and a field `Pkept`, or an
 * input that has both `cluster` and `neardup_cluster`, such as an annotated output annotated
 * again), a {@link UsageError} naming the field (fix: `tagPrefix`); callers that know the file and
 * line re-throw it as an {@link InputError} with {@link tagClashAt}.
 */
export function annotationColumns(existing: readonly string[], prefix = ''): string[] {
  const taken = new Set(existing.map((c) => c.trim().toLowerCase()));
  const clash = (names: readonly string[]): string | undefined => names.find((n) => taken.has(n.trim().toLowerCase()));
  const named = TAG_NAMES.map((n) => prefix + n);
  const first = clash(named);
  if (first === undefined) return named;
  if (prefix === '') {
    const renamed = TAG_NAMES.map((n) => 'neardup_' + n);
    const second = clash(renamed);
    if (second === undefined) return renamed;
    throw new UsageError(
      `the input already has a field "${excerpt(first)}" and a field "${
        excerpt(second)
      }", so neither the tag names nor their neardup_ names are free: name the tags with a prefix of your own`,
      { option: 'tagPrefix' },
    );
  }
  throw new UsageError(`the input already has a field "${excerpt(first)}", the name of a tag with this prefix: choose another prefix`, { option: 'tagPrefix' });
}

/** `e` (from {@link annotationColumns}) located at `file` and `line`; other errors as they are. */
export function tagClashAt(e: unknown, file: string, line: number | undefined, position?: string): unknown {
  return e instanceof UsageError && e.fix?.option === 'tagPrefix' ? new InputError(file, line, e.message, position, e.fix) : e;
}

/** How input rows are written back: the raw record, optionally with the tags. */
export interface RowLayout {
  /** The input format. */
  format: InputFormat;
  /** Delimiter of TSV/CSV input. */
  delimiter?: string;
  /** Header columns of TSV/CSV input. */
  columns?: readonly string[];
  /** `--tag-prefix`: prepended to every tag name ('' or undefined: the default names). */
  tagPrefix?: string;
}

/** The header line for `annotate` output (with its line break, `\n` unless `eol` says otherwise), or '' when the format has none. */
export function annotateHeader(layout: RowLayout, rawHeader: string | undefined, eol = '\n'): string {
  const names = annotationColumns(layout.columns ?? [], layout.tagPrefix);
  if (layout.format === 'tsv' || layout.format === 'csv') {
    const sep = layout.delimiter ?? ',';
    return `${rawHeader ?? ''}${sep}${names.map((n) => (layout.format === 'csv' ? csvField(n, sep) : tsvField(n))).join(sep)}${eol || '\n'}`;
  }
  if (layout.format === 'dir') return `path\t${names.map(tsvField).join('\t')}\n`;
  return '';
}

/** The tags as text fields: empty for undefined, similarity as pairs print it, kept as true/false. */
function tagTexts(t: RecordTags): string[] {
  return [
    t.cluster === undefined ? '' : String(t.cluster),
    t.clusterSize === undefined ? '' : String(t.clusterSize),
    t.duplicateOf ?? '',
    t.similarity === undefined ? '' : formatSimilarity(t.similarity),
    t.kept ? 'true' : 'false',
  ];
}

/**
 * One input record with its tags, with newline. TSV/CSV: five fields appended; JSONL: five keys
 * appended before the closing brace, the line's bytes otherwise kept (numbers, key order and
 * escapes as they were); text and id⇥text: the five fields and a tab prepended, so the original
 * line is everything after the fifth tab; a directory: `path⇥` and the five fields.
 */
export function annotateRecord(layout: RowLayout, raw: string, tags: RecordTags, eol = '\n'): string {
  const f = tagTexts(tags);
  // The input's own line break (CRLF stays CRLF); a last line without one gets \n.
  const nl = eol === '\r\n' ? eol : '\n';
  switch (layout.format) {
    case 'tsv':
      return `${raw}\t${f.map(tsvField).join('\t')}${nl}`;
    case 'csv': {
      const sep = layout.delimiter ?? ',';
      return `${raw}${sep}${f.map((x) => csvField(x, sep)).join(sep)}${nl}`;
    }
    case 'jsonl': {
      const names = annotationColumns(jsonTopNames(raw), layout.tagPrefix);
      const values = [
        tags.cluster === undefined ? 'null' : f[0]!,
        tags.clusterSize === undefined ? 'null' : f[1]!,
        tags.duplicateOf === undefined ? 'null' : JSON.stringify(tags.duplicateOf),
        tags.similarity === undefined ? 'null' : f[3]!,
        f[4]!,
      ];
      return appendJsonFields(raw, names.map((n, i) => [JSON.stringify(n), values[i]!] as const)) + nl;
    }
    case 'dir':
      return `${tsvField(raw)}\t${f.map(tsvField).join('\t')}\n`;
    default:
      return `${f.map(tsvField).join('\t')}\t${raw}${nl}`;
  }
}
