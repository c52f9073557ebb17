/**
 * src/io/write/outClaim.ts: a sharded job claims its --out-dir when it is planned. Two jobs planned
 * over one --out-dir (two work dirs), their stages interleaved as array runners may run them, never
 * leave a mix of the two under _SUCCESS: the second plan is refused naming --out-dir while the first
 * writes there; once the first is done the second takes the directory over, and the first can then
 * neither write there nor vouch for it again. Both job kinds (job dedup, job spans), local and (for
 * job dedup, the one kind with an s3:// --out-dir) S3 work dirs and output prefixes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { getObjects, S3_ENV, s3rverMissing, startS3rver, type S3Server } from '../../helpers/s3.js';

function doc(id: string, n: number): string {
  return JSON.stringify({ id, text: `a flat near the station number ${n} with a small garden and a view ${n}` }) + '\n';
}

/** A directory of `n` shards named part-000i.jsonl (ids prefixed by `tag`). */
function shards(root: string, tag: string, n: number): string {
  const dir = path.join(root, `${tag}${n}`);
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++)
    fs.writeFileSync(path.join(dir, `part-000${i}.jsonl`), doc(`${tag}${i}a`, i) + doc(`${tag}${i}b`, i) + doc(`${tag}${i}c`, i + 50));
  return dir;
}

/** One job kind: its plan-only command, its stages (the last writes the output shards), how to finish it. */
interface Kind {
  plan(input: string, work: string, out: string, extra?: string[]): string[];
  stages: string[];
}

const KINDS: Record<string, Kind> = {
  'job dedup': {
    plan: (input, work, out, extra = []) => [
      'job',
      'plan',
      input,
      '--id-field',
      'id',
      '--work-dir',
      work,
      '--output',
      'dedup',
      '--out-dir',
      out,
      '--task-bytes',
      '100',
      '-q',
      ...extra,
    ],
    stages: ['sign', 'join', 'route', 'gather', 'verify', 'link', 'decide', 'components', 'filter'],
  },
  'job spans': {
    plan: (input, work, out, extra = []) => [
      'job',
      'spans',
      input,
      '--id-field',
      'id',
      '--work-dir',
      work,
      '--out-dir',
      out,
      '--plan-only',
      '--task-bytes',
      '100',
      '-q',
      ...extra,
    ],
    stages: ['spans-hash', 'spans-find', 'spans-text', 'spans-decide', 'spans-cut'],
  },
};

