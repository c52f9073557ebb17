/**
 * The optimized signing paths (fused normalization, WebAssembly and JS kernels, slot-major classic
 * MinHash) must give bit-identical fingerprint sets and signatures to the definitions. The reference
 * here is written from the definitions, as plainly as possible, and compared on random Unicode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTextSigner } from '../../src/sketch/textSigner.js';
import { ProbeTable } from '../../src/similarity/probeSet.js';
import { createMinHasher } from '../../src/sketch/minhash.js';
import { createShingler } from '../../src/text/shingler.js';
import { toSortedSet } from '../../src/text/fingerprintSet.js';
import { fmix32, splitmix32, subSeed } from '../../src/hash/mix.js';
import type { NormalizePreset, NormalizeOptions } from '../../src/text/normalize.js';
import { KeyMaker, type ForestOptions } from '../../src/online/keys/keys.js';
import { bandKeys, bandKey53 } from '../../src/lsh/bandKeys.js';
import { ByteWriter, encodeFingerprintSet } from '../../src/sketch/format.js';
import { encodeRecord, decodeRecord, type IndexRecord } from '../../src/online/records/record.js';
import { NearDupIndex, type NearDupIndexOptions } from '../../src/online/nearDupIndex.js';
import type { ShingleOptions } from '../../src/text/shingler.js';
import { kijijiTexts } from '../helpers/kijiji.js';

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
  let empty = round.filter((r) => r === -1).length;
  for (let t = 1; empty > 0; t++) {
    for (const fp of set) {
      const h = fmix32((fmix32((fp ^ pre) >>> 0) ^ Math.imul(t, 0x9e3779b9)) >>> 0);
      const bin = t < k ? Math.floor((h * k) / 4294967296) : t - k;
      if (round[bin] === -1) {
        round[bin] = t;
        out[bin] = h;
        empty--;
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
  'a',
  'B',
  'z',
  ' ',
  '  ',
  '\n',
  '\n\n',
  '\t',
  '\r',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u0085',
  '\u180e',
  '\ufeff',
  'é',
  'É',
  'e\u0301',
  '\u0301',
  '\u0308',
  'Σ',
  'σ',
  'ς',
  'İ',
  'ß',
  'ẞ',
  'ﬁ',
  '…',
  '½',
  '²',
  'µ',
  'ª',
  '´',
  '¨',
  'ǅ',
  'Å',
  '\u212b',
  'ｱ',
  '\uff9e',
  '\u3099',
  'ガ',
  '\u1100',
  '\u1161',
  '\u11a8',
  '가',
  'ㄱ',
  'ﾡ',
  'Ω',
  '\u2126',
  '\ud800',
  '\udc00',
  '😀',
  '𝐀',
  'Ⅻ',
  '①',
  'ｶ\uff9e',
  'Ã',
  'à',
  '.',
  ',',
  '-',
  '\u0000',
  '\u200b',
  'Ǳ',
  'ǲ',
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

const probe = new ProbeTable();

test('fast signer = reference definition on random Unicode (sets, signatures, and both at once)', () => {
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
        // The unsorted set of the verification path: the same values, each once.
        assert.deepEqual(signer.distinct(text).slice().sort(), set, 'distinct set');
        const want = c.method === 'oph' ? refOph(set, c.numPerm, c.seed) : refClassic(set, c.numPerm, c.seed);
        assert.deepEqual(signer.sign(text), want, 'signature');
        // Signature and distinct set from one normalization (the screens of the online index).
        const out = new Uint32Array(c.numPerm);
        const both = signer.signDistinct(text, out, probe);
        assert.deepEqual(both ? [out, both.slice().sort()] : null, want ? [want, set] : null, 'signDistinct');
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

test('OPH past 32768 slots = reference on documents of a few shingles (fill rounds beyond round 65535), fast and JS paths', () => {
  // Two or three shingles leave bins empty into the late rounds t ≥ numPerm, where every shingle is
  // offered to bin t − numPerm: round numbers past 65535 once wrapped in 16 bits.
  const numPerm = 40_000;
  for (const wasm of [true, false]) {
    const signer = createTextSigner({ minhash: { numPerm }, wasm });
    const hasher = createMinHasher({ numPerm });
    for (const text of ['abcdef', 'abcdefg', 'hello world']) {
      const set = refSet(refFingerprints(refNormalize(text, 'default', false), 5, 0));
      const want = refOph(set, numPerm, 1);
      assert.deepEqual(signer.sign(text), want, `${text}, wasm ${wasm}`);
      assert.deepEqual(hasher.sign(set), want, `${text}, createMinHasher`);
    }
  }
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

// ---- The online index's per-document preparation (TextSigner.sketch, KeyMaker.keys, encodeRecord) ----

/** KeyMaker.keys as first written: bandKeys over the bands, then over each tree's prefix subarray. */
function refKeys(sig: Uint32Array, bands: number, rows: number, forest: ForestOptions | null): number[] {
  const hi = new Uint32Array(Math.max(bands, 1));
  const lo = new Uint32Array(Math.max(bands, 1));
  bandKeys(sig, bands, rows, hi, lo);
  const out: number[] = [];
  for (let b = 0; b < bands; b++) out.push(bandKey53(hi[b]!, lo[b]!));
  if (forest) {
    const maxDepth = Math.max(...forest.depths);
    for (const d of forest.depths) {
      for (let t = 0; t < forest.trees; t++) {
        bandKeys(sig.subarray(t * maxDepth, t * maxDepth + d), 1, d, hi, lo);
        const salt = fmix32((0x466f7200 + t * 256 + d) >>> 0);
        out.push(bandKey53((hi[0]! ^ salt) >>> 0, lo[0]!));
      }
    }
  }
  return out;
}

