/**
 * Read throughput of the corpus formats: plain JSONL against .jsonl.gz, .jsonl.zst, Parquet (snappy
 * and zstd) and 32 .jsonl.zst shards behind a glob, on one generated corpus (bench/gen.ts).
 * Reported per format: file size, read time (best of 3), MB/s of the file and of the equivalent
 * plain JSONL (the same documents, so the rows compare like for like), documents/s.
 *
 * Usage: node dist/bench/formats.js [--docs 50000] [--dir bench/data/formats]
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { generateCorpus } from './gen.js';
import { openInput } from '../src/io/read/read.js';
import { zstdCompressor } from '../src/io/codec/zstd.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

const docs = Number(arg('docs', '50000'));
const dir = arg('dir', 'bench/data/formats');
fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });

const tsv = path.join(dir, `c${docs}.tsv`);
if (!fs.existsSync(tsv)) generateCorpus({ docs, out: tsv, dupRate: 0.3 });
const rows = fs
  .readFileSync(tsv, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => {
    const t = l.indexOf('\t');
    return { id: l.slice(0, t), text: l.slice(t + 1) };
  });
const jsonlText = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const jsonlBytes = Buffer.byteLength(jsonlText);
const zc = await zstdCompressor();
const zstdFrames = (b: Buffer): Buffer => {
  const parts: Buffer[] = [];
  for (let i = 0; i < b.length; i += 4 << 20) parts.push(Buffer.from(zc(b.subarray(i, i + (4 << 20)))));
  return Buffer.concat(parts);
};

const files: Record<string, string> = {
  jsonl: path.join(dir, 'c.jsonl'),
  'jsonl.gz': path.join(dir, 'c.jsonl.gz'),
  'jsonl.zst': path.join(dir, 'c.jsonl.zst'),
  'parquet (snappy)': path.join(dir, 'c-snappy.parquet'),
  'parquet (zstd)': path.join(dir, 'c-zstd.parquet'),
  '32 shards .jsonl.zst (glob)': path.join(dir, 'shards', '*.jsonl.zst'),
};
const raw = Buffer.from(jsonlText);
fs.writeFileSync(files.jsonl!, raw);
fs.writeFileSync(files['jsonl.gz']!, gzipSync(raw));
fs.writeFileSync(files['jsonl.zst']!, zstdFrames(raw));
for (
  const [codec, key] of [
    ['SNAPPY', 'parquet (snappy)'],
    ['ZSTD', 'parquet (zstd)'],
  ] as const
) {
  const w = new ByteWriter();
  const pw = new ParquetWriter({
    writer: w as never,
    schema: [{ name: 'root', num_children: 2 }, { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' }, {
      name: 'text',
      type: 'BYTE_ARRAY',
      converted_type: 'UTF8',
      repetition_type: 'REQUIRED',
    }] as never,
    codec,
    compressors: { ZSTD: zc } as never,
  });
  await pw.write({ columnData: [{ name: 'id', data: rows.map((r) => r.id) }, { name: 'text', data: rows.map((r) => r.text) }] as never, rowGroupSize: 10000 });
  await pw.finish();
  fs.writeFileSync(files[key]!, w.getBytes());
}
const per = Math.ceil(rows.length / 32);
for (let s = 0; s < 32; s++) {
  const part = rows.slice(s * per, (s + 1) * per).map((r) => JSON.stringify(r)).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'shards', `part-${String(s).padStart(5, '0')}.jsonl.zst`), zstdFrames(Buffer.from(part)));
}

function sizeOf(p: string): number {
  if (p.includes('*')) return fs.readdirSync(path.dirname(p)).reduce((n, f) => n + fs.statSync(path.join(path.dirname(p), f)).size, 0);
  return fs.statSync(p).size;
}

console.log(
  `# ${rows.length} documents, ${(jsonlBytes / 1e6).toFixed(1)} MB as JSONL; load: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`,
);
console.log('| format | file MB | read s (best of 3) | file MB/s | JSONL-equivalent MB/s | docs/s |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, file] of Object.entries(files)) {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    const input = await openInput(file, { fields: { id: 'id' } });
    let n = 0;
    let chars = 0;
    for await (const r of input.records) {
      n++;
      chars += r.text.length;
    }
    const s = (performance.now() - t0) / 1000;
    if (n !== rows.length || chars === 0) throw new Error(`${name}: read ${n} documents, expected ${rows.length}`);
    best = Math.min(best, s);
  }
  const mb = sizeOf(file) / 1e6;
  console.log(
    `| ${name} | ${mb.toFixed(1)} | ${best.toFixed(2)} | ${(mb / best).toFixed(1)} | ${(jsonlBytes / 1e6 / best).toFixed(1)} | ${
      Math.round(rows.length / best)
    } |`,
  );
}
console.log(`load after: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
