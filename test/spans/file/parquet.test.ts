/**
 * `dedupSpansFile` on Parquet against the brute-force oracle: random texts (nulls included) in
 * files of every codec and of row groups of 1 to 4 rows; the dedup output holds the oracle's
 * texts in the text column, the other columns as they were and the dropped rows gone; the annotate
 * output holds every row as it was plus the oracle's ranges and drops; the audit is the oracle's;
 * the schema and each column's codec are the input's; unit hashes masked to a few bits (pass 2 run
 * again after a collision) change nothing and leave no temp file. A directory of Parquet and JSONL shards is
 * one corpus, its Parquet shard written as Parquet.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { dedupSpansFile } from '../../../src/spans/file/file.js';
import { spansOracle, type OracleAudit, type OracleOptions } from '../../helpers/spansOracle.js';
import { CODECS, readParquetRows, writeParquet } from '../../helpers/formats.js';
import { installFaultHooks } from '../../../src/common/faults.js';

const POOL = ['Accept all cookies.', 'accept  ALL cookies.', 'Read more…', '我喜欢猫。', 'Emoji 😀 here.', 'Unique text here', 'Ünïcödé ok'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spans-parquet-'));
let run = 0;

function docArb(seps: string[]): fc.Arbitrary<string | null> {
  const parts = fc.array(fc.tuple(fc.integer({ min: 0, max: POOL.length - 1 }), fc.integer({ min: 0, max: seps.length - 1 })), { minLength: 0, maxLength: 5 });
  const text = parts.map((ps) => ps.map(([p, s], i) => POOL[p]! + (i + 1 < ps.length ? seps[s]! : '')).join(''));
  return fc.oneof({ weight: 9, arbitrary: text }, { weight: 1, arbitrary: fc.constant(null) });
}

/** The audit file's rows (JSONL) as the oracle's. */
function readAudit(file: string): OracleAudit[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l).map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    const keys = ['id', 'start', 'end', 'byte_start', 'byte_end', 'kept_id', 'kept_start', 'kept_byte_start', 'count', 'docs'];
    const names = ['id', 'start', 'end', 'byteStart', 'byteEnd', 'keptId', 'keptStart', 'keptByteStart', 'count', 'docs'];
    return Object.fromEntries(keys.map((k, i) => [names[i], r[k]])) as unknown as OracleAudit;
  });
}

/** Each column's codec in the first row group. */
function codecs(metadata: Awaited<ReturnType<typeof readParquetRows>>['metadata']): string[] {
  return (metadata.row_groups[0]?.columns ?? []).map((c) => c.meta_data!.codec);
}

