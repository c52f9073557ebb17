/**
 * Compaction of the file store (src/store/file/compact.ts): every live document answers as before,
 * the files shrink after replacements and removals, writes go on after it, a backup running
 * meanwhile stays whole, and a kill -9 of the
 * compacting process before or after its switch leaves a store (the old or the new) that opens with
 * every live document and passes `neardup index check`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NearDupIndex, checkIndex } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file/store.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import { neardup } from '../../cliUtil.js';

const texts = kijijiTexts();
const OPTS = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };
const root = mkdtempSync(path.join(tmpdir(), 'nd-filecompact-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `s${n++}`);
const bytes = (dir: string) => readdirSync(dir).filter((f) => /^(records|log)/.test(f)).reduce((a, f) => a + statSync(path.join(dir, f)).size, 0);

async function answers(idx: NearDupIndex): Promise<unknown> {
  return { size: await idx.size(), q: await Promise.all(texts.slice(0, 150).map((t) => idx.query(t))), meta: (await idx.get('d1'))?.meta };
}

/** A store of 200 documents, each replaced once and 50 removed: most of its files are dead versions. */
async function churned(dir: string): Promise<unknown> {
  const idx = await NearDupIndex.open({ ...OPTS, store: `file:${dir}` });
  await idx.addMany(texts.slice(0, 200).map((text, i) => ({ id: `d${i}`, text, meta: { v: 1 } })));
  await idx.addMany(texts.slice(0, 200).map((text, i) => ({ id: `d${i}`, text: i % 2 ? text : texts[300 + i]!, meta: { v: 2 } })));
  await idx.removeMany(Array.from({ length: 50 }, (_, i) => `d${i * 4 + 3}`));
  await idx.add('ttl', texts[250]!, undefined, { ttl: '1h' });
  const a = await answers(idx);
  await idx.close();
  return a;
}

test('file store compaction: same answers, smaller files, writes go on; the CLI compacts a file store', async () => {
  const dir = fresh();
  const before = await churned(dir);
  const size0 = bytes(dir);
  const idx = await NearDupIndex.open({ store: `file:${dir}` });
  // A backup started first: the compaction waits for its copies before deleting the files copied.
  const copy = path.join(root, `backup${n++}`);
  const backup = (idx.store as FileStore).backup(copy);
  const r = await idx.store.compact!();
  await backup;
  assert.equal(r.documents, 151);
  assert.ok(r.entriesAfter < r.entriesBefore && r.bytesAfter < r.bytesBefore * 0.6, JSON.stringify(r));
  assert.deepEqual(await answers(idx), before, 'answers while still open');
  assert.ok(bytes(dir) < size0 * 0.6, `${bytes(dir)} bytes after, ${size0} before`);
  assert.deepEqual(readdirSync(dir).filter((f) => /^(records|log)/.test(f)).sort(), ['log.1', 'records.1']);
  await idx.add('late', texts[400]!, { late: true });
  await idx.close();
  const b = await NearDupIndex.open({ store: `file:${dir}` });
  assert.equal(((await b.stats()).storeStats as Record<string, number>).framesFoldedAtOpen, 0, 'opened from the checkpoint');
  assert.deepEqual((await b.get('late'))!.meta, { late: true });
  await b.remove('late');
  assert.deepEqual(await answers(b), before, 'answers after a reopen');
  assert.equal(await b.store.countExpired(Date.now() + 2 * 3600_000), 1, 'the expiry is kept');
  assert.deepEqual((await checkIndex(b)).errors, []);
  await b.close();
  const cli = neardup(['index', 'compact', '--store', `file:${dir}`]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /^records and log of file:.*: \d+ entries .* -> 1 entries .*, 151 documents\n$/);
  assert.ok(existsSync(path.join(dir, 'log.2')) && !existsSync(path.join(dir, 'log.1')));
  for (const d of [dir, copy]) {
    const c = await NearDupIndex.open({ store: `file:${d}` });
    assert.deepEqual(await answers(c), before, d);
    await c.close();
  }
  assert.equal(neardup(['index', 'compact', '--store', `file:${path.join(root, 'none')}`]).code, 2);
});

/** Compacts `dir` in a child process that kills itself with SIGKILL at `stage`. */
async function killedCompaction(dir: string, stage: 'written' | 'switched'): Promise<void> {
  const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');
  const code = `
    const { installFaultHooks } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'common/faults.js')).href)});
    const { NearDupIndex } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'index.js')).href)});
    installFaultHooks({ fileStoreCompact: async (s) => { if (s === ${JSON.stringify(stage)}) process.kill(process.pid, 'SIGKILL'); } });
    const idx = await NearDupIndex.open({ store: ${JSON.stringify(`file:${dir}`)} });
    await idx.store.compact();
    process.exit(3);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'inherit'] });
  const signal = await new Promise((r) => child.once('exit', (_c, s) => r(s)));
  assert.equal(signal, 'SIGKILL');
}

for (const stage of ['written', 'switched'] as const) {
  test(`file store compaction: kill -9 once the new files are ${stage} leaves a store with every live document`, async () => {
    const dir = fresh();
    const before = await churned(dir);
    await killedCompaction(dir, stage);
    const check = neardup(['index', 'check', '--store', `file:${dir}`]);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    const idx = await NearDupIndex.open({ store: `file:${dir}` });
    assert.deepEqual(await answers(idx), before);
    // The other generation's files are gone: the old ones before the switch were kept, after it replaced.
    const files = readdirSync(dir).filter((f) => /^(records|log)/.test(f)).sort();
    assert.deepEqual(files, stage === 'written' ? ['log', 'records'] : ['log.1', 'records.1']);
    await idx.add('after', texts[420]!);
    await idx.close();
  });
}
