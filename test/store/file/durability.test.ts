/**
 * The file store across crashes: kill -9 of a process adding in batches loses no acknowledged add
 * and `neardup index check` passes after; a torn log tail (a frame cut short, or damaged at the end)
 * is cut off on open with the records it referred to, and so is a last frame whose records did not
 * reach the disk (records and frame are synced at once); a damaged frame followed by more fails the open;
 * a checkpoint that fails (a full disk) does not fail the add that took it; a checkpoint's commit
 * (its sync and rename) runs beside the writes after it, and close waits for it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, checkIndex } from '../../../src/index.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import { killWriter } from '../../helpers/killWriter.js';
import { neardup } from '../../cliUtil.js';
import { installFaultHooks } from '../../../src/common/faults.js';

const texts = kijijiTexts();
const OPTS = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };
const root = mkdtempSync(path.join(tmpdir(), 'nd-filecrash-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `s${n++}`);

for (const every of [0, 1]) {
  test(`file store: kill -9 during batched adds loses no acknowledged add; index check passes${every ? ' (a checkpoint after every batch, its commit in flight)' : ''}`, async () => {
    await killedWhileAdding(every);
  });
}

async function killedWhileAdding(every: number): Promise<void> {
  const dir = fresh();
  const acked = await killWriter(`file:${dir}`, 1500, 50, { CHECKPOINT_EVERY: String(every) });
  assert.ok(acked.length >= 1500);
  const idx = await NearDupIndex.open({ store: `file:${dir}` });
  const size = await idx.size();
  // At most the batch in flight was written without being acknowledged.
  assert.ok(size >= acked.length && size <= acked.length + 50, `${size} documents for ${acked.length} acknowledged`);
  for (const id of acked) assert.deepEqual((await idx.get(id))?.meta, { i: Number(id.slice(1)) }, `acknowledged ${id}`);
  for (const id of acked.filter((_, j) => j % 100 === 0)) {
    const i = Number(id.slice(1));
    assert.ok((await idx.query(texts[i % texts.length]!, { threshold: 1 })).some((m) => m.id === id), `${id} not found by its own text`);
  }
  await idx.close();
  const r = neardup(['index', 'check', '--store', `file:${dir}`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
}

/** Documents d`from` … d`from + n − 1`, of the Kijiji texts. */
const docs = (from: number, n: number) => texts.slice(from, from + n).map((text, i) => ({ id: `d${from + i}`, text }));

async function filled(dir: string, batches: number): Promise<void> {
  const idx = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
  for (let b = 0; b < batches; b++) await idx.addMany(docs(b * 20, 20));
  await idx.close();
}

/** Opens the store in `dir` again: it holds `size` documents and its index check is clean; returns its store stats. */
async function reopened(dir: string, size: number): Promise<Record<string, number | string>> {
  const again = await NearDupIndex.open({ store: `file:${dir}` });
  try {
    assert.equal(await again.size(), size);
    assert.equal((await checkIndex(again)).errors.length, 0);
    return (await again.stats()).storeStats;
  } finally {
    await again.close();
  }
}

test('file store: a torn tail is cut off on open, with the records it referred to; writing goes on', async () => {
  const dir = fresh();
  await filled(dir, 5);
  const log = path.join(dir, 'log');
  const records = path.join(dir, 'records');
  const full = { log: statSync(log).size, records: statSync(records).size };
  // The last batch's frame cut short (its records are all there). The checkpoint written at close
  // covers it: the log lost acknowledged writes, and the open fails saying so.
  truncateSync(log, full.log - 7);
  await assert.rejects(NearDupIndex.open({ store: `file:${dir}` }), /is damaged: its log has \d+ bytes, but its checkpoint covers/);
  const r = neardup(['index', 'check', '--store', `file:${dir}`]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /is damaged/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  // A crash leaves no checkpoint past the last frames: without one, that batch is a torn tail, gone; the rest stays.
  rmSync(path.join(dir, 'table'));
  const a = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await a.size(), 80);
  const st = (await a.stats()).storeStats as Record<string, number>;
  assert.ok(st.tornBytesCutAtOpen! > 0);
  assert.ok(statSync(records).size < full.records, 'the records of the cut batch are cut too');
  assert.deepEqual((await checkIndex(a)).errors, []);
  await a.addMany(texts.slice(100, 120).map((text, i) => ({ id: `n${i}`, text })));
  await a.close();
  // Zero bytes after the last frame (a file extended before its data reached the disk).
  appendFileSync(log, Buffer.alloc(300));
  const b = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await b.size(), 100);
  assert.equal(await b.get('d85'), null);
  assert.ok(await b.get('n3'));
  assert.deepEqual((await checkIndex(b)).errors, []);
  await b.close();
  // A last frame whose bytes are damaged (checksum fails): cut off too. (Without the checkpoint
  // written at close, which covers that frame: the whole log is folded again.)
  rmSync(path.join(dir, 'table'));
  const last = statSync(log).size;
  const fd = openSync(log, 'r+');
  writeSync(fd, Buffer.from([0xff, 0xee]), 0, 2, last - 3);
  closeSync(fd);
  const c = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await c.size(), 80);
  await c.close();
});

