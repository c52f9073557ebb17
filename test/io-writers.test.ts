import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { annotateHeader, annotateRecord, annotationColumns, csvField, formatCluster, formatPair, formatSimilarity, pairHeader, tsvField } from '../src/io/write.js';
import { atomicFileSink, openOutput } from '../src/io/output.js';
import { InputError } from '../src/io/errors.js';
import { tmpDir } from './cliUtil.js';

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

test('annotate: TSV/CSV get two columns, JSONL two keys, text lines a two-field prefix', () => {
  const tsv = { format: 'tsv' as const, delimiter: '\t', columns: ['id', 'text'] };
  assert.equal(annotateHeader(tsv, 'id\ttext'), 'id\ttext\tcluster\tduplicate_of\n');
  assert.equal(annotateRecord(tsv, 'a\thello', 0, 'x'), 'a\thello\t0\tx\n');
  assert.equal(annotateRecord(tsv, 'a\thello', undefined, undefined), 'a\thello\t\t\n');
  const csv = { format: 'csv' as const, delimiter: ',', columns: ['id', 'cluster'] };
  assert.equal(annotateHeader(csv, 'id,cluster'), 'id,cluster,neardup_cluster,neardup_duplicate_of\n');
  assert.equal(annotateRecord(csv, 'a,"x,y"', 2, 'q,r'), 'a,"x,y",2,"q,r"\n');
  const jl = { format: 'jsonl' as const };
  assert.deepEqual(JSON.parse(annotateRecord(jl, '{"t":"x"}', 1, '0')), { t: 'x', cluster: 1, duplicate_of: '0' });
  assert.deepEqual(JSON.parse(annotateRecord(jl, '{"t":"x"}', undefined, undefined)), { t: 'x', cluster: null, duplicate_of: null });
  assert.equal(annotateRecord({ format: 'text' }, 'some\ttext', 3, '7'), '3\t7\tsome\ttext\n');
  assert.equal(annotateHeader({ format: 'dir' }, undefined), 'path\tcluster\tduplicate_of\n');
  assert.deepEqual(annotationColumns(['Duplicate_Of']), ['neardup_cluster', 'neardup_duplicate_of']);
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
