/**
 * `--zstd-level` (#48): the level of every zstd output of a run (`--out *.zst`, `--removed *.zst`,
 * the ZSTD pages of a Parquet output). At any level the output holds what the default's holds; the
 * default is level 3, byte for byte what neardup wrote before the option; a higher level is not
 * larger; a level out of range is a usage error naming the option.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { plantedDocs, jsonl } from '../../helpers/shards.js';
import { readParquetRows, writeParquet } from '../../helpers/formats.js';
import { createZstdCompressor, zstdDecompress } from '../../../src/io/codec/zstd.js';

let dir: string;

before(async () => {
  dir = tmpDir();
  const docs = plantedDocs(600, 0.3, 4848);
  fs.writeFileSync(path.join(dir, 'in.jsonl'), jsonl(docs));
  await writeParquet(
    path.join(dir, 'in.parquet'),
    [
      { name: 'id', data: docs.map((d) => d.id), type: 'STRING' },
      { name: 'text', data: docs.map((d) => d.text), type: 'STRING' },
    ] as never,
    'ZSTD',
    200,
  );
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function unzstd(file: string): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of zstdDecompress(Readable.from([fs.readFileSync(file)]))) out.push(c);
  return Buffer.concat(out);
}

/** The files one `dedup --output dedup` writes with the level given (undefined: the option left out). */
async function run(tag: string, input: 'jsonl' | 'parquet', level: number | undefined): Promise<{ out: string; removed: string }> {
  const out = path.join(dir, `${tag}.${input === 'jsonl' ? 'jsonl.zst' : 'parquet'}`);
  const removed = path.join(dir, `${tag}.removed.tsv.zst`);
  const r = await cliInProcess([
    'dedup',
    path.join(dir, `in.${input}`),
    '--id-field',
    'id',
    '--output',
    'dedup',
    '--out',
    out,
    '--removed',
    removed,
    ...(level === undefined ? [] : ['--zstd-level', String(level)]),
    '-q',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return { out, removed };
}

test('the default is level 3, byte for byte; level 19 writes files no larger that hold the same bytes', async () => {
  const def = await run('default', 'jsonl', undefined);
  const three = await run('three', 'jsonl', 3);
  const high = await run('high', 'jsonl', 19);
  for (const k of ['out', 'removed'] as const) {
    assert.ok(fs.readFileSync(def[k]).equals(fs.readFileSync(three[k])), `${k}: the default is --zstd-level 3`);
    const plain = await unzstd(def[k]);
    // What level 3 makes of the content, independently of the CLI: the default output's bytes.
    const z = await createZstdCompressor(3);
    const chunks: Buffer[] = [];
    z.on('data', (c: Buffer) => chunks.push(c));
    z.end(plain);
    await new Promise((r) => z.on('end', r));
    assert.ok(Buffer.concat(chunks).equals(fs.readFileSync(def[k])), `${k}: the default output is level 3's compression`);
    assert.ok((await unzstd(high[k])).equals(plain), `${k}: level 19 holds the same bytes`);
    assert.ok(
      fs.statSync(high[k]).size <= fs.statSync(def[k]).size,
      `${k}: level 19 is not larger (${fs.statSync(high[k]).size} > ${fs.statSync(def[k]).size})`,
    );
  }
  const pdef = await run('pdefault', 'parquet', undefined);
  const phigh = await run('phigh', 'parquet', 19);
  assert.deepEqual((await readParquetRows(phigh.out)).rows, (await readParquetRows(pdef.out)).rows);
  assert.ok(fs.statSync(phigh.out).size <= fs.statSync(pdef.out).size, "the Parquet output's ZSTD pages at level 19 are not larger");
});

test("every level from 1 to 22 writes valid files holding the default's content, JSONL and Parquet (property)", async () => {
  const def = await run('base', 'jsonl', undefined);
  const pdef = await run('pbase', 'parquet', undefined);
  const want = { out: await unzstd(def.out), removed: await unzstd(def.removed), rows: (await readParquetRows(pdef.out)).rows };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 22 }), fc.constantFrom('jsonl' as const, 'parquet' as const), async (level, input) => {
      const got = await run(`l${n++}`, input, level);
      if (input === 'jsonl') assert.ok((await unzstd(got.out)).equals(want.out), `level ${level}: the output`);
      else assert.deepEqual((await readParquetRows(got.out)).rows, want.rows, `level ${level}: the Parquet rows`);
      assert.ok((await unzstd(got.removed)).equals(want.removed), `level ${level}: the audit`);
    }),
    { numRuns: 16, seed: 22 },
  );
});

test('a level out of range, or not an integer, is a usage error naming --zstd-level, and nothing is written (property)', async () => {
  const bad = fc.oneof(
    fc.integer({ min: 23, max: 1e6 }).map(String),
    fc.integer({ min: -1e6, max: 0 }).map(String),
    fc.constantFrom('3.5', 'abc', '', '1e1', ' '),
  );
  await fc.assert(
    fc.asyncProperty(bad, async (v) => {
      const out = path.join(dir, 'never.jsonl.zst');
      const r = await cliInProcess(['dedup', path.join(dir, 'in.jsonl'), '--output', 'dedup', '--out', out, '--zstd-level', v, '-q']);
      assert.equal(r.code, 2, `${JSON.stringify(v)}: ${r.stderr}`);
      assert.match(r.stderr, /option '--zstd-level <n>' argument .* is invalid\. zstd-level must be an integer from 1 to 22/);
      assert.ok(!fs.existsSync(out));
    }),
    { numRuns: 30, seed: 23 },
  );
});
