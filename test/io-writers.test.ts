import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
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
