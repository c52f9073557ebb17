/**
 * `neardup job … --local` on task processes (#36): whatever the number of processes, the same bytes
 * as `neardup dedup` on the concatenation of the shards, plain and compressed shards mixed (plain
 * ones are read in place by verification, the others through gather's texts); a task's input error
 * in a task process exits 2 with the same message as in one process, and with --skip-invalid the job's
 * end warns as dedup does (the first invalid record in input order); --processes is refused without
 * --local. Most commands run in this process (cliIn: a job there still forks its task processes from
 * --processes 2 up); the binary runs the 3-process jobs (its task processes are the bundle's), the
 * --json runs (their answer is on standard output) and the full-disk one.
 */
import { before, describe, it, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { neardup, tmpDir } from '../cliUtil.js';
import { jsonl, plantedDocs, writeShards } from '../helpers/shards.js';
import { cliIn } from '../helpers/inProcessCli.js';
import { loadJob, STAGES, taskCount } from '../../src/shard/files/job.js';

describe('job --local on task processes', () => {
  let dir: string;
  let shards: string;
  let concat: string;
  before(async () => {
    dir = tmpDir();
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    const docs = plantedDocs(900, 0.3, 361);
    await writeShards(shards, docs, 6, ['jsonl', 'jsonl.gz', 'jsonl', 'jsonl.zst', 'parquet']);
    concat = path.join(dir, 'all.jsonl');
    fs.writeFileSync(concat, jsonl(docs));
  });

  for (const output of ['pairs', 'clusters']) {
    it(`--output ${output}: 1, 2 and 3 processes write dedup's bytes`, async () => {
      const ref = path.join(dir, `ref-${output}`);
      const d = await cliIn(['dedup', concat, '--id-field', 'id', '--output', output, '--out', ref, '-q'], { cwd: dir });
      assert.equal(d.code, 0, d.stderr);
      for (const p of ['1', '2', '3']) {
        const out = path.join(dir, `${output}-${p}`);
        const args = [
          'job',
          'dedup',
          shards,
          '--id-field',
          'id',
          '--local',
          '--processes',
          p,
          '--task-bytes',
          '1',
          '--work-dir',
          path.join(dir, `w-${output}-${p}`),
          '--output',
          output,
          '--out',
          out,
          '-q',
        ];
        // 1 and 2 in this process (2 forks task processes of its own); 3 through the binary, whose task processes are the bundle's.
        const r = p === '3' ? neardup(args, { cwd: dir }) : await cliIn(args, { cwd: dir });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(fs.readFileSync(out, 'utf8'), fs.readFileSync(ref, 'utf8'), `${p} processes`);
      }
    });
  }

  it('an invalid record is exit 2 naming file and line, the same with 1 and 2 processes', async () => {
    const bad = path.join(dir, 'bad');
    fs.cpSync(shards, bad, { recursive: true });
    const victim = path.join(bad, fs.readdirSync(bad).sort().find((f) => f.endsWith('.jsonl'))!);
    const lines = fs.readFileSync(victim, 'utf8').split('\n');
    lines[2] = '{"id": "broken", "text": ';
    fs.writeFileSync(victim, lines.join('\n'));
    const msgs: string[] = [];
    for (const p of ['1', '2']) {
      const r = await cliIn([
        'job',
        'dedup',
        bad,
        '--id-field',
        'id',
        '--local',
        '--processes',
        p,
        '--task-bytes',
        '1',
        '--work-dir',
        path.join(dir, `w-bad-${p}`),
        '--out',
        path.join(dir, `bad-${p}.tsv`),
        '-q',
      ], { cwd: dir });
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.includes(`${victim}:3:`), r.stderr);
      msgs.push(r.stderr.replace(/w-bad-\d/g, 'w-bad'));
    }
    assert.equal(msgs[1], msgs[0]);
  });

  it('--skip-invalid: the job warns at its end as dedup does, naming the first invalid record in input order (--local, and stage by stage)', async () => {
    const bad = path.join(dir, 'skip');
    fs.cpSync(shards, bad, { recursive: true });
    // A compressed shard (read sequentially) before a plain one (read in ranges), whose bad line comes earlier in its file.
    const first = path.join(bad, 'part-0001.jsonl.gz');
    const second = path.join(bad, 'part-0002.jsonl');
    const gz = zlib.gunzipSync(fs.readFileSync(first)).toString('utf8').split('\n');
    gz[6] = '{"id": "broken", "text": ';
    fs.writeFileSync(first, zlib.gzipSync(gz.join('\n')));
    const plain = fs.readFileSync(second, 'utf8').split('\n');
    plain[2] = '{"id": 7';
    fs.writeFileSync(second, plain.join('\n'));
    const one = await cliIn(['dedup', bad, '--id-field', 'id', '--skip-invalid', '--out', path.join(dir, 'skip-one.tsv')], { cwd: dir });
    assert.equal(one.code, 0, one.stderr);
    const warning = one.stderr.split('\n').filter((l) => l.startsWith('neardup: warning: skipped'));
    assert.equal(warning.length, 1, one.stderr);
    assert.ok(warning[0]!.includes(`(${first}: 1, ${second}: 1); first: ${first}:7: `), warning[0]);
    const warned = (r: { code: number; stderr: string }, how: string): void => {
      assert.equal(r.code, 0, `${how}: ${r.stderr}`);
      assert.deepEqual(r.stderr.split('\n').filter((l) => l.startsWith('neardup: warning:')), warning, how);
    };
    const job = ['--id-field', 'id', '--skip-invalid', '--task-bytes', '1'];
    warned(
      await cliIn(['job', 'dedup', bad, ...job, '--local', '--work-dir', path.join(dir, 'w-skip'), '--out', path.join(dir, 'skip.tsv')], { cwd: dir }),
      '--local',
    );
    const work = path.join(dir, 'w-skip-stages');
    assert.equal((await cliIn(['job', 'plan', bad, ...job, '--work-dir', work, '-q'], { cwd: dir })).code, 0);
    const plan = loadJob(work);
    for (const stage of STAGES) {
      for (let t = 0; t < taskCount(plan, stage); t++)
        assert.equal((await cliIn(['stage', stage, '--work-dir', work, '--task', String(t)], { cwd: dir })).code, 0);
    }
    warned(await cliIn(['job', 'report', '--work-dir', work, '--out', path.join(dir, 'skip-stages.tsv')], { cwd: dir }), 'job report');
    assert.equal(fs.readFileSync(path.join(dir, 'skip-stages.tsv'), 'utf8'), fs.readFileSync(path.join(dir, 'skip.tsv'), 'utf8'));
    // Without --skip-invalid the job stops at the first, naming its file and line.
    const r = await cliIn([
      'job',
      'dedup',
      bad,
      '--id-field',
      'id',
      '--task-bytes',
      '1',
      '--local',
      '--work-dir',
      path.join(dir, 'w-noskip'),
      '--out',
      path.join(dir, 'noskip.tsv'),
    ], {
      cwd: dir,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`${first}:7: `), r.stderr);
  });

  it('plain line-format shards have no gather tasks; a plan made before that was recorded keeps them and resumes as the same job', async () => {
    const plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    for (const f of fs.readdirSync(shards).filter((f) => f.endsWith('.jsonl'))) fs.copyFileSync(path.join(shards, f), path.join(plain, f));
    const ref = await cliIn([
      'job',
      'dedup',
      plain,
      '--id-field',
      'id',
      '--local',
      '--task-bytes',
      '1',
      '--work-dir',
      path.join(dir, 'w-plain'),
      '--out',
      path.join(dir, 'plain.tsv'),
      '-q',
    ], { cwd: dir });
    assert.equal(ref.code, 0, ref.stderr);
    const plan = JSON.parse(fs.readFileSync(path.join(dir, 'w-plain', 'job.json'), 'utf8')) as { gather?: boolean };
    assert.equal(plan.gather, false);
    assert.ok(!fs.existsSync(path.join(dir, 'w-plain', 'gather')));
    // The mixed corpus gathers.
    assert.equal((JSON.parse(fs.readFileSync(path.join(dir, 'w-pairs-1', 'job.json'), 'utf8')) as { gather?: boolean }).gather, true);
    // An older plan (no "gather"): planned, its field removed, then run and resubmitted.
    const old = path.join(dir, 'w-old');
    assert.equal((await cliIn(['job', 'plan', plain, '--id-field', 'id', '--task-bytes', '1', '--work-dir', old, '-q'], { cwd: dir })).code, 0);
    const { gather: _g, ...spec } = JSON.parse(fs.readFileSync(path.join(old, 'job.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(old, 'job.json'), JSON.stringify(spec));
    const args = ['job', 'dedup', plain, '--id-field', 'id', '--local', '--task-bytes', '1', '--work-dir', old, '--out', path.join(dir, 'old.tsv'), '-q'];
    const r = await cliIn(args, { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.readdirSync(path.join(old, 'gather')).length > 0, 'the older plan ran its gather tasks');
    assert.equal(fs.readFileSync(path.join(dir, 'old.tsv'), 'utf8'), fs.readFileSync(path.join(dir, 'plain.tsv'), 'utf8'));
    assert.equal((await cliIn(args, { cwd: dir })).code, 0, 'resubmitted: the same job');
  });

  // The corpus's job in its own process (--processes 1), the --against one on task processes (2): the
  // decide tasks write their parts the same in either (the tests above compare the process counts).
  for (const [against, processes] of [[false, '1'], [true, '2']] as const) {
    it(`the recall estimate is dedup's (to 1e-12), summed from the decide tasks' parts${against ? ' (--against)' : ''}, ${processes} task process(es)`, () => {
      const recallOf = (r: { code: number; stdout: string; stderr: string }): unknown => {
        assert.equal(r.code, 0, r.stderr);
        return (JSON.parse(r.stdout) as { recall: unknown }).recall;
      };
      // With --against: the reference is the first shard's documents, edited copies of which are in the corpus.
      const ref = path.join(dir, 'ref.jsonl');
      if (against) fs.writeFileSync(ref, fs.readFileSync(concat, 'utf8').split('\n').slice(0, 150).join('\n') + '\n');
      const refArgs = against ? ['--against', ref] : [];
      const tag = against ? 'against' : 'corpus';
      const d = recallOf(neardup(['dedup', concat, ...refArgs, '--id-field', 'id', '--out', path.join(dir, `rc-ref-${tag}.tsv`), '--json'], { cwd: dir }));
      assert.ok(d !== null && typeof d === 'object', 'dedup estimates a recall');
      const work = path.join(dir, `w-recall-${tag}`);
      const j = recallOf(
        neardup([
          'job',
          'dedup',
          shards,
          ...refArgs,
          '--id-field',
          'id',
          '--local',
          '--processes',
          processes,
          '--task-bytes',
          '1',
          '--work-dir',
          work,
          '--out',
          path.join(dir, `rc-${tag}.tsv`),
          '--json',
        ], { cwd: dir }),
      );
      // dedup sums the error terms in another order (it counts a pair of groups of identical copies
      // as one term): the standard errors may differ in the last bits.
      const close = (x: unknown, y: unknown): void => {
        const [p, q] = [x as Record<string, number>, y as Record<string, number>];
        assert.deepEqual(Object.keys(p).sort(), Object.keys(q).sort());
        for (const k of Object.keys(p)) assert.ok(Math.abs(p[k]! - q[k]!) <= 1e-12 * Math.abs(q[k]!), `${k}: ${p[k]} against dedup's ${q[k]}`);
      };
      close(j, d);
      // Each decide task's marker holds its part; job report sums them again.
      for (const t of fs.readdirSync(path.join(work, 'decide'))) {
        const m = JSON.parse(fs.readFileSync(path.join(work, 'decide', t, '_SUCCESS.json'), 'utf8')) as { recall?: { found: number } };
        assert.ok(m.recall && typeof m.recall.found === 'number', 'the marker holds its part of the estimate');
      }
      assert.deepEqual(recallOf(neardup(['job', 'report', '--work-dir', work, '--out', path.join(dir, `rc2-${tag}.tsv`), '--json'], { cwd: dir })), j);
    });
  }

  it("a planned job runs as it is (job run), a resubmission takes the planner's partitions, and a different job names the fields that differ", async () => {
    const ref = path.join(dir, 'ref-run');
    const d = await cliIn(['dedup', concat, '--id-field', 'id', '--output', 'clusters', '--out', ref, '-q'], { cwd: dir });
    assert.equal(d.code, 0, d.stderr);
    const work = path.join(dir, 'w-run');
    const plan = await cliIn([
      'job',
      'plan',
      shards,
      '--id-field',
      'id',
      '--output',
      'clusters',
      '--task-bytes',
      '1',
      '--partitions',
      '3',
      '--work-dir',
      work,
      '-q',
    ], { cwd: dir });
    assert.equal(plan.code, 0, plan.stderr);
    // job run: no options repeated.
    const out = path.join(dir, 'run.jsonl');
    const r = await cliIn(['job', 'run', '--work-dir', work, '--local', '--out', out, '-q'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(out, 'utf8'), fs.readFileSync(ref, 'utf8'));
    // The same job again without --partitions: the plan's are taken, and the finished job is reported.
    const again = await cliIn([
      'job',
      'dedup',
      shards,
      '--id-field',
      'id',
      '--output',
      'clusters',
      '--task-bytes',
      '1',
      '--local',
      '--work-dir',
      work,
      '--out',
      path.join(dir, 'again.jsonl'),
      '-q',
    ], { cwd: dir });
    assert.equal(again.code, 0, again.stderr);
    // Other options: refused, naming each field with both values.
    const other = await cliIn([
      'job',
      'dedup',
      shards,
      '--id-field',
      'id',
      '--output',
      'clusters',
      '--task-bytes',
      '1',
      '--partitions',
      '2',
      '--threshold',
      '0.7',
      '--local',
      '--work-dir',
      work,
      '--out',
      path.join(dir, 'other.jsonl'),
    ], { cwd: dir });
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /differs in .*threshold \(planned 0\.8, now 0\.7\)/);
    assert.match(other.stderr, /partitions \(planned 3, now 2\)/);
    assert.match(other.stderr, /neardup job run --work-dir/);
    // job run needs a place to run.
    assert.equal((await cliIn(['job', 'run', '--work-dir', work], { cwd: dir })).code, 2);
  });

  it('--processes without --local is refused, naming it', async () => {
    const r = await cliIn([
      'job',
      'dedup',
      shards,
      '--redis',
      'redis://127.0.0.1:1',
      '--processes',
      '2',
      '--work-dir',
      path.join(dir, 'w-p'),
      '--out',
      path.join(dir, 'p.tsv'),
    ], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--processes/);
  });
});

// #48: a full disk under the work dir names what could not be written (Node's ENOSPC names no
// file): the plan (job.json, no temp file left) when the disk is full from the start, the task's
// directory when a stage fills it. Exit 1, no stack trace. Needs root for a tmpfs (else skipped).
test('job dedup --local on a full disk: the error names job.json or the task directory', async (t) => {
  const dir = tmpDir();
  const full = path.join(dir, 'full');
  fs.mkdirSync(full);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full], { stdio: 'ignore' });
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return t.skip('cannot mount a tmpfs here (needs root)');
  }
  try {
    const words = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'iota', 'kappa'];
    const rnd = splitmix(7);
    fs.writeFileSync(
      path.join(dir, 'in.jsonl'),
      Array.from(
        { length: 5000 },
        (_, i) => JSON.stringify({ id: String(i), text: Array.from({ length: 30 }, () => words[Math.floor(rnd() * 10)]).join(' ') }) + '\n',
      ).join(''),
    );
    for (const filled of [true, false]) {
      for (const f of fs.readdirSync(full)) fs.rmSync(path.join(full, f), { recursive: true, force: true });
      if (filled) {
        try {
          fs.writeFileSync(path.join(full, 'filler'), Buffer.alloc(1 << 20));
        } catch {
          // full now
        }
      }
      const work = path.join(full, 'w');
      const r = neardup(['job', 'dedup', 'in.jsonl', '--local', '--work-dir', work, '--output', 'pairs', '--out', 'p.tsv', '-q'], { cwd: dir });
      assert.equal(r.code, 1, r.stderr);
      const named = filled ? path.join(work, 'job.json') : path.join(work, 'sign', '00000');
      assert.equal(r.stderr, `neardup: ${named}: cannot write (ENOSPC: no space left on device)\n`);
      if (filled) assert.deepEqual(fs.readdirSync(work), [], 'no temp file of the plan is left');
    }
  } finally {
    execFileSync('umount', [full]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A small seeded generator for the test corpus. */
function splitmix(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}
