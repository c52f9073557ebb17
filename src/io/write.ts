/**
 * Formatting results: pairs, clusters, and input rows rewritten with annotations.
 * @module
 */
import type { InputFormat } from './formats.js';
import { appendJsonFields, jsonTopNames } from './jsonRaw.js';

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

/** One pair as a line, with its newline. Ids are the input's ids (or row numbers). */
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
export function formatCluster(cluster: number, members: readonly (string | number)[], representative: string | number | null | undefined = members[0]): string {
  return JSON.stringify({ cluster, size: members.length, representative, members }) + '\n';
}

/** Names of the two annotation columns, prefixed with `neardup_` when the input already has them. */
export function annotationColumns(existing: readonly string[]): [string, string] {
  const taken = (n: string): boolean => existing.some((c) => c.trim().toLowerCase() === n);
  return taken('cluster') || taken('duplicate_of') ? ['neardup_cluster', 'neardup_duplicate_of'] : ['cluster', 'duplicate_of'];
}

/** How input rows are written back: the raw record, optionally with two more fields. */
export interface RowLayout {
  /** The input format. */
  format: InputFormat;
  /** Delimiter of TSV/CSV input. */
  delimiter?: string;
  /** Header columns of TSV/CSV input. */
  columns?: readonly string[];
}

/** The header line for `annotate` output (with its line break, `\n` unless `eol` says otherwise), or '' when the format has none. */
export function annotateHeader(layout: RowLayout, rawHeader: string | undefined, eol = '\n'): string {
  const [c, d] = annotationColumns(layout.columns ?? []);
  if (layout.format === 'tsv' || layout.format === 'csv') {
    const sep = layout.delimiter ?? ',';
    return `${rawHeader ?? ''}${sep}${c}${sep}${d}${eol || '\n'}`;
  }
  if (layout.format === 'dir') return `path\t${c}\t${d}\n`;
  return '';
}

/**
 * One input record with its annotations, with newline. `cluster` is the cluster number and
 * `duplicateOf` the representative's id, both undefined for a document without near duplicates
 * (and `duplicateOf` undefined for the representative itself).
 * TSV/CSV: two fields appended; JSONL: two keys appended before the closing brace, the line's bytes
 * otherwise kept; text and id⇥text: `cluster⇥duplicate_of⇥` prepended,
 * so the original line is everything after the second tab; a directory: `path⇥cluster⇥duplicate_of`.
 */
export function annotateRecord(layout: RowLayout, raw: string, cluster: number | undefined, duplicateOf: string | undefined, eol = '\n'): string {
  const cl = cluster === undefined ? '' : String(cluster);
  const dup = duplicateOf ?? '';
  // The input's own line break (CRLF stays CRLF); a last line without one gets \n.
  const nl = eol === '\r\n' ? eol : '\n';
  switch (layout.format) {
    case 'tsv':
      return `${raw}\t${cl}\t${tsvField(dup)}${nl}`;
    case 'csv': {
      const sep = layout.delimiter ?? ',';
      return `${raw}${sep}${cl}${sep}${csvField(dup, sep)}${nl}`;
    }
    case 'jsonl': {
      // The record's own bytes, the two fields appended before its closing brace.
      const [c, d] = annotationColumns(jsonTopNames(raw));
      return appendJsonFields(raw, [[JSON.stringify(c), cluster === undefined ? 'null' : cl], [JSON.stringify(d), duplicateOf === undefined ? 'null' : JSON.stringify(duplicateOf)]]) + nl;
    }
    case 'dir':
      return `${tsvField(raw)}\t${cl}\t${tsvField(dup)}\n`;
    default:
      return `${cl}\t${dup}\t${raw}${nl}`;
  }
}
