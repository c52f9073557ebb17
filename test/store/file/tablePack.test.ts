/**
 * The packed key table of checkpoint formats 4 and 5 (src/store/file/tablePack.ts): keys coded in 32 bits
 * beside their distance from their home, exact bytes of one entry; a table spread back in place is
 * the table packed (`u32` and `f64`); a bitmap not matching the packed entries is refused; a
 * distance over 255 stops a `u32` write; a 16-key table of 50,000 documents written and read back
 * through a checkpoint uses `u32` and is the table written, and with a key 256 entries past its
 * home is written again `f64`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { firstCoding, packedSizes, spreadKeyTable, writePackedKeys } from '../../../src/store/file/tablePack.js';
import { LoggedTable, readWithLog } from './loggedTable.js';
import type { StoreManifest } from '../../../src/store/types.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-tablepack-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A linear-probing key table of `size` entries (homes as the memory store's), with `keys` inserted. */
function tableOf(size: number, keys: number[]): { tKey: Float64Array; tHead: Int32Array } {
  const tKey = new Float64Array(size);
  const tHead = new Int32Array(size).fill(-1);
  keys.forEach((k, i) => {
    let h = (k / 2 ** 21) & (size - 1);
    while (tHead[h] !== -1) h = (h + 1) & (size - 1);
    tKey[h] = k;
    tHead[h] = i * 3;
  });
  return { tKey, tHead };
}

/** Writes the table packed as a checkpoint does (small chunks), reads it back as open does, spreads it: the same table. */
async function roundTrip(
  t: { tKey: Float64Array; tHead: Int32Array },
  coding: 'u32' | 'f64',
  bufBytes = 1 << 12,
): Promise<{ dist: Buffer; keys: Buffer; bits: Uint8Array; file: Buffer }> {
  const size = t.tHead.length;
  const used = t.tHead.filter((h) => h !== -1).length;
  const file = path.join(dir, 'packed');
  const f = await open(file, 'w');
  const bits = new Uint8Array(size / 8);
  assert.equal(await writePackedKeys(f, 0, { ...t, used, coding, bits }, new Uint8Array(bufBytes)), true);
  await f.close();
  const b = readFileSync(file);
  const [, distB, keyB, headB] = packedSizes(size, used, coding);
  assert.equal(b.length, distB + keyB + headB);
  const tKey = new Float64Array(size);
  const tHead = new Int32Array(size);
  new Uint8Array(tKey.buffer, 8 * size - keyB).set(b.subarray(distB, distB + keyB));
  new Uint8Array(tHead.buffer, 4 * (size - used)).set(b.subarray(distB + keyB));
  assert.ok(spreadKeyTable({ bits, tKey, tHead, used, dist: coding === 'u32' ? b.subarray(0, distB) : undefined }));
  assert.deepEqual(tHead, t.tHead);
  for (let h = 0; h < size; h++) if (t.tHead[h] !== -1) assert.equal(tKey[h], t.tKey[h]);
  return { dist: b.subarray(0, distB), keys: b.subarray(distB, distB + keyB), bits, file: b };
}

/** Keys below 2^53 from a fixed sequence. */
function keysFrom(seed: number, n: number): number[] {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  return Array.from({ length: n }, () => next() * 2 ** 21 + (next() >>> 11));
}

test('tablePack: a 2^21-entry table codes keys in 32 bits; exact bytes of one entry; spread back in place', async () => {
  const size = 2 ** 21;
  // Two keys with the same home (5): the second sits one entry past it.
  const k1 = (7 * size + 5) * 2 ** 21 + 1234;
  const k2 = (2047 * size + 5) * 2 ** 21 + (2 ** 21 - 1);
  const t = tableOf(size, [k1, k2, ...keysFrom(1, 100_000)]);
  assert.equal(firstCoding(size), 'u32');
  const { dist, keys } = await roundTrip(t, 'u32');
  // The first entries in table order are homes 5 and 6 unless a random key came first.
  const at = Array.from(t.tHead.keys()).filter((h) => t.tHead[h] !== -1);
  const i1 = at.indexOf(5);
  // Entry 5: distance 0, code (hi >>> 21) · 2^21 + lo = 7 · 2^21 + 1234; entry 6: distance 1, 2047 · 2^21 + 2^21 - 1.
  assert.deepEqual([dist[i1], keys.readUInt32LE(4 * i1)], [0, 7 * 2 ** 21 + 1234]);
  assert.deepEqual([dist[i1 + 1], keys.readUInt32LE(4 * i1 + 4)], [1, 2047 * 2 ** 21 + 2 ** 21 - 1]);
  await roundTrip(t, 'f64');
});

