/**
 * The file store's lean checkpoint (src/store/file/checkpoint.ts): a table after adds, replacements
 * (some with no keys) and removals, written and read back, has the same key table, forward and
 * backward links and records as the one written, and goes on working (replace, remove, reuse a slot).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LogReplica } from '../../../src/store/log/replica.js';
import { readCheckpoint, writeCheckpoint } from '../../../src/store/file/checkpoint.js';
import { LOCATOR_BYTES, locator } from '../../../src/store/file/replay.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-filecp-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const K = 4;
const manifest = { keysPerDoc: K };
// Keys drawn from a small range, so that chains are shared and long.
const keys = (seed: number) => Float64Array.from({ length: K }, (_, j) => ((seed * 7919 + j * 104729) % 97) * 2 ** 21 + j);

test('lean checkpoint: the table read back is the table written, and goes on working', async () => {
  const rep = await LogReplica.create(manifest, LOCATOR_BYTES);
  const put = (id: string, seed: number, noKeys = false) => rep.apply({ op: 'put', docs: [{ id, keys: noKeys ? new Float64Array(0) : keys(seed), extra: locator(seed * 10, seed) }] });
  for (let i = 0; i < 300; i++) await put(`d${i}`, i);
  for (let i = 0; i < 300; i += 3) await put(`d${i}`, i + 1000);
  for (let i = 1; i < 300; i += 7) await put(`d${i}`, i, true);
  for (let i = 2; i < 300; i += 5) await rep.apply({ op: 'remove', docs: [{ id: `d${i}` }] });
  await writeCheckpoint(dir, rep.table, { logEnd: 10, recordsEnd: 20, applied: 30, generation: 0 });
  const got = (await readCheckpoint(dir, { manifest, logSize: 10, generation: 0, keyOffset: LOCATOR_BYTES }))!;
  assert.deepEqual(got.at, { logEnd: 10, recordsEnd: 20, applied: 30, generation: 0 });
  const [a, b] = [rep.table.image(), got.table.image()];
  assert.deepEqual([b.ids, b.free, b.used], [a.ids, a.free, a.used]);
  assert.deepEqual(b.tHead, a.tHead);
  // Keys of used slots (an emptied slot keeps a stale key in memory; read back it is 0).
  const usedKeys = (img: typeof a) => Array.from(img.tKey).filter((_, s) => img.tHead[s] !== -1);
  assert.deepEqual(usedKeys(b), usedKeys(a));
  // Links of every posting a live document has linked (others hold stale values in either table).
  for (let s = 0; s < a.ids.length; s++) {
    if (a.ids[s] === null) continue;
    const linked = (a.recLen[s]! - LOCATOR_BYTES) / 8;
    for (let p = s * K; p < s * K + linked; p++) assert.deepEqual([b.next[p], b.prev[p]], [a.next[p], a.prev[p]], `posting ${p}`);
  }
  assert.ok(b.arena.length < a.arena.length, 'dead arena bytes are not written');
  const all = Array.from({ length: 300 }, (_, i) => `d${i}`);
  assert.deepEqual(await got.table.get(all), await rep.table.get(all));
  // Both tables take the same writes and answer alike.
  const restored = LogReplica.restored(got.table, LOCATOR_BYTES, 30);
  for (const r of [rep, restored]) {
    await r.apply({ op: 'remove', docs: [{ id: 'd0' }, { id: 'd4' }] });
    await r.apply({ op: 'put', docs: [{ id: 'd3', keys: keys(5), extra: locator(1, 1) }, { id: 'n', keys: keys(9), extra: locator(2, 2) }] });
  }
  const qs = Array.from({ length: 120 }, (_, i) => keys(i));
  assert.deepEqual(await restored.table.lookup(qs, 1000), await rep.table.lookup(qs, 1000));
  // Another generation or format: not read.
  assert.equal(await readCheckpoint(dir, { manifest, logSize: 10, generation: 1, keyOffset: LOCATOR_BYTES }), null);
  assert.equal(await readCheckpoint(dir, { manifest, logSize: 9, generation: 0, keyOffset: LOCATOR_BYTES }), null);
});
