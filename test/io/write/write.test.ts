import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import {
  annotateHeader,
  annotateRecord,
  annotationColumns,
  csvField,
  formatCluster,
  formatPair,
  formatSimilarity,
  pairHeader,
  tsvField,
  type PairFormat,
} from '../../../src/io/write/write.js';
import { PairLineEncoder, writePairLines } from '../../../src/io/write/pairLines.js';
import { PairColumns } from '../../../src/dedup/pairColumns.js';
import { atomicFileSink, openOutput } from '../../../src/io/write/output.js';
import { InputError } from '../../../src/common/errors.js';
import { tmpDir } from '../../cliUtil.js';

test('pairs: TSV a⇥b⇥similarity without header, CSV with header, JSONL; estimate only when given', () => {
  assert.equal(pairHeader('tsv', false), '');
  assert.equal(formatPair('tsv', 0, 3, 0.88235294), '0\t3\t0.882353\n');
  assert.equal(formatPair('tsv', 1, 2, 1, 0.96875), '1\t2\t1\t0.96875\n');
  assert.equal(pairHeader('csv', false), 'a,b,similarity\n');
  assert.equal(pairHeader('csv', true), 'a,b,similarity,estimate\n');
  assert.equal(formatPair('csv', 'x,1', 'y', 0.8), '"x,1",y,0.8\n');
  assert.deepEqual(JSON.parse(formatPair('jsonl', 'a', 2, 0.8, 0.75)), { a: 'a', b: 2, similarity: 0.8, estimate: 0.75 });
  assert.deepEqual(JSON.parse(formatPair('jsonl', 0, 2, 0.8)), { a: 0, b: 2, similarity: 0.8 });
  assert.equal(formatSimilarity(2 / 3), '0.666667');
});

test('pairs: a JSONL line is what JSON.stringify of { a, b, similarity, estimate? } gives, for any ids and similarities', () => {
  const id = fc.oneof(fc.string({ unit: 'binary' }), fc.integer());
  const sim = fc.double({ min: 0, max: 1, noNaN: true });
  const round = (x: number): number => Math.round(x * 1e6) / 1e6;
  fc.assert(
    fc.property(id, id, sim, fc.option(sim, { nil: undefined }), (a, b, s, e) => {
      const o: Record<string, unknown> = { a, b, similarity: round(s) };
      if (e !== undefined) o.estimate = round(e);
      assert.equal(formatPair('jsonl', a, b, s, e), JSON.stringify(o) + '\n');
    }),
    { numRuns: 3000, seed: 43 },
  );
});

test('formatSimilarity = String(Math.round(s·10⁶)/10⁶) for every six-decimal value and around them', () => {
  for (let r = 0; r <= 1e6; r++) {
    const s = r / 1e6;
    if (formatSimilarity(s) !== String(s)) assert.fail(`${r}: ${formatSimilarity(s)} against ${String(s)}`);
  }
  fc.assert(
    fc.property(fc.double({ noNaN: true }), (x) => {
      assert.equal(formatSimilarity(x), String(Math.round(x * 1e6) / 1e6));
    }),
    { numRuns: 20000, seed: 44 },
  );
});

test('clusters: one JSON object per line with cluster, size, representative, members', () => {
  assert.deepEqual(JSON.parse(formatCluster(4, ['a', 'b', 'c'])), { cluster: 4, size: 3, representative: 'a', members: ['a', 'b', 'c'] });
});

test('field quoting round-trips through csv-parse', () => {
  const values = ['plain', 'with,comma', 'with "quote"', 'line\nbreak', '"starts quoted" then', 'tab\there'];
  const csvLine = values.map((v) => csvField(v)).join(',');
  assert.deepEqual(parse(csvLine, { relax_quotes: true })[0], values);
  const tsvLine = values.map((v) => tsvField(v)).join('\t');
  assert.deepEqual(parse(tsvLine, { delimiter: '\t', relax_quotes: true })[0], values);
});

