/**
 * `neardup dedup --output dedup|annotate` writes the input back in its own format and compression:
 * .jsonl.zst and .gz line for line, Parquet value for value with its schema and codecs, a sharded
 * input as a directory of output shards with the same names. Real files made here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { lines, neardup, tmpDir } from '../cliUtil.js';
import { readParquetRows, writeParquet, writeParquetSchema, zstd } from '../helpers/formats.js';
import { zstdDecompress } from '../../src/io/codec/zstd.js';
import { dedupFile, dedupSpansFile } from '../../src/index.js';

async function unzstd(file: string): Promise<string> {
  const out: Buffer[] = [];
  async function* one(): AsyncGenerator<Buffer> {
    yield fs.readFileSync(file);
  }
  for await (const c of zstdDecompress(one())) out.push(c);
  return Buffer.concat(out).toString('utf8');
}

/** 40 documents: 10 groups of 4 near copies (one word changed), so every 4th is kept. */
const BASE = Array.from({ length: 10 }, (_, g) => `group ${g} ` + Array.from({ length: 40 }, (_, w) => `word${(g * 7 + w * 13) % 97}`).join(' '));
const DOCS = BASE.flatMap((b, g) => [b, b + ' extra', b.replace('word', 'wurd'), b + ' more']).map((t, i) => ({ id: `d${i}`, text: t, g: Math.floor(i / 4) }));

function jsonl(docs: typeof DOCS, eol = '\n'): string {
  return docs.map((d) => JSON.stringify({ id: d.id, text: d.text, n: d.g })).join(eol) + eol;
}

test('.jsonl.zst and .jsonl.gz: dedup output is the kept input lines byte for byte, annotate adds five keys', async () => {
  const dir = tmpDir();
  const body = jsonl(DOCS);
  const inputLines = lines(body);
  for (const ext of ['.zst', '.gz']) {
    const file = path.join(dir, `in.jsonl${ext}`);
    fs.writeFileSync(file, ext === '.zst' ? await zstd(body, 500) : gzipSync(body));
    const out = path.join(dir, `out.jsonl${ext}`);
    const r = neardup(['dedup', file, '--id', 'id', '--threshold', '0.7', '--output', 'dedup', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const text = ext === '.zst' ? await unzstd(out) : gunzipSync(fs.readFileSync(out)).toString();
    assert.deepEqual(lines(text), inputLines.filter((_, i) => i % 4 === 0), ext);
    const ann = path.join(dir, `ann.jsonl${ext}`);
    assert.equal(neardup(['dedup', file, '--id', 'id', '--threshold', '0.7', '--output', 'annotate', '--out', ann]).code, 0);
    const annLines = lines(ext === '.zst' ? await unzstd(ann) : gunzipSync(fs.readFileSync(ann)).toString());
    assert.equal(annLines.length, DOCS.length);
    annLines.forEach((l, i) => {
      const o = JSON.parse(l) as Record<string, unknown>;
      assert.equal(o.cluster, Math.floor(i / 4));
      assert.equal(o.duplicate_of, i % 4 === 0 ? null : `d${i - (i % 4)}`);
      assert.equal(o.cluster_size, 4);
      assert.equal(o.kept, i % 4 === 0);
      assert.equal(typeof o.similarity, i % 4 === 0 ? 'object' : 'number');
      for (const k of ['cluster', 'cluster_size', 'duplicate_of', 'similarity', 'kept']) delete o[k];
      assert.equal(JSON.stringify(o), inputLines[i]);
    });
  }
});

test('an empty dedup output is still a valid .zst file', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'in.jsonl.zst');
  fs.writeFileSync(file, await zstd(''));
  const out = path.join(dir, 'out.jsonl.zst');
  assert.equal(neardup(['dedup', file, '--output', 'dedup', '--out', out]).code, 0);
  assert.equal(await unzstd(out), '');
});

