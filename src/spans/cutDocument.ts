/**
 * {@link cutDocument}: what a document loses, given which of its units go — the ranges cut
 * (merged), the text left, the audit's removed units and whether the document is emptied or
 * dropped. The one-process pass 2 and the sharded job's cut stage both call it.
 * @module
 */
import { countTokens, hasTokenIn } from '../text/tokens.js';
import { OffsetCursor, type OffsetWalk } from './offsets.js';
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
  /** Where the text's offsets are walked, when not in JavaScript (it holds the text: {@link OffsetCursor.reset}). */
  walk?: OffsetWalk | undefined;
}

/**
 * What a document loses, given which of its units go: `removed` (unit indices of `u`, ascending, as
 * {@link UnitWalker.each} visits them) and `facts(j)` the kept occurrence and counts of the j-th.
 * The one-process pass 2 and the sharded job's cut stage both call it, so they cut the same bytes.
 */
export function cutDocument(text: string, cut: DocCuts): CutVerdict {
  const { units: u, removed, facts } = cut;
  if (removed.length === 0) return { changed: false, text, cuts: [], units: [], emptied: false, dropped: false, bytesRemoved: 0 };
  // Each removed unit's offsets, read once by one cursor over its starts and ends in text order (both increase with k).
  const c = new OffsetCursor().reset(text, cut.walk);
  const n = removed.length;
  const at = new Array<number>(4 * n);
  for (let js = 0, je = 0; je < n;) {
    const a = js < n ? u.start[removed[js]!]! : Infinity;
    const b = u.end[removed[je]!]!;
    const f = a <= b ? 4 * js++ : 4 * je++ + 2;
    c.at(a <= b ? a : b);
    at[f] = c.cp;
    at[f + 1] = c.byte;
  }
  const rows = cut.substring ? mergeWindows(removed, u.start, u.end) : undefined;
  const units: RemovedUnit[] = [];
  for (let r = 0; r < (rows ? rows.pick.length : n); r++) {
    const j = rows ? rows.pick[r]! : r;
    // A merged row ends where its last window does.
    const l = rows ? rows.last[r]! : j;
    units.push({ start: at[4 * j]!, end: at[4 * l + 2]!, byteStart: at[4 * j + 1]!, byteEnd: at[4 * l + 3]!, ...facts(j) });
  }
  // Merged in UTF-16 (starts increase with k); a range's offsets are its first unit's start and its furthest unit's end.
  const cuts: CutRange[] = [];
  const kept: number[] = [];
  let last = 0;
  let bytesRemoved = 0;
  for (let j = 0; j < n;) {
    const a = u.start[removed[j]!]!;
    let b = u.end[removed[j]!]!;
    let far = j;
    let i = j + 1;
    for (; i < n && u.start[removed[i]!]! <= b; i++) {
      if (u.end[removed[i]!]! > b) (b = u.end[removed[i]!]!, (far = i));
    }
    cuts.push({ start: at[4 * j]!, end: at[4 * far + 2]!, byteStart: at[4 * j + 1]!, byteEnd: at[4 * far + 3]! });
    bytesRemoved += at[4 * far + 3]! - at[4 * j + 1]!;
    if (a > last) kept.push(last, a);
    last = b;
    j = i;
  }
  if (text.length > last) kept.push(last, text.length);
  const verdict = new ChangedVerdict(text, kept, { cuts, units, bytesRemoved });
  // Only whether it has none, or fewer than minDocWords, matters: counting stops there. Whether it has
  // one is read from the kept ranges where it can be, with no text made (the byte route writes the
  // ranges without it, ../file/file.ts).
  const limit = Math.max(1, cut.minDocWords);
  const one = limit === 1 ? hasTokenIn(text, kept) : undefined;
  const words = one === undefined ? countTokens(verdict.text, limit) : one ? 1 : 0;
  verdict.emptied = words === 0;
  verdict.dropped = words < cut.minDocWords;
  return verdict;
}

/**
 * A changed document's verdict: its text left is made from the source's kept ranges when first
 * read. The byte route of pass 2 quotes those ranges into the record's JSON straight from the
 * kernel's copy of the source ({@link keptRanges}), and never makes the string: building it was a
 * string of slices flattened, then copied into the kernel again.
 */
class ChangedVerdict implements CutVerdict {
  readonly changed = true;
  readonly cuts: CutRange[];
  readonly units: RemovedUnit[];
  readonly bytesRemoved: number;
  emptied = false;
  dropped = false;
  private left: string | undefined;

  constructor(
    readonly source: string,
    /** The source's UTF-16 ranges kept, [start, end) pairs in order. */
    readonly kept: readonly number[],
    parts: Pick<CutVerdict, 'cuts' | 'units' | 'bytesRemoved'>,
  ) {
    this.cuts = parts.cuts;
    this.units = parts.units;
    this.bytesRemoved = parts.bytesRemoved;
  }

  get text(): string {
    if (this.left === undefined) {
      let t = '';
      for (let r = 0; r < this.kept.length; r += 2) t += this.source.slice(this.kept[r]!, this.kept[r + 1]!);
      this.left = t;
    }
    return this.left;
  }
}

/** A changed verdict's source text and the UTF-16 ranges of it kept (`[start, end)` pairs in order), when {@link cutDocument} made it; else undefined. */
export function keptRanges(v: { readonly text: string }): { source: string; kept: readonly number[] } | undefined {
  return v instanceof ChangedVerdict ? v : undefined;
}

/**
 * Substring units' audit rows: removed windows that overlap (in text order) are one row, from the
 * first window's start to the last one's end, named by the first window (its kept occurrence and
 * counts), so a repeat of any length is one row, not one per word. `pick`: the row's first window, `last`: the window
 * that ends it (the furthest end), as indices into `removed`.
 */
function mergeWindows(removed: readonly number[], start: number[], end: number[]): { pick: number[]; last: number[] } {
  const out = { pick: [] as number[], last: [] as number[] };
  let far = -1;
  for (let j = 0; j < removed.length; j++) {
    const k = removed[j]!;
    const n = out.pick.length;
    if (n > 0 && start[k]! <= far) {
      if (end[k]! > far) (far = end[k]!, (out.last[n - 1] = j));
    } else (out.pick.push(j), out.last.push(j), (far = end[k]!));
  }
  return out;
}
