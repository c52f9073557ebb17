/**
 * `signatureBits: 16` (verify estimate): every slot cut to its low 16 bits before the index uses it.
 * Measured at fixed seeds against the 32-bit estimate and exact Jaccard: cutting can only add slot
 * agreements, as many as chance predicts ((1 − J)/65536 per slot); the index finds the same
 * duplicates, keeps half the signature bytes, remembers the width in its manifest, and refuses a
 * contradicting reopen or an exact index.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemoryStore, NearDupIndex, createTextSigner, format, type IndexManifest } from '../../src/index.js';
import { resolveManifest } from '../../src/internals.js';
import { repoRoot } from '../helpers/kijiji.js';
import { splitmix32 } from '../../src/hash/mix.js';

/** Texts of 60 words from a 400-word vocabulary, each pair of (i, i + 1) sharing a random fraction of words. */
function pairs(n: number, seed: number): [string, string][] {
  const r = splitmix32(seed);
  const word = () => `w${r() % 400}`;
  return Array.from({ length: n }, () => {
    const a = Array.from({ length: 60 }, word);
    const keep = (r() % 100) / 100;
    return [a.join(' '), a.map((w) => (r() % 100 < keep * 100 ? w : word())).join(' ')];
  });
}

test('16-bit slots only add agreements, as many as chance predicts: Σ(1 − J)·k/65536 over 3,000 pairs at 128 slots', () => {
  const signer = createTextSigner({ shingle: { kind: 'word', k: 1 }, minhash: { numPerm: 128 } });
  let extra = 0;
  let expected = 0;
  for (const [a, b] of pairs(3000, 7)) {
    const x = signer.sign(a)!;
    const y = signer.sign(b)!;
    for (let i = 0; i < 128; i++) {
      const full = x[i] === y[i];
      const low = (x[i]! & 0xffff) === (y[i]! & 0xffff);
      assert.ok(!full || low, 'an agreement of 32-bit slots is one of their low 16 bits');
      if (low && !full) extra++;
      if (!full) expected += 1 / 65536;
    }
  }
  // Poisson with mean `expected` (about 3.6 here): 15 or more has probability below 1e-5.
  assert.ok(expected > 1 && expected < 6, `expected ${expected}`);
  assert.ok(extra <= 15, `${extra} extra agreements, ${expected.toFixed(2)} expected`);
});

test('an index with signatureBits 16 finds what a 32-bit one finds, with half the signature bytes, and keeps its width', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-sig16-'));
  try {
    const docs = pairs(300, 11).flat();
    const results: unknown[][] = [];
    for (const bits of [32, 16] as const) {
      const idx = await NearDupIndex.open({
        verify: 'estimate',
        signatureBits: bits,
        threshold: 0.5,
        shingle: { kind: 'word', k: 1 },
        store: `sqlite:${path.join(dir, `b${bits}.db`)}`,
      });
      const found: unknown[] = [];
      for (let i = 0; i < docs.length; i++) found.push((await idx.add(`d${i}`, docs[i]!)).map((m) => m.id));
      results.push(found);
      const [rec] = await idx.store.get(['d0']);
      assert.equal(rec!.length, 2 + 2 + 128 * (bits / 8), `${bits}-bit record bytes`);
      assert.equal(format.decodeRecord(rec!).signatureBits, bits === 16 ? 16 : undefined);
      assert.deepEqual(idx.manifest.minhash.bits, bits === 16 ? 16 : undefined);
      await idx.close();
    }
    // The same duplicates but for chance agreements at the threshold's edge: at most 1 % of the answers differ.
    const differ = results[0]!.filter((x, i) => JSON.stringify(x) !== JSON.stringify(results[1]![i])).length;
    assert.ok(differ <= docs.length / 100, `${differ} answers differ`);
    assert.ok(results[1]!.some((x) => (x as string[]).length > 0), 'some duplicates found');
    // Reopened without options: the stored width; with a contradicting one: refused, naming it.
    const again = await NearDupIndex.open({ store: `sqlite:${path.join(dir, 'b16.db')}` });
    assert.equal(again.manifest.minhash.bits, 16);
    assert.deepEqual((await again.query(docs[1]!)).map((m) => m.id).includes('d0'), (results[1]![1] as string[]).includes('d0'));
    await again.close();
    await assert.rejects(
      NearDupIndex.open({ store: `sqlite:${path.join(dir, 'b16.db')}`, signatureBits: 32 }),
      /different parameters \(minhash: stored .*"bits":16/,
    );
    await assert.rejects(NearDupIndex.open({ signatureBits: 16 }), /signatureBits 16 needs verify "estimate"/);
    await assert.rejects(NearDupIndex.open({ verify: 'estimate', signatureBits: 8 as 16 }), /signatureBits must be 16 or 32, got 8/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an index whose manifest names another signature definition is refused on open and on load, saying what differs', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-sigspec-'));
  try {
    assert.equal(format.SIGNATURE_SPEC, 1);
    // The known-answer vectors pin the definition this code computes.
    assert.equal(JSON.parse(readFileSync(path.join(repoRoot, 'test/fixtures/signature-kat.json'), 'utf8')).version, format.SIGNATURE_SPEC);
    const manifest = resolveManifest({});
    assert.equal(manifest.signatureSpec, undefined, 'definition 1 is not written: manifests of older indexes compare equal');
    const store = new MemoryStore();
    await store.open({ ...manifest, signatureSpec: 2 } as IndexManifest);
    await assert.rejects(
      NearDupIndex.open({ store }),
      /store holds an index whose signatures follow signature definition 2; this version computes definition 1 \(docs\/formats\.md, "Signatures, exactly"\)/,
    );
    const idx = await NearDupIndex.open({});
    await idx.add('a', 'some text to keep');
    const file = path.join(dir, 'a.ndix');
    await idx.save(file);
    await idx.close();
    const snap = format.decodeIndexSnapshot(readFileSync(file));
    writeFileSync(file, format.encodeIndexSnapshot({ ...snap, manifest: { ...snap.manifest, signatureSpec: 2 } as IndexManifest }));
    await assert.rejects(
      NearDupIndex.load(file),
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} holds an index whose signatures follow signature definition 2`),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
