/**
 * One partition's rows of a partitioned column file in object storage, copied into a sparse local
 * file: the header, the checksum table, and the checksummed blocks that hold the index and the
 * partition's rows of every column, each at its place; the rest of the file is a hole. A file's
 * rows are grouped by partition with `pstart` (a sign task's band keys and ids, a link round's
 * edges, a route task's pairs, a verify task's decisions, a components task's assignment), or
 * a shard group's rows are those that a range of a per-shard index spans (a join task's pairs by
 * `astart`). A task reads only those blocks (src/shard/files/columns.ts checks each one's CRC as it
 * reads it), so P tasks fetch a stage's outputs about once in all instead of P times over.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { inParallel, PARALLEL, s3Get } from '../../io/s3/client.js';
import { blockSpan, DamagedFileError, parseHeader, type ColumnInfo } from '../files/columns.js';

/** A column file's first bytes fetched at once: the header of a partitioned file fits in them. */
const HEAD_BYTES = 64 << 10;

/** What {@link fetchPartition} copies, from where to where. */
export interface PartitionFetch {
  /** The column file's object. */
  url: string;
  /** Its length, as its task's marker says. */
  bytes: number;
  /** The local file written. */
  file: string;
  /** A number for the rows `pstart` gives it, or the rows entries [from, to) of `index` span. */
  part: number | { index: string; from: number; to: number };
  /** The file's kind, checked when given. */
  kind?: string;
  /** The job's plan id, checked. */
  plan: string;
  /** Makes the error for a missing or short object. */
  damaged: (what: string) => Error;
}

/** Copies partition `part` of the column file `url` into `file` (see {@link PartitionFetch}). */
export async function fetchPartition(o: PartitionFetch): Promise<void> {
  const { url, bytes, file, part, kind, plan, damaged } = o;
  const { index, from: p, to: pEnd } = typeof part === 'number' ? { index: 'pstart', from: part, to: part + 1 } : part;
  const get = async (from: number, to: number): Promise<Buffer> => {
    const b = to > from ? await s3Get(url, [from, to - 1]) : Buffer.alloc(0);
    if (!b) throw damaged('missing');
    return b;
  };
  let head = await get(0, Math.min(bytes, HEAD_BYTES));
  let parsed = parseHeader(head, url, kind, plan);
  if ('need' in parsed) {
    if (parsed.need > bytes) throw damaged(`shorter than its header`);
    head = await get(0, parsed.need);
    parsed = parseHeader(head, url, kind, plan);
  }
  if ('need' in parsed) throw new DamagedFileError(`${url}: damaged header`);
  const { header, dataStart } = parsed;
  if (header.size !== bytes) throw damaged(`${header.size} bytes by its header`);
  const col = (name: string): ColumnInfo => {
    const c = header.columns.find((x) => x.name === name);
    if (!c) throw new DamagedFileError(`${url}: no column ${name}`);
    return c;
  };
  const spans: [number, number][] = [[0, dataStart], [header.crcAt, header.size]];
  const pstart = col(index);
  const ps = blockSpan(header, dataStart, pstart.offset + p * 8, (pEnd - p + 1) * 8);
  const psBytes = await get(ps[0], ps[1]);
  const at = pstart.offset + p * 8 - ps[0];
  const a = psBytes.readDoubleLE(at);
  const b = psBytes.readDoubleLE(at + (pEnd - p) * 8);
  const chunks: [number, Buffer][] = [[0, head.subarray(0, dataStart)], [ps[0], psBytes]];
  // String columns need their offsets first, to know where partition p's bytes lie.
  const strs = header.columns.filter((c) => c.type === 'str');
  for (const c of header.columns) {
    if (c.name === index) continue;
    // A string column's offsets are fetched even for no rows: a reader of rows [a, a) reads offset a.
    if (c.type === 'str') spans.push(blockSpan(header, dataStart, c.offset + a * 8, (Math.max(0, b - a) + 1) * 8));
    else if (b > a) spans.push(blockSpan(header, dataStart, c.offset + a * width(c, url), (b - a) * width(c, url)));
  }
  const fetched = await fetchSpans(spans, get);
  chunks.push(...fetched);
  if (b > a) {
    for (const c of strs) {
      const offs = readAt(fetched, c.offset + a * 8, (b - a + 1) * 8, url);
      const base = c.offset + (c.count + 1) * 8;
      const from = offs.readDoubleLE(0);
      const to = offs.readDoubleLE((b - a) * 8);
      if (to > from) chunks.push(...(await fetchSpans([blockSpan(header, dataStart, base + from, to - from)], get)));
    }
  }
  const fh = await fsp.open(file, 'w');
  try {
    await fh.truncate(header.size);
    for (const [pos, buf] of chunks) await fh.write(buf, 0, buf.length, pos);
  } finally {
    await fh.close();
  }
}

function width(c: ColumnInfo, url: string): number {
  if (c.type === 'u32' || c.type === 'i32') return 4;
  if (c.type === 'f64') return 8;
  throw new DamagedFileError(`${url}: column ${c.name} has no fixed width`);
}

/** The spans, merged where they touch, fetched in parallel: [position, bytes] pairs. */
async function fetchSpans(spans: [number, number][], get: (from: number, to: number) => Promise<Buffer>): Promise<[number, Buffer][]> {
  const sorted = spans.filter(([f, t]) => t > f).sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const s of sorted) {
    const last = merged[merged.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else merged.push([s[0], s[1]]);
  }
  const out: [number, Buffer][] = [];
  await inParallel(
    merged.map(([f, t]) => async () => {
      out.push([f, await get(f, t)]);
    }),
    PARALLEL,
  );
  return out;
}

/** Bytes [pos, pos + length) out of fetched chunks (one chunk holds them all). */
function readAt(chunks: readonly [number, Buffer][], pos: number, length: number, url: string): Buffer {
  for (const [at, buf] of chunks) if (pos >= at && pos + length <= at + buf.length) return buf.subarray(pos - at, pos - at + length);
  throw new DamagedFileError(`${url}: damaged (bytes ${pos}–${pos + length} not where its header says)`);
}
