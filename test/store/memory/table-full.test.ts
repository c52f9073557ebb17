/**
 * A band table that cannot take a batch (its postings, numbered in 31 bits: ~67M documents of 32
 * keys; or the in-process store's records, past their one array of 4 GiB; both lowered here by fault
 * hooks) refuses the batch whole, before anything is written,
 * and the index goes on: the file store once wrote the batch's records and frame first and failed
 * after, which left every later open failing on that frame. For the in-process store, the file
 * store (and its reopen and `index check`) and `neardup serve` (HTTP 507). A batch with a document of
 * more keys than the store takes is refused the same way.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, StoreFullError, checkIndex, type NearDupIndexOptions } from '../../../src/index.js';
import { installFaultHooks } from '../../../src/common/faults.js';
import { FileStore } from '../../../src/store/file/store.js';
import type { StoreManifest } from '../../../src/store/types.js';
import { startServe } from '../../helpers/procs.js';
import { withFaultEnv } from '../../helpers/faults.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-table-full-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const texts = kijijiTexts().slice(0, 400);
/** Room for 70 documents in the file store's table. */
const MAX = 70;

/** Adds batches of 20 until one is refused; returns the ids in and the refused batch's. */
async function fill(idx: NearDupIndex): Promise<{ added: string[]; refused: string[] }> {
  const added: string[] = [];
  for (let b = 0; b < 20; b++) {
    const batch = texts.slice(b * 20, b * 20 + 20).map((text, i) => ({ id: `d${b * 20 + i}`, text }));
    try {
      await idx.addMany(batch);
    } catch (e) {
      assert.ok(e instanceof StoreFullError, String(e));
      assert.match(e.message, /nothing of this batch was added: split the index/);
      return { added, refused: batch.map((d) => d.id) };
    }
    added.push(...batch.map((d) => d.id));
  }
  throw new Error('never refused');
}

async function refusesWhole(options: NearDupIndexOptions): Promise<NearDupIndex> {
  const idx = await NearDupIndex.open(options);
  const { added, refused } = await fill(idx);
  assert.ok(added.length >= 20, `some batches went in (${added.length})`);
  assert.equal(await idx.size(), added.length);
  for (const id of refused) assert.equal(await idx.get(id), null, `${id} of the refused batch`);
  // The index goes on: replacing documents frees their old records, and queries answer.
  await idx.addMany(added.slice(0, 5).map((id, i) => ({ id, text: texts[i]! })));
  assert.ok((await idx.query(texts[3]!)).some((m) => m.id === 'd3'));
  return idx;
}

test('a full table refuses a batch whole, and the index goes on (in-process and file stores)', async () => {
  try {
    // In-process records are whole records (larger): fewer fit, the same rule holds.
    installFaultHooks({ tableArenaMax: () => 400 * 1024 });
    await (await refusesWhole({})).close();
    installFaultHooks({ tableArenaMax: undefined, tableSlotsMax: () => MAX });
    const store = path.join(dir, 'file');
    const idx = await refusesWhole({ store });
    const n = await idx.size();
    await idx.close();
    // Opens again (no frame of the refused batch to fail on), and checks clean.
    const again = await NearDupIndex.open({ store });
    assert.equal(await again.size(), n);
    assert.deepEqual((await checkIndex(again)).errors, []);
    await again.close();
  } finally {
    installFaultHooks({ tableArenaMax: undefined, tableSlotsMax: undefined });
  }
});

test('neardup serve answers 507 for a batch the table cannot take, then goes on', async () => {
  const store = path.join(dir, 'serve');
  const s = await withFaultEnv({ tableSlotsMax: MAX }, () => startServe(['--store', store]));
  try {
    const post = (body: unknown) =>
      fetch(`${s.url}/v1/documents:batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    let status = 200;
    let b = 0;
    for (; b < 20 && status === 200; b++) {
      const r = await post({ documents: texts.slice(b * 20, b * 20 + 20).map((text, i) => ({ id: `d${b * 20 + i}`, text })) });
      status = r.status;
      if (status !== 200) assert.match(((await r.json()) as { message: string }).message, /index is full/);
    }
    assert.equal(status, 507);
    const stats = (await (await fetch(`${s.url}/v1/stats`)).json()) as { documents: number };
    assert.equal(stats.documents, (b - 1) * 20);
    assert.equal((await post({ documents: [{ id: 'd0', text: texts[0] }] })).status, 200, 'a replacement still goes in');
    assert.equal(((await (await fetch(`${s.url}/v1/stats`)).json()) as { documents: number }).documents, (b - 1) * 20);
  } finally {
    await s.stop();
  }
});

test('a file store batch with a document of too many keys is refused before it is written, and the store opens again', async () => {
  const d = path.join(dir, 'keys');
  const manifest = { keysPerDoc: 4 } as StoreManifest;
  const keys = (n: number, seed: number) => Float64Array.from({ length: n }, (_, j) => seed * 16 + j);
  const s = new FileStore(d);
  await s.open(manifest);
  await s.put([{ id: 'a', keys: keys(4, 1), record: Buffer.from('a1') }]);
  // The bad document comes after a good one: nothing of the batch may reach the log.
  const batch = [
    { id: 'b', keys: keys(4, 2), record: Buffer.from('b1') },
    { id: 'c', keys: keys(5, 3), record: Buffer.from('c1') },
  ];
  await assert.rejects(s.put(batch), /document c has 5 keys, the store takes 4/);
  assert.deepEqual((await s.get(['a', 'b', 'c'])).map((r) => (r ? Buffer.from(r).toString() : null)), ['a1', null, null]);
  await s.put([{ id: 'b', keys: keys(4, 2), record: Buffer.from('b2') }]);
  await s.close();
  const again = new FileStore(d);
  await again.open(manifest);
  assert.deepEqual((await again.get(['a', 'b', 'c'])).map((r) => (r ? Buffer.from(r).toString() : null)), ['a1', 'b2', null]);
  await again.close();
});