/** encodeRecord as first written: ByteWriter calls, one varint at a time (docs/formats.md). */
function refRecord(rec: IndexRecord): Uint8Array {
  const meta = rec.meta === undefined ? undefined : new TextEncoder().encode(JSON.stringify(rec.meta));
  const w = new ByteWriter(1);
  w.u8(1);
  w.u8((rec.set ? 1 : 0) | (rec.signature ? 2 : 0) | (meta ? 4 : 0));
  if (rec.set) {
    w.varint(rec.set.length);
    let prev = 0;
    for (const x of rec.set) {
      w.varint((x - prev) >>> 0);
      prev = x;
    }
  }
  if (rec.signature) {
    w.varint(rec.signature.length);
    for (const v of rec.signature) w.u32(v);
  }
  if (meta) {
    w.varint(meta.length);
    w.bytes(meta);
  }
  return w.finish();
}

const sketchConfig = fc.record({
  kind: fc.constantFrom<'char' | 'word' | 'spot'>('char', 'char', 'char', 'word', 'spot'),
  k: fc.integer({ min: 1, max: 12 }),
  multiset: fc.constantFrom(false, false, false, true),
  normalize: fc.oneof<fc.Arbitrary<NormalizeOptions>[]>(
    fc.record({ preset: fc.constantFrom<NormalizePreset>('default', 'seed000', 'none'), keepCase: fc.boolean() }),
    fc.record({
      preset: fc.constantFrom<NormalizePreset>('default', 'seed000', 'none'),
      stripPunctuation: fc.boolean(),
      stripDiacritics: fc.boolean(),
    }),
    fc.constant<NormalizeOptions>({ custom: (t: string) => t.replace(/a/g, 'aa') }),
  ),
  shingleSeed: fc.constantFrom(0, 1, 0xdeadbeef),
  numPerm: fc.constantFrom(1, 2, 3, 4, 16, 20, 64, 100, 128, 256),
  method: fc.constantFrom<'oph' | 'classic'>('oph', 'oph', 'classic'),
  seed: fc.constantFrom(1, 2, 42),
});

type SketchConfig = typeof sketchConfig extends fc.Arbitrary<infer T> ? T : never;

function shingleOf(c: SketchConfig): ShingleOptions {
  return { kind: c.kind, k: c.kind === 'char' ? c.k : Math.min(c.k, 4), seed: c.shingleSeed, multiset: c.multiset, normalize: c.normalize };
}

test('TextSigner.sketch = shingler.set + hasher.sign (and the definitions) on random Unicode, all option kinds', () => {
  fc.assert(
    fc.property(sketchConfig, fc.array(anyText, { minLength: 1, maxLength: 4 }), (c, texts) => {
      const shingle = shingleOf(c);
      const minhash = { method: c.method, numPerm: c.numPerm, seed: c.seed };
      const sk = createTextSigner({ shingle, minhash });
      const shingler = createShingler(shingle);
      const hasher = createMinHasher(minhash);
      for (const text of texts) {
        const got = sk.sketch(text);
        const set = shingler.set(text);
        assert.deepEqual(got.set, set, 'set');
        assert.deepEqual(got.sig, hasher.sign(set), 'signature');
        // From the definitions too, where the test has them (char shingles, plain presets).
        const n = c.normalize;
        if (c.kind === 'char' && !c.multiset && !n.custom && !n.stripPunctuation && !n.stripDiacritics) {
          const preset = n.preset ?? 'default';
          const ref = refSet(refFingerprints(refNormalize(text, preset, preset === 'default' && !!n.keepCase), shingle.k!, c.shingleSeed));
          assert.deepEqual(got.set, ref, 'set (definition)');
          assert.deepEqual(got.sig, c.method === 'oph' ? refOph(ref, c.numPerm, c.seed) : refClassic(ref, c.numPerm, c.seed), 'signature (definition)');
        }
      }
    }),
    { numRuns: 600, seed: 20240917, endOnFailure: true },
  );
});

