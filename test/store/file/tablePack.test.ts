/**
 * The packed key table of checkpoint format 4 (src/store/file/tablePack.ts): keys coded in 32 bits
 * beside their distance from their home, exact bytes of one entry; a table spread back in place is
 * the table packed (`u32` and `f64`); a distance over 255 falls back to `f64`; a 16-key table of
 * 50,000 documents written and read back through a checkpoint uses `u32` and is the table written.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keyCoding, keyColumns, occupiedBits, spreadKeyTable } from '../../../src/store/file/tablePack.js';
import { LogReplica } from '../../../src/store/log/replica.js';
import { readCheckpoint, writeCheckpoint } from '../../../src/store/file/checkpoint.js';
import { LOCATOR_BYTES, locator } from '../../../src/store/file/replay.js';
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

/** Packs the table as a checkpoint writes it, lays it out as a checkpoint is read, and spreads it. */
function roundTrip(t: { tKey: Float64Array; tHead: Int32Array }, coding: 'u32' | 'f64') {
  const size = t.tHead.length;
  const occupied = Array.from(t.tHead.keys()).filter((h) => t.tHead[h] !== -1);
  const cols = keyColumns(t.tKey, t.tHead, coding).map((c) => {
    const a = new c.Ctor(occupied.length);
    occupied.forEach((h, i) => (a[i] = c.at(h)));
    return a;
  });
  const used = occupied.length;
  const [dist, keys, heads] = coding === 'u32' ? cols : [undefined, ...cols];
  const tKey = new Float64Array(size);
  const tHead = new Int32Array(size);
  new Uint8Array(tKey.buffer, 8 * size - keys!.byteLength).set(new Uint8Array(keys!.buffer));
  tHead.set(heads as Int32Array, size - used);
  assert.ok(spreadKeyTable(occupiedBits(t.tHead), tKey, tHead, used, dist as Uint8Array | undefined));
  assert.deepEqual(tHead, t.tHead);
  for (const h of occupied) assert.equal(tKey[h], t.tKey[h]);
  return cols;
}

/** Keys below 2^53 from a fixed sequence. */
function keysFrom(seed: number, n: number): number[] {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  return Array.from({ length: n }, () => next() * 2 ** 21 + (next() >>> 11));
}

test('tablePack: a 2^21-entry table codes keys in 32 bits; exact bytes of one entry; spread back in place', () => {
  const size = 2 ** 21;
  // Two keys with the same home (5): the second sits one entry past it.
  const k1 = (7 * size + 5) * 2 ** 21 + 1234;
  const k2 = (2047 * size + 5) * 2 ** 21 + (2 ** 21 - 1);
  const t = tableOf(size, [k1, k2, ...keysFrom(1, 100_000)]);
  assert.equal(keyCoding(t.tKey, t.tHead), 'u32');
  const [dist, codes] = roundTrip(t, 'u32');
  // The first entries in table order are homes 5 and 6 unless a random key came first.
  const at = Array.from(t.tHead.keys()).filter((h) => t.tHead[h] !== -1);
  const i1 = at.indexOf(5);
  assert.deepEqual([dist![i1], codes![i1]], [0, 7 * 2 ** 21 + 1234]);
  assert.deepEqual([dist![i1 + 1], codes![i1 + 1]], [1, 2047 * 2 ** 21 + 2 ** 21 - 1]);
  roundTrip(t, 'f64');
});

test('tablePack: a key more than 255 entries past its home, or a small table: keys as they are', () => {
  const size = 2 ** 21;
  const crowd = Array.from({ length: 300 }, (_, j) => (j * size + 9) * 2 ** 21);
  const t = tableOf(size, crowd);
  assert.equal(keyCoding(t.tKey, t.tHead), 'f64');
  roundTrip(t, 'f64');
  const small = tableOf(1024, keysFrom(2, 500));
  assert.equal(keyCoding(small.tKey, small.tHead), 'f64');
  roundTrip(small, 'f64');
});

test('tablePack: a checkpoint of 50,000 documents of 16 keys codes its keys in 32 bits and reads back the same table', async () => {
  const K = 16;
  const manifest = { keysPerDoc: K } as StoreManifest;
  const rep = await LogReplica.create(manifest, LOCATOR_BYTES);
  const keys = keysFrom(3, 50_000 * K);
  for (let b = 0; b < 50; b++) {
    const docs = Array.from({ length: 1000 }, (_, i) => {
      const d = b * 1000 + i;
      return { id: `d${d}`, keys: Float64Array.from(keys.slice(d * K, d * K + K)), extra: locator(d, 1) };
    });
    await rep.apply({ op: 'put', docs });
  }
  await writeCheckpoint(dir, rep.table, { logEnd: 0, recordsEnd: 0, applied: 50, generation: 0, keyOffset: LOCATOR_BYTES });
  const file = readFileSync(path.join(dir, 'table'));
  const header = JSON.parse(file.subarray(4, 4 + file.readUInt32LE(0)).toString()) as { keyCoding: string; used: number; sections: number[] };
  assert.equal(header.keyCoding, 'u32');
  // Bitmap, distances (1 byte per key), keys (4), heads (4).
  assert.deepEqual(header.sections.slice(5, 8), [header.used, 4 * header.used, 4 * header.used]);
  const got = (await readCheckpoint(dir, { manifest, logSize: 0, generation: 0, keyOffset: LOCATOR_BYTES }))!;
  const [a, b] = [rep.table.image(), got.table.image()];
  assert.deepEqual(b.tHead, a.tHead);
  for (let h = 0; h < a.tHead.length; h++) if (a.tHead[h] !== -1) assert.equal(b.tKey[h], a.tKey[h]);
  const qs = Array.from({ length: 200 }, (_, i) => Float64Array.from(keys.slice(i * 250 * K, i * 250 * K + K)));
  assert.deepEqual(await got.table.lookup(qs, 100), await rep.table.lookup(qs, 100));
});