const SCHEMA = [
  { name: 'root', num_children: 6 },
  { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'n', type: 'INT64', repetition_type: 'OPTIONAL' },
  { name: 'ts', type: 'INT64', repetition_type: 'OPTIONAL', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } },
  { name: 'meta', repetition_type: 'OPTIONAL', num_children: 2 },
  { name: 'src', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'score', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
  { name: 'tags', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'INT32', repetition_type: 'OPTIONAL' },
];

function parquetColumns(docs: typeof DOCS): { name: string; data: unknown[] }[] {
  return [
    { name: 'id', data: docs.map((d) => d.id) },
    { name: 'text', data: docs.map((d) => d.text) },
    { name: 'n', data: docs.map((d, i) => (i % 5 === 0 ? null : BigInt(d.g) * 1_000_000_000_000n + 7n)) },
    { name: 'ts', data: docs.map((_, i) => 1_700_000_000_123_456_789n + BigInt(i)) },
    { name: 'meta', data: docs.map((d, i) => (i % 3 === 0 ? null : { src: `s${d.g}`, score: i / 7 })) },
    { name: 'tags', data: docs.map((_, i) => (i % 4 === 1 ? null : Array.from({ length: i % 3 }, (_, k) => k * i))) },
  ];
}

test('Parquet: dedup output has the same schema, codec and values as the kept rows; annotate adds cluster and duplicate_of', async () => {
  const dir = tmpDir();
  for (const codec of ['SNAPPY', 'ZSTD', 'GZIP', 'UNCOMPRESSED']) {
    const file = path.join(dir, `in-${codec}.parquet`);
    await writeParquetSchema(file, SCHEMA, parquetColumns(DOCS), codec, 9);
    const input = await readParquetRows(file);
    const out = path.join(dir, `out-${codec}.parquet`);
    const r = neardup(['dedup', file, '--id', 'id', '--threshold', '0.7', '--output', 'dedup', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const got = await readParquetRows(out);
    assert.deepEqual(got.metadata.schema, input.metadata.schema);
    assert.deepEqual(got.rows, input.rows.filter((_, i) => i % 4 === 0), codec);
    assert.ok(got.metadata.row_groups.every((g) => g.columns.every((c) => c.meta_data!.codec === codec)));
    // One output row group per input row group (9 rows each, rows 0, 4, 8, … kept).
    assert.deepEqual(got.metadata.row_groups.map((g) => Number(g.num_rows)), [3, 2, 2, 2, 1]);
    const ann = path.join(dir, `ann-${codec}.parquet`);
    assert.equal(neardup(['dedup', file, '--id', 'id', '--threshold', '0.7', '--output', 'annotate', '--out', ann]).code, 0);
    const annotated = await readParquetRows(ann);
    assert.deepEqual(annotated.metadata.schema.slice(1, SCHEMA.length), input.metadata.schema.slice(1));
    // Typed tag columns: numbers and booleans, not strings.
    assert.deepEqual(annotated.metadata.schema.slice(SCHEMA.length).map((e) => [e.name, e.type]), [
      ['cluster', 'INT32'],
      ['cluster_size', 'INT32'],
      ['duplicate_of', 'BYTE_ARRAY'],
      ['similarity', 'DOUBLE'],
      ['kept', 'BOOLEAN'],
    ]);
    annotated.rows.forEach((row, i) => {
      const { cluster, cluster_size, duplicate_of, similarity, kept, ...rest } = row;
      assert.deepEqual(rest, input.rows[i]);
      assert.equal(cluster, Math.floor(i / 4));
      assert.equal(cluster_size, 4);
      assert.equal(duplicate_of, i % 4 === 0 ? null : `d${i - (i % 4)}`);
      assert.equal(kept, i % 4 === 0);
      assert.equal(typeof similarity, i % 4 === 0 ? 'object' : 'number');
    });
  }
  // --limit N: the first N records, as of a text input (here N lands inside the second row group).
  const file = path.join(dir, 'in-SNAPPY.parquet');
  const input = await readParquetRows(file);
  for (const output of ['dedup', 'annotate']) {
    const limited = path.join(dir, `limited-${output}.parquet`);
    const r = neardup(['dedup', file, '--id', 'id', '--threshold', '0.7', '--limit', '10', '--output', output, '--out', limited]);
    assert.equal(r.code, 0, r.stderr);
    const rows = (await readParquetRows(limited)).rows.map((x) => x.id);
    assert.deepEqual(rows, input.rows.slice(0, 10).filter((_, i) => output === 'annotate' || i % 4 === 0).map((x) => x.id), output);
  }
});

test('Parquet output needs --out FILE.parquet (or a directory); a directory gets the input name', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'in.parquet');
  await writeParquet(file, [{ name: 'text', data: DOCS.map((d) => d.text), type: 'STRING' }]);
  const noOut = neardup(['dedup', file, '--output', 'dedup', '--threshold', '0.7']);
  assert.equal(noOut.code, 2);
  assert.match(noOut.stderr, /writes Parquet, so it needs --out FILE\.parquet/);
  const wrongName = neardup(['dedup', file, '--output', 'dedup', '--threshold', '0.7', '--out', path.join(dir, 'o.jsonl')]);
  assert.equal(wrongName.code, 2);
  assert.match(wrongName.stderr, /name it \.parquet/);
  const outDir = path.join(dir, 'o');
  fs.mkdirSync(outDir);
  assert.equal(neardup(['dedup', file, '--output', 'dedup', '--threshold', '0.7', '--out', outDir]).code, 0);
  assert.equal((await readParquetRows(path.join(outDir, 'in.parquet'))).rows.length, 10);
  // Pairs and clusters of a Parquet input need nothing special.
  assert.equal(lines(neardup(['dedup', file, '--threshold', '0.7']).stdout).length, 60);
});

