/**
 * src/common/roomArrays.ts: arrays with room grow in place (the same buffer, contents kept), past
 * their room by a copy that gives the old buffer back (every view of it empty); a cut keeps the first elements, by a copy that gives the old buffer back
 * (every view of it empty) or by a narrower view; {@link release} empties every view at once; and
 * every array is a plain one, not on a resizable buffer (which V8 reads and writes at half speed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { grown, mapped, release, shrunk, takenOver, widened } from '../../src/common/roomArrays.js';

/** Whether `a`'s buffer is resizable (ES2024's `resizable`, absent in this build's library). */
function resizable(a: Int32Array): boolean {
  return (a.buffer as unknown as { resizable?: boolean }).resizable === true;
}

test('mapped and grown: zeros, growth within the room on the same buffer, past it a copy, contents kept', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5000 }),
      fc.integer({ min: 0, max: 20000 }),
      fc.array(fc.integer({ min: 1, max: 30000 }), { maxLength: 8 }),
      (n, most, grows) => {
        let a = mapped(Int32Array, n, most);
        assert.equal(a.length, n);
        assert.equal(resizable(a), false);
        assert.ok(a.every((x) => x === 0));
        for (let i = 0; i < a.length; i++) a[i] = i + 1;
        let filled = a.length;
        for (const g of grows) {
          const before = a.buffer;
          const length = a.length;
          const b = grown(a, g);
          assert.ok(b.length >= g && b.length >= length);
          if (g <= length) assert.equal(b, a);
          else if (before.byteLength >= 4 * g) assert.equal(b.buffer, before, 'growth within the room is in place');
          else assert.ok(b.buffer !== before && a.length === 0 && before.byteLength === 0, 'past the room: a copy, the old buffer given back');
          for (let i = 0; i < filled; i++) assert.equal(b[i], i + 1);
          for (let i = filled; i < b.length; i++) b[i] = i + 1;
          filled = b.length;
          a = b;
        }
      },
    ),
    { seed: 51, numRuns: 200 },
  );
});

test('grown past the room: the copy holds the values, the old buffer is given back at once (every view of it empty)', () => {
  for (const [n, most] of [[10, 10], [1000, 1000], [1 << 15, 1 << 15], [100, 1 << 12]] as const) {
    const a = mapped(Uint32Array, n, most);
    for (let i = 0; i < n; i++) a[i] = 3 * i + 1;
    const other = new Uint32Array(a.buffer, 0, Math.min(4, n));
    const old = a.buffer;
    const want = Math.floor(old.byteLength / 4) + 1;
    const b = grown(a, want);
    assert.ok(b.length >= want);
    for (let i = 0; i < n; i++) assert.equal(b[i], 3 * i + 1);
    for (let i = n; i < b.length; i += 997) assert.equal(b[i], 0);
    assert.notEqual(b.buffer, old);
    assert.equal(a.length, 0, 'the old array is empty');
    assert.equal(old.byteLength, 0, 'its buffer detached');
    assert.equal(other.length, 0, 'and every other view of it');
  }
  // A part of a larger buffer (a Buffer of Node's pool, say) is copied; the buffer is not the array's to give back.
  const whole = new Int32Array(64).fill(5);
  const part = whole.subarray(8, 16);
  const b = grown(part, 100);
  assert.equal(b.length >= 100, true);
  assert.equal(b[7], 5);
  assert.equal(part.length, 8);
  assert.equal(whole.length, 64);
});

test('shrunk: the first elements kept; a copy gives the old buffer back, a view keeps it', () => {
  for (
    const [n, most, keep] of [
      [10, 10, 5],
      [1000, 1 << 22, 10],
      [1 << 20, 1 << 20, 1 << 19],
      [1 << 20, 1 << 20, (1 << 20) - 1000],
      [300, 300, 0],
    ] as const
  ) {
    const a = mapped(Int32Array, n, most);
    for (let i = 0; i < n; i++) a[i] = 7 * i;
    const other = new Int32Array(a.buffer, 0, 4);
    const unused = a.buffer.byteLength - 4 * keep;
    const b = shrunk(a, keep);
    assert.equal(b.length, keep);
    for (let i = 0; i < keep; i++) assert.equal(b[i], 7 * i);
    if (unused >= 1 << 20) {
      assert.notEqual(b.buffer, a.buffer);
      assert.equal(a.length, 0, 'the old buffer given back');
      assert.equal(other.length, 0);
    } else assert.equal(b.buffer, a.buffer);
  }
});

test('release empties every view of the buffer; takenOver views a whole buffer', () => {
  const a = mapped(Uint16Array, 100, 1 << 16);
  a.fill(3);
  const t = takenOver(Uint16Array, a.buffer as ArrayBuffer);
  assert.equal(t.length, a.buffer.byteLength / 2);
  assert.equal(t[99], 3);
  release(a);
  assert.equal(a.length, 0);
  assert.equal(t.length, 0);
  release(a);
});

test('widened: a wider view of the same buffer with room, the earlier views still read; none without room; shared buffers never given back', () => {
  const a = mapped(Uint8Array, 100, 1 << 20);
  a.set([7, 8, 9]);
  const view = a.subarray(0, 3);
  const w = widened(a, 5000, 8000);
  assert.ok(w && w.buffer === a.buffer && w.length === 8000);
  w[4000] = 1;
  assert.deepEqual([...view], [7, 8, 9], 'a view taken before still reads');
  assert.equal(a.length, 100);
  const plain = new Float64Array(10);
  assert.equal(widened(plain, 11), undefined);
  assert.equal(widened(plain.subarray(1), 5), undefined, "a view not at its buffer's start has no room");
  const shared = new Int32Array(new SharedArrayBuffer(64));
  shared[3] = 5;
  release(shared);
  assert.equal(shared.length, 16);
  const g = grown(shared, 1000);
  assert.equal(g[3], 5);
  assert.equal(shared[3], 5, 'a shared buffer outgrown is copied and left whole');
});
