/**
 * Stage 1, sign (one task per group of shards): reads the shards, signs every document and writes
 * their band keys partitioned by band-key hash, so that join task p reads only partition p of every
 * sign task's output.
 *
 * Outputs in `sign/NNNNN/`: `keys.bin` (kind `band-keys`): columns band, hi, lo, shard, doc (uint32,
 * one row per band per non-empty document), grouped by partition; `pstart` (float64, P + 1) gives
 * partition p's rows [pstart[p], pstart[p+1]), in (shard, doc) order. `ids.bin` (kind `id-keys`,
 * when the input has explicit ids): columns shard, doc, line (uint32), id (string), grouped by the
 * partition of the id's hash with `pstart`.
 * @module
 */
import path from 'node:path';
import { createTextSigner, type TextSigner } from '../sketch/textSigner.js';
import { rowCount } from '../io/read.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { murmur3Utf16 } from '../hash/murmur3.js';
import { isUserError } from '../io/errors.js';
import { writeColumns } from './columns.js';
import { runPerShard } from './perShard.js';
import { checkShard, type JobSpec } from './job.js';
import { openShard, type SignMarker } from './shardInput.js';
import { U32Buf, groupBy } from './u32buf.js';

/** The partition of a band key. */
export function partitionOf(band: number, hi: number, lo: number, partitions: number): number {
  return (Math.imul(hi ^ Math.imul(lo, 0x9e3779b1) ^ band, 0x85ebca6b) >>> 0) % partitions;
}

/** Runs sign task `t` (idempotent): signs each shard of its group into one keys file (and one ids file). */
export function runSign(workDir: string, job: JobSpec, t: number): Promise<object> {
  // One signer for the task's shards: each has its own WebAssembly memory, costly to make per tiny shard.
  const signer = createTextSigner({ shingle: job.shingle, minhash: job.minhash });
  const out = new SignOutput();
  return runPerShard<SignMarker>(
    workDir,
    job,
    'sign',
    t,
    (s) => signShard(workDir, job, signer, out, s),
    (dir) => out.write(dir, job),
  );
}

/** The rows of a sign task, all its shards: band keys, and explicit ids, each with its partition. */
class SignOutput {
  readonly part = new U32Buf(1 << 10);
  readonly band = new U32Buf(1 << 10);
  readonly hi = new U32Buf(1 << 10);
  readonly lo = new U32Buf(1 << 10);
  readonly shard = new U32Buf(1 << 10);
  readonly doc = new U32Buf(1 << 10);
  // Explicit ids, partitioned by their hash: join task p checks partition p for repeats across shards.
  readonly idPart = new U32Buf(1 << 10);
  readonly idShard = new U32Buf(1 << 10);
  readonly idDoc = new U32Buf(1 << 10);
  readonly idLine = new U32Buf(1 << 10);
  readonly ids: string[] = [];

  /** Drops the rows past the given lengths (a shard skipped after a part of it was read). */
  truncate(keys: number, ids: number): void {
    for (const b of [this.part, this.band, this.hi, this.lo, this.shard, this.doc]) b.length = keys;
    for (const b of [this.idPart, this.idShard, this.idDoc, this.idLine]) b.length = ids;
    this.ids.length = ids;
  }

  async write(dir: string, job: JobSpec): Promise<void> {
    const P = job.partitions;
    // Grouped by partition, stably: within a partition, rows stay in (shard, document) order.
    const g = groupBy(this.part.view(), P, [this.band.view(), this.hi.view(), this.lo.view(), this.shard.view(), this.doc.view()]);
    const [band, hi, lo, shard, doc] = g.columns as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    await writeColumns(path.join(dir, 'keys.bin'), 'band-keys', job.id, { partitions: P }, { band, hi, lo, shard, doc, pstart: g.start });
    if (this.ids.length === 0) return;
    const order = groupBy(this.idPart.view(), P, [Uint32Array.from(this.ids, (_, i) => i)]);
    const o = order.columns[0]!;
    const [sh, docs, lines] = [this.idShard.view(), this.idDoc.view(), this.idLine.view()];
    await writeColumns(path.join(dir, 'ids.bin'), 'id-keys', job.id, { partitions: P }, {
      shard: Uint32Array.from(o, (i) => sh[i]!),
      doc: Uint32Array.from(o, (i) => docs[i]!),
      line: Uint32Array.from(o, (i) => lines[i]!),
      id: Array.from(o, (i) => this.ids[i]!),
      pstart: order.start,
    });
  }
}

async function signShard(workDir: string, job: JobSpec, signer: TextSigner, out: SignOutput, s: number): Promise<SignMarker> {
  const nb = job.bands;
  const P = job.partitions;
  const row = new Uint32Array(signer.numPerm);
  const bh = new Uint32Array(nb);
  const bl = new Uint32Array(nb);
  const keysBefore = out.part.length;
  const idsBefore = out.ids.length;
  const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0 };
  try {
    const input = await openShard(workDir, job, s);
    marker.format = input.format;
    let d = 0;
    let lastRow = -1;
    for await (const r of input.records) {
      lastRow = r.row;
      if (r.id !== undefined) {
        out.idPart.push(murmur3Utf16(r.id, 0x1d5) % P);
        out.idShard.push(s);
        out.idDoc.push(d);
        out.idLine.push(r.line);
        out.ids.push(r.id);
      }
      marker.chars += r.text.length;
      if (signer.signInto(r.text, row)) {
        bandKeys(row, nb, job.rows, bh, bl);
        for (let b = 0; b < nb; b++) {
          out.part.push(partitionOf(b, bh[b]!, bl[b]!, P));
          out.band.push(b);
          out.hi.push(bh[b]!);
          out.lo.push(bl[b]!);
          out.shard.push(s);
          out.doc.push(d);
        }
      } else marker.emptyDocs++;
      d++;
    }
    marker.docs = d;
    // Changed while it was read: the keys would mix two versions.
    checkShard(workDir, job, s);
    // Rows count skipped invalid records too, like the single-process row numbers.
    marker.rows = rowCount(lastRow, d, input.skips.count);
    marker.bytes = input.bytesRead();
    marker.skippedRecords = input.skips.count;
    if (input.skips.examples[0]) marker.firstSkip = input.skips.examples[0].message;
    marker.ids = out.ids.length - idsBefore;
  } catch (e) {
    if (!(job.onBadShard === 'skip' && isUserError(e))) throw e;
    out.truncate(keysBefore, idsBefore);
    // The whole shard is left out, and the summary names it with the reader's error (file and line).
    return { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0, skipped: (e as Error).message };
  }
  return marker;
}