test('TextSigner.sketch and signDistinct = reference on repetitive, long and bucket-crowding texts (the radix fallback)', () => {
  const rnd = splitmix32(99);
  const words = Array.from({ length: 3000 }, () => (rnd() >>> 0).toString(36));
  const texts = [
    'ab'.repeat(3000),
    '-'.repeat(5000) + ' tail',
    'x',
    'abcde',
    'abcdef',
    ' \n\t ',
    '',
    // ~75,000 shingles: more than the bucket table takes.
    Array.from({ length: 12000 }, (_, i) => words[(i * 7919) % words.length]).join(' '),
    Array.from({ length: 400 }, (_, i) => words[i % 37]).join(' '),
  ];
  for (const method of ['oph', 'classic'] as const) {
    for (const k of [1, 2, 5, 9]) {
      const sk = createTextSigner({ shingle: { k }, minhash: { method } });
      const shingler = createShingler({ k });
      const hasher = createMinHasher({ method });
      for (const text of texts) {
        const got = sk.sketch(text);
        const set = shingler.set(text);
        assert.deepEqual(got.set, set, `set, k ${k}, length ${text.length}`);
        assert.deepEqual(got.sig, hasher.sign(set), `signature, k ${k}, length ${text.length}`);
        const out = new Uint32Array(128);
        const both = sk.signDistinct(text, out, probe);
        assert.deepEqual(both ? [out, both.slice().sort()] : null, got.sig ? [got.sig, set] : null, `signDistinct, k ${k}, length ${text.length}`);
      }
    }
  }
});

test('TextSigner.sketch output arrays are independent of later calls', () => {
  const sk = createTextSigner();
  const a = sk.sketch('the quick brown fox jumps over the lazy dog');
  const copy = { set: a.set.slice(), sig: a.sig!.slice() };
  sk.sketch('an entirely different text, long enough to fill the same scratch buffers again and again');
  assert.deepEqual(a.set, copy.set);
  assert.deepEqual(a.sig, copy.sig);
  assert.notEqual(a.set.buffer, sk.sketch('the quick brown fox jumps over the lazy dog').set.buffer);
});

test('KeyMaker.keys = bandKeys over subarrays (bands and forest) on random signatures', () => {
  fc.assert(
    fc.property(
      fc.constantFrom<{ numPerm: number; bands: number; rows: number; forest: ForestOptions | null }>(
        { numPerm: 128, bands: 16, rows: 6, forest: { trees: 8, depths: [3, 1] } },
        { numPerm: 128, bands: 20, rows: 6, forest: null },
        { numPerm: 64, bands: 9, rows: 7, forest: { trees: 4, depths: [5, 3, 2] } },
        { numPerm: 20, bands: 1, rows: 20, forest: { trees: 20, depths: [1] } },
        { numPerm: 3, bands: 3, rows: 1, forest: { trees: 1, depths: [3] } },
      ),
      fc.integer({ min: 0, max: 0xffffffff }),
      (c, seed) => {
        const rnd = splitmix32(seed);
        const sig = Uint32Array.from({ length: c.numPerm }, () => (rnd() % 7 === 0 ? 0xffffffff : rnd()));
        const km = new KeyMaker({ bands: c.bands, rows: c.rows, forest: c.forest, numPerm: c.numPerm });
        assert.deepEqual(Array.from(km.keys(sig)), refKeys(sig, c.bands, c.rows, c.forest));
      },
    ),
    { numRuns: 300, seed: 17 },
  );
});

