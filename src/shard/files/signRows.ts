/**
 * The rows a sign task writes (src/shard/stages/sign.ts has the stage and the files' layout): band
 * keys appended straight into their partition's columns, explicit ids with their partitions, and a
 * row per document, written as `keys.bin`, `ids.bin` and `docs.bin`.
 * @module
 */
import path from 'node:path';
import { murmur3Utf16 } from '../../hash/murmur3.js';
import { writeColumns, type U32Parts } from './columns.js';
import type { JobSpec } from './job.js';
import { U32Buf, groupBy } from './u32buf.js';

/** The partition of a band key. */
export function partitionOf(band: number, hi: number, lo: number, partitions: number): number {
  const h = Math.imul(hi ^ Math.imul(lo, 0x9e3779b1) ^ band, 0x85ebca6b);
  // (h >>> 0) % partitions in int32 arithmetic: a uint32 modulo runs as a float one (~20 ns, 16 times a document).
  if (partitions <= 32767) return ((((h >>> 16) % partitions) << 16) + (h & 0xffff)) % partitions;
  return (h >>> 0) % partitions;
}

/**
 * Band-key rows (band, hi, lo, shard, doc) appended straight into their partition's columns: the
 * file groups rows by partition, and regrouping 16 rows per document at the end (a counting sort
 * of five columns) was a tenth of the sign stage. Each column is one array of P regions of `cap`
 * rows (arrays per partition and column, grown one by one, cost twice as much per row); when a
 * region is full, every region grows.
 */
class PartitionedRows {
  // 256 rows a region to start, as before: a job of many partitions must not start each task at P × 20 KB.
  private cap = 256;
  private cols: Uint32Array[];
  private readonly len: Int32Array;

  constructor(readonly partitions: number) {
    this.cols = Array.from({ length: 7 }, () => new Uint32Array(partitions * this.cap));
    this.len = new Int32Array(partitions);
  }

  /** Appends the rows of document `d` of shard `s` from its band keys (band b's at [at + b·stride]) and its text hash (t0, t1). Why these parameters: once per document. */
  addDocument(s: number, d: number, nb: number, bh: Uint32Array, bl: Uint32Array, at: number, stride: number, t0: number, t1: number): void {
    const P = this.partitions;
    const len = this.len;
    let cols = this.cols;
    let band = cols[0]!;
    let hi = cols[1]!;
    let lo = cols[2]!;
    let shard = cols[3]!;
    let doc = cols[4]!;
    let th0 = cols[5]!;
    let th1 = cols[6]!;
    for (let b = 0; b < nb; b++) {
      const h = bh[at + b * stride]!;
      const l = bl[at + b * stride]!;
      const p = partitionOf(b, h, l, P);
      if (len[p] === this.cap) {
        this.grow();
        cols = this.cols;
        [band, hi, lo, shard, doc, th0, th1] = [cols[0]!, cols[1]!, cols[2]!, cols[3]!, cols[4]!, cols[5]!, cols[6]!];
      }
      const i = p * this.cap + len[p]!++;
      band[i] = b;
      hi[i] = h;
      lo[i] = l;
      shard[i] = s;
      doc[i] = d;
      th0[i] = t0;
      th1[i] = t1;
    }
  }

  private grow(): void {
    const cap = this.cap;
    const P = this.partitions;
    this.cols = this.cols.map((a) => {
      const g = new Uint32Array(P * cap * 2);
      for (let p = 0; p < P; p++) g.set(a.subarray(p * cap, p * cap + this.len[p]!), p * cap * 2);
      return g;
    });
    this.cap = cap * 2;
  }

  /** Each partition's row count, to go back to with {@link truncate}. */
  mark(): Int32Array {
    return this.len.slice();
  }

  /** Drops the rows added since `mark` was taken. */
  truncate(mark: Int32Array): void {
    this.len.set(mark);
  }

  /**
   * The seven columns with partitions one after another, as pieces written in turn (joining them
   * first copied every row once more), and `start` (P + 1) of each partition's rows.
   */
  joined(): { columns: U32Parts[]; start: Float64Array } {
    const P = this.partitions;
    const cap = this.cap;
    const start = new Float64Array(P + 1);
    for (let p = 0; p < P; p++) start[p + 1] = start[p]! + this.len[p]!;
    const columns = this.cols.map((a) => ({ u32Parts: Array.from({ length: P }, (_, p) => a.subarray(p * cap, p * cap + this.len[p]!)) }));
    return { columns, start };
  }
}

/** `a` as a Float64Array (a loop: `Float64Array.from` goes through the iterator). */
function toF64(a: readonly number[]): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]!;
  return out;
}

