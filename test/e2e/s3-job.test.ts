/**
 * A sharded job whose work dir is in S3 (test/helpers/s3WorkDir.ts: a real s3rver behind a proxy
 * that fails every third request and answers a conditional PUT of an existing key with 412): the
 * array route (plan, stage, status, report, clean) gives neardup dedup's pairs; two attempts racing
 * on one task both finish with one result, on a store that honours If-None-Match and on one that
 * ignores it (s3rver itself); a marker whose attempt objects are missing or short is an error naming
 * the object (exit 2), never a short result; link members stealing one another's round tasks at once
 * leave whole markers. test/e2e/s3-job-faults.test.ts has the rest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sortedLines } from '../helpers/shards.js';
import { BUCKET, s3WorkDirSetting } from '../helpers/s3WorkDir.js';
import { deleteObject, getObjects, putObject } from '../helpers/s3.js';
import { faultEnv } from '../helpers/faults.js';

const S = s3WorkDirSetting();
// The functions are set at once; server, proxy, dir and single only once its before hook has run (read them from S).
const { opts, run, ok, attempts, markerAttempt, stages } = S;

const W = `s3://${BUCKET}/jobs/a`;

test(
  "array stages on a work dir in S3: neardup dedup's pairs; two attempts racing on one task both finish; job clean removes the attempts no marker names",
  opts,
  async () => {
    await ok(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', W, '--id-field', 'id', '--task-bytes', '1', '--partitions', '2', '-q']);
    // Task 0 through the proxy, which answers the second marker PUT with 412: that attempt adopts the
    // first. Both run at once and upload their attempts; the second pauses longer before its marker.
    const pause = faultEnv({ uploadPauseMs: 1000 });
    const later = faultEnv({ uploadPauseMs: 4000 });
    const race = await Promise.all([
      run(['stage', 'sign', '--task', '0', '--work-dir', W], pause),
      run(['stage', 'sign', '--task', '0', '--work-dir', W], later),
    ]);
    for (const r of race) assert.equal(r.code, 0, r.stderr);
    assert.ok(S.proxy.stats.preconditionFailed >= 1, 'one marker PUT found the other there');
    assert.deepEqual(await attempts('jobs/a/sign/00000/'), [await markerAttempt('jobs/a/sign/00000/_SUCCESS.json')], 'the losing attempt removed its objects');
    // Task 1 straight to s3rver, which ignores If-None-Match: the last marker stands, naming a complete attempt.
    const race2 = await Promise.all([
      run(['stage', 'sign', '--task', '1', '--work-dir', W], pause, true),
      run(['stage', 'sign', '--task', '1', '--work-dir', W], later, true),
    ]);
    for (const r of race2) assert.equal(r.code, 0, r.stderr);
    const both = await attempts('jobs/a/sign/00001/');
    assert.equal(both.length, 2, 'both attempts wrote their objects');
    assert.ok(both.includes(await markerAttempt('jobs/a/sign/00001/_SUCCESS.json')));
    await stages(W, ['sign', 'join', 'route', 'gather', 'verify', 'link', 'decide', 'components']);
    const status = JSON.parse(await ok(['job', 'status', '--work-dir', W, '--json']));
    assert.deepEqual(status.stages.map((s: { stage: string; done: number; total: number }) => [s.stage, s.done === s.total]), [
      ['sign', true],
      ['join', true],
      ['route', true],
      ['gather', true],
      ['verify', true],
      ['link', true],
      ['decide', true],
      ['components', true],
    ]);
    await ok(['job', 'report', '--work-dir', W, '--out', `s3://${BUCKET}/a.tsv`, '-q']);
    assert.deepEqual(sortedLines((await getObjects(S.server, BUCKET, 'a.tsv')).get('')!.toString()), S.single);
    const clean = await run(['job', 'clean', '--work-dir', W]);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stderr, /removed [1-9]\d* leftover\(s\) in s3:\/\/corpus\/jobs\/a/);
    assert.deepEqual(await attempts('jobs/a/sign/00001/'), [await markerAttempt('jobs/a/sign/00001/_SUCCESS.json')]);
    const again = await run(['job', 'report', '--work-dir', W, '-q']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(sortedLines(again.stdout), S.single, 'the same result after clean');
  },
);

test('a marker whose attempt objects are missing or short: exit 2 naming the object, never a short result', opts, async () => {
  const attempt = await markerAttempt('jobs/a/verify/00000/_SUCCESS.json');
  const key = `jobs/a/verify/00000/attempt-${attempt}/pairs.txt`;
  const body = (await getObjects(S.server, BUCKET, key)).get('')!;
  await deleteObject(S.server, BUCKET, key);
  const gone = await run(['job', 'report', '--work-dir', W, '--out', 'never.tsv', '-q']);
  assert.equal(gone.code, 2, gone.stderr);
  assert.match(
    gone.stderr,
    new RegExp(
      `^neardup: s3://corpus/${key}: missing, though the task's marker s3://corpus/jobs/a/verify/00000/_SUCCESS\\.json names it: the work dir is damaged`,
      'm',
    ),
  );
  assert.ok(!fs.existsSync(path.join(S.dir, 'never.tsv')), 'no output');
  await putObject(S.server, BUCKET, key, body.subarray(0, 10));
  const short = await run(['job', 'report', '--work-dir', W, '-q']);
  assert.equal(short.code, 2, short.stderr);
  assert.equal(short.stdout, '', 'nothing written to stdout');
  assert.match(short.stderr, new RegExp(`s3://corpus/${key}: 10 bytes, though the task's marker .* names it with ${body.length} bytes`));
  // A task that reads a damaged attempt says the same: sign task 0's docs.bin, read by verify.
  await putObject(S.server, BUCKET, key, body);
  const sign = await markerAttempt('jobs/a/sign/00000/_SUCCESS.json');
  await deleteObject(S.server, BUCKET, 'jobs/a/verify/00000/_SUCCESS.json');
  await deleteObject(S.server, BUCKET, `jobs/a/sign/00000/attempt-${sign}/docs.bin`);
  const task = await run(['stage', 'verify', '--task', '0', '--work-dir', W]);
  assert.equal(task.code, 2, task.stderr);
  assert.match(task.stderr, new RegExp(`s3://corpus/jobs/a/sign/00000/attempt-${sign}/docs\\.bin: missing, though the task's marker`));
  // job status names the failed task and its error, read from the work dir in S3.
  const status = await run(['job', 'status', '--work-dir', W]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^verify +(\d+)\/(\d+) +0 +1 +0 /m);
  assert.match(status.stdout, new RegExp(`^failed +verify task 0.*: s3://corpus/jobs/a/sign/00000/attempt-${sign}/docs\\.bin: missing`, 'm'));
});

test(
  "link members stealing each other's round tasks at once, straight to s3rver (which ignores If-None-Match and writes in place): every marker reads whole, and the pairs are neardup dedup's",
  opts,
  async () => {
    const W3 = `s3://${BUCKET}/jobs/steal`;
    await ok(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', W3, '--id-field', 'id', '--task-bytes', '1', '--partitions', '6', '-q'], {}, true);
    for (const s of ['sign', 'join', 'route', 'gather', 'verify']) await ok(['stage', s, '--all', '--work-dir', W3], {}, true);
    // --steal-after 0: each member runs its own tasks of a round, then the others' at once, so two or
    // three members write most markers together (as members of a loaded Slurm array do after 2 s).
    const members = await Promise.all(
      [0, 1, 2].map((i) => run(['stage', 'link', '--work-dir', W3, '--task', String(i), '--tasks', '3', '--steal-after', '0'], {}, true)),
    );
    for (const r of members) assert.equal(r.code, 0, r.stderr);
    const markers = [...(await getObjects(S.server, BUCKET, 'jobs/steal/link/')).entries()].filter(([k]) => k.endsWith('_SUCCESS.json'));
    assert.ok(markers.length >= 12, `${markers.length} link markers`);
    for (const [k, b] of markers) assert.doesNotThrow(() => JSON.parse(b.toString('utf8')), `jobs/steal/link/${k} is torn`);
    await stages(W3, ['decide', 'components']);
    const report = await ok(['job', 'report', '--work-dir', W3, '-q']);
    assert.deepEqual(sortedLines(report), S.single);
  },
);

// A job of plain shards only has no gather stage (every shard is read in place): its verify and
// decide tasks asked for gather markers all the same, and every such job in S3 failed at verify.
test("a work dir in S3 over local plain shards only (no gather stage): neardup dedup's pairs", opts, async () => {
  const want = sortedLines(await ok(['dedup', 'in/*.jsonl', '--id-field', 'id', '-q']));
  assert.ok(want.length > 10, `only ${want.length} pairs`);
  await ok([
    'job',
    'dedup',
    'in/*.jsonl',
    '--local',
    '--processes',
    '1',
    '--task-bytes',
    '1',
    '--work-dir',
    `s3://${BUCKET}/jobs/plain`,
    '--id-field',
    'id',
    '--out',
    'plain.tsv',
    '-q',
  ]);
  assert.deepEqual(sortedLines(fs.readFileSync(path.join(S.dir, 'plain.tsv'), 'utf8')), want);
});