test('tablePack: a write buffer of any size (under 256 bytes, odd, large) writes the same bytes, both codings', async () => {
  const t = tableOf(2 ** 21, keysFrom(3, 20_000));
  for (const coding of ['u32', 'f64'] as const) {
    const want = (await roundTrip(t, coding)).file;
    for (const bytes of [0, 1, 64, 255, 256, 257, 1000, 1 << 16]) {
      assert.ok((await roundTrip(t, coding, bytes)).file.equals(want), `${coding}, a buffer of ${bytes} bytes`);
    }
  }
});

test('tablePack: a key more than 255 entries past its home, or a small table: keys as they are', async () => {
  const size = 2 ** 21;
  const crowd = Array.from({ length: 300 }, (_, j) => (j * size + 9) * 2 ** 21);
  const t = tableOf(size, crowd);
  // Coded in 32 bits, the write stops at the key 256 entries past its home.
  const f = await open(path.join(dir, 'far'), 'w');
  const t32 = { ...t, used: crowd.length, coding: 'u32' as const, bits: new Uint8Array(size / 8) };
  assert.equal(await writePackedKeys(f, 0, t32, new Uint8Array(1 << 12)), false);
  await f.close();
  await roundTrip(t, 'f64');
  const small = tableOf(1024, keysFrom(2, 500));
  assert.equal(firstCoding(1024), 'f64');
  const { bits } = await roundTrip(small, 'f64');
  // A bitmap marking one entry more, or one fewer, than there are packed entries: refused.
  const used = small.tHead.filter((h) => h !== -1).length;
  const spread = (b: Uint8Array) => spreadKeyTable({ bits: b, tKey: new Float64Array(1024), tHead: new Int32Array(1024), used });
  const empty = Array.from(small.tHead.keys()).find((h) => small.tHead[h] === -1)!;
  const full = Array.from(small.tHead.keys()).find((h) => small.tHead[h] !== -1)!;
  const more = bits.slice();
  more[empty >> 3]! |= 1 << (empty & 7);
  const fewer = bits.slice();
  fewer[full >> 3]! &= ~(1 << (full & 7));
  assert.deepEqual([spread(bits), spread(more), spread(fewer)], [true, false, false]);
});

/**
 * A table of 50,000 documents of 16 keys, then the documents `crowd` (16 keys each), written as a
 * checkpoint and read back: both tables, the written header, the keys.
 */
async function readBack(crowd: Float64Array[]) {
  const K = 16;
  const manifest = { keysPerDoc: K } as StoreManifest;
  const t = await LoggedTable.create(manifest);
  const keys = keysFrom(3, 50_000 * K);
  for (let b = 0; b < 50; b++) {
    const docs = Array.from({ length: 1000 }, (_, i) => {
      const d = b * 1000 + i;
      return { id: `d${d}`, keys: Float64Array.from(keys.slice(d * K, d * K + K)) };
    });
    await t.put(docs);
  }
  if (crowd.length) await t.put(crowd.map((k, i) => ({ id: `crowd${i}`, keys: k })));
  await t.write(dir);
  const file = readFileSync(path.join(dir, 'table'));
  const header = JSON.parse(file.subarray(4, 4 + file.readUInt32LE(0)).toString()) as {
    keyCoding: string;
    used: number;
    tableSize: number;
    sections: number[];
  };
  const got = (await readWithLog(dir, manifest))!;
  const [a, b] = [t.rep.table.image(), got.table.image()];
  assert.deepEqual(b.tHead, a.tHead);
  for (let h = 0; h < a.tHead.length; h++) if (a.tHead[h] !== -1) assert.equal(b.tKey[h], a.tKey[h]);
  const qs = Array.from({ length: 200 }, (_, i) => Float64Array.from(keys.slice(i * 250 * K, i * 250 * K + K)));
  assert.deepEqual(await got.table.lookup(qs, 100), await t.rep.table.lookup(qs, 100));
  return header;
}

test('tablePack: a checkpoint of 50,000 documents of 16 keys codes its keys in 32 bits and reads back the same table', async () => {
  const header = await readBack([]);
  assert.equal(header.keyCoding, 'u32');
  // Bitmap, distances (1 byte per key), keys (4), heads (4).
  assert.deepEqual(header.sections.slice(5, 8), [header.used, 4 * header.used, 4 * header.used]);
});

test('tablePack: a checkpoint with a key more than 255 entries past its home is written again with its keys as they are', async () => {
  // 304 keys whose home is entry 9 of the 2^21-entry table: the write in 32-bit codes stops there.
  const crowd = Array.from({ length: 19 }, (_, d) => Float64Array.from({ length: 16 }, (_, j) => ((d * 16 + j) * 2 ** 21 + 9) * 2 ** 21));
  const header = await readBack(crowd);
  assert.deepEqual([header.tableSize, header.keyCoding], [2 ** 21, 'f64']);
  assert.deepEqual(header.sections.slice(5, 8), [0, 8 * header.used, 4 * header.used]);
});