/** Writes DOCS as 5 shards of mixed formats; returns the glob and the expected kept ids. */
async function shards(dir: string): Promise<void> {
  const parts = [DOCS.slice(0, 6), DOCS.slice(6, 13), DOCS.slice(13, 24), DOCS.slice(24, 33), DOCS.slice(33)];
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'p0.jsonl.gz'), gzipSync(jsonl(parts[0]!)));
  fs.writeFileSync(path.join(dir, 'p1.jsonl.zst'), await zstd(jsonl(parts[1]!, '\r\n')));
  await writeParquetSchema(path.join(dir, 'p2.parquet'), SCHEMA, parquetColumns(parts[2]!), 'ZSTD', 4);
  fs.writeFileSync(path.join(dir, 'p3.jsonl'), jsonl(parts[3]!));
  fs.writeFileSync(path.join(dir, 'p4.csv.zst'), await zstd('id,text\n' + parts[4]!.map((d) => `${d.id},"${d.text}"`).join('\n') + '\n'));
}

test('sharded input: pairs equal the single-file run; dedup writes one shard per input shard with the same names, then _SUCCESS', async () => {
  const dir = tmpDir();
  const inDir = path.join(dir, 'in');
  await shards(inDir);
  const single = path.join(dir, 'all.jsonl');
  fs.writeFileSync(single, jsonl(DOCS));
  const base = ['--id', 'id', '--threshold', '0.7'];
  const want = neardup(['dedup', single, ...base]);
  assert.equal(want.code, 0, want.stderr);
  for (const input of [inDir, path.join(inDir, 'p*')]) {
    const got = neardup(['dedup', input, ...base]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, want.stdout);
    // The summary names every format, not the first shard's (#32: a mixed directory read "[jsonl]").
    assert.match(got.stderr, /\[mixed: 3 jsonl, 1 parquet, 1 csv\]/);
    assert.match(neardup(['dedup', input, ...base, '--exact']).stderr, /\[mixed: 3 jsonl, 1 parquet, 1 csv\]/);
    const streamed = neardup(['dedup', input, ...base, '--stream']);
    assert.equal(streamed.stdout, want.stdout);
  }
  const out = path.join(dir, 'out');
  const r = neardup(['dedup', inDir, ...base, '--output', 'dedup', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(out).sort(), ['_SUCCESS', 'p0.jsonl.gz', 'p1.jsonl.zst', 'p2.parquet', 'p3.jsonl', 'p4.csv.zst']);
  // Each output shard keeps its input's lines (CRLF included), rows, schema.
  assert.equal(gunzipSync(fs.readFileSync(path.join(out, 'p0.jsonl.gz'))).toString(), jsonl([DOCS[0]!, DOCS[4]!]));
  assert.equal(await unzstd(path.join(out, 'p1.jsonl.zst')), jsonl([DOCS[8]!, DOCS[12]!], '\r\n'));
  const p2 = await readParquetRows(path.join(out, 'p2.parquet'));
  assert.deepEqual(p2.rows.map((x) => x.id), ['d16', 'd20']);
  assert.equal(await unzstd(path.join(out, 'p4.csv.zst')), 'id,text\n' + [DOCS[36]!].map((d) => `${d.id},"${d.text}"`).join('\n') + '\n');
  // The output directory reads back as a sharded input with one document per cluster.
  const again = neardup(['dedup', out, ...base, '--output', 'clusters']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, '');
  const kept = lines(neardup(['dedup', out, '--id', 'id', '--threshold', '0.99', '--output', 'annotate', '--out', path.join(dir, 'ann')]).stderr);
  assert.ok(kept.some((l) => /output\s+annotate: 10 records/.test(l)), kept.join('\n'));
});

test('sharded input: --out is required, must not overlap the input; a corrupt shard is named and leaves no _SUCCESS', async () => {
  const dir = tmpDir();
  const inDir = path.join(dir, 'in');
  await shards(inDir);
  const noOut = neardup(['dedup', inDir, '--output', 'dedup']);
  assert.equal(noOut.code, 2);
  assert.match(noOut.stderr, /5 shard\(s\): --output dedup writes one output shard per input shard, so it needs --out DIR/);
  const inside = neardup(['dedup', inDir, '--id', 'id', '--output', 'dedup', '--out', path.join(inDir, 'sub')]);
  assert.equal(inside.code, 2);
  assert.match(inside.stderr, /overlaps the input directory/);
  const same = neardup(['dedup', path.join(inDir, '*.zst'), '--id', 'id', '--output', 'dedup', '--out', inDir]);
  assert.equal(same.code, 2);
  fs.writeFileSync(path.join(inDir, 'p1b.jsonl.zst'), await zstd('{"id":"x","text":"fine"}\n{"id":"y","text":\n'));
  const out = path.join(dir, 'out');
  fs.mkdirSync(out);
  fs.writeFileSync(path.join(out, '_SUCCESS'), '');
  const bad = neardup(['dedup', inDir, '--id', 'id', '--output', 'dedup', '--out', out]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /p1b\.jsonl\.zst:2: invalid JSON/);
  const skipped = neardup(['dedup', inDir, '--id', 'id', '--threshold', '0.7', '--output', 'dedup', '--out', out, '--skip-invalid']);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stderr, /skipped 1 invalid record in 1 file \(.*p1b\.jsonl\.zst: 1\); first: .*p1b\.jsonl\.zst:2: invalid JSON/);
  assert.equal(await unzstd(path.join(out, 'p1b.jsonl.zst')), '{"id":"x","text":"fine"}\n');
  assert.ok(fs.existsSync(path.join(out, '_SUCCESS')));
  assert.deepEqual(fs.readdirSync(out).filter((f) => f.endsWith('.tmp')), []);
  // A rewrite that fails half way (an output shard's name is taken by a directory): the old
  // _SUCCESS is gone, no temp file is left, the run fails.
  fs.rmSync(path.join(out, 'p3.jsonl'));
  fs.mkdirSync(path.join(out, 'p3.jsonl'));
  const half = neardup(['dedup', inDir, '--id', 'id', '--threshold', '0.7', '--output', 'dedup', '--out', out, '--skip-invalid']);
  assert.notEqual(half.code, 0);
  assert.ok(!fs.existsSync(path.join(out, '_SUCCESS')), 'a half-written output directory must not look complete');
  assert.deepEqual(fs.readdirSync(out).filter((f) => f.includes('.tmp')), []);
});

