/**
 * The optimized signing paths (fused normalization, WebAssembly and JS kernels, slot-major classic
 * MinHash) must give bit-identical fingerprint sets and signatures to the definitions. The reference
 * here is written from the definitions, as plainly as possible, and compared on random Unicode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTextSigner } from '../src/sketch/textSigner.js';
import { createMinHasher } from '../src/sketch/minhash.js';
import { createShingler } from '../src/text/shingler.js';
import { toSortedSet } from '../src/text/fingerprintSet.js';
import { fmix32, splitmix32, subSeed } from '../src/hash/mix.js';
import type { NormalizePreset } from '../src/text/normalize.js';

const ROLL = 0x9e3779b1 | 0;

function refNormalize(text: string, preset: NormalizePreset, keepCase: boolean): string {
  if (preset === 'none') return text;
  if (preset === 'seed000') return text.replace(/( )+|(\n)+/g, ' ').toLowerCase();
  let t = text.normalize('NFKC');
  if (!keepCase) t = t.toLowerCase();
  return t.replace(/\s+/g, ' ').trim();
}

/** Fingerprints by the definition: each window's polynomial computed from scratch. */
function refFingerprints(text: string, k: number, seed: number): number[] {
  const cps = Array.from(text, (ch) => ch.codePointAt(0)!);
  const sym = (cp: number): number => fmix32((cp ^ subSeed(seed, 1)) >>> 0);
  const poly = (from: number, to: number): number => {
    let h = 0;
    for (let i = from; i < to; i++) h = (Math.imul(h, ROLL) + sym(cps[i]!)) | 0;
    return fmix32(h);
  };
  if (cps.length === 0) return [];
  if (cps.length <= k) return [poly(0, cps.length)];
  const out: number[] = [];
  for (let i = 0; i + k <= cps.length; i++) out.push(poly(i, i + k));
  return out;
}

function refSet(fps: number[]): Uint32Array {
  return Uint32Array.from([...new Set(fps)].sort((a, b) => a - b));
}

/** OPH by the definition (main's minhash.ts): round 0, then fill rounds for empty bins. */
function refOph(set: Uint32Array, k: number, seed: number): Uint32Array | null {
  if (set.length === 0) return null;
  const pre = subSeed(seed, 4);
  const out = new Uint32Array(k).fill(0xffffffff);
  for (const fp of set) {
    const z = fmix32((fp ^ pre) >>> 0);
    const bin = Math.floor((z * k) / 4294967296);
    if (z < out[bin]!) out[bin] = z;
  }
  // Round at which each bin got its value (0 for round 0; -1 while empty).
  const round: number[] = Array.from(out, (v) => (v === 0xffffffff ? -1 : 0));
  for (let t = 1; round.includes(-1); t++) {
    for (const fp of set) {
      const h = fmix32((fmix32((fp ^ pre) >>> 0) ^ Math.imul(t, 0x9e3779b9)) >>> 0);
      const bin = t < k ? Math.floor((h * k) / 4294967296) : t - k;
      if (round[bin] === -1) {
        round[bin] = t;
        out[bin] = h;
      } else if (round[bin] === t && h < out[bin]!) out[bin] = h;
    }
  }
  return out;
}

function refClassic(set: Uint32Array, k: number, seed: number): Uint32Array | null {
  if (set.length === 0) return null;
  const rnd = splitmix32(subSeed(seed, 2));
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < k; i++) {
    a.push(rnd() | 1);
    b.push(rnd() | 0);
  }
  const pre = subSeed(seed, 3);
  const out = new Uint32Array(k).fill(0xffffffff);
  for (const fp of set) {
    const z = fmix32((fp ^ pre) >>> 0) | 0;
    for (let i = 0; i < k; i++) {
      let h = Math.imul(z ^ b[i]!, a[i]!);
      h = (h ^ (h >>> 16)) >>> 0;
      if (h < out[i]!) out[i] = h;
    }
  }
  return out;
}

/** Characters that stress the fused normalizer: whitespace kinds, marks, expansions, Σ, jamo, surrogates. */
const TRICKY = [
  'a', 'B', 'z', ' ', '  ', '\n', '\n\n', '\t', '\r', '\u00a0', '\u3000', '\u2028', '\u0085', '\u180e', '\ufeff',
  'é', 'É', 'e\u0301', '\u0301', '\u0308', 'Σ', 'σ', 'ς', 'İ', 'ß', 'ẞ', 'ﬁ', '…', '½', '²', 'µ', 'ª', '´', '¨',
  'ǅ', 'Å', '\u212b', 'ｱ', '\uff9e', '\u3099', 'ガ', '\u1100', '\u1161', '\u11a8', '가', 'ㄱ', 'ﾡ', 'Ω', '\u2126',
  '\ud800', '\udc00', '😀', '𝐀', 'Ⅻ', '①', 'ｶ\uff9e', 'Ã', 'à', '.', ',', '-', '\u0000', '\u200b', 'Ǳ', 'ǲ',
];
const trickyText = fc.array(fc.constantFrom(...TRICKY), { maxLength: 40 }).map((xs) => xs.join(''));
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  trickyText,
  fc.string({ unit: 'binary-ascii', maxLength: 200 }),
);
const config = fc.record({
  preset: fc.constantFrom<NormalizePreset>('default', 'seed000', 'none'),
  keepCase: fc.boolean(),
  k: fc.integer({ min: 1, max: 12 }),
  numPerm: fc.constantFrom(1, 3, 4, 16, 20, 64, 100, 128),
  method: fc.constantFrom<'oph' | 'classic'>('oph', 'classic'),
  shingleSeed: fc.constantFrom(0, 1, 0xdeadbeef),
  seed: fc.constantFrom(1, 2, 42),
  wasm: fc.boolean(),
});