test('Parquet: the text column cut as the oracle cuts it, every other value and the codecs kept, dropped rows gone; annotate adds the ranges', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(docArb(['\n', '\n\n', ' ', '\r\n']), { minLength: 1, maxLength: 7 }),
      fc.constantFrom<OracleOptions>({ unit: 'line' }, { unit: 'paragraph', minDocWords: 0 }, { unit: 'sentence', window: 2 }, { unit: 'line', minDocs: 2 }),
      fc.constantFrom(...CODECS),
      fc.integer({ min: 1, max: 4 }),
      fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      async (texts, opts, codec, groupRows, bits) => {
        // Unit hashes masked to a few bits: units collide, and pass 2 is run again over a Parquet output it discards.
        installFaultHooks({ spansHashBits: bits === undefined ? undefined : () => bits });
        const ids = texts.map((_, i) => `d${i}`);
        const input = path.join(tmp, `in${run}.parquet`);
        const cols = [
          { name: 'id', data: ids },
          { name: 'n', data: texts.map((_, i) => i * 7), type: 'INT32' },
          { name: 'text', data: texts, type: 'STRING', nullable: true },
          { name: 'note', data: texts.map((_, i) => (i % 3 ? `n${i}` : null)), type: 'STRING', nullable: true },
        ];
        await writeParquet(input, cols, codec, groupRows);
        const want = spansOracle(texts.map((t) => t ?? ''), ids, opts);
        const read = { fields: { id: 'id' } };
        const out = path.join(tmp, `out${run}.parquet`);
        const audit = path.join(tmp, `removed${run}.jsonl`);
        const r = await dedupSpansFile(input, { read, spans: opts, out, removed: audit });
        const got = await readParquetRows(out);
        const expected = texts.flatMap((t, i) => {
          const w = want.docs[i]!;
          return w.dropped ? [] : [{ id: ids[i], n: i * 7, text: w.changed ? w.text : t, note: i % 3 ? `n${i}` : null }];
        });
        assert.deepEqual(got.rows, expected);
        assert.equal(r.written, expected.length);
        assert.deepEqual(readAudit(audit), want.audit);
        const before = await readParquetRows(input);
        if (expected.length > 0) assert.deepEqual(codecs(got.metadata), codecs(before.metadata));
        assert.deepEqual(got.metadata.schema, before.metadata.schema);

        const annotated = path.join(tmp, `ann${run++}.parquet`);
        await dedupSpansFile(input, { read, spans: opts, out: annotated, mode: 'annotate' });
        const tagged = await readParquetRows(annotated);
        const ranges = (i: number): string =>
          JSON.stringify(want.docs[i]!.removed.map((c) => ({ start: c.start, end: c.end, byte_start: c.byteStart, byte_end: c.byteEnd })));
        assert.deepEqual(
          tagged.rows,
          texts.map((t, i) => ({
            id: ids[i],
            n: i * 7,
            text: t,
            note: i % 3 ? `n${i}` : null,
            spans_removed: ranges(i),
            spans_dropped: want.docs[i]!.dropped,
          })),
        );
        installFaultHooks({ spansHashBits: undefined });
        assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.endsWith('.tmp')), []);
      },
    ),
    { numRuns: 40, seed: 53 },
  );
});

test('a directory of a Parquet shard and a JSONL shard: one corpus, keep-first across them, each shard written in its own format, then _SUCCESS', async () => {
  const dir = path.join(tmp, 'shards');
  fs.mkdirSync(dir);
  const a = ['Accept all cookies.\nFirst page.', 'Second page.\nRead more…'];
  const b = ['Third page.\naccept  ALL cookies.', 'Read more…'];
  await writeParquet(path.join(dir, 'a.parquet'), [{ name: 'id', data: ['a0', 'a1'] }, { name: 'text', data: a }]);
  fs.writeFileSync(path.join(dir, 'b.jsonl'), b.map((t, i) => JSON.stringify({ id: `b${i}`, text: t })).join('\n') + '\n');
  const out = path.join(tmp, 'shards-out');
  const audit = path.join(tmp, 'shards.removed.jsonl');
  await dedupSpansFile(dir, { read: { fields: { id: 'id' } }, spans: { unit: 'line' }, out, removed: audit });
  const want = spansOracle([...a, ...b], ['a0', 'a1', 'b0', 'b1'], { unit: 'line' });
  assert.deepEqual(fs.readdirSync(out).sort(), ['_SUCCESS', 'a.parquet', 'b.jsonl']);
  assert.deepEqual((await readParquetRows(path.join(out, 'a.parquet'))).rows, a.map((t, i) => ({ id: `a${i}`, text: want.docs[i]!.text })));
  const kept = want.docs.slice(2).flatMap((w, i) => (w.dropped ? [] : [JSON.stringify({ id: `b${i}`, text: w.text }) + '\n']));
  assert.equal(fs.readFileSync(path.join(out, 'b.jsonl'), 'utf8'), kept.join(''));
  assert.deepEqual(readAudit(audit), want.audit);
});