test('annotate: TSV/CSV get five tag columns, JSONL five keys, text lines a five-field prefix; --tag-prefix renames them', () => {
  const tsv = { format: 'tsv' as const, delimiter: '\t', columns: ['id', 'text'] };
  assert.equal(annotateHeader(tsv, 'id\ttext'), 'id\ttext\tcluster\tcluster_size\tduplicate_of\tsimilarity\tkept\n');
  assert.equal(
    annotateRecord(tsv, 'a\thello', { cluster: 0, clusterSize: 3, duplicateOf: 'x', similarity: 0.8125, kept: false }),
    'a\thello\t0\t3\tx\t0.8125\tfalse\n',
  );
  assert.equal(annotateRecord(tsv, 'a\thello', { kept: true }), 'a\thello\t\t\t\t\ttrue\n');
  const csv = { format: 'csv' as const, delimiter: ',', columns: ['id', 'cluster'] };
  assert.equal(annotateHeader(csv, 'id,cluster'), 'id,cluster,neardup_cluster,neardup_cluster_size,neardup_duplicate_of,neardup_similarity,neardup_kept\n');
  assert.equal(annotateRecord(csv, 'a,"x,y"', { cluster: 2, clusterSize: 2, duplicateOf: 'q,r', similarity: 1, kept: false }), 'a,"x,y",2,2,"q,r",1,false\n');
  assert.equal(annotateHeader({ ...csv, tagPrefix: 'nd_' }, 'id,cluster'), 'id,cluster,nd_cluster,nd_cluster_size,nd_duplicate_of,nd_similarity,nd_kept\n');
  const jl = { format: 'jsonl' as const };
  assert.deepEqual(JSON.parse(annotateRecord(jl, '{"t":"x"}', { cluster: 1, clusterSize: 2, duplicateOf: '0', similarity: 0.9, kept: false })), {
    t: 'x',
    cluster: 1,
    cluster_size: 2,
    duplicate_of: '0',
    similarity: 0.9,
    kept: false,
  });
  assert.deepEqual(JSON.parse(annotateRecord(jl, '{"t":"x"}', { kept: true })), {
    t: 'x',
    cluster: null,
    cluster_size: null,
    duplicate_of: null,
    similarity: null,
    kept: true,
  });
  assert.deepEqual(JSON.parse(annotateRecord({ ...jl, tagPrefix: 'p.' }, '{"t":"x"}', { kept: true })), {
    t: 'x',
    'p.cluster': null,
    'p.cluster_size': null,
    'p.duplicate_of': null,
    'p.similarity': null,
    'p.kept': true,
  });
  assert.equal(
    annotateRecord({ format: 'text' }, 'some\ttext', { cluster: 3, clusterSize: 2, duplicateOf: '7', similarity: 0.85, kept: false }),
    '3\t2\t7\t0.85\tfalse\tsome\ttext\n',
  );
  assert.equal(annotateHeader({ format: 'dir' }, undefined), 'path\tcluster\tcluster_size\tduplicate_of\tsimilarity\tkept\n');
  assert.deepEqual(annotationColumns(['Duplicate_Of']), [
    'neardup_cluster',
    'neardup_cluster_size',
    'neardup_duplicate_of',
    'neardup_similarity',
    'neardup_kept',
  ]);
  assert.deepEqual(annotationColumns(['kept']), ['neardup_cluster', 'neardup_cluster_size', 'neardup_duplicate_of', 'neardup_similarity', 'neardup_kept']);
});

test('atomic file output: nothing at the path until close, then the whole file; abort leaves nothing', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'out.tsv');
  fs.writeFileSync(file, 'old\n');
  const sink = await atomicFileSink(file);
  for (let i = 0; i < 20000; i++) await sink.write(`${i}\t${i + 1}\t0.9\n`);
  assert.equal(fs.readFileSync(file, 'utf8'), 'old\n', 'the old file stays until the rename');
  await sink.close();
  const text = fs.readFileSync(file, 'utf8');
  assert.equal(text.split('\n').length, 20001);
  assert.deepEqual(fs.readdirSync(dir), ['out.tsv']);
  const s2 = await atomicFileSink(path.join(dir, 'other.tsv'));
  await s2.write('partial');
  await s2.abort();
  assert.deepEqual(fs.readdirSync(dir), ['out.tsv']);
});

test('output to a .gz name is gzipped; a missing directory is an InputError', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'p.tsv.gz');
  const sink = await openOutput(file);
  await sink.write('0\t1\t1\n');
  await sink.close();
  assert.equal(gunzipSync(fs.readFileSync(file)).toString(), '0\t1\t1\n');
  await assert.rejects(openOutput(path.join(dir, 'no/such/dir/x.tsv')), (e: unknown) => e instanceof InputError && /does not exist/.test(e.message));
});

