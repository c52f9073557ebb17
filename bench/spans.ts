/**
 * `neardup spans` end to end, per unit kind, on a generated corpus with planted repeats, its
 * answer checked against the tests' brute-force oracle (test/helpers/spansOracle.ts, a quadratic
 * scan that imports nothing but the normalizer) on a sample, and its speed printed with the peers'
 * published figures beside.
 *
 * The corpus (`sp2.jsonl`, the recipe of bench/RESULTS.md's spans sections): `bench/gen.ts`'s
 * documents as JSONL, each sentence on a line of its own (`. ` → `.\n`), and in every third
 * document a three-line cookie paragraph after a blank line. Its repeats: that paragraph, the
 * planted copies' unedited lines, and lines a copy shares with its source.
 *
 * Each timed run is the CLI in a child process, both passes, the rewritten JSONL and the
 * `--removed` audit written: `node CLI spans sp2.jsonl --unit U --id-field id --out O --removed A.tsv`,
 * measured by `/usr/bin/time` (wall, CPU, peak RSS); MB/s per core divides the input bytes by the
 * child's CPU time. With `--old CLI` each run alternates with another build's, which must write the
 * same bytes.
 *
 * Usage: node dist/bench/spans.js [--docs 32000] [--dir bench/data/spans] [--units line,paragraph,sentence]
 *        [--rounds 2] [--sample 300] [--cli dist/cli/main.js] [--old /other/build/dist/cli/main.js]
 * @module
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { spansOracle } from '../test/helpers/spansOracle.js';
import { generateCorpus } from './gen.js';

type Unit = 'line' | 'paragraph' | 'sentence';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(
    'node dist/bench/spans.js [--docs 32000] [--dir bench/data/spans] [--units line,paragraph,sentence] [--rounds 2] [--sample 300] [--cli dist/cli/main.js] [--old OTHER/dist/cli/main.js]',
  );
  process.exit(0);
}
const docs = Number(opt('docs', '32000'));
const dir = opt('dir', 'bench/data/spans');
const units = opt('units', 'line,paragraph,sentence').split(',') as Unit[];
const rounds = Number(opt('rounds', '2'));
const sample = Number(opt('sample', '300'));
const cli = opt('cli', 'dist/cli/main.js');
const old = opt('old', '');

const COOKIE = 'We use cookies to improve your experience.\nBy continuing you accept our cookie policy.\nRead more in our privacy notice.';

/** The corpus of the module comment, `docs` documents, written once per size. */
async function corpus(): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `sp2-${docs}.jsonl`);
  if (existsSync(file)) return file;
  const base = join(dir, `sp-${docs}.jsonl`);
  generateCorpus({ docs, out: base, format: 'jsonl' });
  const out = createWriteStream(`${file}.tmp`);
  let i = 0;
  for await (const line of createInterface({ input: createReadStream(base, { encoding: 'utf8' }), crlfDelay: Infinity })) {
    const o = JSON.parse(line) as { text: string };
    o.text = o.text.replace(/\. /g, '.\n') + (i++ % 3 === 0 ? `\n\n${COOKIE}` : '');
    if (!out.write(JSON.stringify(o) + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  renameSync(`${file}.tmp`, file);
  return file;
}

interface Run {
  wall: number;
  cpu: number;
  rssMb: number;
  digest: string;
  removed: number;
}

/** One run of `neardup spans` in a child process under /usr/bin/time. */
function run(bin: string, input: string, unit: Unit, tag: string): Run {
  const out = join(dir, `out-${tag}-${unit}.jsonl`);
  const audit = join(dir, `audit-${tag}-${unit}.tsv`);
  const timeFile = join(dir, `time-${tag}.txt`);
  const args = [
    '-f',
    '%e %U %S %M',
    '-o',
    timeFile,
    process.execPath,
    bin,
    'spans',
    input,
    '--unit',
    unit,
    '--id-field',
    'id',
    '--out',
    out,
    '--removed',
    audit,
  ];
  const r = spawnSync('/usr/bin/time', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${bin} spans --unit ${unit} failed (${r.status}): ${r.stderr}`);
  const [wall, user, sys, rss] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number) as [number, number, number, number];
  const digest = createHash('sha256').update(readFileSync(out)).update(readFileSync(audit)).digest('hex');
  const removed = readFileSync(audit, 'utf8').split('\n').length - 2;
  return { wall, cpu: user + sys, rssMb: rss / 1024, digest, removed };
}

/** The CLI's answer on the first `sample` documents against the oracle's: kept texts, dropped documents and audit rows. */
/** The first `n` non-empty lines of `file`, read a megabyte at a time (a corpus of 1M documents is past the longest string). */
function firstLines(file: string, n: number): string[] {
  const fd = openSync(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let lines = 0;
    for (let at = 0; lines <= n;) {
      const b = Buffer.alloc(1 << 20);
      const got = readSync(fd, b, 0, b.length, at);
      if (got === 0) break;
      chunks.push(b.subarray(0, got));
      for (let i = 0; i < got; i++) if (b[i] === 0x0a) lines++;
      at += got;
    }
    return Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '').slice(0, n);
  } finally {
    closeSync(fd);
  }
}

function checkOracle(input: string, unit: Unit): string {
  const lines = firstLines(input, sample);
  const file = join(dir, `sample-${sample}.jsonl`);
  writeFileSync(file, lines.join('\n') + '\n');
  const recs = lines.map((l) => JSON.parse(l) as { id: string; text: string });
  const want = spansOracle(recs.map((r) => r.text), recs.map((r) => r.id), { unit });
  const out = join(dir, `sample-out-${unit}.jsonl`);
  const audit = join(dir, `sample-audit-${unit}.tsv`);
  const r = spawnSync(process.execPath, [cli, 'spans', file, '--unit', unit, '--id-field', 'id', '--out', out, '--removed', audit], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`spans on the sample failed: ${r.stderr}`);
  const got = new Map(
    readFileSync(out, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: string; text: string }).map((x) => [x.id, x.text]),
  );
  recs.forEach((rec, i) => {
    const w = want.docs[i]!;
    if (w.dropped ? got.has(rec.id) : got.get(rec.id) !== w.text) throw new Error(`${unit}: document ${rec.id} differs from the oracle's`);
  });
  const rows = readFileSync(audit, 'utf8').split('\n').slice(1).filter((l) => l !== '');
  const wantRows = want.audit.map((a) =>
    [a.id, a.start, a.end, a.byteStart, a.byteEnd, a.keptId ?? '', a.keptStart ?? '', a.keptByteStart ?? '', a.count, a.docs].join('\t')
  );
  if (rows.join('\n') !== wantRows.join('\n')) throw new Error(`${unit}: the audit differs from the oracle's`);
  return `${want.docs.filter((d) => d.changed).length} of ${recs.length} documents changed, ${rows.length} audit rows`;
}

const input = await corpus();
const mb = statSync(input).size / 1e6;
console.log(`corpus ${input}: ${docs} documents, ${mb.toFixed(1)} MB; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const unit of units) console.log(`oracle (${unit}, first ${sample} documents): ${checkOracle(input, unit)}, the same as the CLI's`);
const builds: [string, string][] = [['new', cli], ...(old !== '' ? ([['old', old]] as [string, string][]) : [])];
const rows: string[] = [];
for (const unit of units) {
  const runs = new Map<string, Run[]>(builds.map(([t]) => [t, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [tag, bin] of r % 2 === 0 ? builds : [...builds].reverse()) runs.get(tag)!.push(run(bin, input, unit, tag));
  }
  const digests = new Set([...runs.values()].flat().map((x) => x.digest));
  if (digests.size !== 1) throw new Error(`${unit}: the runs wrote different bytes`);
  for (const [tag] of builds) {
    const rs = runs.get(tag)!;
    const cpu = rs.map((x) => x.cpu);
    const wall = rs.map((x) => x.wall);
    const fmt = (xs: number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    const rate = (xs: number[]): string => `${(mb / Math.max(...xs)).toFixed(1)}–${(mb / Math.min(...xs)).toFixed(1)}`;
    rows.push(
      `| ${unit} | ${tag} | ${fmt(wall)} s | ${fmt(cpu)} s | ${rate(wall)} | **${rate(cpu)}** | ${Math.max(...rs.map((x) => x.rssMb)).toFixed(0)} MB | ${
        rs[0]!.removed.toLocaleString('en-US')
      } |`,
    );
  }
}
console.log(`\n${rounds} run(s) per build, alternated; every run wrote the same bytes; load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
console.log('| unit | build | wall | CPU | MB/s (wall) | MB/s per core (CPU) | peak RSS | removed units |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(r);
console.log(`
Peers' published figures (none publishes an end-to-end speed for line, paragraph or sentence-window dedup):
- google-research/deduplicate-text-datasets (ExactSubstr, suffix array): Wiki-40B training set, 4 GB, in 2.3 min
  wall on 96 cores, "2.1 CPU-hours of work" (≈ 0.5 MB/s per core); C4, 350 GB, "∼ 1000 CPU-hours" for the suffix
  array (≈ 0.1 MB/s per core). Lee et al., arXiv:2107.06499, as quoted in https://github.com/ChenghaoMou/text-dedup/issues/22
- text-dedup's suffix-array substring dedup wraps that tool (https://chenghaomou.github.io/text-dedup/suffix_array.html).
- libsais (the suffix array alone, C, one thread): enwik8 (100 MB) 35.56 MB/s, enwik9 24.64 MB/s on an i7-9700K at 5 GHz,
  https://github.com/IlyaGrebnov/libsais/blob/master/Benchmarks.md
- datatrove SentenceDedup / line dedup: no speed published (https://github.com/huggingface/datatrove).`);
