/** Hash functions: reference vectors and distribution. */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { murmur3Utf16, murmur3Words, textHash2 } from '../../src/hash/murmur3.js';
import { fmix32 } from '../../src/hash/mix.js';
import { charShingles } from '../../src/text/charShingles.js';
import { kijijiDocs } from '../helpers.js';

/** An independent byte-oriented MurmurHash3 x86_32, written from the algorithm's description. */
function murmur3Bytes(bytes: Uint8Array, seed: number): number {
  let h = seed >>> 0;
  const n = bytes.length;
  const blocks = n - (n % 4);
  const mix = (k: number): number => {
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    return Math.imul(k, 0x1b873593);
  };
  for (let i = 0; i < blocks; i += 4) {
    const k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    h ^= mix(k);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const rest = n & 3;
  if (rest > 0) {
    let k = 0;
    if (rest === 3) k ^= bytes[blocks + 2]! << 16;
    if (rest >= 2) k ^= bytes[blocks + 1]! << 8;
    k ^= bytes[blocks]!;
    h ^= mix(k);
  }
  h ^= n;
  return fmix32(h >>> 0);
}

test('the byte reference matches published MurmurHash3 x86_32 vectors', () => {
  const v = (s: string | number[], seed: number): number => murmur3Bytes(typeof s === 'string' ? new TextEncoder().encode(s) : Uint8Array.from(s), seed);
  assert.equal(v('', 0), 0);
  assert.equal(v('', 1), 0x514e28b7);
  assert.equal(v('', 0xffffffff), 0x81f16f39);
  assert.equal(v([0xff, 0xff, 0xff, 0xff], 0), 0x76293b50);
  assert.equal(v([0x21, 0x43, 0x65, 0x87], 0), 0xf55b516b);
  assert.equal(v([0x21, 0x43, 0x65], 0), 0x7e4a8634);
  assert.equal(v('aaaa', 0x9747b28c), 0x5a97808a);
  assert.equal(v('Hello, world!', 0x9747b28c), 0x24884cba);
  assert.equal(v('The quick brown fox jumps over the lazy dog', 0x9747b28c), 0x2fa826cd);
});

test('murmur3Utf16 equals MurmurHash3 of the UTF-16LE bytes, for any string and range', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 30 }), fc.integer(), fc.nat(), fc.nat(), (s, seed, x, y) => {
      const start = s.length ? x % (s.length + 1) : 0;
      const end = start + (s.length ? y % (s.length - start + 1) : 0);
      const bytes = new Uint8Array(Buffer.from(s.slice(start, end), 'utf16le'));
      assert.equal(murmur3Utf16(s, seed, start, end), murmur3Bytes(bytes, seed));
    }),
    { numRuns: 500, seed: 3 },
  );
});

test('murmur3Words equals MurmurHash3 of the little-endian uint32 bytes', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 20 }), fc.integer(), (ws, seed) => {
      const u = Uint32Array.from(ws);
      assert.equal(murmur3Words(u, seed), murmur3Bytes(new Uint8Array(u.buffer), seed));
    }),
    { numRuns: 300, seed: 5 },
  );
});

test('fmix32 is a bijection on a sample and spreads sequential inputs uniformly (chi-square)', () => {
  const buckets = new Float64Array(256);
  const N = 256 * 400;
  const seen = new Set<number>();
  for (let i = 0; i < N; i++) {
    const h = fmix32(i);
    seen.add(h);
    buckets[h >>> 24]!++;
  }
  assert.equal(seen.size, N);
  const e = N / 256;
  let chi = 0;
  for (const c of buckets) chi += ((c - e) * (c - e)) / e;
  // 255 degrees of freedom: mean 255, sd ≈ 22.6; 360 is beyond the 99.99th percentile.
  assert.ok(chi < 360, `chi-square ${chi.toFixed(1)}`);
});

test('char-shingle fingerprints of real text: uniform top bits and no more collisions than chance', () => {
  const docs = kijijiDocs().slice(0, 800);
  const byFp = new Map<number, string>();
  const distinct = new Set<string>();
  let collisions = 0;
  const buckets = new Float64Array(256);
  for (const d of docs) {
    const t = d.toLowerCase();
    const fps = charShingles(t, 8);
    for (let i = 0; i < fps.length; i++) {
      const s = t.slice(i, i + 8);
      if (distinct.has(s)) continue;
      distinct.add(s);
      const f = fps[i]!;
      buckets[f >>> 24]!++;
      const prev = byFp.get(f);
      if (prev !== undefined && prev !== s) collisions++;
      else byFp.set(f, s);
    }
  }
  const n = distinct.size;
  const expected = (n * (n - 1)) / 2 / 2 ** 32;
  assert.ok(collisions <= expected + 6 * Math.sqrt(expected) + 3, `${collisions} collisions among ${n} shingles, expected ≈ ${expected.toFixed(2)}`);
  const e = n / 256;
  let chi = 0;
  for (const c of buckets) chi += ((c - e) * (c - e)) / e;
  assert.ok(chi < 360, `chi-square ${chi.toFixed(1)} over ${n} distinct shingles`);
});

test('textHash2: equal texts hash alike, in each domain; distinct texts apart (property); the two domains differ', () => {
  const enc = new TextEncoder();
  const h = (text: string | null, b?: Uint8Array): string => {
    const out = new Uint32Array(2);
    textHash2(out, 0, text, b, 0, b?.length ?? 0);
    return `${out[0]}:${out[1]}`;
  };
  const seen = new Map<string, string>();
  fc.assert(
    fc.property(fc.string({ maxLength: 40, unit: 'grapheme' }), (s) => {
      const a = h(s);
      assert.equal(h(s.slice()), a);
      const bytes = enc.encode(s);
      assert.equal(h(null, bytes), h(null, Uint8Array.from(bytes)));
      const other = seen.get(a);
      assert.ok(other === undefined || other === s, `${JSON.stringify(s)} and ${JSON.stringify(other)} hash alike`);
      seen.set(a, s);
    }),
    { numRuns: 3000, seed: 5 },
  );
  assert.notEqual(h('abc'), h(null, enc.encode('abc')));
  // Odd lengths and tails of 1–3 bytes take part.
  assert.notEqual(h('abc'), h('abd'));
  assert.notEqual(h(null, enc.encode('abcde')), h(null, enc.encode('abcdf')));
});
