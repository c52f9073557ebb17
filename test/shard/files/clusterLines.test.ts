/**
 * Decide's cluster lines and ids as bytes (src/shard/files/clusterLines.ts, byteStrings.ts): the
 * same bytes as formatCluster's line and as a string column of JS strings, whatever the ids (JSON
 * escapes, non-ASCII, document numbers), the similarities (NaN is null) and the chunk boundaries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { formatCluster } from '../../../src/io/write/write.js';
import { ByteStrings } from '../../../src/shard/files/byteStrings.js';
import { docIds, pushId, writeClusterLine } from '../../../src/shard/files/clusterLines.js';
import { ColumnFile, writeColumns } from '../../../src/shard/files/columns.js';
import { tmpDir } from '../../cliUtil.js';

const id = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.nat({ max: 2 ** 40 }),
  fc.constantFrom('a"b', 'c\\d', 'e\nf', '\u0001', '\ud800x', 'ü'),
);

const bytesOf = (b: ByteStrings): string => Buffer.concat([...b.strParts]).toString('latin1');

describe('cluster lines as bytes', () => {
  it('are formatCluster\'s line after {"cluster":0, with and without verdicts (property)', () => {
    fc.assert(
      fc.property(
        fc.array(id, { minLength: 1, maxLength: 12 }),
        fc.array(fc.oneof(fc.double(), fc.constant(Number.NaN)), { minLength: 12, maxLength: 12 }),
        fc.array(fc.integer({ min: -1, max: 11 }), { minLength: 12, maxLength: 12 }),
        fc.integer({ min: -1, max: 11 }),
        fc.boolean(),
        (raw, sims, reps, keptAt, withVerdicts) => {
          // Every id is written as a valid UTF-8 string reads back: lone surrogates become U+FFFD.
          const ids = raw.map((x) => (typeof x === 'number' ? x : Buffer.from(x, 'utf8').toString('utf8')));
          const P = ids.length;
          const store = docIds(P);
          ids.forEach((x, p) => pushId(store, p, x));
          const order = Int32Array.from(ids.keys()).reverse();
          const kept = keptAt < P ? keptAt : -1;
          const keptBy = Int32Array.from({ length: P }, (_, p) => (reps[p]! < P ? reps[p]! : p));
          const similarity = Float64Array.from(sims.slice(0, P));
          const out = new ByteStrings(1);
          writeClusterLine(out, store, { order, j0: 0, j1: P, kept, verdicts: withVerdicts ? { keptBy, similarity } : undefined });
          const m = [...order].map((p) => ids[p]!);
          const verdicts = withVerdicts
            ? {
              duplicateOf: [...order].map((p) => (keptBy[p] === p || keptBy[p]! < 0 ? null : ids[keptBy[p]!]!)),
              similarity: [...order].map((p) => (keptBy[p] === p || keptBy[p]! < 0 ? null : similarity[p]!)),
            }
            : undefined;
          const want = formatCluster(0, m, kept < 0 ? null : ids[kept], verdicts).slice('{"cluster":0'.length);
          assert.equal(Buffer.concat([...out.strParts]).toString('utf8'), want);
          assert.deepEqual([...out.offsets], [0, Buffer.byteLength(want)]);
        },
      ),
    );
  });

  it('write as a string column of the same strings, across chunk boundaries', async () => {
    const dir = tmpDir();
    try {
      // Past 1 MiB, so the column takes several chunks and some strings start a new one.
      const strs = Array.from({ length: 40000 }, (_, i) => `${'é'.repeat(i % 13)}id-${i}`);
      strs.push('x'.repeat(3 << 20), '', 'last');
      const b = new ByteStrings(strs.length);
      for (const s of strs) b.push(s);
      assert.ok(b.strParts.length > 2);
      strs.forEach((s, i) => assert.equal(b.get(i), s));
      const copy = new ByteStrings(strs.length);
      for (let i = 0; i < strs.length; i++) copy.pushFrom(b, i);
      assert.equal(bytesOf(copy), bytesOf(b));
      const file = path.join(dir, 'x.bin');
      const other = path.join(dir, 'y.bin');
      await writeColumns(file, { kind: 'test', plan: 'aaaaaaaaaaaa', meta: {} }, { s: copy });
      await writeColumns(other, { kind: 'test', plan: 'aaaaaaaaaaaa', meta: {} }, { s: strs });
      assert.deepEqual(fs.readFileSync(file), fs.readFileSync(other));
      const c = ColumnFile.open(file, 'test', 'aaaaaaaaaaaa');
      try {
        assert.deepEqual(c.strings('s').all(), strs);
      } finally {
        c.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
