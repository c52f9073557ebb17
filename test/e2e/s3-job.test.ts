/**
 * A sharded job whose work dir is in S3 (a real s3rver, behind a proxy that fails every third
 * request with 503 or 429 and, as S3 does, answers a conditional PUT of an existing key with 412):
 * the array route (plan, stage, status, report, clean) gives neardup dedup's pairs; two attempts
 * racing on one task both finish with one result, on a store that honours If-None-Match and on one
 * that ignores it (s3rver itself); a task killed while it uploads leaves nothing that looks
 * complete and runs again to the same result; a marker whose attempt objects are missing or short
 * is an error naming the object (exit 2), never a short result; a join task fetches only its
 * partition's blocks of the band keys.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { mainJs, neardup, tmpDir } from '../cliUtil.js';
import { neardupAsync, plantedDocs, sortedLines, writeShards, jsonl } from '../helpers/shards.js';
import { REQUIRE_ALL } from '../helpers/needs.js';
import { ColumnFile, writeColumns } from '../../src/shard/files/columns.js';
import { fetchPartition } from '../../src/shard/workdir/s3partition.js';
import { setS3Endpoint } from '../../src/io/s3/client.js';
import { deleteObject, getObjects, putObject, s3rverMissing, startFaultProxy, startS3rver, S3_ENV, type FaultProxy, type S3Server } from '../helpers/s3.js';

const missing = REQUIRE_ALL ? undefined : s3rverMissing();
const opts = missing ? { skip: missing } : {};
const BUCKET = 'corpus';
let server: S3Server;
let proxy: FaultProxy;
let dir: string;
let single: string[];

before(async () => {
  if (missing) return;
  server = await startS3rver(BUCKET);
  proxy = await startFaultProxy(server.port, undefined, true);
  dir = tmpDir();
  const docs = plantedDocs(600, 0.35, 5);
  const files = await writeShards(path.join(dir, 'in'), docs, 6, ['jsonl', 'jsonl.gz']);
  for (const f of files) await putObject(server, BUCKET, `in/${path.basename(f)}`, fs.readFileSync(f));
  fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
  const r = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '-q'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  single = sortedLines(r.stdout);
  assert.ok(single.length > 100, `only ${single.length} pairs`);
});

after(async () => {
  if (missing) return;
  await proxy.stop();
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** neardup with the server's credentials, through the proxy (or straight to s3rver: `direct`). */
function run(args: string[], env: Record<string, string> = {}, direct = false): Promise<{ code: number; stdout: string; stderr: string }> {
  return neardupAsync([...args, '--s3-endpoint', direct ? server.endpoint : proxy.endpoint], dir, { ...S3_ENV, ...env });
}

