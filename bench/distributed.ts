/**
 * Sharded dedup on BullMQ workers against single-process `neardup dedup` on the same documents:
 * wall time of each, peak RSS of every worker process (GNU time), and whether the pairs are
 * identical once sorted.
 *
 * Usage: node dist/bench/distributed.js [--docs 1000000] [--shards 32] [--workers 2,8] [--dup-rate 0.3]
 * The corpus (bench/data/m<docs>-d<rate>.tsv, `<id>⇥<text>`) and its JSONL shards (odd ones gzipped)
 * are generated first when missing. Needs redis-server on PATH.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { loadavg } from 'node:os';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateCorpus, writeJsonlShards } from './gen.js';
import { opt, freePort } from './util.js';

const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const mainJs = resolve(repoRoot, 'dist/cli/main.js');
const docs = Number(opt('docs', '1000000'));
const shards = Number(opt('shards', '32'));
const dupRate = Number(opt('dup-rate', '0.3'));
const workerCounts = opt('workers', '2,8').split(',').map(Number);
const data = resolve(repoRoot, 'bench/data');
const file = join(data, `m${docs}-d${dupRate}.tsv`);
const shardDir = `${file}.shards${shards}`;
mkdirSync(data, { recursive: true });
if (!existsSync(file)) {
  console.log(`generating ${file} …`);
  const g = generateCorpus({ docs, out: file, dupRate });
  console.log(`${(g.bytes / 1e9).toFixed(2)} GB, ${g.planted} planted near copies`);
}
if (!existsSync(shardDir)) {
  console.log(`writing ${shards} shards to ${shardDir} …`);
  await writeJsonlShards(file, `${shardDir}.tmp`, shards, docs);
  spawnSync('mv', [`${shardDir}.tmp`, shardDir]);
}
const shardFiles = readdirSync(shardDir).sort().map((f) => join(shardDir, f));

function timed(args: string[], cwd = repoRoot): { wall: number; rssMb: number; stderr: string } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, mainJs, ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')} failed:\n${r.stderr}`);
  const [wall, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
  return { wall, rssMb: rss / 1024, stderr: r.stderr };
}

function sortedHash(f: string): string {
  const r = spawnSync('sh', ['-c', `LC_ALL=C sort -S 512M '${f}' | md5sum`], { encoding: 'utf8' });
  return r.stdout.split(' ')[0]!;
}

const out = join(data, 'dist-bench');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
console.log(`load average at start ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const single = timed(['dedup', file, '--format', 'idtext', '--out', join(out, 'single.tsv'), '-q']);
const singleHash = sortedHash(join(out, 'single.tsv'));
console.log(`single process: wall ${single.wall.toFixed(1)} s, peak RSS ${single.rssMb.toFixed(0)} MB`);

const port = await freePort();
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
const url = `redis://127.0.0.1:${port}`;
try {
  for (const W of workerCounts) {
    const work = join(out, `job-w${W}`);
    const workers: { child: ChildProcess; result: Promise<string> }[] = [];
    for (let i = 0; i < W; i++) {
      const cwd = join(out, `w${W}-${i}`);
      mkdirSync(cwd, { recursive: true });
      const child = spawn('/usr/bin/time', ['-f', '%e %M', process.execPath, mainJs, 'worker', '--redis', url, '--lock-ms', '120000'], {
        cwd,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      workers.push({ child, result: new Promise((res) => child.on('exit', () => res(err))) });
    }
    await new Promise((r) => setTimeout(r, 1500));
    const load0 = loadavg()[0]!;
    const job = timed(['job', 'dedup', ...shardFiles, '--redis', url, '--work-dir', work, '--id-field', 'id', '--out', join(out, `w${W}.tsv`), '-v']);
    // Stop the workers (SIGTERM to node under time) and read their peak RSS.
    for (const w of workers) spawnSync('pkill', ['-TERM', '-P', String(w.child.pid)]);
    const rss = (await Promise.all(workers.map((w) => w.result))).map((e) => Number(e.trim().split('\n').at(-1)!.split(' ')[1]) / 1024);
    const same = sortedHash(join(out, `w${W}.tsv`)) === singleHash;
    const stages = job.stderr.split('\n').filter((l) => l.includes('progress:') && / (\d+)\/\1 tasks/.test(l));
    console.log(`\n${W} workers: wall ${job.wall.toFixed(1)} s (${(job.wall / single.wall).toFixed(2)}× single), output identical: ${same}`);
    console.log(`  peak RSS per worker (MB): ${rss.map((x) => x.toFixed(0)).join(', ')}; submitter ${job.rssMb.toFixed(0)} MB`);
    console.log(`  load average at start ${load0.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}`);
    console.log(`  stage completions:\n    ${stages.join('\n    ')}`);
    const du = spawnSync('du', ['-sm', work], { encoding: 'utf8' }).stdout.split('\t')[0];
    console.log(`  job directory: ${du} MB`);
  }
} finally {
  redis.kill('SIGKILL');
}