async function ok(args: string[]): Promise<void> {
  const r = await cliInProcess(args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
}

/** The job ('x' or 'y') each shard _SUCCESS lists came from; empty when there is no _SUCCESS. */
function sources(out: string): Set<string> {
  if (!fs.existsSync(path.join(out, '_SUCCESS'))) return new Set();
  const listed = fs.readFileSync(path.join(out, '_SUCCESS'), 'utf8').split('\n').filter(Boolean);
  // A dedup shard may keep no record: the ids of the records kept say which job wrote them.
  return new Set(listed.flatMap((f) => [...fs.readFileSync(path.join(out, f), 'utf8').matchAll(/"id":"([xy])\d/g)].map((m) => m[1]!)));
}

describe('two jobs planned over one --out-dir (two work dirs)', () => {
  for (const [kind, k] of Object.entries(KINDS)) {
    it(`${kind}: the second plan is refused naming --out-dir while the first writes there, and leaves no plan`, async () => {
      const root = fs.realpathSync(tmpDir());
      const out = path.join(root, 'out');
      const [wa, wb] = [path.join(root, 'wa'), path.join(root, 'wb')];
      const input = shards(root, 'x', 3);
      await ok(k.plan(input, wa, out));
      const r = await cliInProcess(k.plan(shards(root, 'y', 3), wb, out));
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--out-dir .*out is claimed by another job \(work dir .*wa, plan [0-9a-f]+/);
      assert.ok(!fs.existsSync(wb), 'the refused plan is not left behind');
      // The same job planned again (its work dir spelt another way) resumes: it holds the claim.
      await ok(k.plan(input, `${root}/./wa/../wa`, out));
    });

    it(`${kind}: their stages interleaved, the directory never holds a mix of the two under _SUCCESS`, async () => {
      const root = fs.realpathSync(tmpDir());
      const [a, b] = [shards(root, 'x', 3), shards(root, 'y', 3)];
      const out = path.join(root, 'out');
      const [wa, wb] = [path.join(root, 'wa'), path.join(root, 'wb')];
      const last = k.stages.at(-1)!;
      await ok(k.plan(a, wa, out));
      for (const s of k.stages) await ok(['stage', s, '--work-dir', wa, '--all']);
      await ok(['job', 'report', '--work-dir', wa, '-q']);
      assert.deepEqual(sources(out), new Set(['x']));
      // Finished, the directory holds what neardup dedup leaves: the shards and _SUCCESS, no claim.
      assert.ok(!fs.existsSync(path.join(out, '.neardup-job')));
      // The finished job reported again, and resumed whole: its _SUCCESS is still the one there.
      await ok(['job', 'report', '--work-dir', wa, '-q']);
      for (const s of k.stages) await ok(['stage', s, '--work-dir', wa, '--all']);
      await ok(['job', 'report', '--work-dir', wa, '-q']);
      assert.deepEqual(sources(out), new Set(['x']));
      // Another job takes the finished directory over: B plans, and A's _SUCCESS goes at once.
      await ok(k.plan(b, wb, out));
      assert.deepEqual(sources(out), new Set());
      for (const s of k.stages.slice(0, -1)) await ok(['stage', s, '--work-dir', wb, '--all']);
      await ok(['stage', last, '--work-dir', wb, '--task', '0']);
      // A can no longer vouch for the directory, nor be resumed there (its tasks are done: they write nothing).
      await ok(['stage', last, '--work-dir', wa, '--all']);
      const report = await cliInProcess(['job', 'report', '--work-dir', wa, '-q']);
      assert.equal(report.code, 2, report.stderr);
      assert.match(report.stderr, /--out-dir .*: claimed by another job \(work dir .*wb/);
      assert.deepEqual(sources(out), new Set(), 'no _SUCCESS over a mix');
      const again = await cliInProcess(k.plan(a, wa, out));
      assert.equal(again.code, 2, again.stderr);
      assert.match(again.stderr, /wrote output shards there, but the directory is now claimed by another job \(work dir .*wb/);
      for (const s of k.stages) await ok(['stage', s, '--work-dir', wb, '--all']);
      await ok(['job', 'report', '--work-dir', wb, '-q']);
      assert.deepEqual(sources(out), new Set(['y']));
      assert.ok(!fs.existsSync(path.join(out, '.neardup-job')));
      // B done, A may not come back: another run has written there since.
      const late = await cliInProcess(['job', 'report', '--work-dir', wa, '-q']);
      assert.equal(late.code, 2, late.stderr);
      assert.match(late.stderr, /wrote output shards there, but another run has written there since/);
      assert.deepEqual(sources(out), new Set(['y']));
    });

    it(`${kind}: a task of a job that lost its claim is refused before it writes`, async () => {
      const root = fs.realpathSync(tmpDir());
      const out = path.join(root, 'out');
      const wa = path.join(root, 'wa');
      await ok(k.plan(shards(root, 'x', 3), wa, out));
      for (const s of k.stages.slice(0, -1)) await ok(['stage', s, '--work-dir', wa, '--all']);
      fs.rmSync(path.join(out, '.neardup-job'));
      const r = await cliInProcess(['stage', k.stages.at(-1)!, '--work-dir', wa, '--task', '0']);
      assert.notEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /--out-dir .*: this job's claim .*\.neardup-job is gone/);
      assert.deepEqual(fs.readdirSync(out), [], 'nothing written');
    });

    it(`${kind}: job clean --all releases the claim; a one-process run is refused while a job writes, and a finished job cannot vouch for its output`, async () => {
      const root = fs.realpathSync(tmpDir());
      const out = path.join(root, 'out');
      const [wa, wb] = [path.join(root, 'wa'), path.join(root, 'wb')];
      const input = shards(root, 'x', 3);
      await ok(k.plan(input, wa, out));
      const one = kind === 'job dedup'
        ? ['dedup', input, '--id-field', 'id', '--output', 'dedup', '--out-dir', out, '-q']
        : ['spans', input, '--id-field', 'id', '--out', out, '-q'];
      const refused = await cliInProcess(one);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /is being written by a sharded job \(work dir .*wa/);
      await ok(['job', 'clean', '--all', '--work-dir', wa, '-q']);
      await ok(k.plan(input, wb, out));
      for (const s of k.stages) await ok(['stage', s, '--work-dir', wb, '--all']);
      await ok(['job', 'report', '--work-dir', wb, '-q']);
      await ok(one);
      const report = await cliInProcess(['job', 'report', '--work-dir', wb, '-q']);
      assert.equal(report.code, 2, `the job cannot vouch for the one-process run's output: ${report.stderr}`);
    });
  }
});

describe('two jobs over one s3:// --out-dir (S3 work dirs)', { skip: s3rverMissing() }, () => {
  let s3: S3Server;
  const saved = { ...process.env };
  before(async () => {
    s3 = await startS3rver('bkt');
    Object.assign(process.env, S3_ENV);
  });
  after(async () => {
    process.env = saved;
    await s3?.stop();
  });

  it('job dedup: the second plan is refused while the first writes; the first, once taken over, cannot vouch for the prefix', async () => {
    const root = fs.realpathSync(tmpDir());
    const e = ['--s3-endpoint', s3.endpoint];
    const plan = KINDS['job dedup']!.plan;
    const [a, b] = [shards(root, 'x', 3), shards(root, 'y', 3)];
    await ok(plan(a, 's3://bkt/wa', 's3://bkt/out', e));
    const r = await cliInProcess(plan(b, 's3://bkt/wb', 's3://bkt/out', e));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--out-dir s3:\/\/bkt\/out is claimed by another job \(work dir s3:\/\/bkt\/wa/);
    assert.equal((await getObjects(s3, 'bkt', 'wb/')).size, 0, 'the refused plan is not left behind');
    for (const s of KINDS['job dedup']!.stages) await ok(['stage', s, '--work-dir', 's3://bkt/wa', '--all', ...e]);
    await ok(['job', 'report', '--work-dir', 's3://bkt/wa', '-q', ...e]);
    const done = await getObjects(s3, 'bkt', 'out/');
    assert.equal(done.get('_SUCCESS')?.toString(), 'part-0000.jsonl\npart-0001.jsonl\npart-0002.jsonl\n');
    assert.ok(!done.has('.neardup-job'), 'the claim goes once _SUCCESS is there');
    await ok(plan(b, 's3://bkt/wb', 's3://bkt/out', e));
    const report = await cliInProcess(['job', 'report', '--work-dir', 's3://bkt/wa', '-q', ...e]);
    assert.equal(report.code, 2, report.stderr);
    assert.match(report.stderr, /claimed by another job \(work dir s3:\/\/bkt\/wb/);
    assert.ok(!(await getObjects(s3, 'bkt', 'out/')).has('_SUCCESS'), 'no _SUCCESS while B has not written');
  });
});
