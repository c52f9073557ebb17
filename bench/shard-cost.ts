/**
 * The sharded route's cost per document against one process (issue #36): `neardup dedup` on one
 * JSONL file against `neardup job dedup` on the same documents cut into shards, run `--local` (task
 * processes on every core) and on BullMQ with `neardup worker` processes. Prints, as Markdown:
 * process CPU (user + system) of dedup and the summed task CPU of the job (from the task markers),
 * wall times, the job directory's bytes against the input's, per-stage task CPU, and whether the
 * pairs are identical (sorted md5).
 *
 * Usage: node dist/bench/shard-cost.js [--docs 1000000] [--shards 32] [--format jsonl|jsonl.zst|parquet]
 *        [--workers 2] [--no-redis] [--runs 1]
 * With --runs N, dedup and each job run N times in turn, and the rounds and their medians are
 * printed too (a ratio is taken within its round).
 * The corpus (bench/data/cost-<docs>.jsonl: 30 % planted near copies, a fifth of them copies of
 * copies) and its shards are generated when missing. BullMQ runs need redis-server on PATH.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, openSync, closeSync, writeSync, readSync, createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { loadavg, availableParallelism } from 'node:os';
import { spawn, spawnSync } from 'node:child_process';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { generateCorpus } from './gen.js';
import { zstdCompressor } from '../src/io/codec/zstd.js';
import { opt, freePort } from './util.js';

const argv = process.argv.slice(2);
const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const mainJs = resolve(repoRoot, 'dist/cli/main.js');
const docs = Number(opt('docs', '1000000'));
const shards = Number(opt('shards', '32'));
const format = opt('format', 'jsonl');
const W = Number(opt('workers', '2'));
const redisRuns = !argv.includes('--no-redis');
if (!['jsonl', 'jsonl.zst', 'parquet'].includes(format)) throw new Error(`--format must be jsonl, jsonl.zst or parquet, got ${format}`);
const data = resolve(repoRoot, 'bench/data');
mkdirSync(data, { recursive: true });
const corpus = join(data, `cost-${docs}.jsonl`);
if (!existsSync(corpus)) {
  console.error(`generating ${corpus} …`);
  generateCorpus({ docs, out: corpus, dupRate: 0.3, chainRate: 0.2, format: 'jsonl' });
}
const shardDir = join(data, `cost-${docs}.${format}.${shards}`);

/** Cuts the corpus into `shards` consecutive shards of the format. */
async function writeShards(): Promise<void> {
  const tmp = `${shardDir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const per = Math.ceil(docs / shards);
  const zc = format === 'jsonl' ? undefined : await zstdCompressor();
  let lines: string[] = [];
  let s = 0;
  const flush = async (): Promise<void> => {
    const name = join(tmp, `part-${String(s).padStart(5, '0')}.${format}`);
    if (format === 'parquet') {
      const rows = lines.map((l) => JSON.parse(l) as { id: string; text: string });
      const w = new ByteWriter();
      const schema = [{ name: 'root', num_children: 2 }, { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' }, {
        name: 'text',
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        repetition_type: 'REQUIRED',
      }];
      const pw = new ParquetWriter({ writer: w as never, schema: schema as never, codec: 'ZSTD', compressors: { ZSTD: zc } as never });
      await pw.write({
        columnData: [{ name: 'id', data: rows.map((r) => r.id) }, { name: 'text', data: rows.map((r) => r.text) }] as never,
        rowGroupSize: 10000,
      });
      await pw.finish();
      writeFileSync(name, w.getBytes());
    } else {
      const raw = Buffer.from(lines.map((l) => `${l}\n`).join(''));
      const fd = openSync(name, 'w');
      if (zc) { for (let i = 0; i < raw.length; i += 4 << 20) writeSync(fd, zc(raw.subarray(i, i + (4 << 20)))); }
      else writeSync(fd, raw);
      closeSync(fd);
    }
    lines = [];
    s++;
  };
  for await (const line of createInterface({ input: createReadStream(corpus, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
    if (line === '') continue;
    lines.push(line);
    if (lines.length === per) await flush();
  }
  if (lines.length > 0) await flush();
  spawnSync('mv', [tmp, shardDir]);
}
if (!existsSync(shardDir)) {
  console.error(`writing ${shards} ${format} shards to ${shardDir} …`);
  await writeShards();
}

interface Timed {
  wall: number;
  cpu: number;
  rssMb: number;
  stdout: string;
}

function timed(args: string[], cwd = repoRoot): Timed {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, mainJs, ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')} failed:\n${r.stderr}`);
  const [wall, user, sys, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number, number];
  return { wall, cpu: user + sys, rssMb: rss / 1024, stdout: r.stdout };
}

