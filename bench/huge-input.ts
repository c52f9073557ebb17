/**
 * Huge inputs (issue 7). Generates its data in bench/data/ (gitignored), runs the built CLI or a
 * reader-only pass under /usr/bin/time, and prints wall time and peak RSS. Run once; it is slow.
 *
 *   node dist/bench/huge-input.js doc [MB=200]        one document of MB megabytes (text, TSV, JSONL)
 *   node dist/bench/huge-input.js file [GB=5]         a GB-gigabyte TSV of ads: reader-only pass, then `neardup dedup`
 *   node dist/bench/huge-input.js read FILE FORMAT    (internal) stream FILE through openInput and count
 *   node dist/bench/huge-input.js stream [GB=5] MODULE  the perf branch's two-pass dedupStream (MODULE: its built
 *                                                     dist/src/index.js) over the same generated file
 *
 * Set KEEP=1 to keep the generated files (they are deleted at the end otherwise).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openInput } from '../src/io/read/read.js';
import { adCorpus } from './online-corpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const dataDir = path.join(root, 'bench/data');
const mainJs = path.join(root, 'dist/cli/main.js');
const self = fileURLToPath(import.meta.url);

interface Measured {
  code: number | null;
  signal: string | null;
  wallS: number;
  peakRssMB: number;
  stdout: string;
  stderr: string;
}

/** Runs node with args under /usr/bin/time -v. */
function measure(args: string[], timeoutS: number): Measured {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: timeoutS * 1000,
    env: { ...process.env, NEARDUP_PROGRESS: '' },
  });
  const wallS = (performance.now() - t0) / 1000;
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? '');
  return {
    code: r.status,
    signal: r.signal,
    wallS,
    peakRssMB: m ? Number(m[1]) / 1024 : NaN,
    stdout: r.stdout ?? '',
    stderr: (r.stderr ?? '').split('\tCommand being timed')[0]!.slice(-2000),
  };
}

async function writeBig(file: string, bytes: number, line: (i: number) => string, header?: string): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  let n = 0;
  let buf = header ?? '';
  while (written + buf.length < bytes) {
    buf += line(n++);
    if (buf.length >= 1 << 22) {
      if (!out.write(buf)) await once(out, 'drain');
      written += buf.length;
      buf = '';
    }
  }
  out.write(buf);
  out.end();
  await once(out, 'finish');
  return n;
}

function report(label: string, m: Measured, extra = ''): void {
  const status = m.signal ? `killed by ${m.signal}` : `exit ${m.code}`;
  console.log(`| ${label} | ${status} | ${m.wallS.toFixed(1)} s | ${m.peakRssMB.toFixed(0)} MB | ${extra} |`);
  if (m.code !== 0) console.error(`  stderr tail (${label}): ${m.stderr.trim().split('\n').slice(-3).join(' / ')}`);
}