test('fast signer = reference definition on random Unicode (sets and signatures)', () => {
  fc.assert(
    fc.property(config, fc.array(anyText, { minLength: 1, maxLength: 4 }), (c, texts) => {
      const signer = createTextSigner({
        shingle: { k: c.k, seed: c.shingleSeed, normalize: { preset: c.preset, keepCase: c.keepCase } },
        minhash: { method: c.method, numPerm: c.numPerm, seed: c.seed },
        wasm: c.wasm,
      });
      // Several texts through one signer: scratch buffers must not leak state between documents.
      for (const text of texts) {
        const keepCase = c.preset === 'default' && c.keepCase;
        const set = refSet(refFingerprints(refNormalize(text, c.preset, keepCase), c.k, c.shingleSeed));
        assert.deepEqual(signer.set(text), set, 'fingerprint set');
        const want = c.method === 'oph' ? refOph(set, c.numPerm, c.seed) : refClassic(set, c.numPerm, c.seed);
        assert.deepEqual(signer.sign(text), want, 'signature');
      }
    }),
    { numRuns: 1000, seed: 20240601, endOnFailure: true },
  );
});

test('fast signer = reference on long texts (wasm buffer growth, multi-block tables)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', minLength: 2000, maxLength: 12000 }), fc.constantFrom<'oph' | 'classic'>('oph', 'classic'), (text, method) => {
      const signer = createTextSigner({ minhash: { method } });
      const set = refSet(refFingerprints(refNormalize(text, 'default', false), 5, 0));
      assert.deepEqual(signer.set(text), set);
      assert.deepEqual(signer.sign(text), method === 'oph' ? refOph(set, 128, 1) : refClassic(set, 128, 1));
    }),
    { numRuns: 12, seed: 7, endOnFailure: true },
  );
});

test('createMinHasher (slot-major classic, OPH) = reference on random fingerprint multisets', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 300 }),
      fc.constantFrom(1, 3, 7, 128),
      fc.constantFrom<'oph' | 'classic'>('oph', 'classic'),
      (xs, numPerm, method) => {
        const fps = Uint32Array.from(xs.concat(xs.slice(0, 5)));
        const set = refSet(xs);
        const want = method === 'oph' ? refOph(set, numPerm, 1) : refClassic(set, numPerm, 1);
        assert.deepEqual(createMinHasher({ numPerm, method }).sign(fps), want);
      },
    ),
    { numRuns: 300, seed: 11, endOnFailure: true },
  );
});

test('shingler.set = reference for char shingles (the batch dedup path)', () => {
  fc.assert(
    fc.property(anyText, fc.integer({ min: 1, max: 10 }), (text, k) => {
      assert.deepEqual(createShingler({ k }).set(text), refSet(refFingerprints(refNormalize(text, 'default', false), k, 0)));
    }),
    { numRuns: 300, seed: 3, endOnFailure: true },
  );
});

test('toSortedSet (radix sort) = Array sort + unique, set and multiset', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 3000 }), fc.boolean(), (xs, multiset) => {
      const got = toSortedSet(Uint32Array.from(xs.concat(xs.slice(0, 40))), multiset);
      if (!multiset) assert.deepEqual(got, refSet(xs.concat(xs.slice(0, 40))));
      else {
        // Reference multiset: the n-th repeat of v becomes fmix32(v ^ n·0x9E3779B9); repeat until unique.
        let cur = xs.concat(xs.slice(0, 40)).sort((a, b) => a - b);
        for (;;) {
          const next: number[] = [];
          let changed = false;
          for (let i = 0, run = 0; i < cur.length; i++) {
            run = i > 0 && cur[i] === cur[i - 1] ? run + 1 : 0;
            if (run > 0) changed = true;
            next.push(run > 0 ? fmix32((cur[i]! ^ Math.imul(run, 0x9e3779b9)) >>> 0) : cur[i]!);
          }
          if (!changed) break;
          cur = next.sort((a, b) => a - b);
        }
        assert.deepEqual(got, refSet(cur));
      }
    }),
    { numRuns: 200, seed: 5 },
  );
});
