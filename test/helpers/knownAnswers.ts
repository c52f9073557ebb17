/**
 * The signature known-answer vectors (test/fixtures/signature-kat.json, specified in docs/formats.md
 * "Signatures, exactly"), and a check that an index on a store keeps them: the fingerprint set in
 * its records under `verify: 'exact'`, the signature under `verify: 'estimate'` (its low 16 bits with
 * `signatureBits: 16`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './kijiji.js';
import { NearDupIndex } from '../../src/index.js';
import { decodeRecord } from '../../src/online/records/record.js';
import type { ShingleOptions } from '../../src/text/shingler.js';
import type { MinHashOptions } from '../../src/sketch/minhash.js';

/** One known-answer vector. */
export interface KnownAnswer {
  name: string;
  text: string;
  shingle: ShingleOptions;
  minhash: Required<MinHashOptions>;
  normalized: string;
  set: number[];
  signature: number[];
}

/** The vectors of the fixture. */
export function knownAnswers(): KnownAnswer[] {
  const kat = JSON.parse(readFileSync(path.join(repoRoot, 'test/fixtures/signature-kat.json'), 'utf8')) as { version: number; cases: KnownAnswer[] };
  assert.equal(kat.version, 1);
  return kat.cases;
}

/** Adds every vector's text to indexes on stores from `storeSpec` (a fresh store per call) and checks what their records keep. */
export async function checkKnownAnswersInStore(storeSpec: () => Promise<string>): Promise<void> {
  for (const c of knownAnswers()) {
    for (const [verify, signatureBits] of [['exact', 32], ['estimate', 32], ['estimate', 16]] as const) {
      const idx = await NearDupIndex.open({
        shingle: c.shingle,
        numPerm: c.minhash.numPerm,
        method: c.minhash.method,
        seed: c.minhash.seed,
        verify,
        signatureBits,
        forest: false,
        store: await storeSpec(),
      });
      try {
        await idx.add('kat', c.text);
        const [bytes] = await idx.store.get(['kat']);
        assert.ok(bytes, `${c.name}: a record`);
        const rec = decodeRecord(bytes);
        if (verify === 'exact') assert.deepEqual(Array.from(rec.set ?? []), c.set, `${c.name}: the set a verify-exact record keeps`);
        else assert.deepEqual(
            Array.from(rec.signature ?? []),
            c.signature.map((v) => (signatureBits === 16 ? v & 0xffff : v)),
            `${c.name}: the ${signatureBits}-bit signature a verify-estimate record keeps`,
          );
      } finally {
        await idx.close();
      }
    }
  }
}
