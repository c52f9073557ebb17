/**
 * Stage 1, sign (one task per group of shards): reads the shards, signs every document and writes
 * their band keys partitioned by band-key hash, so that join task p reads only partition p of every
 * sign task's output.
 *
 * Outputs in `sign/NNNNN/`: `keys.bin` (kind `band-keys`): columns band, hi, lo, shard, doc, th0, th1
 * (uint32, one row per band per non-empty document; th0, th1 the document's 64-bit text hash
 * `textHash2`, by which join folds exact copies), grouped by partition; `pstart` (float64, P + 1) gives
 * partition p's rows [pstart[p], pstart[p+1]), in (shard, doc) order. `ids.bin` (kind `id-keys`,
 * when the input has explicit ids): columns shard, doc, line (uint32), id (string), grouped by the
 * partition of the id's hash with `pstart`. `docs.bin` (kind `docs`): one row per document, in
 * (shard, doc) order with `sstart` (the task's shards + 1): row (uint32, within its shard),
 * explicit (uint32: 1 when `id` came from the input), id (string), and where its line lies in a
 * plain line-format shard: start (float64; −1 in a shard read sequentially) and length (uint32).
 * Later stages take ids from here, and verification reads texts again at those offsets. With a
 * keep policy that ranks by a value (`--keep longest|shortest|max:F|min:F`), also: key (float64:
 * the text's length in UTF-16 code units, or the field's value, NaN when it has none), keyLo
 * (float64: the exact remainder of an integer value beyond 2^53, else 0), keyStatus
 * (uint32: 0 ok, 1 missing, 2 not a number or an ISO date), line (uint32, 1-based) and rowGroup
 * (uint32: a Parquet row group + 1, else 0) for the error that names a clustered document's bad
 * field; decide picks each cluster's kept member by key.
 *
 * A plain line-format shard is read in byte ranges, its texts signed as bytes (`signRanges`, the
 * route of `neardup dedup` on one file); other shards through the sequential reader.
 * @module
 */
import path from 'node:path';
import type { TextSigner } from '../../sketch/textSigner.js';
import { Reusable, withSigner } from './reuse.js';
import { openInput, rowCount } from '../../io/read/read.js';
import { bandKeys } from '../../lsh/bandKeys.js';
import { murmur3Utf16, textHash2 } from '../../hash/murmur3.js';
import { isUserError } from '../../common/errors.js';
import { writeColumns, type U32Parts } from '../files/columns.js';
import { runPerShard } from '../files/perShard.js';
import { checkShard, type JobSpec } from '../files/job.js';
import { openShard, shardLineSpec, type SignMarker } from '../files/shardInput.js';
import { signRanges } from '../../dedup/rangedSource.js';
import { U32Buf, groupBy } from '../files/u32buf.js';
import { keepNeedsValues, keepReadError, keepReadOptions, keepValue, parseKeepPolicy, type KeepRule } from '../../cluster/keepPolicy.js';

/** The partition of a band key. */
export function partitionOf(band: number, hi: number, lo: number, partitions: number): number {
  const h = Math.imul(hi ^ Math.imul(lo, 0x9e3779b1) ^ band, 0x85ebca6b);
  // (h >>> 0) % partitions in int32 arithmetic: a uint32 modulo runs as a float one (~20 ns, 16 times a document).
  if (partitions <= 32767) return ((((h >>> 16) % partitions) << 16) + (h & 0xffff)) % partitions;
  return (h >>> 0) % partitions;
}

/** Runs sign task `t` (idempotent): signs each shard of its group into one keys file (and one ids file). */
export function runSign(workDir: string, job: JobSpec, t: number): Promise<object> {
  // One signer for the task's shards (and the process's next tasks): each has its own WebAssembly memory, costly to make per tiny shard.
  return withSigner(job, (signer) => outputs.with(async (kept) => {
    // Kept between a process's tasks: rows grown afresh per task left glibc's heap 50 MB larger after 8.
    if (kept.out?.keyRows.partitions !== job.partitions) kept.out = new SignOutput(job.partitions);
    const out = kept.out;
    out.clear();
    return runPerShard<SignMarker>(
      workDir,
      job,
      'sign',
      t,
      (s) => signShard(workDir, job, signer, out, s),
      (dir) => out.write(dir, job),
    );
  }));
}