// #48: the CLI refuses (exit 2, no stack trace) JSON lines read as TSV/CSV and a ';'/'|'/tab
// separated CSV read with the default comma, naming the file and the flag; --delimiter , given
// explicitly reads the one column. Every format flag and delimiter.
test('neardup dedup: JSON lines as --format tsv|csv and a CSV split by another delimiter are refused with the flag to use', () => {
  const dir = tmpDir();
  try {
    fs.writeFileSync(path.join(dir, 'small.jsonl'), '{"id":1,"text":"one two three four"}\n{"id":2,"text":"one two three four"}\n');
    for (const fmt of ['tsv', 'csv']) {
      const r = neardup(['dedup', 'small.jsonl', '--format', fmt, '-q'], { cwd: dir });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `neardup: small.jsonl:1: the first line is a JSON object, not a ${fmt.toUpperCase()} header: the input looks like JSON lines (use --format jsonl)\n`,
      );
    }
    for (const [d, flag] of [[';', "--delimiter ';'"], ['|', "--delimiter '|'"], ['\t', '--format tsv']] as const) {
      fs.writeFileSync(path.join(dir, 'semi.csv'), `id${d}text\n1${d}one two three four\n2${d}one two three four\n`);
      const r = neardup(['dedup', 'semi.csv', '-q'], { cwd: dir });
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.startsWith('neardup: semi.csv:1: ') && r.stderr.includes(`read it with ${flag}`), r.stderr);
      assert.equal(neardup(['dedup', 'semi.csv', '--delimiter', ',', '-q'], { cwd: dir }).code, 0);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the copy of an input that is not Parquet, named .parquet or .pq, is refused before anything is written: dedup, spans, dedupFile and dedupSpansFile', async () => {
  const dir = tmpDir();
  const inputs = {
    jsonl: path.join(dir, 'in.jsonl'),
    tsv: path.join(dir, 'in.tsv'),
  };
  fs.writeFileSync(inputs.jsonl, DOCS.map((d, i) => JSON.stringify({ id: `d${i}`, text: d.text }) + '\n').join(''));
  fs.writeFileSync(inputs.tsv, 'id\ttext\n' + DOCS.map((d, i) => `d${i}\t${d.text.replace(/[\t\n]/g, ' ')}\n`).join(''));
  for (const [format, input] of Object.entries(inputs)) {
    for (const name of ['o.parquet', 'o.PQ']) {
      const out = path.join(dir, `${format}-${name}`);
      const runs = [
        neardup(['dedup', input, '--output', 'dedup', '--threshold', '0.7', '--out', out]),
        neardup(['dedup', input, '--output', 'annotate', '--threshold', '0.7', '--out', out]),
        neardup(['spans', input, '--unit', 'line', '--out', out]),
        neardup(['spans', input, '--unit', 'line', '--output', 'annotate', '--out', out]),
      ];
      for (const r of runs) {
        assert.equal(r.code, 2, `${format} → ${name}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`copy of a ${format} input keeps its format, not Parquet`));
      }
      await assert.rejects(dedupFile(input, out, { dedup: { threshold: 0.7 } }), /copy of a .* input keeps its format, not Parquet/);
      await assert.rejects(dedupSpansFile(input, { out, spans: { unit: 'line' } }), /copy of a .* input keeps its format, not Parquet/);
      assert.equal(fs.existsSync(out), false, `nothing written to ${out}`);
    }
  }
});
