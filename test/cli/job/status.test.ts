/**
 * A job you can watch (#36 item 2): task markers carry stats, `job status` shows done/running/failed/
 * waiting counts, stage times and an ETA while a stage is partly done, a failed task's error with its
 * shard, and `job dedup` prints (and --json holds) a time per stage. Structure and format only: no
 * assertion on speed.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup, tmpDir } from '../../cliUtil.js';
import { plantedDocs, writeShards } from '../../helpers/shards.js';

describe('job status', () => {
  let dir: string;
  let shards: string;
  before(async () => {
    dir = tmpDir();
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    await writeShards(shards, plantedDocs(400, 0.3, 36), 4, ['jsonl']);
  });

  it('shows done and waiting counts, stage times and an ETA while sign is partly done', () => {
    const work = path.join(dir, 'partial');
    const plan = neardup(['job', 'plan', shards, '--work-dir', work, '--task-bytes', '1'], { cwd: dir });
    assert.equal(plan.code, 0, plan.stderr);
    const r = neardup(['stage', 'sign', '--work-dir', work, '--task', '0'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);

    // The marker records what the task cost.
    const m = JSON.parse(fs.readFileSync(path.join(work, 'sign', '00000', '_SUCCESS.json'), 'utf8')) as { stats: Record<string, unknown> };
    for (const k of ['startedAt', 'endedAt', 'wallMs', 'cpuMs', 'bytesWritten', 'peakRss', 'processMaxRss', 'host', 'pid'])
      assert.ok(k in m.stats, `stats.${k}`);
    assert.ok((m.stats.wallMs as number) >= 0 && (m.stats.cpuMs as number) >= 0);
    assert.ok((m.stats.bytesWritten as number) > 0);
    assert.ok((m.stats.peakRss as number) > 0);
    if (process.platform === 'linux') assert.ok((m.stats.bytesRead as number) > 0, 'bytes read counted on Linux');

    const s = neardup(['job', 'status', '--work-dir', work], { cwd: dir });
    assert.equal(s.code, 0, s.stderr);
    const lines = s.stdout.split('\n');
    assert.match(lines[0]!, /^stage\s+done\s+running\s+failed\s+waiting\s+task time\s+cpu\s+elapsed\s+docs\/s\s+read\/s\s+written\s+peak RSS$/);
    assert.match(s.stdout, /^sign\s+1\/4\s+0\s+0\s+3\s+[\d.]+ m?s\s+[\d.]+ m?s\s+[\d.]+ m?s\s+[\d,]+\s+[\d.]+ k?M?B\/s\s+[\d.]+ k?M?B\s+[\d.]+ MB$/m);
    assert.match(s.stdout, /^join\s+0\/4\s+0\s+0\s+4\s+-/m);
    assert.match(s.stdout, /^components\s+0\/4\s+0\s+0\s+4\s+-/m);
    assert.match(
      s.stdout,
      /^eta\s+sign: [\d.]+ m?s \(3 tasks left × [\d.]+ m?s, the mean of 1 done, ÷ [\d.]+ in parallel \(observed: task time ÷ elapsed\)\)$/m,
    );

    const j = neardup(['job', 'status', '--work-dir', work, '--json'], { cwd: dir });
    assert.equal(j.code, 0, j.stderr);
    const st = JSON.parse(j.stdout) as {
      command: string;
      stages: {
        stage: string;
        done: number;
        total: number;
        running: number;
        failed: number;
        waiting: number;
        wallMs: number;
        docs: number;
        eta: { remaining: number; parallelismFrom: string } | null;
      }[];
    };
    assert.equal(st.command, 'job status');
    const sign = st.stages.find((x) => x.stage === 'sign')!;
    assert.deepEqual([sign.done, sign.running, sign.failed, sign.waiting, sign.total], [1, 0, 0, 3, 4]);
    assert.ok(sign.docs > 0);
    assert.equal(sign.eta?.remaining, 3);
    assert.equal(sign.eta?.parallelismFrom, 'observed');
    assert.equal(st.stages.find((x) => x.stage === 'join')!.eta, null);
  });

  it("the filter stage's written counts the output shards it writes into --out-dir", () => {
    const work = path.join(dir, 'filtered');
    const r = neardup(['job', 'dedup', shards, '--local', '--work-dir', work, '--output', 'dedup', '--out-dir', path.join(dir, 'clean'), '-q'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(neardup(['job', 'status', '--work-dir', work, '--json'], { cwd: dir }).stdout) as {
      stages: { stage: string; bytesWritten: number }[];
    };
    const out = fs.readdirSync(path.join(dir, 'clean')).filter((f) => !f.startsWith('_') && !f.startsWith('.')).reduce(
      (a, f) => a + fs.statSync(path.join(dir, 'clean', f)).size,
      0,
    );
    const filter = j.stages.find((x) => x.stage === 'filter')!;
    assert.ok(out > 0 && filter.bytesWritten >= out, `filter wrote ${filter.bytesWritten} B, the shards hold ${out} B`);
  });

  it('counts a temp directory of a live process as running, of a dead one as not', () => {
    const work = path.join(dir, 'partial');
    // This test process is alive; pid 2^22 + 1 is above Linux's pid_max, so never a live process.
    fs.mkdirSync(path.join(work, 'sign', `.00001.tmp-${process.pid}-aaaa`));
    fs.mkdirSync(path.join(work, 'sign', `.00002.tmp-${2 ** 22 + 1}-bbbb`));
    try {
      const j = neardup(['job', 'status', '--work-dir', work, '--json'], { cwd: dir });
      const sign =
        (JSON.parse(j.stdout) as { stages: { stage: string; running: number; waiting: number; deadAttempts: number; eta: { parallelismFrom: string } }[] })
          .stages.find((x) => x.stage === 'sign')!;
      assert.deepEqual([sign.running, sign.waiting, sign.deadAttempts], [1, 2, 1]);
      assert.equal(sign.eta.parallelismFrom, 'running');
    } finally {
      fs.rmSync(path.join(work, 'sign', `.00001.tmp-${process.pid}-aaaa`), { recursive: true });
      fs.rmSync(path.join(work, 'sign', `.00002.tmp-${2 ** 22 + 1}-bbbb`), { recursive: true });
    }
  });

  it("shows a failed task's error with its shard, and forgets it once the task commits", () => {
    const bad = path.join(dir, 'bad');
    fs.cpSync(shards, bad, { recursive: true });
    const names = fs.readdirSync(bad).sort();
    const victim = path.join(bad, names[2]!);
    const good = fs.readFileSync(victim);
    fs.appendFileSync(victim, '{"id": "broken", "text": not json\n');
    const work = path.join(dir, 'failing');
    assert.equal(neardup(['job', 'plan', bad, '--work-dir', work, '--task-bytes', '1'], { cwd: dir }).code, 0);
    const r = neardup(['stage', 'sign', '--work-dir', work, '--task', '2'], { cwd: dir });
    assert.notEqual(r.code, 0);
    assert.ok(fs.existsSync(path.join(work, 'sign', '.failed-00002.json')));

    const s = neardup(['job', 'status', '--work-dir', work], { cwd: dir });
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /^sign\s+0\/4\s+0\s+1\s+3\s/m);
    const failed = s.stdout.split('\n').find((l) => l.startsWith('failed'));
    assert.ok(failed, s.stdout);
    assert.ok(failed.includes(`sign task 2 (shard ${victim}): `), failed);
    // The reader's error names the file and the line.
    assert.ok(new RegExp(`${victim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: invalid JSON`).test(failed), failed);

    const j = JSON.parse(neardup(['job', 'status', '--work-dir', work, '--json'], { cwd: dir }).stdout) as {
      stages: { stage: string; errors: { task: number; shards: string[]; error: string; kind: string }[] }[];
    };
    const errs = j.stages.find((x) => x.stage === 'sign')!.errors;
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.task, 2);
    assert.deepEqual(errs[0]!.shards, [victim]);
    assert.ok(errs[0]!.error.length > 0);

    // The shard mended and the job planned anew: a record left by an earlier attempt goes when the task commits.
    fs.writeFileSync(victim, good);
    fs.rmSync(work, { recursive: true });
    assert.equal(neardup(['job', 'plan', bad, '--work-dir', work, '--task-bytes', '1'], { cwd: dir }).code, 0);
    fs.mkdirSync(path.join(work, 'sign'), { recursive: true });
    fs.writeFileSync(
      path.join(work, 'sign', '.failed-00002.json'),
      JSON.stringify({ stage: 'sign', task: 2, error: 'earlier', kind: 'Error', at: 0, host: 'h', pid: 1 }),
    );
    assert.equal(neardup(['stage', 'sign', '--work-dir', work, '--task', '2'], { cwd: dir }).code, 0);
    assert.ok(!fs.existsSync(path.join(work, 'sign', '.failed-00002.json')));
  });

  it('job dedup --local prints a time per stage, --json holds per-stage timings, and status shows every stage done', () => {
    const work = path.join(dir, 'whole');
    const out = path.join(dir, 'pairs.tsv');
    const r = neardup(['job', 'dedup', shards, '--local', '--work-dir', work, '--task-bytes', '1', '-o', out], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    // Plain JSONL shards: verify reads their lines in place, and there is no gather stage.
    assert.match(
      r.stderr,
      /^time {8}sign [\d.]+ m?s · join [\d.]+ m?s · route [\d.]+ m?s · verify [\d.]+ m?s · link [\d.]+ m?s · decide [\d.]+ m?s · components [\d.]+ m?s · total [\d.]+ m?s$/m,
    );

    const rep = neardup(['job', 'report', '--work-dir', work, '-o', path.join(dir, 'pairs2.tsv'), '--verbose'], { cwd: dir });
    assert.equal(rep.code, 0, rep.stderr);
    assert.match(rep.stderr, /^time {8}sign [\d.]+ m?s · join/m);
    assert.match(rep.stderr, /^cpu {9}sign [\d.]+ m?s · join/m);
    assert.match(rep.stderr, /^tasks {7}sign 4 · join 4 · route 4 · verify 4 · link 4 · decide 4 · components 4$/m);

    const jw = path.join(dir, 'whole-json');
    const j = neardup(['job', 'dedup', shards, '--local', '--work-dir', jw, '--task-bytes', '1', '-o', path.join(dir, 'pairs3.tsv'), '--json'], { cwd: dir });
    assert.equal(j.code, 0, j.stderr);
    const summary = JSON.parse(j.stdout) as { timings: { total: number; stages: Record<string, { tasks: number; wall: number; cpu: number }> } };
    assert.equal(typeof summary.timings.total, 'number');
    assert.deepEqual(Object.keys(summary.timings.stages), ['sign', 'join', 'route', 'verify', 'link', 'decide', 'components']);
    for (const [stage, t] of Object.entries(summary.timings.stages)) {
      assert.ok(t.tasks >= 1, stage);
      assert.ok(typeof t.wall === 'number' && t.wall >= 0, stage);
      assert.ok(typeof t.cpu === 'number' && t.cpu >= 0, stage);
    }

    // A bar per stage where progress is shown (forced here, as a terminal would), none with --quiet.
    const bars = neardup(['job', 'dedup', shards, '--local', '--work-dir', path.join(dir, 'bars'), '--task-bytes', '1', '-o', path.join(dir, 'pairs4.tsv')], {
      cwd: dir,
      env: { NEARDUP_PROGRESS: 'always' },
    });
    assert.equal(bars.code, 0, bars.stderr);
    for (const stage of ['sign', 'join', 'route', 'verify', 'link', 'decide', 'components'])
      assert.match(bars.stderr, new RegExp(`${stage} *\\[[█░]+\\] 100% · [\\d.k]+ tasks/s`), stage);
    const quiet = neardup([
      'job',
      'dedup',
      shards,
      '--local',
      '--work-dir',
      path.join(dir, 'bars'),
      '-o',
      path.join(dir, 'pairs5.tsv'),
      '--task-bytes',
      '1',
      '-q',
    ], { cwd: dir, env: { NEARDUP_PROGRESS: 'always' } });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');

    const s = neardup(['job', 'status', '--work-dir', work], { cwd: dir });
    assert.equal(s.code, 0, s.stderr);
    assert.doesNotMatch(s.stdout, /^gather/m);
    for (const [stage, n] of [['sign', 4], ['join', 4], ['route', 4], ['verify', 4], ['link', 4], ['decide', 4], ['components', 4]] as const) {
      assert.match(s.stdout, new RegExp(`^${stage}\\s+${n}/${n}\\s+0\\s+0\\s+0\\s+[\\d.]+ m?s`, 'm'));
    }
    assert.doesNotMatch(s.stdout, /^eta/m);
  });
});
