/**
 * A band table that cannot take a batch (its records would outgrow their one array: ~16M documents
 * of 32 keys, lowered here by a fault hook) refuses the batch whole, before anything is written,
 * and the index goes on: the file store once wrote the batch's records and frame first and failed
 * after, which left every later open failing on that frame. For the in-process store, the file
 * store (and its reopen and `index check`) and `neardup serve` (HTTP 507).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, StoreFullError, checkIndex, type NearDupIndexOptions } from '../../../src/index.js';
import { installFaultHooks } from '../../../src/common/faults.js';
import { startServe } from '../../helpers/procs.js';
import { withFaultEnv } from '../../helpers/faults.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-table-full-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const texts = kijijiTexts().slice(0, 400);
/** Room for ~70 documents in the file store's table (12 + 32 · 8 bytes each). */
const MAX = 70 * 268;

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
  installFaultHooks({ tableArenaMax: () => MAX });
  try {
    // In-process records are whole records (larger): fewer fit, the same rule holds.
    installFaultHooks({ tableArenaMax: () => 400 * 1024 });
    await (await refusesWhole({})).close();
    installFaultHooks({ tableArenaMax: () => MAX });
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
    installFaultHooks({ tableArenaMax: undefined });
  }
});

test('neardup serve answers 507 for a batch the table cannot take, then goes on', async () => {
  const store = path.join(dir, 'serve');
  const s = await withFaultEnv({ tableArenaMax: MAX }, () => startServe(['--store', store]));
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