/** Sign outputs kept between the tasks of a process (one per running task). */
const outputs = new Reusable<{ out?: SignOutput }>(() => ({}));

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
class SignOutput {
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

  async write(dir: string, job: JobSpec): Promise<void> {
    const P = job.partitions;
    // Rows were appended to their partition, so within one they are in (shard, document) order.
    const { columns, start } = this.keyRows.joined();
    const [band, hi, lo, shard, doc, th0, th1] = columns as [U32Parts, U32Parts, U32Parts, U32Parts, U32Parts, U32Parts, U32Parts];
    await writeColumns(path.join(dir, 'keys.bin'), 'band-keys', job.id, { partitions: P }, { band, hi, lo, shard, doc, th0, th1, pstart: start });
    await writeColumns(path.join(dir, 'docs.bin'), 'docs', job.id, {}, {
      row: this.docRow.view(),
      explicit: this.docExplicit.view(),
      id: this.docId,
      start: toF64(this.docStart),
      length: this.docLen.view(),
      sstart: Float64Array.from(this.sstart),
      ...(keepRule(job) ? { key: toF64(this.docKey), keyLo: toF64(this.docKeyLo), keyStatus: this.docKeyStatus.view(), line: this.docLine.view(), rowGroup: this.docRowGroup.view() } : {}),
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
    await writeColumns(path.join(dir, 'ids.bin'), 'id-keys', job.id, { partitions: P }, { shard: idShard, doc: idDoc, line: idLine, id, pstart: order.start });
  }
}

async function signShard(workDir: string, job: JobSpec, signer: TextSigner, out: SignOutput, s: number): Promise<SignMarker> {
  const keysBefore = out.keyRows.mark();
  const idsBefore = out.ids.length;
  const docsBefore = out.docRow.length;
  let marker: SignMarker;
  try {
    checkShard(workDir, job, s);
    const spec = shardLineSpec(job, s);
    marker = spec ? await signInRanges(job, spec, signer, out, s) : await signSequentially(workDir, job, signer, out, s);
    const rule = keepRule(job);
    if (rule) await keepValues(job, rule, out, s, out.docRow.length - docsBefore);
    // Changed while it was read: the keys would mix two versions.
    checkShard(workDir, job, s);
    marker.ids = out.ids.length - idsBefore;
  } catch (e) {
    if (!(job.onBadShard === 'skip' && isUserError(e))) throw e;
    out.truncate(keysBefore, idsBefore, docsBefore);
    // The whole shard is left out, and the summary names it with the reader's error (file and line).
    marker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0, skipped: (e as Error).message };
  }
  out.sstart.push(out.docRow.length);
  return marker;
}

/** The job's keep policy when it ranks by a value, else undefined. */
export function keepRule(job: JobSpec): KeepRule | undefined {
  if (job.keep === undefined) return undefined;
  const rule = parseKeepPolicy(job.keep);
  return keepNeedsValues(rule) ? rule : undefined;
}

/**
 * Records what the keep policy ranks shard `s`'s `docs` documents by, from one more sequential pass
 * (the same reader as `neardup dedup`'s, so lengths and values agree). A bad value is recorded, not
 * thrown: only a clustered document's is an error (raised by components).
 */
async function keepValues(job: JobSpec, rule: KeepRule, out: SignOutput, s: number, docs: number): Promise<void> {
  let d = 0;
  try {
    const input = await openInput(job.shards[s]!.path, keepReadOptions({ ...job.read }, rule));
    for await (const r of input.records) {
      if (d >= docs) break;
      const v = keepValue(rule, r.text, r.title);
      out.docKey.push(v.value);
      out.docKeyLo.push(v.lo);
      out.docKeyStatus.push(v.status);
      out.docLine.push(r.line);
      out.docRowGroup.push(r.rowGroup === undefined ? 0 : r.rowGroup + 1);
      d++;
    }
  } catch (e) {
    throw keepReadError(e, rule);
  }
  if (d !== docs) throw new Error(`${job.shards[s]!.path} changed while it was being read (${d} documents now, ${docs} then)`);
}

/** Signs a plain line-format shard in byte ranges, as `neardup dedup` reads one file. */
async function signInRanges(job: JobSpec, spec: NonNullable<ReturnType<typeof shardLineSpec>>, signer: TextSigner, out: SignOutput, s: number): Promise<SignMarker> {
  const nb = job.bands;
  const P = job.partitions;
  const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: spec.format, skippedRecords: 0 };
  let d = 0;
  let lastRow = -1;
  // Records of a range arrive (onRecords) just before its keys (take); starts and lengths once all are placed.
  let pending: { ids: string[] | undefined; lines: Int32Array; rows: Int32Array } | undefined;
  const index = await signRanges(
    {
      kind: 'ranges',
      spec,
      onRecords: (r) => {
        pending = r;
        marker.skippedRecords += r.skipped;
        if (r.examples[0] && marker.firstSkip === undefined) marker.firstSkip = r.examples[0].message;
        marker.bytes = r.bytesRead;
      },
    },
    undefined,
    signer,
    { bands: nb, rows: job.rows },
    false,
    (batch) => {
      const r = pending!;
      const n = batch.count;
      for (let i = 0; i < n; i++) {
        out.document(s, d + i, r.ids?.[i], r.lines[i]!, r.rows[i]!, 0, 0, P);
        if (batch.present[i]) out.keyRows.addDocument(s, d + i, nb, batch.hi, batch.lo, i, n, batch.th[2 * i]!, batch.th[2 * i + 1]!);
        else marker.emptyDocs++;
      }
      if (n > 0) lastRow = r.rows[n - 1]!;
      marker.chars += batch.chars;
      d += n;
    },
  );
  const base = out.docStart.length - d;
  for (let i = 0; i < d; i++) out.docStart[base + i] = index.starts[i]!;
  out.docLen.view().set(index.lengths.subarray(0, d), base);
  marker.docs = d;
  // Rows count skipped invalid records too, like the single-process row numbers.
  marker.rows = rowCount(lastRow, d, marker.skippedRecords);
  return marker;
}

