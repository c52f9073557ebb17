import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { format, createShingler, createMinHasher } from '../../../src/index.js';
import { KeyMaker } from '../../../src/internals.js';
import { repoRoot } from '../../helpers/kijiji.js';

const golden = JSON.parse(readFileSync(path.join(repoRoot, 'test/fixtures/format-golden.json'), 'utf8'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

test('golden: fingerprint sets (delta + LEB128 varint)', () => {
  assert.equal(hex(format.encodeFingerprintSet(new Uint32Array(golden.fingerprintSet.input))), golden.fingerprintSet.hex);
  assert.deepEqual(Array.from(format.decodeFingerprintSet(unhex(golden.fingerprintSet.hex))), golden.fingerprintSet.input);
  assert.equal(hex(format.encodeFingerprintSet(new Uint32Array())), golden.emptySet.hex);
});

test('golden: signature blob', () => {
  const g = golden.signature;
  assert.equal(hex(format.encodeSignature({ method: g.method, seed: g.seed, signature: new Uint32Array(g.signature) })), g.hex);
  const d = format.decodeSignature(unhex(g.hex));
  assert.equal(d.method, 'oph');
  assert.equal(d.seed, 1);
  assert.deepEqual(Array.from(d.signature), g.signature);
});

test('golden: records', () => {
  assert.equal(hex(format.encodeRecord({ set: new Uint32Array(golden.record.set), meta: golden.record.meta })), golden.record.hex);
  const r = format.decodeRecord(unhex(golden.record.hex));
  assert.deepEqual(Array.from(r.set!), golden.record.set);
  assert.deepEqual(r.meta, golden.record.meta);
  assert.deepEqual(format.readRecordMeta(unhex(golden.record.hex)), golden.record.meta);
  assert.equal(hex(format.encodeRecord({ signature: new Uint32Array(golden.recordSig.signature) })), golden.recordSig.hex);
});

test('golden: a text signature and its band keys (fingerprints, MinHash and keys unchanged)', () => {
  const g = golden.textSignature;
  const set = createShingler({ k: 5 }).set(g.text);
  assert.equal(set.length, g.setSize);
  assert.deepEqual(Array.from(set.slice(0, 4)), g.setFirst4);
  const sig = createMinHasher({ numPerm: 16 }).sign(set)!;
  assert.deepEqual(Array.from(sig), g.signature);
  assert.equal(hex(format.encodeSignature({ method: 'oph', seed: 1, signature: sig })), g.hex);
  const km = new KeyMaker({ bands: 4, rows: 4, forest: { trees: 2, depths: [4, 2] }, numPerm: 16 });
  assert.deepEqual(Array.from(km.keys(sig)), golden.bandKeys.keys);
});

test('golden: index snapshot with CRC-32', () => {
  const g = golden.snapshot;
  const bytes = format.encodeIndexSnapshot({
    manifest: g.manifest,
    docs: g.docs.map((d: { id: string; record: string }) => ({ id: d.id, record: unhex(d.record) })),
  });
  assert.equal(hex(bytes), g.hex);
  const snap = format.decodeIndexSnapshot(unhex(g.hex));
  assert.deepEqual(snap.manifest, g.manifest);
  assert.equal(snap.docs[0]!.id, 'a');
  assert.equal(hex(snap.docs[0]!.record), g.docs[0].record);
});

test('bad bytes give FormatErrors naming the problem', () => {
  const snap = unhex(golden.snapshot.hex);
  const flipped = snap.slice();
  flipped[20]! ^= 1;
  assert.throws(() => format.decodeIndexSnapshot(flipped), /checksum mismatch/);
  assert.throws(() => format.decodeIndexSnapshot(snap.subarray(0, 10)), /too short/);
  const magic = snap.slice();
  magic[0] = 0;
  assert.throws(() => format.decodeIndexSnapshot(magic), /bad magic/);
  const sig = unhex(golden.signature.hex);
  const v2 = sig.slice();
  v2[4] = 2;
  assert.throws(() => format.decodeSignature(v2), /unsupported version 2/);
  assert.throws(() => format.decodeSignature(sig.subarray(0, sig.length - 1)), /does not match/);
  assert.throws(() => format.decodeFingerprintSet(unhex('0201')), /exceeds the remaining 1 bytes/);
  assert.throws(() => format.decodeFingerprintSet(unhex('0201ff')), /truncated/);
  assert.throws(() => format.decodeFingerprintSet(unhex('020500')), /not strictly increasing/);
  assert.throws(() => format.decodeFingerprintSet(unhex('01ffffffff1f')), /exceeds 32 bits/);
  assert.throws(() => format.decodeRecord(unhex('0140')), /unknown record flags/); // 0x10 is the 16-bit signature since signatureBits
  assert.throws(() => format.decodeRecord(unhex('0108')), /truncated expiry/);
  assert.throws(() => format.encodeFingerprintSet(new Uint32Array([2, 1])), /sorted and unique/);
});

test('property: fingerprint sets and records round-trip', () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 300 }), fc.option(fc.jsonValue(), { nil: undefined }), (xs, meta) => {
      const set = new Uint32Array(xs).sort();
      assert.deepEqual(format.decodeFingerprintSet(format.encodeFingerprintSet(set)), set);
      const rec = format.decodeRecord(format.encodeRecord({ set, meta }));
      assert.deepEqual(rec.set, set);
      // JSON round trip normalizes -0 to 0, as JSON.stringify does.
      assert.deepEqual(rec.meta, meta === undefined ? undefined : JSON.parse(JSON.stringify(meta)));
    }),
    { seed: 42, numRuns: 300 },
  );
});