test('output to a FIFO writes into it and keeps it a FIFO; a symlink to a file stays a symlink', async () => {
  const dir = tmpDir();
  const fifo = path.join(dir, 'out.fifo');
  const { execFileSync } = await import('node:child_process');
  execFileSync('mkfifo', [fifo]);
  // A reader must hold the FIFO open before a writer can open it.
  const chunks: Buffer[] = [];
  const reader = fs.createReadStream(fifo);
  reader.on('data', (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((r) => reader.on('end', () => r()));
  const sink = await openOutput(fifo);
  await sink.write('hello\n');
  await sink.close();
  await done;
  assert.equal(Buffer.concat(chunks).toString(), 'hello\n');
  assert.ok(fs.lstatSync(fifo).isFIFO(), 'still a FIFO, not replaced by a regular file');

  const target = path.join(dir, 'real.tsv');
  fs.writeFileSync(target, 'old\n');
  const link = path.join(dir, 'link.tsv');
  fs.symlinkSync(target, link);
  const s2 = await openOutput(link);
  await s2.write('new\n');
  await s2.close();
  assert.ok(fs.lstatSync(link).isSymbolicLink());
  assert.equal(fs.readFileSync(target, 'utf8'), 'new\n');
  await assert.rejects(openOutput(dir), /directory/);
});

test('property: PairLineEncoder writes the bytes of formatPair, for row numbers and string ids, every format, with and without an estimate, across chunk takes', () => {
  const id = fc.oneof(
    fc.nat({ max: 2 ** 31 - 1 }),
    fc.constantFrom(0, 9, 10, 99, 100, 2 ** 31 - 1, 2 ** 31, 2 ** 40, -1, 1.5),
    fc.string({ unit: 'grapheme', maxLength: 6 }),
    fc.constantFrom('a\tb', '"q"', 'x,y', 'ü\n'),
  );
  const similarity = fc.oneof(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.constantFrom(0, 1, 0.5, 0.8, 0.1, 0.0000004, 0.0000005, 0.9999994, 0.9999996, 1 / 3, -0, 1.2, -0.5, Number.NaN),
  );
  fc.assert(
    fc.property(
      fc.constantFrom<PairFormat>('tsv', 'csv', 'jsonl'),
      fc.array(fc.tuple(id, id, similarity, fc.option(similarity, { nil: undefined })), { maxLength: 40 }),
      fc.nat({ max: 5 }),
      (format, pairs, every) => {
        const lines = new PairLineEncoder(format);
        const chunks: Uint8Array[] = [];
        pairs.forEach(([a, b, s, e], i) => {
          lines.add(a, b, s, e);
          if (every > 0 && i % every === 0) chunks.push(lines.take());
        });
        chunks.push(lines.take());
        const want = pairs.map(([a, b, s, e]) => formatPair(format, a, b, s, e)).join('');
        assert.equal(Buffer.concat(chunks).toString('utf8'), want);
      },
    ),
    { numRuns: 500 },
  );
});

test('PairLineEncoder: a long run of pairs grows its buffer and keeps every byte', () => {
  const lines = new PairLineEncoder('tsv');
  let want = '';
  for (let i = 0; i < 20_000; i++) {
    lines.add(i, i * 7 + 1, (i % 1000) / 999);
    want += formatPair('tsv', i, i * 7 + 1, (i % 1000) / 999);
  }
  assert.equal(Buffer.from(lines.take()).toString('latin1'), want);
  assert.equal(lines.size, 0);
});

test('writePairLines: the same file through a sink that takes bytes and one that takes only text', async () => {
  const pairs = Array.from({ length: 30_000 }, (_, i) => ({ a: i, b: i + 1 + (i % 13), similarity: (i % 997) / 996, estimate: i % 2 ? 0.5 : undefined }));
  const ids = ['x', 'tab\there', '"q"'];
  const idB = (d: number): string | number => (d % 1000 === 0 ? ids[d % 3]! : d);
  for (const format of ['tsv', 'csv', 'jsonl'] as const) {
    const want = pairs.map((p) => formatPair(format, p.a, idB(p.b), p.similarity, p.estimate)).join('');
    let bytes = '';
    await writePairLines(
      {
        name: 'b',
        write: async (t) => void (bytes += t),
        writeBytes: async (b) => void (bytes += Buffer.from(b).toString('utf8')),
        close: async () => {},
        abort: async () => {},
      },
      format,
      pairs,
      { a: (a) => a, b: idB },
    );
    let text = '';
    await writePairLines({ name: 't', write: async (t) => void (text += t), close: async () => {}, abort: async () => {} }, format, pairs, {
      a: (a) => a,
      b: idB,
    });
    assert.equal(bytes, want, format);
    assert.equal(text, want, format);
    // The same pairs (without estimates) as columns, as the streaming pipeline keeps them.
    const plain = pairs.map(({ a, b, similarity }) => ({ a, b, similarity }));
    const columns = new PairColumns(4);
    for (const p of plain) columns.add(p.a, p.b, p.similarity);
    const wantPlain = plain.map((p) => formatPair(format, p.a, idB(p.b), p.similarity)).join('');
    for (const takesBytes of [true, false]) {
      let got = '';
      const writeBytes = takesBytes ? async (b: Uint8Array) => void (got += Buffer.from(b).toString('utf8')) : undefined;
      await writePairLines(
        { name: 'c', write: async (t) => void (got += t), writeBytes, close: async () => {}, abort: async () => {} },
        format,
        columns,
        { a: (a) => a, b: idB },
      );
      assert.equal(got, wantPlain, `${format}, columns, ${takesBytes ? 'bytes' : 'text'}`);
    }
  }
});