async function ok(args: string[], env: Record<string, string> = {}, direct = false): Promise<string> {
  const r = await run(args, env, direct);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The attempt ids under `prefix` (a task's prefix in the work dir). */
async function attempts(prefix: string): Promise<string[]> {
  const keys = [...(await getObjects(server, BUCKET, prefix)).keys()];
  return [...new Set(keys.flatMap((k) => /^attempt-([0-9a-f]+)\//.exec(k)?.[1] ?? []))].sort();
}

async function markerAttempt(key: string): Promise<string> {
  return JSON.parse((await getObjects(server, BUCKET, key)).get('')!.toString()).attempt;
}

const W = `s3://${BUCKET}/jobs/a`;
const stages = async (work: string, names: string[]): Promise<void> => {
  for (const s of names) await ok(['stage', s, '--all', '--work-dir', work]);
};

test('array stages on a work dir in S3: neardup dedup\'s pairs; two attempts racing on one task both finish; job clean removes the attempts no marker names', opts, async () => {
  await ok(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', W, '--id-field', 'id', '--task-bytes', '1', '--partitions', '2', '-q']);
  // Task 0 through the proxy, which answers the second marker PUT with 412: that attempt adopts the
  // first. Both run at once and upload their attempts; the second pauses longer before its marker.
  const pause = { NEARDUP_FAULT_UPLOAD_PAUSE_MS: '1000' };
  const later = { NEARDUP_FAULT_UPLOAD_PAUSE_MS: '4000' };
  const race = await Promise.all([run(['stage', 'sign', '--task', '0', '--work-dir', W], pause), run(['stage', 'sign', '--task', '0', '--work-dir', W], later)]);
  for (const r of race) assert.equal(r.code, 0, r.stderr);
  assert.ok(proxy.stats.preconditionFailed >= 1, 'one marker PUT found the other there');
  assert.deepEqual(await attempts('jobs/a/sign/00000/'), [await markerAttempt('jobs/a/sign/00000/_SUCCESS.json')], 'the losing attempt removed its objects');
  // Task 1 straight to s3rver, which ignores If-None-Match: the last marker stands, naming a complete attempt.
  const race2 = await Promise.all([run(['stage', 'sign', '--task', '1', '--work-dir', W], pause, true), run(['stage', 'sign', '--task', '1', '--work-dir', W], later, true)]);
  for (const r of race2) assert.equal(r.code, 0, r.stderr);
  const both = await attempts('jobs/a/sign/00001/');
  assert.equal(both.length, 2, 'both attempts wrote their objects');
  assert.ok(both.includes(await markerAttempt('jobs/a/sign/00001/_SUCCESS.json')));
  await stages(W, ['sign', 'join', 'route', 'gather', 'verify', 'link', 'decide', 'components']);
  const status = JSON.parse(await ok(['job', 'status', '--work-dir', W, '--json']));
  assert.deepEqual(status.stages.map((s: { stage: string; done: number; total: number }) => [s.stage, s.done === s.total]), [['sign', true], ['join', true], ['route', true], ['gather', true], ['verify', true], ['link', true], ['decide', true], ['components', true]]);
  await ok(['job', 'report', '--work-dir', W, '--out', `s3://${BUCKET}/a.tsv`, '-q']);
  assert.deepEqual(sortedLines((await getObjects(server, BUCKET, 'a.tsv')).get('')!.toString()), single);
  const clean = await run(['job', 'clean', '--work-dir', W]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(clean.stderr, /removed [1-9]\d* leftover\(s\) in s3:\/\/corpus\/jobs\/a/);
  assert.deepEqual(await attempts('jobs/a/sign/00001/'), [await markerAttempt('jobs/a/sign/00001/_SUCCESS.json')]);
  const again = await run(['job', 'report', '--work-dir', W, '-q']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(sortedLines(again.stdout), single, 'the same result after clean');
});

test('a task SIGKILLed while it uploads: nothing looks complete; running it again gives the same result', opts, async () => {
  const work = `s3://${BUCKET}/jobs/b`;
  await ok(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', work, '--id-field', 'id', '--task-bytes', '1', '--partitions', '2', '-q']);
  await stages(work, ['sign', 'join', 'route', 'gather']);
  const child = spawn(process.execPath, [mainJs, 'stage', 'verify', '--task', '0', '--work-dir', work, '--s3-endpoint', proxy.endpoint], { cwd: dir, env: { ...process.env, ...S3_ENV, NEARDUP_FAULT_UPLOAD_PAUSE_MS: '60000' }, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  let started: string[] = [];
  for (let i = 0; i < 400 && started.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    started = await attempts('jobs/b/verify/00000/');
  }
  assert.equal(started.length, 1, 'the task uploaded part of its attempt');
  // job status sees the task running through its running record (no temp directory to see on a work dir in S3).
  const verifyOf = (out: string): { running: number; deadAttempts: number; waiting: number } => JSON.parse(out).stages.find((s: { stage: string }) => s.stage === 'verify');
  const during = verifyOf(await ok(['job', 'status', '--work-dir', work, '--json']));
  assert.equal(during.running, 1, 'status shows the task running');
  child.kill('SIGKILL');
  await exited;
  // Its record is no longer rewritten: once stale (here at once), status counts it dead, not running.
  const stale = { NEARDUP_FAULT_RUNNING_STALE_MS: '1' };
  const gone = verifyOf(await ok(['job', 'status', '--work-dir', work, '--json'], stale));
  assert.deepEqual([gone.running, gone.deadAttempts], [0, 1]);
  assert.equal((await getObjects(server, BUCKET, 'jobs/b/verify/00000/_SUCCESS.json')).size, 0, 'no marker');
  const early = await run(['job', 'report', '--work-dir', work, '-q']);
  assert.equal(early.code, 2);
  assert.match(early.stderr, /the job is not finished: verify \d+\/\d+/);
  await stages(work, ['verify', 'link', 'decide', 'components']);
  const rep = await run(['job', 'report', '--work-dir', work, '-q']);
  assert.equal(rep.code, 0, rep.stderr);
  assert.deepEqual(sortedLines(rep.stdout), single);
  const winner = await markerAttempt('jobs/b/verify/00000/_SUCCESS.json');
  assert.notEqual(winner, started[0], 'the marker names the new attempt');
  await ok(['job', 'clean', '--work-dir', work, '-q'], stale);
  assert.deepEqual(await attempts('jobs/b/verify/00000/'), [winner], 'job clean removed the killed attempt');
  assert.deepEqual([...(await getObjects(server, BUCKET, 'jobs/b/')).keys()].filter((k) => k.includes('.running-')), [], 'and its running record; finished tasks deleted theirs');
});

test('a marker whose attempt objects are missing or short: exit 2 naming the object, never a short result', opts, async () => {
  const attempt = await markerAttempt('jobs/a/verify/00000/_SUCCESS.json');
  const key = `jobs/a/verify/00000/attempt-${attempt}/pairs.txt`;
  const body = (await getObjects(server, BUCKET, key)).get('')!;
  await deleteObject(server, BUCKET, key);
  const gone = await run(['job', 'report', '--work-dir', W, '--out', 'never.tsv', '-q']);
  assert.equal(gone.code, 2, gone.stderr);
  assert.match(gone.stderr, new RegExp(`^neardup: s3://corpus/${key}: missing, though the task's marker s3://corpus/jobs/a/verify/00000/_SUCCESS\\.json names it: the work dir is damaged`, 'm'));
  assert.ok(!fs.existsSync(path.join(dir, 'never.tsv')), 'no output');
  await putObject(server, BUCKET, key, body.subarray(0, 10));
  const short = await run(['job', 'report', '--work-dir', W, '-q']);
  assert.equal(short.code, 2, short.stderr);
  assert.equal(short.stdout, '', 'nothing written to stdout');
  assert.match(short.stderr, new RegExp(`s3://corpus/${key}: 10 bytes, though the task's marker .* names it with ${body.length} bytes`));
  // A task that reads a damaged attempt says the same: sign task 0's docs.bin, read by verify.
  await putObject(server, BUCKET, key, body);
  const sign = await markerAttempt('jobs/a/sign/00000/_SUCCESS.json');
  await deleteObject(server, BUCKET, 'jobs/a/verify/00000/_SUCCESS.json');
  await deleteObject(server, BUCKET, `jobs/a/sign/00000/attempt-${sign}/docs.bin`);
  const task = await run(['stage', 'verify', '--task', '0', '--work-dir', W]);
  assert.equal(task.code, 2, task.stderr);
  assert.match(task.stderr, new RegExp(`s3://corpus/jobs/a/sign/00000/attempt-${sign}/docs\\.bin: missing, though the task's marker`));
  // job status names the failed task and its error, read from the work dir in S3.
  const status = await run(['job', 'status', '--work-dir', W]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^verify +(\d+)\/(\d+) +0 +1 +0 /m);
  assert.match(status.stdout, new RegExp(`^failed +verify task 0.*: s3://corpus/jobs/a/sign/00000/attempt-${sign}/docs\\.bin: missing`, 'm'));
});

test('a join task copies only its partition of a sign task\'s keys: the rows read back are the partition\'s, for a fraction of the bytes', opts, async () => {
  const P = 8;
  const n = 200_000;
  const part = new Uint32Array(n);
  for (let i = 0; i < n; i++) part[i] = Math.imul(i, 0x9e3779b1) >>> 29;
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => part[x]! - part[y]! || x - y);
  const pstart = new Float64Array(P + 1);
  for (let i = 0; i < n; i++) pstart[part[i]! + 1]!++;
  for (let p = 0; p < P; p++) pstart[p + 1]! += pstart[p]!;
  const cols = { band: Uint32Array.from(order, (i) => i % 16), hi: Uint32Array.from(order, (i) => Math.imul(i, 7919) >>> 0), lo: Uint32Array.from(order, (i) => i * 3), shard: Uint32Array.from(order, (i) => i >>> 12), doc: Uint32Array.from(order, (i) => i) };
  const ids = Array.from(order, (i) => `id-${i}-${'é'.repeat(i % 5)}`);
  const local = path.join(dir, 'keys-full.bin');
  await writeColumns(local, 'band-keys', 'plan1', { partitions: P }, { ...cols, pstart });
  const idsFile = path.join(dir, 'ids-full.bin');
  await writeColumns(idsFile, 'id-keys', 'plan1', { partitions: P }, { shard: cols.shard, id: ids, pstart });
  for (const [f, key] of [[local, 'parts/keys.bin'], [idsFile, 'parts/ids.bin']] as const) await putObject(server, BUCKET, key, fs.readFileSync(f));
  Object.assign(process.env, S3_ENV);
  setS3Endpoint(proxy.endpoint);
  try {
    for (const p of [0, 3, P - 1]) {
      const before = proxy.stats.bytesDown;
      const out = path.join(dir, `keys-${p}.bin`);
      const damaged = (what: string): Error => new Error(what);
      await fetchPartition(`s3://${BUCKET}/parts/keys.bin`, fs.statSync(local).size, out, p, 'band-keys', 'plan1', damaged);
      const fetched = proxy.stats.bytesDown - before;
      assert.ok(fetched < fs.statSync(local).size / 3, `partition ${p}: ${fetched} bytes of ${fs.statSync(local).size}`);
      const [a, b] = [pstart[p]!, pstart[p + 1]!];
      const f = ColumnFile.open(out, 'band-keys', 'plan1');
      const ps = f.f64('pstart', p, p + 2);
      assert.deepEqual([ps[0], ps[1]], [a, b]);
      for (const c of ['band', 'hi', 'lo', 'shard', 'doc'] as const) assert.deepEqual(f.u32(c, a, b), cols[c].subarray(a, b), `${c} of partition ${p}`);
      f.close();
      const outIds = path.join(dir, `ids-${p}.bin`);
      await fetchPartition(`s3://${BUCKET}/parts/ids.bin`, fs.statSync(idsFile).size, outIds, p, 'id-keys', 'plan1', damaged);
      const g = ColumnFile.open(outIds, 'id-keys', 'plan1');
      assert.deepEqual(g.strings('id').range(a, b), ids.slice(a, b));
      assert.deepEqual(g.u32('shard', a, b), cols.shard.subarray(a, b));
      g.close();
    }
    // An object shorter than its marker says is an error naming it, never a partial read.
    await assert.rejects(fetchPartition(`s3://${BUCKET}/parts/keys.bin`, fs.statSync(local).size + 8, path.join(dir, 'x.bin'), 0, 'band-keys', 'plan1', (w) => new Error(`short: ${w}`)), /short/);
  } finally {
    setS3Endpoint(undefined);
  }
});

test('any partition of a file with string columns, empty ones and ranges of partitions included, reads back as the whole file has it', opts, async () => {
  // Rows in 40 partitions, most of them empty, with strings long enough to span many blocks: a
  // reader of an empty partition still reads its string offset, which the fetch must bring.
  const P = 40;
  const sizes = Array.from({ length: P }, (_, p) => (p % 3 === 0 ? 0 : 200 + p * 37));
  const pstart = new Float64Array(P + 1);
  for (let p = 0; p < P; p++) pstart[p + 1] = pstart[p]! + sizes[p]!;
  const n = pstart[P]!;
  const line = Array.from({ length: n }, (_, i) => `,"size":${i % 9},"members":["${'x'.repeat(i % 50)}"]}`);
  const min = Float64Array.from({ length: n }, (_, i) => i * 3);
  const file = path.join(dir, 'lines-full.bin');
  await writeColumns(file, 'cluster-lines', 'plan2', {}, { min, line, pstart });
  await putObject(server, BUCKET, 'parts/lines.bin', fs.readFileSync(file));
  Object.assign(process.env, S3_ENV);
  setS3Endpoint(proxy.endpoint);
  try {
    const damaged = (what: string): Error => new Error(what);
    for (const part of [0, 1, 3, 38, 39, { index: 'pstart', from: 2, to: 7 }, { index: 'pstart', from: 6, to: 7 }]) {
      const [p, q] = typeof part === 'number' ? [part, part + 1] : [part.from, part.to];
      const out = path.join(dir, `lines-${p}-${q}.bin`);
      await fetchPartition(`s3://${BUCKET}/parts/lines.bin`, fs.statSync(file).size, out, part, undefined, 'plan2', damaged);
      const f = ColumnFile.open(out, 'cluster-lines', 'plan2');
      const ps = f.f64('pstart', p, q + 1);
      const [a, b] = [ps[0]!, ps[q - p]!];
      assert.deepEqual([a, b], [pstart[p], pstart[q]], JSON.stringify(part));
      assert.deepEqual(f.strings('line').range(a, b), line.slice(a, b));
      assert.deepEqual(f.strings('line').raw(a, b).offs.length, b - a + 1);
      assert.deepEqual(f.f64('min', a, b), min.subarray(a, b));
      f.close();
    }
  } finally {
    setS3Endpoint(undefined);
  }
});

test('annotate and --removed with shards and work dir in S3: the components task reads the shards it needs for the similarities, the same bytes as neardup dedup', opts, async () => {
  const work = `s3://${BUCKET}/jobs/tags`;
  const out = path.join(dir, 'tags-out');
  await ok(['job', 'dedup', `s3://${BUCKET}/in/`, '--local', '--work-dir', work, '--id-field', 'id', '--output', 'annotate', '--out-dir', out, '-q']);
  const want = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'annotate', '-q'], { cwd: dir });
  assert.equal(want.code, 0, want.stderr);
  const names = fs.readdirSync(out).filter((f) => f !== '_SUCCESS').sort();
  const got = names.map((f) => {
    const b = fs.readFileSync(path.join(out, f));
    return (f.endsWith('.gz') ? zlib.gunzipSync(b) : b).toString('utf8');
  });
  assert.equal(got.join(''), want.stdout);
  assert.match(want.stdout, /"similarity":0\.\d+/, 'some member is not an exact copy of its kept member');
  await ok(['job', 'dedup', `s3://${BUCKET}/in/`, '--local', '--work-dir', `${work}-dry`, '--id-field', 'id', '--output', 'dedup', '--dry-run', '--removed', path.join(dir, 'job-removed.tsv'), '-q']);
  const one = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--dry-run', '--removed', 'one-removed.tsv', '-q'], { cwd: dir });
  assert.equal(one.code, 0, one.stderr);
  assert.equal(fs.readFileSync(path.join(dir, 'job-removed.tsv'), 'utf8'), fs.readFileSync(path.join(dir, 'one-removed.tsv'), 'utf8'));
});