const mode = process.argv[2];
if (mode === 'read') {
  // Reader-only pass: proves the io layer streams (bounded memory) independently of the dedup stage.
  const input = await openInput(process.argv[3]!, {
    format: process.argv[4] as 'tsv',
    columns: { text: ['text'], id: 'id' },
    fields: { text: ['text'], id: 'id' },
  });
  let n = 0;
  let chars = 0;
  for await (const r of input.records) {
    n++;
    chars += r.text.length;
  }
  console.log(JSON.stringify({ records: n, chars }));
} else if (mode === 'doc') {
  const mb = Number(process.argv[3] ?? 200);
  mkdirSync(dataDir, { recursive: true });
  const corpus = adCorpus(11);
  const unit = Array.from({ length: 2000 }, () => corpus.next()).join(' ') + ' ';
  const size = mb * 1e6;
  const body = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const files: [string, string, string][] = [
    ['doc.txt', 'text', body + '\n'],
    ['doc.tsv', 'tsv', `id\ttext\nbig\t${body}\nsmall\t${unit}\n`],
    ['doc.jsonl', 'jsonl', JSON.stringify({ id: 'big', text: body }) + '\n' + JSON.stringify({ id: 'small', text: unit }) + '\n'],
  ];
  console.log(`# one ${mb} MB document (node ${process.version}, ${new Date().toISOString()})`);
  console.log('| run | result | wall | peak RSS | output |');
  console.log('|---|---|---|---|---|');
  for (const [name, format, data] of files) {
    const file = path.join(dataDir, name);
    const out = createWriteStream(file);
    out.end(data);
    await once(out, 'finish');
    const r1 = measure([self, 'read', file, format], 1800);
    report(`read ${name}`, r1, r1.stdout.trim());
    const args = [
      mainJs,
      'dedup',
      file,
      '--format',
      format,
      ...(format === 'text' ? [] : format === 'tsv' ? ['--text', 'text', '--id', 'id'] : ['--text-field', 'text', '--id-field', 'id']),
      '--json',
      '--out',
      path.join(dataDir, `${name}.pairs.tsv`),
    ];
    const r2 = measure(args, 1800);
    report(`neardup dedup ${name}`, r2, r2.stdout.replace(/\s+/g, ' ').slice(0, 160));
    if (!process.env.KEEP) rmSync(file, { force: true });
    rmSync(path.join(dataDir, `${name}.pairs.tsv`), { force: true });
  }
} else if (mode === 'file') {
  const gb = Number(process.argv[3] ?? 5);
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, `big-${gb}g.tsv`);
  const corpus = adCorpus(13);
  const t0 = performance.now();
  const rows = await writeBig(file, gb * 1e9, (i) => `ad-${i}\t${corpus.next()}\n`, 'id\ttext\n');
  console.log(
    `# ${gb} GB TSV: ${rows} rows, ${(statSync(file).size / 1e9).toFixed(2)} GB, generated in ${
      ((performance.now() - t0) / 1000).toFixed(0)
    } s (node ${process.version}, ${new Date().toISOString()})`,
  );
  console.log('| run | result | wall | peak RSS | output |');
  console.log('|---|---|---|---|---|');
  const r1 = measure([self, 'read', file, 'tsv'], 3600);
  report('reader only (openInput, count records)', r1, r1.stdout.trim());
  const r2 = measure(
    [mainJs, 'dedup', file, '--text', 'text', '--id', 'id', '--json', '--out', path.join(dataDir, 'big.pairs.tsv')],
    Number(process.env.DEDUP_TIMEOUT_S ?? 3600),
  );
  report('neardup dedup (current CLI: all texts in memory)', r2, r2.stdout.replace(/\s+/g, ' ').slice(0, 200));
  if (!process.env.KEEP) rmSync(file, { force: true });
  rmSync(path.join(dataDir, 'big.pairs.tsv'), { force: true });
} else if (mode === 'stream-run') {
  // Child: dedupStream from another build, fed by this branch's streaming reader (two passes).
  const mod = (await import(process.argv[4]!)) as {
    dedupStream: (src: () => AsyncIterable<string>, o: object) => Promise<{ pairs: unknown[]; clusters: unknown[] }>;
  };
  const file = process.argv[3]!;
  const source = async function* () {
    const input = await openInput(file, { format: 'tsv', columns: { text: ['text'], id: 'id' } });
    for await (const r of input.records) yield r.text;
  };
  const r = await mod.dedupStream(source, {});
  console.log(JSON.stringify({ pairs: r.pairs.length, clusters: r.clusters.length }));
} else if (mode === 'stream') {
  const gb = Number(process.argv[3] ?? 5);
  const mod = path.resolve(process.argv[4]!);
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, `big-${gb}g.tsv`);
  const corpus = adCorpus(13);
  const rows = await writeBig(file, gb * 1e9, (i) => `ad-${i}\t${corpus.next()}\n`, 'id\ttext\n');
  console.log(`# ${gb} GB TSV (${rows} rows), streaming two-pass dedupStream from ${mod} (node ${process.version}, ${new Date().toISOString()})`);
  console.log('| run | result | wall | peak RSS | output |');
  console.log('|---|---|---|---|---|');
  const r = measure([self, 'stream-run', file, mod], Number(process.env.DEDUP_TIMEOUT_S ?? 3600));
  report('dedupStream (perf branch), reader of this branch', r, r.stdout.trim());
  if (!process.env.KEEP) rmSync(file, { force: true });
} else {
  console.error('usage: huge-input.js doc [MB] | file [GB] | stream [GB] MODULE | read FILE FORMAT');
  process.exit(2);
}