test('file store: a last frame on disk without its records (a batch syncs both at once) is cut off, as is one whose records differ; writing goes on', async () => {
  const dir = fresh();
  await filled(dir, 5);
  rmSync(path.join(dir, 'table'));
  const records = path.join(dir, 'records');
  const log = path.join(dir, 'log');
  // The crash came before the last batch's records were all in the file.
  truncateSync(records, statSync(records).size - 10);
  const a = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await a.size(), 80);
  assert.equal(await a.get('d85'), null);
  assert.ok(((await a.stats()).storeStats as Record<string, number>).tornBytesCutAtOpen! > 0);
  assert.deepEqual((await checkIndex(a)).errors, []);
  await a.addMany(texts.slice(100, 120).map((text, i) => ({ id: `n${i}`, text })));
  await a.close();
  // The last batch's records there in length but not in bytes (a file extended before its data reached the disk).
  rmSync(path.join(dir, 'table'));
  const size = statSync(records).size;
  const fd = openSync(records, 'r+');
  writeSync(fd, Buffer.alloc(50), 0, 50, size - 60);
  closeSync(fd);
  const logSize = statSync(log).size;
  const b = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await b.size(), 80);
  assert.equal(await b.get('n3'), null);
  assert.ok(statSync(log).size < logSize, 'the frame is cut off the log');
  assert.deepEqual((await checkIndex(b)).errors, []);
  await b.addMany(texts.slice(100, 120).map((text, i) => ({ id: `m${i}`, text })));
  await b.close();
  const c = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(await c.size(), 100);
  assert.ok(await c.get('m3'));
  await c.close();
});

test('file store: a damaged frame followed by more frames fails the open (acknowledged writes follow it)', async () => {
  const dir = fresh();
  await filled(dir, 3);
  const log = path.join(dir, 'log');
  rmSync(path.join(dir, 'table'));
  const bytes = readFileSync(log);
  const fd = openSync(log, 'r+');
  // A byte inside the first frame's payload.
  writeSync(fd, Buffer.from([bytes[20]! ^ 0xff]), 0, 1, 20);
  closeSync(fd);
  await assert.rejects(() => NearDupIndex.open({ store: `file:${dir}` }), /damaged frame at byte 0 .* the log is corrupt/);
  assert.equal(statSync(log).size, bytes.length, 'nothing cut');
});

test('file store: a checkpoint that fails (a full disk) does not fail the add that took it; the next one is tried later and works', async () => {
  const dir = fresh();
  let fail = true;
  let tries = 0;
  installFaultHooks({
    fileStoreCheckpointEvery: () => 1,
    fileStoreCheckpoint: async () => {
      tries++;
      if (fail) throw new Error('ENOSPC: no space left on device, write');
    },
  });
  try {
    const idx = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
    // Acknowledged although its checkpoint failed; the failure is in the stats, not thrown.
    await idx.addMany(docs(0, 20));
    const st = (await idx.stats()).storeStats;
    assert.match(String(st.checkpointError), /ENOSPC/);
    assert.equal(st.checkpointLogBytes, 0);
    assert.equal(tries, 1);
    fail = false;
    await idx.addMany(docs(20, 20));
    const after = await settled(idx, (st) => st.checkpointError === '');
    assert.equal(after.checkpointError, '');
    assert.equal(after.checkpointLogBytes, after.logBytes);
    assert.equal(tries, 2);
    await idx.close();
    await reopened(dir, 40);
  } finally {
    installFaultHooks({ fileStoreCheckpointEvery: undefined, fileStoreCheckpoint: undefined });
  }
});

