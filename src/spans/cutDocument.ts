/**
 * {@link cutDocument}: what a document loses, given which of its units go — the ranges cut
 * (merged), the text left, the audit's removed units and whether the document is emptied or
 * dropped. The one-process pass 2 and the sharded job's cut stage both call it.
 * @module
 */
import { countTokens } from '../text/tokens.js';
import { OffsetCursor } from './offsets.js';
import type { Units } from './units.js';

/** A range cut out of a document's text: code-point and UTF-8 byte offsets, end exclusive. */
export interface CutRange {
  start: number;
  end: number;
  byteStart: number;
  byteEnd: number;
}

/** One removed unit of a document, with the occurrence kept in its place. */
export interface RemovedUnit extends CutRange {
  /** The kept occurrence's document (0-based, input order); −1 in boilerplate mode (`minDocs`), where none is kept. */
  keptDoc: number;
  /** The kept occurrence's code-point start in its document (−1 when none is kept). */
  keptStart: number;
  /** The kept occurrence's UTF-8 byte start in its document (−1 when none is kept). */
  keptByteStart: number;
  /** Occurrences of the unit in the corpus. */
  count: number;
  /** Documents the unit occurs in. */
  docs: number;
}

/** What pass 2 decides for one document. */
export interface DocVerdict {
  /** True when at least one unit was removed. */
  changed: boolean;
  /** The text left (the input text when nothing was removed). */
  text: string;
  /** The ranges cut, merged (overlapping windows are one range), in text order. */
  cuts: CutRange[];
  /** Every removed unit (sentence windows may overlap). */
  units: RemovedUnit[];
  /** Changed and left with no word. */
  emptied: boolean;
  /** Changed and left with fewer than `minDocWords` words: the document is dropped. */
  dropped: boolean;
}

/** The kept occurrence and counts of a removed unit, as {@link cutDocument} writes them into its {@link RemovedUnit}. */
export type UnitFacts = Pick<RemovedUnit, 'keptDoc' | 'keptStart' | 'keptByteStart' | 'count' | 'docs'>;

/** A document's verdict with the bytes its cuts remove. */
export type CutVerdict = DocVerdict & { bytesRemoved: number };

/** What {@link cutDocument} cuts out of one document. */
export interface DocCuts {
  /** The document's units, as {@link UnitWalker.each} split them. */
  units: Units;
  /** The unit indices removed, ascending. */
  removed: readonly number[];
  /** The kept occurrence and counts of the j-th removed unit. */
  facts: (j: number) => UnitFacts;
  /** Substring units: overlapping removed windows are one audit row. */
  substring: boolean;
  minDocWords: number;
}

/**
 * What a document loses, given which of its units go: `removed` (unit indices of `u`, ascending, as
 * {@link UnitWalker.each} visits them) and `facts(j)` the kept occurrence and counts of the j-th.
 * The one-process pass 2 and the sharded job's cut stage both call it, so they cut the same bytes.
 */
export function cutDocument(text: string, cut: DocCuts): CutVerdict {
  const { units: u, removed, facts } = cut;
  if (removed.length === 0) return { changed: false, text, cuts: [], units: [], emptied: false, dropped: false, bytesRemoved: 0 };
  const c = new OffsetCursor().reset(text);
  const e = new OffsetCursor().reset(text);
  const rows = cut.substring ? mergeWindows(removed, u.start, u.end) : undefined;
  const pick = rows?.pick ?? removed.map((_, j) => j);
  const units: RemovedUnit[] = pick.map((j, r) => {
    const k = removed[j]!;
    c.at(u.start[k]!);
    e.at(rows?.end[r] ?? u.end[k]!);
    return { start: c.cp, end: e.cp, byteStart: c.byte, byteEnd: e.byte, ...facts(j) };
  });
  // Merged in UTF-16 first (starts increase with k), then kept text and offsets.
  const cutsU: number[] = [];
  for (const k of removed) {
    const a = u.start[k]!;
    const b = u.end[k]!;
    const n = cutsU.length;
    if (n > 0 && a <= cutsU[n - 1]!) cutsU[n - 1] = Math.max(cutsU[n - 1]!, b);
    else cutsU.push(a, b);
  }
  c.reset(text);
  e.reset(text);
  const cuts: CutRange[] = [];
  let kept = '';
  let last = 0;
  let bytesRemoved = 0;
  for (let j = 0; j < cutsU.length; j += 2) {
    c.at(cutsU[j]!);
    e.at(cutsU[j + 1]!);
    cuts.push({ start: c.cp, end: e.cp, byteStart: c.byte, byteEnd: e.byte });
    bytesRemoved += e.byte - c.byte;
    kept += text.slice(last, cutsU[j]!);
    last = cutsU[j + 1]!;
  }
  kept += text.slice(last);
  // Only whether it has none, or fewer than minDocWords, matters: counting stops there.
  const words = countTokens(kept, Math.max(1, cut.minDocWords));
  return { changed: true, text: kept, cuts, units, emptied: words === 0, dropped: words < cut.minDocWords, bytesRemoved };
}

/**
 * Substring units' audit rows: removed windows that overlap (in text order) are one row, from the
 * first window's start to the last one's end, named by the first window (its kept occurrence and
 * counts), so a repeat of any length is one row, not one per word. `pick`: the row's first window, as an index into `removed`.
 */
function mergeWindows(removed: readonly number[], start: number[], end: number[]): { pick: number[]; end: number[] } {
  const out = { pick: [] as number[], end: [] as number[] };
  for (let j = 0; j < removed.length; j++) {
    const k = removed[j]!;
    const n = out.end.length;
    if (n > 0 && start[k]! <= out.end[n - 1]!) out.end[n - 1] = Math.max(out.end[n - 1]!, end[k]!);
    else (out.pick.push(j), out.end.push(end[k]!));
  }
  return out;
}
