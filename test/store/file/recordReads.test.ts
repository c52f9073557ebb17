/**
 * Lookups and gets that read several records read them with positioned reads in parallel
 * (src/store/file/recordReads.ts). They answer as reads one at a time would, also while a
 * compaction moves every record to the next generation's file and closes the old one, and while
 * the store closes: a read that took its place before the switch reads the old file, which is
 * closed only once it is done.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileStore } from '../../../src/store/file/store.js';
import type { StoreManifest } from '../../../src/store/types.js';
import { installFaultHooks } from '../../../src/common/faults.js';

const K = 4;
const manifest = { keysPerDoc: K } as StoreManifest;
// Few distinct keys: every lookup finds many documents, so it reads many records at once.
const keys = (i: number) => Float64Array.from({ length: K }, (_, j) => ((i + j) % 7) * 2 ** 21 + j);
const recordOf = (id: string, v: number) => Buffer.from(`${id}:${v}:${'x'.repeat(v % 50)}`);
const root = mkdtempSync(path.join(tmpdir(), 'nd-recreads-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Every lookup's and get's answer, as id → record text, in a stable form. */
async function answers(s: FileStore, ids: string[]): Promise<string> {
  const lists = await s.lookup(Array.from({ length: 7 }, (_, i) => keys(i)), 1000);
  const got = await s.get(ids);
  return JSON.stringify({
    lists: lists.map((l) => l.map((d) => `${d.id}=${Buffer.from(d.record).toString()}`).sort()),
    got: got.map((r) => (r ? Buffer.from(r).toString() : null)),
  });
}

test('record reads in parallel: the answers of reads one by one, through a compaction and a close', async () => {
  const dir = path.join(root, 's');
  const s = new FileStore(dir);
  await s.open(manifest);
  const ids = Array.from({ length: 300 }, (_, i) => `d${i}`);
  // Two versions of each, then a third of them removed: compaction has records to move and to drop.
  for (const v of [1, 2]) await s.put(ids.map((id, i) => ({ id, keys: keys(i), record: recordOf(id, v * 1000 + i) })));
  await s.removeMany(ids.filter((_, i) => i % 3 === 0).map((id) => ({ id, keys: new Float64Array(0) })));
  const want = await answers(s, [...ids, 'absent']);
  assert.match(want, /d1=d1:2001:/);
  // Many lookups in flight while the compaction runs and switches files; some started just before the switch.
  const during = Array.from({ length: 40 }, () => answers(s, [...ids, 'absent']));
  let atSwitch: Promise<string>[] = [];
  installFaultHooks({
    fileStoreCompact: async (stage) => {
      if (stage === 'switched') atSwitch = Array.from({ length: 40 }, () => answers(s, [...ids, 'absent']));
    },
  });
  const compacted = s.compact();
  const more = Array.from({ length: 40 }, () => answers(s, [...ids, 'absent']));
  try {
    assert.equal((await compacted).documents, 200);
  } finally {
    installFaultHooks({ fileStoreCompact: undefined });
  }
  assert.equal(atSwitch.length, 40);
  for (const a of await Promise.all([...during, ...more, ...atSwitch])) assert.equal(a, want);
  assert.equal(await answers(s, [...ids, 'absent']), want);
  // A close while lookups are in flight: they finish on the files they started on.
  const last = Array.from({ length: 10 }, () => answers(s, ids));
  await s.close();
  const wantIds = await Promise.all(last);
  const reopened = new FileStore(dir);
  await reopened.open(manifest);
  assert.equal(await answers(reopened, [...ids, 'absent']), want);
  assert.equal(await answers(reopened, ids), wantIds[0]);
  await reopened.close();
});