/** The store's stats once `until` holds of them (a checkpoint's commit runs beside the writes): polled for 5 s at most. */
async function settled(idx: NearDupIndex, until: (st: Record<string, number | string>) => boolean): Promise<Record<string, number | string>> {
  for (let i = 0;; i++) {
    const st = (await idx.stats()).storeStats;
    if (until(st) || i > 500) return st;
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("file store: an add does not wait for its checkpoint's commit; the next checkpoint waits for it; close waits for it", async () => {
  const dir = fresh();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let commits = 0;
  installFaultHooks({
    fileStoreCheckpointEvery: () => 1,
    fileStoreCheckpointCommit: async () => {
      commits++;
      await gate;
    },
  });
  try {
    const idx = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
    // Each resolves with the first commit held at the gate: the adds do not wait for it, and the
    // later ones take no checkpoint while it is in flight.
    const adds = (async () => {
      for (let b = 0; b < 3; b++) await idx.addMany(docs(b * 20, 20));
      return 'added';
    })();
    assert.equal(await Promise.race([adds, new Promise((r) => setTimeout(() => r('held at the commit'), 5000))]), 'added');
    assert.equal(commits, 1);
    assert.ok(existsSync(path.join(dir, 'table.tmp')) && !existsSync(path.join(dir, 'table')), 'the first checkpoint written, not in place');
    assert.equal((await idx.stats()).storeStats.checkpointLogBytes, 0);
    const closing = idx.close();
    const early = await Promise.race([closing.then(() => 'closed'), new Promise((r) => setTimeout(() => r('waiting'), 100))]);
    assert.equal(early, 'waiting', 'close waits for the commit in flight');
    open();
    await closing;
    // Close's own checkpoint covers the whole log: nothing to fold.
    assert.equal(commits, 2);
    const st = await reopened(dir, 60);
    assert.deepEqual([st.framesFoldedAtOpen, st.checkpointLogBytes], [0, st.logBytes]);
  } finally {
    installFaultHooks({ fileStoreCheckpointEvery: undefined, fileStoreCheckpointCommit: undefined });
  }
});

test('file store: a checkpoint whose commit fails leaves the checkpoint before it; the add stands; the next one works', async () => {
  const dir = fresh();
  let fail = false;
  installFaultHooks({
    fileStoreCheckpointEvery: () => 1,
    fileStoreCheckpointCommit: async () => {
      if (fail) throw new Error('EIO: i/o error, rename');
    },
  });
  try {
    const idx = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
    await idx.addMany(docs(0, 20));
    const first = await settled(idx, (st) => st.checkpointLogBytes === st.logBytes);
    assert.deepEqual([first.checkpointError, first.checkpointLogBytes, first.checkpointsSinceOpen], ['', first.logBytes, 1]);
    assert.ok(Number(first.checkpointWriteMs) >= 0 && Number(first.checkpointCommitMs) >= 0);
    const table = readFileSync(path.join(dir, 'table'));
    fail = true;
    await idx.addMany(docs(20, 20));
    const st = await settled(idx, (st) => st.checkpointError !== '');
    assert.match(String(st.checkpointError), /EIO/);
    assert.deepEqual([st.checkpointLogBytes, st.checkpointsSinceOpen], [first.logBytes, 1], 'the failed commit is not counted');
    assert.deepEqual(readFileSync(path.join(dir, 'table')), table, 'the checkpoint before it, in place');
    fail = false;
    // In writes of 5: the key table may be doubling at the first, which takes no checkpoint then.
    for (let b = 40; b < 60; b += 5) await idx.addMany(docs(b, 5));
    const after = await settled(idx, (st) => st.checkpointError === '');
    assert.equal(after.checkpointError, '');
    assert.ok(Number(after.checkpointLogBytes) > Number(st.logBytes), 'a checkpoint past the failed one, in place');
    assert.ok(Number(after.checkpointsSinceOpen) >= 2);
    await idx.close();
    await reopened(dir, 60);
  } finally {
    installFaultHooks({ fileStoreCheckpointEvery: undefined, fileStoreCheckpointCommit: undefined });
  }
});
