/**
 * A line-format file (JSONL, text, id⇥text) as a source of the streaming pipeline that the workers
 * read themselves: pass 1 hands each worker a byte range to read, parse and sign; verification
 * hands it the byte offsets of the documents whose sets it needs, so lines nobody needs are never
 * read again. The main thread only places results, in file order: line and row numbers, ids and
 * skipped records come out exactly as a sequential read would give them.
 * @module
 */
import { openSync, closeSync } from 'node:fs';
import { InputError } from '../common/errors.js';
import { planLineRanges, stampOf, tsvHeaderOf, type FileStamp, type LineParseSpec, type BlockProblem } from '../io/ranges/lineRanges.js';
import type { SignPool } from '../parallel/signPool.js';
import { signRange, textsAt, type SignRangeReply } from '../parallel/rangeJobs.js';
import { arenaSets } from '../parallel/arenaSets.js';
import { ProbeTable } from '../similarity/probeSet.js';
import type { TextSigner } from '../sketch/textSigner.js';
import type { SetBatch, SetFeed } from './streamVerify.js';
import { Growable } from '../common/growable.js';

/** A line-format file the workers read in byte ranges (see {@link dedupStream}). */
export interface RangedSource {
  kind: 'ranges';
  spec: LineParseSpec;
  /** Bytes per range of pass 1. Default 4 MiB. */
  chunkBytes?: number;
  /** Called once per range, in file order, as pass 1 places it. */
  onRecords?: (records: RangedRecords) => void;
  /** Called when pass 1 ends, `ok` false when it failed. */
  onEnd?: (ok: boolean) => void;
}

/** The records of one range of pass 1, numbered as in the file. */
export interface RangedRecords {
  count: number;
  /** 0-based row of each record among the file's data records (skipped ones count too). */
  rows: Int32Array;
  /** 1-based line of each record. */
  lines: Int32Array;
  /** Explicit ids, when the format or fields give them. */
  ids: string[] | undefined;
  /** Invalid records skipped in this range, and the first few (as errors located in the file). */
  skipped: number;
  examples: InputError[];
  /** The file starts with a byte-order mark (first range only). */
  bom: boolean;
  /** Bytes of the file read so far (the end of this range). */
  bytesRead: number;
}

/** Where pass 1 found each document: what verification needs to read it again. */
export interface RangedIndex {
  /** The parse spec pass 1 used (for TSV, with the header line). */
  spec: LineParseSpec;
  starts: Float64Array;
  lengths: Int32Array;
  /** Each document's text length in UTF-16 code units. */
  units: Int32Array;
  stamp: FileStamp;
}

/** Pass 1 as it reaches the pipeline: one batch of signed documents. */
export interface SignedBatch {
  count: number;
  present: Uint8Array;
  hi: Uint32Array;
  lo: Uint32Array;
  /** Two 32-bit hashes of each text (`textHash2`), by which copies are folded. */
  th: Uint32Array;
  sigs?: Uint32Array;
  chars: number;
  /** The documents the whole file should hold, extrapolated from the bytes read so far. */
  expected?: number;
}

/** Throws when the file's size or modification time is no longer `stamp`. */
function checkStamp(spec: LineParseSpec, stamp: FileStamp): void {
  const fd = openSync(spec.path, 'r');
  try {
    const now = stampOf(fd);
    if (now.size !== stamp.size || now.mtimeMs !== stamp.mtimeMs) {
      throw new Error(`${spec.name} changed while it was being read (its size or modification time is not what the first pass saw)`);
    }
  } finally {
    closeSync(fd);
  }
}

function located(spec: LineParseSpec, p: BlockProblem, linesBefore: number): InputError {
  return new InputError(spec.name, p.line === undefined ? undefined : linesBefore + p.line, p.reason, p.position, p.fix);
}

/** How {@link signRanges} signs: on `pool`'s workers or this thread with `signer`, banded, with the signatures kept or not. */
export interface RangeSigning {
  pool: SignPool | undefined;
  signer: TextSigner;
  banding: { bands: number; rows: number };
  withSignatures: boolean;
}

/**
 * Pass 1 over a ranged source: every range is read, parsed and signed on the pool (or on this
 * thread without one), a few ranges ahead, and placed in order through `take`.
 */
