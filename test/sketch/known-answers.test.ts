/**
 * The signature known-answer vectors (test/fixtures/signature-kat.json): a plain implementation of
 * docs/formats.md "Signatures, exactly", written from that text alone, reproduces them, and so does
 * every signing path of the library (the JavaScript and WebAssembly signers, the worker threads of
 * the batch route). test/store/parity.test.ts checks what every store keeps of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { knownAnswers, type KnownAnswer } from '../helpers/knownAnswers.js';
import { createTextSigner } from '../../src/sketch/textSigner.js';
import { signCorpusParallel } from '../../src/parallel/signCorpus.js';

// The spec, as plainly as it reads. u32 arithmetic with Math.imul and >>> 0.
const fmix32 = (h: number): number => {
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
};
const subSeed = (s: number, t: number): number => fmix32((Math.imul(s, 0x9e3779b1) ^ fmix32((t + 0x632be5ab) >>> 0)) >>> 0);
function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad) >>> 0;
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97) >>> 0;
    return (z ^ (z >>> 15)) >>> 0;
  };
}
const B = 0x9e3779b1;

function normalize(text: string, preset: string): string {
  if (preset === 'lowercase-collapse') return text.replace(/ +|\n+/g, ' ').toLowerCase();
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The polynomial fingerprint Σ sym[j] · B^(m−1−j) of a window, finished with fmix32. */
function poly(syms: number[]): number {
  let h = 0;
  for (const x of syms) h = (Math.imul(h, B) + x) >>> 0;
  return fmix32(h);
}

function windows(syms: number[], k: number): number[] {
  if (syms.length === 0) return [];
  if (syms.length <= k) return [poly(syms)];
  return Array.from({ length: syms.length - k + 1 }, (_, i) => poly(syms.slice(i, i + k)));
}

/** MurmurHash3 x86 32-bit of bytes, seed s. */
function murmur3(bytes: Buffer, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const rotl = (x: number, r: number): number => ((x << r) | (x >>> (32 - r))) >>> 0;
  let h = seed >>> 0;
  const blocks = bytes.length >>> 2;
  for (let i = 0; i < blocks; i++) {
    let k = bytes.readUInt32LE(i * 4);
    k = Math.imul(rotl(Math.imul(k, c1) >>> 0, 15), c2) >>> 0;
    h = rotl((h ^ k) >>> 0, 13);
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  }
  let k = 0;
  const tail = bytes.length & 3;
  for (let j = tail - 1; j >= 0; j--) k = ((k << 8) | bytes[blocks * 4 + j]!) >>> 0;
  if (tail > 0) h = (h ^ (Math.imul(rotl(Math.imul(k, c1) >>> 0, 15), c2) >>> 0)) >>> 0;
  return fmix32((h ^ bytes.length) >>> 0);
}

function fingerprints(c: KnownAnswer, text: string): number[] {
  const s = c.shingle.seed ?? 0;
  if (c.shingle.kind === 'word') {
    const toks = text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
    return windows(toks.map((t) => murmur3(Buffer.from(t, 'utf16le'), s)), c.shingle.k!);
  }
  const s1 = subSeed(s, 1);
  return windows(Array.from(text, (ch) => fmix32((ch.codePointAt(0)! ^ s1) >>> 0)), c.shingle.k!);
}

function toSet(fps: number[], multiset: boolean): number[] {
  const sorted = [...fps].sort((a, b) => a - b);
  // With multiset, the n-th repeat of v (counted on the sorted values as they were) becomes fmix32(v ^ n·0x9e3779b9).
  let n = 0;
  const values = multiset
    ? sorted.map((v, i) => ((n = i > 0 && sorted[i - 1] === v ? n + 1 : 0) > 0 ? fmix32((v ^ Math.imul(n, 0x9e3779b9)) >>> 0) : v))
    : sorted;
  return [...new Set(values)].sort((a, b) => a - b);
}

function oph(set: number[], k: number, S: number): number[] {
  const pre = subSeed(S, 4);
  const bin = (h: number): number => Math.floor((h * k) / 2 ** 32);
  const out = new Array<number>(k).fill(0xffffffff);
  const round = new Array<number>(k).fill(-1);
  const zs = set.map((x) => fmix32((x ^ pre) >>> 0));
  for (const z of zs) {
    const b = bin(z);
    round[b] = 0;
    if (z < out[b]!) out[b] = z;
  }
  for (let t = 1; round.includes(-1); t++) {
    for (const z of zs) {
      const h = fmix32((z ^ Math.imul(t, 0x9e3779b9)) >>> 0);
      const b = t < k ? bin(h) : t - k;
      if (round[b] === -1) [round[b], out[b]] = [t, h];
      else if (round[b] === t && h < out[b]!) out[b] = h;
    }
  }
  return out;
}

function classic(set: number[], k: number, S: number): number[] {
  const r = splitmix32(subSeed(S, 2));
  const ab = Array.from({ length: k }, () => [r() | 1, r()] as const);
  const pre = subSeed(S, 3);
  return ab.map(([a, b]) => {
    let min = 0xffffffff;
    for (const x of set) {
      const h = Math.imul((fmix32((x ^ pre) >>> 0) ^ b) >>> 0, a) >>> 0;
      min = Math.min(min, (h ^ (h >>> 16)) >>> 0);
    }
    return min;
  });
}

test('a plain implementation of docs/formats.md "Signatures, exactly" reproduces every known-answer vector', () => {
  const cases = knownAnswers();
  assert.ok(cases.length >= 9);
  for (const c of cases) {
    const text = normalize(c.text, c.shingle.normalize?.preset ?? 'default');
    assert.equal(text, c.normalized, `${c.name}: normalized`);
    const fps = fingerprints(c, text);
    const set = toSet(fps, c.shingle.multiset ?? false);
    assert.deepEqual(set, c.set, `${c.name}: set`);
    const sig = c.minhash.method === 'oph' ? oph(set, c.minhash.numPerm, c.minhash.seed) : classic(set, c.minhash.numPerm, c.minhash.seed);
    assert.deepEqual(sig, c.signature, `${c.name}: signature`);
  }
});

test('every signing path of the library gives the known answers: JavaScript, WebAssembly, worker threads', async () => {
  for (const c of knownAnswers()) {
    for (const wasm of [false, true]) {
      const signer = createTextSigner({ shingle: c.shingle, minhash: c.minhash, wasm });
      assert.deepEqual(Array.from(signer.set(c.text)), c.set, `${c.name} (wasm ${wasm}): set`);
      assert.deepEqual(Array.from(signer.sign(c.text)!), c.signature, `${c.name} (wasm ${wasm}): signature`);
    }
    // The batch route signs on worker threads, a batch of texts at a time.
    const sigs = await signCorpusParallel([c.text, c.text.toUpperCase(), c.text], { shingle: c.shingle, minhash: c.minhash, workers: 2, batchSize: 1 });
    assert.deepEqual(Array.from(sigs.row(0)), c.signature, `${c.name}: worker threads`);
    assert.deepEqual(Array.from(sigs.row(2)), c.signature, `${c.name}: worker threads, a later batch`);
  }
});
