/**
 * Stage 1, sign (one task per shard): reads the shard, signs every document and writes its band keys
 * partitioned by band-key hash, so that join task p reads only partition p of every shard.
 *
 * Output `sign/NNNNN/keys.bin` (kind `band-keys`): columns band, hi, lo, doc (uint32, one row per
 * band per non-empty document), grouped by partition; `pstart` (float64, P + 1) gives partition p's
 * rows [pstart[p], pstart[p+1]).
 * @module
 */
import path from 'node:path';
import { createTextSigner, type TextSigner } from '../sketch/textSigner.js';
import { rowCount } from '../io/read.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { murmur3Utf16 } from '../hash/murmur3.js';
import { isUserError } from '../io/errors.js';
import { writeColumns } from './columns.js';
import { runPerShard, shardFileName } from './perShard.js';
import { checkShard, type JobSpec } from './job.js';
import { openShard, type SignMarker } from './shardInput.js';
import { U32Buf, groupBy } from './u32buf.js';

/** The partition of a band key. */
export function partitionOf(band: number, hi: number, lo: number, partitions: number): number {
  return (Math.imul(hi ^ Math.imul(lo, 0x9e3779b1) ^ band, 0x85ebca6b) >>> 0) % partitions;
}

/** Runs sign task `t` (idempotent): signs each shard of its group. */
export function runSign(workDir: string, job: JobSpec, t: number): Promise<object> {
  // One signer for the task's shards: each has its own WebAssembly memory, costly to make per tiny shard.
  const signer = createTextSigner({ shingle: job.shingle, minhash: job.minhash });
  return runPerShard<SignMarker>(workDir, job, 'sign', t, (dir, s) => signShard(workDir, job, signer, dir, s));
}

async function signShard(workDir: string, job: JobSpec, signer: TextSigner, dir: string, s: number): Promise<SignMarker> {
  {
    const nb = job.bands;
    const P = job.partitions;
    const row = new Uint32Array(signer.numPerm);
    const bh = new Uint32Array(nb);
    const bl = new Uint32Array(nb);
    const part = new U32Buf(1 << 10);
    const band = new U32Buf(1 << 10);
    const hi = new U32Buf(1 << 10);
    const lo = new U32Buf(1 << 10);
    const doc = new U32Buf(1 << 10);
    // Explicit ids, partitioned by their hash: join task p checks partition p for repeats across shards.
    const idPart = new U32Buf(1 << 10);
    const idDoc = new U32Buf(1 << 10);
    const idLine = new U32Buf(1 << 10);
    const ids: string[] = [];
    const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0 };
    try {
      const input = await openShard(workDir, job, s);
      marker.format = input.format;
      let d = 0;
      let lastRow = -1;
      for await (const r of input.records) {
        lastRow = r.row;
        if (r.id !== undefined) {
          idPart.push(murmur3Utf16(r.id, 0x1d5) % P);
          idDoc.push(d);
          idLine.push(r.line);
          ids.push(r.id);
        }
        marker.chars += r.text.length;
        if (signer.signInto(r.text, row)) {
          bandKeys(row, nb, job.rows, bh, bl);
          for (let b = 0; b < nb; b++) {
            part.push(partitionOf(b, bh[b]!, bl[b]!, P));
            band.push(b);
            hi.push(bh[b]!);
            lo.push(bl[b]!);
            doc.push(d);
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
    } catch (e) {
      if (!(job.onBadShard === 'skip' && isUserError(e))) throw e;
      // The whole shard is left out, and the summary names it with the reader's error (file and line).
      return { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0, skipped: (e as Error).message };
    }
    const g = groupBy(part.view(), P, [band.view(), hi.view(), lo.view(), doc.view()]);
    const [cb, ch, cl, cd] = g.columns as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    await writeColumns(path.join(dir, shardFileName(s, 'keys.bin')), 'band-keys', job.id, { shard: s, partitions: P }, { band: cb, hi: ch, lo: cl, doc: cd, pstart: g.start });
    marker.ids = ids.length;
    if (ids.length > 0) {
      const order = groupBy(idPart.view(), P, [Uint32Array.from(ids, (_, i) => i)]);
      const o = order.columns[0]!;
      const lines = idLine.view();
      const docs = idDoc.view();
      await writeColumns(path.join(dir, shardFileName(s, 'ids.bin')), 'id-keys', job.id, { shard: s, partitions: P }, {
        doc: Uint32Array.from(o, (i) => docs[i]!),
        line: Uint32Array.from(o, (i) => lines[i]!),
        id: Array.from(o, (i) => ids[i]!),
        pstart: order.start,
      });
    }
    return marker;
  }
}