test('row-number ids across shards count a Parquet row skipped as invalid (--skip-invalid): documents of the next shard are numbered after it', async () => {
  const dir = path.join(tmp, 'shards-skip');
  fs.mkdirSync(dir);
  const a = ['Accept all cookies.\nFirst page.', 'Second page.\nRead more…'];
  const bad = new Uint8Array([0x41, 0xff, 0x0a, 0x42]);
  await writeParquet(path.join(dir, 'a.parquet'), [{ name: 'text', data: [a[0], a[1], bad], type: 'STRING' }], 'SNAPPY', 2);
  const b = ['Third page.\naccept  ALL cookies.', 'Read more…'];
  fs.writeFileSync(path.join(dir, 'b.jsonl'), b.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  const out = path.join(tmp, 'shards-skip-out');
  const audit = path.join(tmp, 'shards-skip.removed.jsonl');
  const r = await dedupSpansFile(dir, { read: { skipInvalid: true }, spans: { unit: 'line' }, out, removed: audit });
  assert.equal(r.skipped, 1);
  // The last row of a.parquet is skipped, and still numbered: b.jsonl's rows continue at 3.
  const want = spansOracle([...a, ...b], ['0', '1', '3', '4'], { unit: 'line' });
  assert.deepEqual(readAudit(audit), want.audit);
  assert.ok(want.audit.some((x) => x.id === '3') && want.audit.some((x) => x.id === '4'), 'ids past the skipped row are named');
  assert.deepEqual((await readParquetRows(path.join(out, 'a.parquet'))).rows, a.map((t) => ({ text: t })));
});

test('--limit N: the first N records, cut as the oracle cuts them, the rows after them not written (N inside a row group, and past the last)', async () => {
  const texts = ['Accept all cookies.\nOne.', 'Two.\nAccept all cookies.', 'Read more…\nThree.', 'Read more…', 'Accept all cookies.'];
  const ids = texts.map((_, i) => `d${i}`);
  const input = path.join(tmp, 'limit.parquet');
  await writeParquet(input, [{ name: 'id', data: ids }, { name: 'text', data: texts }], 'SNAPPY', 2);
  for (const limit of [1, 3, 4, 9]) {
    const out = path.join(tmp, `limit-${limit}.parquet`);
    await dedupSpansFile(input, { read: { fields: { id: 'id' }, limit }, out });
    const want = spansOracle(texts.slice(0, limit), ids.slice(0, limit), { unit: 'line' });
    const expected = want.docs.flatMap((w, i) => (w.dropped ? [] : [{ id: ids[i], text: w.text }]));
    assert.deepEqual((await readParquetRows(out)).rows, expected, `--limit ${limit}`);
  }
});

test('refused before any pass, by name: standard output, an output not named .parquet, a text column of numbers, a field inside a struct', async () => {
  const input = path.join(tmp, 'refuse.parquet');
  await writeParquet(input, [{ name: 'id', data: ['a', 'b'] }, { name: 'n', data: [1, 2], type: 'INT32' }, { name: 'text', data: ['x\ny', 'x'] }]);
  await assert.rejects(dedupSpansFile(input, {}), /needs --out FILE\.parquet/);
  await assert.rejects(dedupSpansFile(input, { out: path.join(tmp, 'r.jsonl') }), /so name it \.parquet/);
  await assert.rejects(
    dedupSpansFile(input, { read: { fields: { text: ['n'] } }, out: path.join(tmp, 'r.parquet') }),
    /column "n" of .* does not hold strings \(INT32\)/,
  );
  await assert.rejects(dedupSpansFile(input, { read: { fields: { text: ['text.inner'] } }, out: path.join(tmp, 'r.parquet') }), /top-level Parquet column/);
  // Annotating leaves the text column as it is: a column of numbers is read as text and tagged.
  await dedupSpansFile(input, { read: { fields: { text: ['n'] } }, out: path.join(tmp, 'r.parquet'), mode: 'annotate' });
  assert.equal((await readParquetRows(path.join(tmp, 'r.parquet'))).rows.length, 2);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.startsWith('.r.')), []);
});