test('encodeRecord = the ByteWriter reference (sets with every gap size, signatures, metadata)', () => {
  const gapSet = fc
    .array(
      fc.oneof(
        fc.integer({ min: 1, max: 0x7f }),
        fc.integer({ min: 1, max: 0x3fff }),
        fc.integer({ min: 1, max: 0x1fffff }),
        fc.integer({ min: 1, max: 0xfffffff }),
        fc.integer({ min: 1, max: 0xffffffff }),
      ),
      { maxLength: 400 },
    )
    .map((gaps) => {
      const out: number[] = [];
      let x = -1;
      for (const g of gaps) {
        // The first value may be 0; stop before leaving uint32.
        const next = out.length === 0 ? g - 1 : x + g;
        if (next > 0xffffffff) break;
        out.push(next);
        x = next;
      }
      return Uint32Array.from(out);
    });
  fc.assert(
    fc.property(
      fc.option(gapSet, { nil: undefined }),
      fc.option(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 200 }).map((xs) => Uint32Array.from(xs)), { nil: undefined }),
      fc.option(fc.jsonValue(), { nil: undefined }),
      (set, signature, meta) => {
        const rec: IndexRecord = { ...(set ? { set } : {}), ...(signature ? { signature } : {}), ...(meta !== undefined ? { meta } : {}) };
        const bytes = encodeRecord(rec);
        assert.deepEqual(bytes, refRecord(rec));
        if (set) assert.deepEqual(decodeRecord(bytes).set, set);
        if (set) assert.deepEqual(encodeFingerprintSet(set), refRecord({ set }).subarray(2));
      },
    ),
    { numRuns: 400, seed: 23 },
  );
  // Scratch growth: one huge record, then a small one.
  const big = Uint32Array.from({ length: 50000 }, (_, i) => i * 85899);
  assert.deepEqual(encodeRecord({ set: big, meta: 'x'.repeat(10000) }), refRecord({ set: big, meta: 'x'.repeat(10000) }));
  assert.deepEqual(encodeRecord({ set: Uint32Array.of(5) }), refRecord({ set: Uint32Array.of(5) }));
});

test('NearDupIndex prepare/recordOf = the reference route on the Kijiji ads, several option sets', async () => {
  const texts = kijijiTexts().slice(0, 600);
  const configs: NearDupIndexOptions[] = [
    {},
    { k: 10, shingle: { normalize: { preset: 'seed000' } }, threshold: 0.8 },
    { method: 'classic', numPerm: 64, seed: 7, forest: { trees: 4, depths: [4, 2] } },
    { shingle: { kind: 'word', k: 2 }, verify: 'estimate' },
    { shingle: { k: 4, normalize: { stripPunctuation: true, stripDiacritics: true } }, numPerm: 100, bands: 20, rows: 5, forest: false },
    { shingle: { k: 5, multiset: true } },
    { shingle: { kind: 'spot', stopwords: ['it', 'en'] } },
  ];
  for (const o of configs) {
    const idx = await NearDupIndex.open(o);
    const m = idx.manifest;
    const shingle: ShingleOptions = {
      kind: m.shingle.kind,
      k: m.shingle.k,
      seed: m.shingle.seed,
      multiset: m.shingle.multiset,
      stopwords: m.shingle.stopwords,
      normalize: { ...m.shingle.normalize, custom: undefined },
    };
    const shingler = createShingler(shingle);
    const hasher = createMinHasher(m.minhash);
    // The index's preparer (src/online/preparer.ts), reached through the private field.
    const inner = (idx as unknown as { preparer: unknown }).preparer as {
      prepare(id: string, text: string, meta: unknown): { set: Uint32Array; sig: Uint32Array | null; keys: Float64Array };
      recordOf(p: { set: Uint32Array; sig: Uint32Array | null; keys: Float64Array; meta: unknown }): Uint8Array;
    };
    for (let i = 0; i < texts.length; i++) {
      const meta = i % 3 === 0 ? { n: i, tag: 'città' } : undefined;
      const p = inner.prepare(`d${i}`, texts[i]!, meta);
      const set = shingler.set(texts[i]!);
      const sig = hasher.sign(set);
      const what = `${JSON.stringify(o)} doc ${i}`;
      assert.deepEqual(p.set, set, what);
      assert.deepEqual(p.sig, sig, what);
      assert.deepEqual(Array.from(p.keys), sig ? refKeys(sig, m.bands, m.rows, m.forest) : [], what);
      const rec: IndexRecord = { ...(m.verify === 'exact' ? { set } : sig ? { signature: sig } : {}), ...(meta !== undefined ? { meta } : {}) };
      assert.deepEqual(inner.recordOf({ ...p, meta }), refRecord(rec), what);
    }
    await idx.close();
  }
});