test('records with an expiry: flag 8, the expiry last (float64 LE, ms since the epoch), read without decoding the rest', () => {
  // docs/formats.md's golden: signature [5, 6], expiry 2026-12-27T00:00:00Z.
  const at = Date.parse('2026-12-27T00:00:00Z');
  const bytes = format.encodeRecord({ signature: new Uint32Array([5, 6]), expiresAt: at });
  assert.equal(hex(bytes), '010a020500000006000000000080c04c2b7a42');
  assert.equal(format.recordExpiresAt(bytes), at);
  assert.deepEqual(format.decodeRecord(bytes), { signature: new Uint32Array([5, 6]), expiresAt: at });
  // Set, changed and taken off without touching the other sections.
  const plain = format.encodeRecord({ set: new Uint32Array([7, 1000]), meta: { a: 1 } });
  const later = format.withExpiry(format.withExpiry(plain, at), at + 1);
  assert.equal(format.recordExpiresAt(later), at + 1);
  assert.deepEqual(format.decodeRecord(later), { set: new Uint32Array([7, 1000]), meta: { a: 1 }, expiresAt: at + 1 });
  assert.deepEqual(format.readRecordMeta(later), { a: 1 });
  assert.deepEqual(format.withExpiry(later, undefined), plain);
  assert.equal(format.recordExpiresAt(plain), undefined);
});

test('16-bit signature records: flag 16, u16 slots; read by every reader; never with a 32-bit signature; a slot ≥ 65536 is refused', () => {
  const bytes = format.encodeRecord({ signature: new Uint32Array([5, 6, 0xffff]), signatureBits: 16, meta: { a: 1 }, expiresAt: 1798329600000 });
  assert.equal(hex(bytes), '011c' + '03' + '0500' + '0600' + 'ffff' + '07' + Buffer.from('{"a":1}').toString('hex') + '000080c04c2b7a42');
  const r = format.decodeRecord(bytes);
  assert.deepEqual([Array.from(r.signature!), r.signatureBits, r.meta, r.expiresAt], [[5, 6, 0xffff], 16, { a: 1 }, 1798329600000]);
  assert.deepEqual(format.readRecordMeta(bytes), { a: 1 });
  assert.deepEqual(Array.from(format.readRecordSketch(bytes, undefined).signature!), [5, 6, 0xffff]);
  // Round trip through decode and encode keeps the width; withExpiry copies the section as it is.
  assert.equal(hex(format.encodeRecord(r)), hex(bytes));
  assert.deepEqual(format.decodeRecord(format.withExpiry(bytes, undefined)).signatureBits, 16);
  assert.throws(() => format.decodeRecord(unhex('0112020500')), /both a 32-bit and a 16-bit signature/);
  assert.throws(() => format.decodeRecord(unhex('01100205')), format.FormatError);
  assert.throws(() => format.encodeRecord({ signature: new Uint32Array([65536]), signatureBits: 16 }), /16-bit signature slot holds 65536/);
  // 0x20 is REC_TEXT (test/online/records/text-sets.test.ts); 0x40 is the first unknown flag.
  assert.throws(() => format.decodeRecord(unhex('0140')), /unknown record flags 0x40/);
});