/** The rows of a sign task, all its shards: band keys, and explicit ids, each with its partition. */
export class SignOutput {
  readonly keyRows: PartitionedRows;
  // Explicit ids, partitioned by their hash: join task p checks partition p for repeats across shards.
  readonly idPart = new U32Buf(1 << 10);
  readonly idShard = new U32Buf(1 << 10);
  readonly idDoc = new U32Buf(1 << 10);
  readonly idLine = new U32Buf(1 << 10);
  readonly ids: string[] = [];
  // One row per document (docs.bin).
  readonly docRow = new U32Buf(1 << 10);
  readonly docExplicit = new U32Buf(1 << 10);
  readonly docId: string[] = [];
  readonly docStart: number[] = [];
  readonly docLen = new U32Buf(1 << 10);
  // What the keep policy ranks by (only with one that needs values).
  readonly docKey: number[] = [];
  /** Exact remainders of integer keep values beyond 2^53 (keepPolicy.ts's KeepValue). */
  readonly docKeyLo: number[] = [];
  readonly docKeyStatus = new U32Buf(1 << 10);
  readonly docLine = new U32Buf(1 << 10);
  readonly docRowGroup = new U32Buf(1 << 10);
  /** docs.bin row where each shard of the task starts, then the row count. */
  readonly sstart: number[] = [0];

  constructor(partitions: number) {
    this.keyRows = new PartitionedRows(partitions);
  }

  /** Empties it for the next task, keeping its arrays' room. */
  clear(): void {
    this.truncate(new Int32Array(this.keyRows.partitions), 0, 0);
    this.sstart.length = 1;
  }

  /** Adds document `d` of shard `s`: its explicit id (with the line it is on) or none, its row and its line's place. Why these parameters: once per document. */
  document(s: number, d: number, id: string | undefined, line: number, row: number, start: number, length: number, P: number): void {
    if (id !== undefined) {
      this.idPart.push(murmur3Utf16(id, 0x1d5) % P);
      this.idShard.push(s);
      this.idDoc.push(d);
      this.idLine.push(line);
      this.ids.push(id);
    }
    this.docRow.push(row);
    this.docExplicit.push(id === undefined ? 0 : 1);
    this.docId.push(id ?? '');
    this.docStart.push(start);
    this.docLen.push(length);
  }

  /** Drops the rows past the given lengths (a shard skipped after a part of it was read). */
  truncate(keys: Int32Array, ids: number, docs: number): void {
    this.keyRows.truncate(keys);
    for (const b of [this.idPart, this.idShard, this.idDoc, this.idLine]) b.length = ids;
    this.ids.length = ids;
    for (const b of [this.docRow, this.docExplicit, this.docLen, this.docKeyStatus, this.docLine, this.docRowGroup]) b.length = Math.min(b.length, docs);
    this.docKey.length = Math.min(this.docKey.length, docs);
    this.docKeyLo.length = Math.min(this.docKeyLo.length, docs);
    this.docId.length = docs;
    this.docStart.length = docs;
  }

  /** Writes keys.bin, docs.bin (with the keep policy's columns when `keepValues`) and ids.bin into `dir`. */
  async write(dir: string, job: JobSpec, keepValues: boolean): Promise<void> {
    const P = job.partitions;
    // Rows were appended to their partition, so within one they are in (shard, document) order.
    const { columns, start } = this.keyRows.joined();
    const [band, hi, lo, shard, doc, th0, th1] = columns as [U32Parts, U32Parts, U32Parts, U32Parts, U32Parts, U32Parts, U32Parts];
    await writeColumns(path.join(dir, 'keys.bin'), { kind: 'band-keys', plan: job.id, meta: { partitions: P } }, {
      band,
      hi,
      lo,
      shard,
      doc,
      th0,
      th1,
      pstart: start,
    });
    await writeColumns(path.join(dir, 'docs.bin'), { kind: 'docs', plan: job.id, meta: {} }, {
      row: this.docRow.view(),
      explicit: this.docExplicit.view(),
      id: this.docId,
      start: toF64(this.docStart),
      length: this.docLen.view(),
      sstart: Float64Array.from(this.sstart),
      ...(keepValues
        ? {
          key: toF64(this.docKey),
          keyLo: toF64(this.docKeyLo),
          keyStatus: this.docKeyStatus.view(),
          line: this.docLine.view(),
          rowGroup: this.docRowGroup.view(),
        }
        : {}),
    });
    if (this.ids.length === 0) return;
    const m = this.ids.length;
    const index = new Uint32Array(m);
    for (let i = 0; i < m; i++) index[i] = i;
    const order = groupBy(this.idPart.view(), P, [index]);
    const o = order.columns[0]!;
    const [sh, docs, lines] = [this.idShard.view(), this.idDoc.view(), this.idLine.view()];
    // Plain loops: Typed.from(source, map) and Array.from(source, map) run several times slower here.
    const idShard = new Uint32Array(m);
    const idDoc = new Uint32Array(m);
    const idLine = new Uint32Array(m);
    const id = new Array<string>(m);
    for (let k = 0; k < m; k++) {
      const i = o[k]!;
      idShard[k] = sh[i]!;
      idDoc[k] = docs[i]!;
      idLine[k] = lines[i]!;
      id[k] = this.ids[i]!;
    }
    await writeColumns(path.join(dir, 'ids.bin'), { kind: 'id-keys', plan: job.id, meta: { partitions: P } }, {
      shard: idShard,
      doc: idDoc,
      line: idLine,
      id,
      pstart: order.start,
    });
  }
}