export async function signRanges(source: RangedSource, how: RangeSigning, take: (batch: SignedBatch) => void): Promise<RangedIndex> {
  const { pool, signer, banding, withSignatures } = how;
  // TSV: every range after the first is read after the header line, and the first range holds it.
  const header = source.spec.format === 'tsv' ? tsvHeaderOf(source.spec.path) : undefined;
  // As the sequential reader: a header is required (an empty file is not 0 documents).
  if (source.spec.format === 'tsv' && header === undefined)
    throw new InputError(source.spec.name, undefined, 'no header line (the file is empty): TSV input starts with a header naming its columns');
  const spec = source.spec.format === 'tsv' ? { ...source.spec, header: header?.header ?? '' } : source.spec;
  const { ranges, stamp } = planLineRanges(spec.path, source.chunkBytes ?? 4 << 20, header?.end ?? 0);
  const starts = new Growable<Float64Array>((n) => new Float64Array(n));
  const lengths: Int32Array[] = [];
  const units: Int32Array[] = [];
  let count = 0;
  let linesBefore = 0;
  let rowsBefore = 0;
  const place = (r: SignRangeReply, end: number): void => {
    if (r.problem) throw located(spec, r.problem, linesBefore);
    const lines = r.lines;
    const rows = r.rows;
    for (let i = 0; i < r.count; i++) {
      lines[i] = lines[i]! + linesBefore;
      rows[i] = rows[i]! + rowsBefore;
    }
    const examples = r.examples.map((p) => located(spec, p, linesBefore));
    linesBefore += r.lineCount;
    rowsBefore += r.rowCount;
    starts.append(r.starts);
    lengths.push(r.lengths);
    units.push(r.units);
    count += r.count;
    source.onRecords?.({ count: r.count, rows, lines, ids: r.ids, skipped: r.skipped, examples, bom: r.bom, bytesRead: end });
    take({ ...r, expected: end > 0 ? Math.ceil((count * stamp.size) / end) : undefined });
  };
  const inflight: { reply: Promise<SignRangeReply>; end: number }[] = [];
  let ok = false;
  try {
    for (let k = 0; k < ranges.length; k++) {
      const range = ranges[k]!;
      const reply = pool
        ? pool.signRange(spec, range, { first: k === 0, bands: banding, withSignatures })
        : signRange({ id: k, kind: 'signRange', spec, start: range.start, end: range.end, first: k === 0, bands: banding, withSignatures }, signer).then((x) =>
          x.reply
        );
      inflight.push({ reply, end: range.end });
      if (inflight.length > (pool ? pool.size * 2 : 0)) {
        const next = inflight.shift()!;
        place(await next.reply, next.end);
      }
    }
    while (inflight.length > 0) {
      const next = inflight.shift()!;
      place(await next.reply, next.end);
    }
    checkStamp(spec, stamp);
    ok = true;
  } finally {
    // Replies still in flight after a failure are dropped (their rejections too).
    for (const x of inflight) x.reply.catch(() => undefined);
    source.onEnd?.(ok);
  }
  const joined = (parts: Int32Array[]): Int32Array => {
    const all = new Int32Array(count);
    let at = 0;
    for (const l of parts) {
      all.set(l, at);
      at += l.length;
    }
    return all;
  };
  return { starts: starts.data.subarray(0, count), lengths: joined(lengths), units: joined(units), stamp, spec };
}

/**
 * Verification's feed over a ranged source: batches of `batchSize` documents whose needed sets the
 * workers read, parse and compute (on this thread without a pool). Each pass first checks that the
 * file is as pass 1 found it.
 */
export function rangedFeed(index: RangedIndex, n: number, how: { pool: SignPool | undefined; signer: TextSigner; batchSize: number }): SetFeed {
  const { pool, signer, batchSize } = how;
  const { spec } = index;
  const { starts, lengths, units } = index;
  async function* pass(): AsyncGenerator<SetBatch> {
    checkStamp(spec, index.stamp);
    for (let base = 0; base < n; base += batchSize) {
      const len = Math.min(batchSize, n - base);
      yield {
        len,
        // A text of L UTF-16 units has at most L shingles (before normalization; longer sets come
        // back whole). Pass 1 kept the lengths: a line's bytes bound it too, but less tightly.
        bound: (j) => units[base + j]!,
        sets: async (need, arena, score) => {
          const s = new Float64Array(need.length);
          const l = new Int32Array(need.length);
          for (let i = 0; i < need.length; i++) {
            s[i] = starts[base + need[i]!]!;
            l[i] = lengths[base + need[i]!]!;
          }
          if (pool) return pool.rangeSets(spec, { starts: s, lengths: l, firstLine: 1 }, arena, score);
          const texts = await textsAt({ spec, starts: s, lengths: l, firstLine: 1 });
          return arenaSets(texts, { signer, table, arena, score });
        },
      };
    }
  }
  // Without workers, this thread does what a worker does, with its own fallback table.
  const table = new ProbeTable();
  return { pass, workers: pool?.size ?? 0, placesText: signer.arenaText };
}
