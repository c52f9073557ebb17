/**
 * {@link dedupSpans}: span deduplication over records in memory, the library's form of
 * `neardup spans`, with the same answer (both drive {@link SpanDeduper}).
 * @module
 */
import { SpanDeduper, type CutRange, type RemovedUnit, type SpansSummary } from './deduper.js';
import type { SpansOptions } from './options.js';

/** A document for {@link dedupSpans}: a text, or a text with an id. */
export type SpanRecord = string | { id?: string; text: string };

/** One document after {@link dedupSpans}. */
export interface SpansDocument {
  /** Its id: the record's, else its 0-based index as text. */
  id: string;
  /** The text left. */
  text: string;
  /** Whether a unit was removed. */
  changed: boolean;
  /** Dropped: fewer words left than `minDocWords`. */
  dropped: boolean;
  /** The ranges cut (merged), code-point and UTF-8 byte offsets in the input text. */
  removed: CutRange[];
}

/** One removed unit, as the `--removed` audit lists it. */
export interface SpansAuditRow extends CutRange {
  /** The document that lost it. */
  id: string;
  /** The document whose occurrence is kept; null in boilerplate mode (`minDocs`). */
  keptId: string | null;
  /** The kept occurrence's code-point start in its document; null when none is kept. */
  keptStart: number | null;
  /** The kept occurrence's UTF-8 byte start in its document; null when none is kept. */
  keptByteStart: number | null;
  /** Occurrences of the unit in the corpus. */
  count: number;
  /** Documents the unit occurs in. */
  docs: number;
}

/** The result of {@link dedupSpans}. */
export interface SpansResult {
  /** Every document, in input order (dropped ones too, marked). */
  documents: SpansDocument[];
  /** Every removed unit, in input order. */
  audit: SpansAuditRow[];
  /** The counts and the most repeated units. */
  summary: SpansSummary;
}

/**
 * Removes repeated lines, paragraphs, sentence windows or substrings of `minLength` words from `records`: keep-first by default (a
 * unit is kept where it first occurs, in input order, and cut from later occurrences), or every
 * occurrence of a unit found in at least `minDocs` documents. Units are compared after
 * normalization (default: NFKC, lowercase, whitespace collapsed) by a 64-bit hash. Defaults:
 * `unit: 'line'`, `window: 3`, `minUnitWords: 0`, `minDocWords: 1`, `top: 10` ({@link SPANS_DEFAULTS}).
 * @example
 * ```ts
 * const { documents } = dedupSpans(['a\nshared footer\n', 'b\nshared footer\n']);
 * documents[1].text; // 'b\n'
 * ```
 */
export function dedupSpans(records: readonly SpanRecord[], options: SpansOptions = {}): SpansResult {
  const d = new SpanDeduper(options);
  const texts = records.map((r) => (typeof r === 'string' ? r : r.text));
  const ids = records.map((r, i) => (typeof r === 'string' || r.id === undefined ? String(i) : r.id));
  if (d.needsAnchors) {
    for (const t of texts) d.anchor(t);
    d.endAnchoring();
  }
  for (const t of texts) d.observe(t);
  d.endObserving();
  if (d.needsVerifying) { for (const t of texts) d.verify(t); }
  d.endVerifying();
  const documents: SpansDocument[] = [];
  const audit: SpansAuditRow[] = [];
  texts.forEach((t, i) => {
    const v = d.decide(t);
    documents.push({ id: ids[i]!, text: v.text, changed: v.changed, dropped: v.dropped, removed: v.cuts });
    for (const u of v.units) audit.push(auditRow(ids[i]!, u, (k) => ids[k]!));
  });
  return { documents, audit, summary: d.summary() };
}

/** The audit row of unit `u` removed from document `id`. */
export function auditRow(id: string, u: RemovedUnit, idOf: (doc: number) => string): SpansAuditRow {
  const kept = u.keptDoc >= 0;
  return {
    id,
    start: u.start,
    end: u.end,
    byteStart: u.byteStart,
    byteEnd: u.byteEnd,
    keptId: kept ? idOf(u.keptDoc) : null,
    keptStart: kept ? u.keptStart : null,
    keptByteStart: kept ? u.keptByteStart : null,
    count: u.count,
    docs: u.docs,
  };
}
