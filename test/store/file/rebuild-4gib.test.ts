/**
 * The file store's key table spread back in its worker thread (src/store/file/rebuildWorker.ts) at
 * 2^29 entries, where its key array is a 4 GiB SharedArrayBuffer: the size the table reaches near
 * 10^7 documents. The worker once got that array with length 0 (src/common/sharedViews.ts), wrote
 * none of the keys, and said it had: 82 % of a 10.3M-document store's keys read back as 0 and
 * lookups missed the documents they belonged to, with no error. Only the first entries are marked,
 * so the spread touches the heads' 2 GiB and a few pages of the keys.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rebuildInWorker } from '../../../src/store/file/checkpoint.js';
import { homeDistance, keyCode } from '../../../src/store/file/tablePack.js';

test('a key table of 2^29 entries spreads in the worker with every key in place', async () => {
  const bits = 29;
  const size = 2 ** bits;
  const mask = size - 1;
  const tKey = new Float64Array(new SharedArrayBuffer(8 * size));
  const tHead = new Int32Array(new SharedArrayBuffer(4 * size));
  const bitmap = new Uint8Array(new SharedArrayBuffer(size / 8));
  // Keys whose homes are entries 0, 1, 2, 3, 5 and 9; the one at entry 6 sits one past its home (5).
  const placed = [0, 1, 2, 3, 5, 6, 9];
  const homes = [0, 1, 2, 3, 5, 5, 9];
  const keys = homes.map((h, i) => ((i + 1) * size + h) * 2 ** 21 + 1000 + i);
  const used = keys.length;
  const dist = new Uint8Array(new SharedArrayBuffer(used));
  const codes = new Uint32Array(tKey.buffer, 8 * size - 4 * used, used);
  placed.forEach((h, r) => {
    bitmap[h >> 3]! |= 1 << (h & 7);
    codes[r] = keyCode(keys[r]!, bits);
    dist[r] = homeDistance(keys[r]!, h, mask);
    tHead[size - used + r] = 100 + r;
  });
  const ok = await rebuildInWorker({ kind: 'spread', keys: { bits: bitmap, tKey, tHead, used, dist } });
  assert.equal(ok, true);
  placed.forEach((h, r) => assert.deepEqual([tKey[h], tHead[h]], [keys[r], 100 + r], `entry ${h}`));
  for (const h of [4, 7, 8, 10, size - used, size - 1]) assert.equal(tHead[h], -1, `entry ${h} is empty`);
});
