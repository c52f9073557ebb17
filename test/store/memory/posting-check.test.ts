/**
 * `index check`'s walk of a band table's postings (src/store/memory/postingCheck.ts) on the file
 * store: a table rebuilt from its checkpoint, in worker threads as at 10^7 documents, checks clean;
 * each way a table can be wrong is found: keys lost as a worker once lost them (all 0), an entry
 * dropped, a forward link cut, a backward link wrong, a chain that loops, a key moved away from
 * its home. The check once compared each document's keys with themselves, and passed a store
 * whose lookups missed 82 % of its keys.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, checkIndex } from '../../../src/index.js';
import { installFaultHooks } from '../../../src/common/faults.js';
import type { MemoryStore } from '../../../src/store/memory/store.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-posting-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Table {
  tKey: Float64Array;
  tHead: Int32Array;
  next: Int32Array;
  prev: Int32Array;
  mask: number;
}

const base = path.join(dir, 'base');
let copies = 0;

/** Opens a copy of the base store (from its checkpoint, through the worker threads), breaks its table with `harm`, checks it. */
async function checked(harm: (t: Table) => void): Promise<string[]> {
  const store = path.join(dir, `copy${copies++}`);
  cpSync(base, store, { recursive: true });
  installFaultHooks({ fileStoreWorkersFrom: () => 0 });
  try {
    const idx = await NearDupIndex.open({ store });
    const stats = await idx.stats();
    assert.equal(stats.storeStats?.framesFoldedAtOpen, 0, 'opened from the checkpoint');
    // The image's arrays are the table's own (views, no copies): harm them in place.
    const img = (idx.store as unknown as { table: { table: MemoryStore } }).table.table.image();
    harm({ tKey: img.tKey, tHead: img.tHead, next: img.next, prev: img.prev, mask: img.tHead.length - 1 });
    // Every error listed: a broken key table also leaves documents' keys not leading back, listed first.
    const { errors } = await checkIndex(idx, { maxListed: 1e6 });
    await idx.close();
    return errors;
  } finally {
    installFaultHooks({ fileStoreWorkersFrom: undefined });
  }
}

/** The used entries whose chains hold at least `n` postings. */
function chains(t: Table, n: number): number[] {
  const out: number[] = [];
  for (let h = 0; h <= t.mask; h++) {
    let len = 0;
    for (let p = t.tHead[h]!; p !== -1; p = t.next[p]!) len++;
    if (len >= n) out.push(h);
  }
  return out;
}

test('the postings check finds every way a band table can be wrong, and passes a good one', async () => {
  const texts = kijijiTexts().slice(0, 400);
  const idx = await NearDupIndex.open({ store: base });
  // Copies share keys: chains of several postings.
  await idx.addMany(texts.map((text, i) => ({ id: `d${i}`, text })));
  await idx.addMany(texts.slice(0, 100).map((text, i) => ({ id: `c${i}`, text })));
  await idx.close();

  assert.deepEqual(await checked(() => {}), []);
  const has = (errors: string[], re: RegExp) => assert.ok(errors.some((e) => re.test(e)), `${re} in ${JSON.stringify(errors.slice(0, 3))}`);

  has(await checked((t) => t.tKey.fill(0)), /cannot be found from its home/);
  has(
    await checked((t) => {
      t.tHead[chains(t, 1)[0]!] = -1;
    }),
    /is on no chain of the key table/,
  );
  has(
    await checked((t) => {
      t.next[t.tHead[chains(t, 2)[0]!]!] = -1;
    }),
    /is on no chain of the key table/,
  );
  has(
    await checked((t) => {
      const h = chains(t, 2)[0]!;
      t.prev[t.next[t.tHead[h]!]!] = -1;
    }),
    /its backward link is -1/,
  );
  has(
    await checked((t) => {
      const h = chains(t, 2)[0]!;
      let p = t.tHead[h]!;
      while (t.next[p] !== -1) p = t.next[p]!;
      t.next[p] = t.tHead[h]!;
    }),
    /meets posting \d+ twice/,
  );
  has(
    await checked((t) => {
      // Two used entries' keys swapped: each chain now sits under the other's key.
      const [a, b] = chains(t, 1);
      [t.tKey[a!], t.tKey[b!]] = [t.tKey[b!]!, t.tKey[a!]!];
    }),
    /is on the chain of key|cannot be found from its home/,
  );
});
