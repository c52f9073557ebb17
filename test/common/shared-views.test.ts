/**
 * Typed arrays over SharedArrayBuffers sent to a worker thread (src/common/sharedViews.ts) arrive
 * whole at 4 GiB and past it: V8's structured clone sends a view's length modulo 2^32 bytes (a
 * Float64Array over a 4 GiB buffer arrived empty, and every write to it was lost without an error).
 * A real worker writes at each view's first and last element; the main thread must see both. Only
 * a few pages of each buffer are touched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { fromThread, toThread } from '../../src/common/sharedViews.js';

const SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.codec).then(({ fromThread }) => {
  const job = fromThread(workerData.job);
  const lens = [];
  for (const v of [job.big, job.past, job.tail, job.nested.list[0]]) { v[0] = 3; v[v.length - 1] = 7; lens.push(v.length); }
  job.plain[0] = 9;
  parentPort.postMessage({ lens, kind: job.kind, n: job.nested.n });
});`;

test('views over shared buffers of 4 GiB and more reach a worker with their lengths, offsets and writes', async () => {
  const big = new Float64Array(new SharedArrayBuffer(2 ** 32));
  const past = new Int32Array(new SharedArrayBuffer(2 ** 32 + 4096));
  // A view past 2^31 bytes into a buffer (the packed heads are read into such a view), away from `past`'s ends.
  const tail = new Uint32Array(past.buffer, 2 ** 31 + 4096, 1024);
  const small = new Uint8Array(new SharedArrayBuffer(64)).subarray(8, 24);
  const plain = new Uint8Array(4);
  const job = { kind: 'spread', big, past, tail, nested: { n: 5, list: [small] }, plain };
  const codec = new URL('../../src/common/sharedViews.js', import.meta.url).href;
  const got = await new Promise<{ lens: number[]; kind: string; n: number }>((resolve, reject) => {
    const w = new Worker(SCRIPT, { eval: true, workerData: { codec, job: toThread(job) } });
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.deepEqual(got, { lens: [2 ** 29, 2 ** 30 + 1024, 1024, 16], kind: 'spread', n: 5 });
  for (const v of [big, past, tail, small]) assert.deepEqual([v[0], v[v.length - 1]], [3, 7], `${v.constructor.name} of ${v.length}`);
  assert.equal(plain[0], 0, 'an array not shared is copied, as before');
});

test('fromThread makes again what toThread sent, in the same thread', () => {
  const a = new Float64Array(new SharedArrayBuffer(80)).subarray(2, 7);
  const back = fromThread<{ a: Float64Array; s: string; xs: number[] }>(toThread({ a, s: 'x', xs: [1, 2] }));
  assert.ok(back.a instanceof Float64Array);
  assert.deepEqual([back.a.buffer, back.a.byteOffset, back.a.length, back.s, back.xs], [a.buffer, 16, 5, 'x', [1, 2]]);
});
