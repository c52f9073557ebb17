/**
 * A sharded job whose work dir is in S3 (test/helpers/s3WorkDir.ts), continued from
 * test/e2e/s3-job.test.ts: a task killed while it uploads leaves nothing that looks complete and runs
 * again to the same result; a join task fetches only its partition's blocks of the band keys; any
 * partition of a column file reads back whole; annotate and --removed give neardup dedup's bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { mainJs, neardup } from '../cliUtil.js';
import { sortedLines } from '../helpers/shards.js';
import { ColumnFile, writeColumns } from '../../src/shard/files/columns.js';
import { fetchPartition } from '../../src/shard/workdir/s3partition.js';
import { setS3Endpoint } from '../../src/io/s3/client.js';
import { BUCKET, s3WorkDirSetting } from '../helpers/s3WorkDir.js';
import { getObjects, putObject, S3_JOB_ENV } from '../helpers/s3.js';
import { faultEnv } from '../helpers/faults.js';

const S = s3WorkDirSetting();
// The functions are set at once; server, proxy, dir and single only once its before hook has run (read them from S).
const { opts, run, ok, attempts, markerAttempt, stages } = S;

test('a task SIGKILLed while it uploads: nothing looks complete; running it again gives the same result', opts, async () => {
  const work = `s3://${BUCKET}/jobs/b`;
  await ok(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', work, '--id-field', 'id', '--task-bytes', '1', '--partitions', '2', '-q']);
  await stages(work, ['sign', 'join', 'route', 'gather']);
  const child = spawn(process.execPath, [mainJs, 'stage', 'verify', '--task', '0', '--work-dir', work, '--s3-endpoint', S.proxy.endpoint], {
    cwd: S.dir,
    env: { ...process.env, ...S3_JOB_ENV, ...faultEnv({ uploadPauseMs: 60000 }) },
    stdio: 'ignore',
  });
  const exited = new Promise((r) => child.once('exit', r));
  let started: string[] = [];
  for (let i = 0; i < 400 && started.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    started = await attempts('jobs/b/verify/00000/');
  }
  assert.equal(started.length, 1, 'the task uploaded part of its attempt');
  // job status sees the task running through its running record (no temp directory to see on a work dir in S3).
  const verifyOf = (out: string): { running: number; deadAttempts: number; waiting: number } =>
    JSON.parse(out).stages.find((s: { stage: string }) => s.stage === 'verify');
  const during = verifyOf(await ok(['job', 'status', '--work-dir', work, '--json']));
  assert.equal(during.running, 1, 'status shows the task running');
  child.kill('SIGKILL');
  await exited;
  // Its record is no longer rewritten: once stale (here at once), status counts it dead, not running.
  const stale = faultEnv({ runningStaleMs: 1 });
  const gone = verifyOf(await ok(['job', 'status', '--work-dir', work, '--json'], stale));
  assert.deepEqual([gone.running, gone.deadAttempts], [0, 1]);
  assert.equal((await getObjects(S.server, BUCKET, 'jobs/b/verify/00000/_SUCCESS.json')).size, 0, 'no marker');
  const early = await run(['job', 'report', '--work-dir', work, '-q']);
  assert.equal(early.code, 2);
  assert.match(early.stderr, /the job is not finished: verify \d+\/\d+/);
  await stages(work, ['verify', 'link', 'decide', 'components']);
  const rep = await run(['job', 'report', '--work-dir', work, '-q']);
  assert.equal(rep.code, 0, rep.stderr);
  assert.deepEqual(sortedLines(rep.stdout), S.single);
  const winner = await markerAttempt('jobs/b/verify/00000/_SUCCESS.json');
  assert.notEqual(winner, started[0], 'the marker names the new attempt');
  await ok(['job', 'clean', '--work-dir', work, '-q'], stale);
  assert.deepEqual(await attempts('jobs/b/verify/00000/'), [winner], 'job clean removed the killed attempt');
  assert.deepEqual(
    [...(await getObjects(S.server, BUCKET, 'jobs/b/')).keys()].filter((k) => k.includes('.running-')),
    [],
    'and its running record; finished tasks deleted theirs',
  );
});

test("a join task copies only its partition of a sign task's keys: the rows read back are the partition's, for a fraction of the bytes", opts, async () => {
  const P = 8;
  const n = 200_000;
  const part = new Uint32Array(n);
  for (let i = 0; i < n; i++) part[i] = Math.imul(i, 0x9e3779b1) >>> 29;
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => part[x]! - part[y]! || x - y);
  const pstart = new Float64Array(P + 1);
  for (let i = 0; i < n; i++) pstart[part[i]! + 1]!++;
  for (let p = 0; p < P; p++) pstart[p + 1]! += pstart[p]!;
  const cols = {
    band: Uint32Array.from(order, (i) => i % 16),
    hi: Uint32Array.from(order, (i) => Math.imul(i, 7919) >>> 0),
    lo: Uint32Array.from(order, (i) => i * 3),
    shard: Uint32Array.from(order, (i) => i >>> 12),
    doc: Uint32Array.from(order, (i) => i),
  };
  const ids = Array.from(order, (i) => `id-${i}-${'é'.repeat(i % 5)}`);
  const local = path.join(S.dir, 'keys-full.bin');
  await writeColumns(local, { kind: 'band-keys', plan: 'plan1', meta: { partitions: P } }, { ...cols, pstart });
  const idsFile = path.join(S.dir, 'ids-full.bin');
  await writeColumns(idsFile, { kind: 'id-keys', plan: 'plan1', meta: { partitions: P } }, { shard: cols.shard, id: ids, pstart });
  for (const [f, key] of [[local, 'parts/keys.bin'], [idsFile, 'parts/ids.bin']] as const) await putObject(S.server, BUCKET, key, fs.readFileSync(f));
  Object.assign(process.env, S3_JOB_ENV);
  setS3Endpoint(S.proxy.endpoint);
  try {
    for (const p of [0, 3, P - 1]) {
      const before = S.proxy.stats.bytesDown;
      const out = path.join(S.dir, `keys-${p}.bin`);
      const damaged = (what: string): Error => new Error(what);
      await fetchPartition({
        url: `s3://${BUCKET}/parts/keys.bin`,
        bytes: fs.statSync(local).size,
        file: out,
        part: p,
        kind: 'band-keys',
        plan: 'plan1',
        damaged,
      });
      const fetched = S.proxy.stats.bytesDown - before;
      assert.ok(fetched < fs.statSync(local).size / 3, `partition ${p}: ${fetched} bytes of ${fs.statSync(local).size}`);
      const [a, b] = [pstart[p]!, pstart[p + 1]!];
      const f = ColumnFile.open(out, 'band-keys', 'plan1');
      const ps = f.f64('pstart', p, p + 2);
      assert.deepEqual([ps[0], ps[1]], [a, b]);
      for (const c of ['band', 'hi', 'lo', 'shard', 'doc'] as const) assert.deepEqual(f.u32(c, a, b), cols[c].subarray(a, b), `${c} of partition ${p}`);
      f.close();
      const outIds = path.join(S.dir, `ids-${p}.bin`);
      await fetchPartition({
        url: `s3://${BUCKET}/parts/ids.bin`,
        bytes: fs.statSync(idsFile).size,
        file: outIds,
        part: p,
        kind: 'id-keys',
        plan: 'plan1',
        damaged,
      });
      const g = ColumnFile.open(outIds, 'id-keys', 'plan1');
      assert.deepEqual(g.strings('id').range(a, b), ids.slice(a, b));
      assert.deepEqual(g.u32('shard', a, b), cols.shard.subarray(a, b));
      g.close();
    }
    // An object shorter than its marker says is an error naming it, never a partial read.
    await assert.rejects(
      fetchPartition({
        url: `s3://${BUCKET}/parts/keys.bin`,
        bytes: fs.statSync(local).size + 8,
        file: path.join(S.dir, 'x.bin'),
        part: 0,
        kind: 'band-keys',
        plan: 'plan1',
        damaged: (w) => new Error(`short: ${w}`),
      }),
      /short/,
    );
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
  const file = path.join(S.dir, 'lines-full.bin');
  await writeColumns(file, { kind: 'cluster-lines', plan: 'plan2', meta: {} }, { min, line, pstart });
  await putObject(S.server, BUCKET, 'parts/lines.bin', fs.readFileSync(file));
  Object.assign(process.env, S3_JOB_ENV);
  setS3Endpoint(S.proxy.endpoint);
  try {
    const damaged = (what: string): Error => new Error(what);
    for (const part of [0, 1, 3, 38, 39, { index: 'pstart', from: 2, to: 7 }, { index: 'pstart', from: 6, to: 7 }]) {
      const [p, q] = typeof part === 'number' ? [part, part + 1] : [part.from, part.to];
      const out = path.join(S.dir, `lines-${p}-${q}.bin`);
      await fetchPartition({ url: `s3://${BUCKET}/parts/lines.bin`, bytes: fs.statSync(file).size, file: out, part, plan: 'plan2', damaged });
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

test(
  'annotate and --removed with shards and work dir in S3: the components task reads the shards it needs for the similarities, the same bytes as neardup dedup',
  opts,
  async () => {
    const work = `s3://${BUCKET}/jobs/tags`;
    const out = path.join(S.dir, 'tags-out');
    await ok(['job', 'dedup', `s3://${BUCKET}/in/`, '--local', '--work-dir', work, '--id-field', 'id', '--output', 'annotate', '--out-dir', out, '-q']);
    const want = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'annotate', '-q'], { cwd: S.dir });
    assert.equal(want.code, 0, want.stderr);
    const names = fs.readdirSync(out).filter((f) => f !== '_SUCCESS').sort();
    const got = names.map((f) => {
      const b = fs.readFileSync(path.join(out, f));
      return (f.endsWith('.gz') ? zlib.gunzipSync(b) : b).toString('utf8');
    });
    assert.equal(got.join(''), want.stdout);
    assert.match(want.stdout, /"similarity":0\.\d+/, 'some member is not an exact copy of its kept member');
    await ok([
      'job',
      'dedup',
      `s3://${BUCKET}/in/`,
      '--local',
      '--work-dir',
      `${work}-dry`,
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--dry-run',
      '--removed',
      path.join(S.dir, 'job-removed.tsv'),
      '-q',
    ]);
    const one = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--dry-run', '--removed', 'one-removed.tsv', '-q'], { cwd: S.dir });
    assert.equal(one.code, 0, one.stderr);
    assert.equal(fs.readFileSync(path.join(S.dir, 'job-removed.tsv'), 'utf8'), fs.readFileSync(path.join(S.dir, 'one-removed.tsv'), 'utf8'));
  },
);
