/**
 * The file store (`file:DIR`) in one process: reopening folds the log back into the same index
 * (replacements, removals and expiries included), the directory lock keeps a second opener out and
 * is taken over from a process that died, and a backup taken while in use is a store of its own.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, checkIndex } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file/store.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import { neardup } from '../../cliUtil.js';

const texts = kijijiTexts();
const OPTS = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };
const root = mkdtempSync(path.join(tmpdir(), 'nd-file-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `s${n++}`);

/** The answers an index gives for a fixed set of queries, and its size. */
async function answers(idx: NearDupIndex): Promise<unknown> {
  return { size: await idx.size(), q: await Promise.all(texts.slice(0, 120).map((t) => idx.query(t))) };
}

test('file store: reopening restores the index, replacements and removals included, and index check passes', async () => {
  const dir = fresh();
  const a = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
  await a.addMany(texts.slice(0, 300).map((text, i) => ({ id: `d${i}`, text, meta: { i } })));
  // Replaced with another text, replaced with the same one, removed singly and in a batch.
  await a.add('d1', texts[500]!, { i: 500 });
  await a.add('d2', texts[2]!, { again: true });
  assert.equal(await a.remove('d3'), true);
  assert.deepEqual(await a.removeMany(['d4', 'd5', 'nope', 'd4']), [true, true, false, false]);
  const before = await answers(a);
  assert.equal((before as { size: number }).size, 297);
  await a.close();
  const b = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(b.manifest.shingle.k, 10);
  assert.deepEqual(await answers(b), before);
  assert.deepEqual((await b.get('d1'))!.meta, { i: 500 });
  assert.equal(await b.get('d3'), null);
  const report = await checkIndex(b);
  assert.deepEqual(report.errors, []);
  assert.equal(report.documents, 297);
  const st = (await b.stats()).storeStats as Record<string, number>;
  assert.equal(st.tornBytesCutAtOpen, 0);
  assert.ok(st.logBytes! > 0 && st.recordsFileBytes! > 0);
  // Opened from the checkpoint written at close: no frame folded.
  assert.equal(st.framesFoldedAtOpen, 0);
  assert.equal(st.checkpointLogBytes, st.logBytes);
  await b.add('after', texts[700]!);
  await b.close();
  // Without the checkpoint the whole log is folded, to the same index; a checkpoint that does not fit is dropped.
  rmSync(path.join(dir, 'table'));
  const c = await NearDupIndex.open({ store: `file:${dir}` });
  assert.ok(((await c.stats()).storeStats as Record<string, number>).framesFoldedAtOpen! > 5);
  assert.equal(await c.size(), 298);
  await c.remove('after');
  assert.deepEqual(await answers(c), before);
  await c.close();
  writeFileSync(path.join(dir, 'table'), 'not a checkpoint');
  const d = await NearDupIndex.open({ store: `file:${dir}` });
  assert.deepEqual(await answers(d), before);
  assert.deepEqual((await checkIndex(d)).errors, []);
  await d.close();
  // A checkpoint of the earlier format (every array as in memory), whole and fitting the log: not read, the log is folded.
  const header = Buffer.from(
    JSON.stringify({
      format: 'neardup-file-table 1',
      logEnd: statSync(path.join(dir, 'log')).size,
      recordsEnd: 0,
      applied: 0,
      arenaLive: 0,
      used: 0,
      sections: [2],
    }),
  );
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  writeFileSync(path.join(dir, 'table'), Buffer.concat([len, header, Buffer.from('[]')]));
  const e = await NearDupIndex.open({ store: `file:${dir}` });
  assert.ok(((await e.stats()).storeStats as Record<string, number>).framesFoldedAtOpen! > 5);
  assert.deepEqual(await answers(e), before);
  await e.close();
});

test('file store: expiries come back with the log; purged documents stay gone', async () => {
  const dir = fresh();
  let t = 1_700_000_000_000;
  const now = () => t;
  const a = await NearDupIndex.open({ ...OPTS, store: `file:${dir}`, now });
  await a.addMany(texts.slice(0, 40).map((text, i) => ({ id: `e${i}`, text, ttl: '1h' })));
  await a.addMany(texts.slice(40, 60).map((text, i) => ({ id: `k${i}`, text })));
  // A replacement without a ttl drops its expiry.
  await a.add('e0', texts[0]!);
  await a.close();
  t += 2 * 3600_000;
  const b = await NearDupIndex.open({ store: `file:${dir}`, now });
  assert.equal(await b.store.countExpired(t), 39);
  assert.equal((await b.query(texts[5]!)).length, 0, 'an expired document is not found');
  assert.equal((await b.purgeExpired()).length, 39);
  await b.close();
  const c = await NearDupIndex.open({ store: `file:${dir}`, now });
  assert.equal(await c.size(), 21);
  assert.equal(await c.store.countExpired(t), 0);
  assert.deepEqual((await checkIndex(c)).errors, []);
  await c.close();
});

test('file store: one process at a time; the lock of a process that died is taken over', async () => {
  const dir = fresh();
  const a = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
  await a.add('x', texts[0]!);
  await assert.rejects(() => NearDupIndex.open({ store: `file:${dir}` }), { name: 'StoreUnavailableError', message: /is in use by this process/ });
  await a.close();
  // A live process holds it: refused, naming the process.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  writeFileSync(path.join(dir, 'lock'), String(child.pid));
  await assert.rejects(() => NearDupIndex.open({ store: `file:${dir}` }), new RegExp(`in use by process ${child.pid}`));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const b = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(readFileSync(path.join(dir, 'lock'), 'utf8'), String(process.pid));
  assert.equal(await b.size(), 1);
  await b.close();
  assert.throws(() => readFileSync(path.join(dir, 'lock')), /ENOENT/, 'close releases the lock');
});

test('file store: a backup taken while in use is a store as it was then', async () => {
  const dir = fresh();
  const a = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
  await a.addMany(texts.slice(0, 200).map((text, i) => ({ id: `d${i}`, text, meta: { i } })));
  await a.remove('d7');
  const snapshot = await answers(a);
  const dest = path.join(root, `backup${n++}`);
  const adding = a.addMany(texts.slice(200, 260).map((text, i) => ({ id: `late${i}`, text })));
  await (a.store as FileStore).backup(dest);
  await adding;
  await assert.rejects(() => (a.store as FileStore).backup(dest), /exists already/);
  await a.close();
  // The CLI's backup of a store no process holds; the copy passes index check.
  const cli = path.join(root, `backup${n++}`);
  assert.equal(neardup(['index', 'backup', '--store', `file:${dir}`, '--out', cli]).code, 0);
  const checked = neardup(['index', 'check', '--store', `file:${cli}`]);
  assert.equal(checked.code, 0, checked.stderr);
  assert.match(checked.stdout, /documents 259 /);
  const b = await NearDupIndex.open({ store: `file:${dest}` });
  const got = (await answers(b)) as { size: number };
  // The batch in flight is in the copy entirely or not at all.
  assert.ok(got.size === 199 || got.size === 259, `${got.size} documents`);
  if (got.size === 199) assert.deepEqual(got, snapshot);
  assert.deepEqual((await checkIndex(b)).errors, []);
  await b.close();
});