function sortedHash(f: string): string {
  return spawnSync('sh', ['-c', `LC_ALL=C sort -S 512M '${f}' | md5sum`], { encoding: 'utf8' }).stdout.split(' ')[0]!;
}

function bytesOf(dir: string): number {
  return Number(spawnSync('du', ['-sb', dir], { encoding: 'utf8' }).stdout.split('\t')[0]);
}

interface JobJson {
  timings: { total: number; stages: Record<string, { tasks: number; wall: number; cpu: number }> };
}

const out = join(data, `cost-run-${format}`);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const inputBytes = readdirSync(shardDir).reduce((n, f) => n + Number(spawnSync('stat', ['-c', '%s', join(shardDir, f)], { encoding: 'utf8' }).stdout), 0);
const jsonlBytes = Number(spawnSync('stat', ['-c', '%s', corpus], { encoding: 'utf8' }).stdout);
console.log(
  `# ${docs} documents, ${shards} ${format} shards (${(inputBytes / 1e9).toFixed(2)} GB; ${
    (jsonlBytes / 1e9).toFixed(2)
  } GB as JSONL); ${availableParallelism()} cores; node ${process.version}; load at start ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
);

interface JobRun {
  wall: number;
  cpu: number;
  inter: number;
  same: boolean;
  stages: Record<string, { cpu: number }>;
}

/** One timed job run, read back from its --json summary, its work dir and its output. */
function jobRun(run: Timed, work: string, file: string, singleHash: string): JobRun {
  const j = JSON.parse(run.stdout) as JobJson;
  const stages = j.timings.stages;
  return {
    wall: run.wall,
    cpu: Object.values(stages).reduce((n, x) => n + x.cpu, 0) / 1000,
    inter: bytesOf(work),
    same: sortedHash(file) === singleHash,
    stages,
  };
}

const median = (xs: readonly number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};

// Each round runs dedup, then the job on each runner: dedup's own CPU time moves by a quarter from
// run to run on a shared machine, so a ratio is taken within its round and the rounds' median given.
const runs = Number(opt('runs', '1'));
if (!(Number.isInteger(runs) && runs >= 1)) throw new Error(`--runs must be a positive integer, got ${opt('runs', '1')}`);
const localName = `\`neardup job dedup --local\` (${availableParallelism()} task processes)`;
const redisName = `\`neardup job dedup --redis\`, ${W} \`neardup worker\` processes`;
const rounds: { single: Timed; jobs: Map<string, JobRun> }[] = [];
let redis: ReturnType<typeof spawn> | undefined;
let workers: ReturnType<typeof spawn>[] = [];
let url = '';
if (redisRuns) {
  const port = await freePort();
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  url = `redis://127.0.0.1:${port}`;
}
/**
 * Fresh workers for each round's job, as `--local` forks fresh task processes: workers kept from
 * the round before would start with their code already compiled, which `--local` never does.
 */
async function startWorkers(): Promise<void> {
  for (const w of workers) w.kill('SIGTERM');
  workers = Array.from({ length: W }, () => spawn(process.execPath, [mainJs, 'worker', '--redis', url, '--lock-ms', '120000'], { stdio: 'ignore' }));
  await new Promise((r) => setTimeout(r, 1500));
}
// Both inputs read once, untimed, so that every round starts with them in the page cache: reading
// the 32 shards from disk cost ~1.9 s of system CPU (the whole corpus file, 0.5 s), charged to
// whichever run came first after they had left the cache (round 1's job: its misses in round 17).
const warmBuf = Buffer.allocUnsafe(8 << 20);
for (const f of [corpus, ...readdirSync(shardDir).map((n) => join(shardDir, n))]) {
  const fd = openSync(f, 'r');
  while (readSync(fd, warmBuf, 0, warmBuf.length, null) > 0);
  closeSync(fd);
}
try {
  for (let k = 0; k < runs; k++) {
    const single = timed(['dedup', corpus, '--id-field', 'id', '--out', join(out, 'single.tsv'), '-q']);
    const singleHash = sortedHash(join(out, 'single.tsv'));
    const jobs = new Map<string, JobRun>();
    const localWork = join(out, 'job-local');
    rmSync(localWork, { recursive: true, force: true });
    const local = timed(['job', 'dedup', shardDir, '--id-field', 'id', '--local', '--work-dir', localWork, '--out', join(out, 'local.tsv'), '--json']);
    jobs.set(localName, jobRun(local, localWork, join(out, 'local.tsv'), singleHash));
    if (redisRuns) {
      await startWorkers();
      const work = join(out, 'job-redis');
      rmSync(work, { recursive: true, force: true });
      const run = timed(['job', 'dedup', shardDir, '--id-field', 'id', '--redis', url, '--work-dir', work, '--out', join(out, 'redis.tsv'), '--json']);
      jobs.set(redisName, jobRun(run, work, join(out, 'redis.tsv'), singleHash));
    }
    rounds.push({ single, jobs });
    if (runs > 1) console.error(`round ${k + 1}/${runs} done`);
  }
} finally {
  for (const w of workers) w.kill('SIGTERM');
  redis?.kill('SIGKILL');
}

const last = rounds.at(-1)!;
console.log('\n| run | wall | CPU | CPU vs dedup | wall vs dedup | intermediates (vs JSONL input) | pairs |');
console.log('|---|---|---|---|---|---|---|');
console.log(
  `| \`neardup dedup\` (one JSONL file, ${availableParallelism()} worker threads) | ${last.single.wall.toFixed(1)} s | ${
    last.single.cpu.toFixed(1)
  } s (process) | 1 | 1 | — | reference |`,
);
for (const [name, r] of last.jobs) {
  console.log(
    `| ${name} | ${r.wall.toFixed(1)} s | ${r.cpu.toFixed(1)} s (tasks) | ${(r.cpu / last.single.cpu).toFixed(2)}× | ${
      (r.wall / last.single.wall).toFixed(2)
    }× | ${(r.inter / 1e6).toFixed(0)} MB = ${(r.inter / jsonlBytes).toFixed(2)}× | ${r.same ? 'identical' : 'DIFFERENT'} |`,
  );
}
console.log('\nTask CPU per stage (s):\n\n| run | stages |\n|---|---|');
for (const [name, r] of last.jobs) console.log(`| ${name} | ${Object.entries(r.stages).map(([k, x]) => `${k} ${(x.cpu / 1000).toFixed(1)}`).join(' · ')} |`);
if (runs > 1) {
  console.log(`\nAll ${runs} rounds (each ratio within its round), then the medians:\n`);
  console.log('| round | dedup wall / CPU | ' + [...last.jobs.keys()].map((n) => `${n}: wall / CPU, CPU vs dedup, wall vs dedup`).join(' | ') + ' |');
  console.log('|---|---|' + [...last.jobs.keys()].map(() => '---').join('|') + '|');
  const cell = (r: JobRun, single: Timed): string =>
    `${r.wall.toFixed(1)} s / ${r.cpu.toFixed(1)} s, ${(r.cpu / single.cpu).toFixed(2)}×, ${(r.wall / single.wall).toFixed(2)}×${
      r.same ? '' : ' DIFFERENT pairs'
    }`;
  rounds.forEach((r, k) =>
    console.log(
      `| ${k + 1} | ${r.single.wall.toFixed(1)} s / ${r.single.cpu.toFixed(1)} s | ${[...r.jobs.values()].map((j) => cell(j, r.single)).join(' | ')} |`,
    )
  );
  const med = (f: (r: (typeof rounds)[number], name: string) => number, name: string): string => median(rounds.map((r) => f(r, name))).toFixed(2);
  console.log(
    `| median | ${median(rounds.map((r) => r.single.wall)).toFixed(1)} s / ${median(rounds.map((r) => r.single.cpu)).toFixed(1)} s | `
      + [...last.jobs.keys()]
        .map((n) =>
          `${med((r, m) => r.jobs.get(m)!.wall, n)} s / ${med((r, m) => r.jobs.get(m)!.cpu, n)} s, ${med((r, m) => r.jobs.get(m)!.cpu / r.single.cpu, n)}×, ${
            med((r, m) => r.jobs.get(m)!.wall / r.single.wall, n)
          }×`
        )
        .join(' | ')
      + ' |',
  );
}
console.log(`\nload at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