/** Signs a shard through the io layer's sequential reader (compressed, Parquet, CSV, …). */
async function signSequentially(workDir: string, job: JobSpec, signer: TextSigner, out: SignOutput, s: number): Promise<SignMarker> {
  const nb = job.bands;
  const P = job.partitions;
  const row = new Uint32Array(signer.numPerm);
  const bh = new Uint32Array(nb);
  const bl = new Uint32Array(nb);
  const th = new Uint32Array(2);
  const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0 };
  const input = await openShard(workDir, job, s);
  marker.format = input.format;
  let d = 0;
  let lastRow = -1;
  for await (const r of input.records) {
    lastRow = r.row;
    out.document(s, d, r.id, r.line, r.row, -1, 0, P);
    marker.chars += r.text.length;
    if (signer.signInto(r.text, row)) {
      bandKeys(row, nb, job.rows, bh, bl);
      // As a string (a plain shard's texts are hashed as bytes): a copy across the two is not folded, which changes only the work.
      textHash2(th, 0, r.text);
      out.keyRows.addDocument(s, d, nb, bh, bl, 0, 1, th[0]!, th[1]!);
    } else marker.emptyDocs++;
    d++;
  }
  marker.docs = d;
  // Rows count skipped invalid records too, like the single-process row numbers.
  marker.rows = rowCount(lastRow, d, input.skips.count);
  marker.bytes = input.bytesRead();
  marker.skippedRecords = input.skips.count;
  if (input.skips.examples[0]) marker.firstSkip = input.skips.examples[0].message;
  return marker;
}
