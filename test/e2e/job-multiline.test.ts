/**
 * CSV records that span several lines (a quoted field holding line breaks) in a sharded job: `job
 * dedup` and `job spans` warn of them at the job's end as one process does (how many, and where the
 * first in input order lies: its file and lines), with `--local` and stage by stage then `job
 * report`. The sign and spans-hash markers carry each shard's count; the jobs once said nothing.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { STAGES, taskCount, loadJob } from '../../src/shard/files/job.js';
import { tmpDir } from '../cliUtil.js';
import { cliIn } from '../helpers/inProcessCli.js';

const root = fs.realpathSync(tmpDir());
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Three CSV shards: the first with no multi-line record, the second and third with some (every fourth), one ragged row. */
function csvShards(dir: string): { input: string; first: string } {
  const input = path.join(dir, 'in');
  fs.mkdirSync(input, { recursive: true });
  for (let s = 0; s < 3; s++) {
    const rows = ['id,text'];
    for (let i = 0; i < 24; i++) {
      const j = i - (i % 3 === 2 ? 1 : 0);
      rows.push(s > 0 && i % 4 === 0 ? `s${s}a${i},"line one of ${s}-${j}\nline two ${j}\nline three"` : `s${s}a${i},note ${s}-${j}: a flat near the station`);
      if (s === 2 && i === 10) rows.push('bad,row,extra');
    }
    fs.writeFileSync(path.join(input, `p${s}.csv`), `${rows.join('\n')}\n`);
  }
  return { input, first: path.join(input, 'p1.csv') };
}

const warnings = (r: { code: number; stderr: string }, how: string): string[] => {
  assert.equal(r.code, 0, `${how}: ${r.stderr}`);
  return r.stderr.split('\n').filter((l) => l.startsWith('neardup: warning:'));
};

/** Runs every stage of the job planned in `work`, task by task. */
async function runStages(work: string): Promise<void> {
  const plan = loadJob(work);
  for (const stage of STAGES) {
    for (let t = 0; t < taskCount(plan, stage); t++) assert.equal((await cliIn(['stage', stage, '--work-dir', work, '--task', String(t)])).code, 0);
  }
}

describe('a sharded job over CSV records that span several lines', () => {
  it('job dedup warns of them as dedup does (--local, and stage by stage)', async () => {
    const dir = path.join(root, 'dedup');
    const { input, first } = csvShards(dir);
    const read = ['--id', 'id', '--skip-invalid'];
    const want = warnings(await cliIn(['dedup', input, ...read, '--out', path.join(dir, 'one.tsv')]), 'dedup');
    assert.equal(want.length, 2, want.join('\n'));
    assert.equal(want[1], `neardup: warning: 12 records span several lines (line breaks inside quoted fields); first: ${first}:2-4`);
    const job = [...read, '--task-bytes', '1'];
    const local = await cliIn(['job', 'dedup', input, ...job, '--local', '--work-dir', path.join(dir, 'w-local'), '--out', path.join(dir, 'local.tsv')]);
    assert.deepEqual(warnings(local, '--local'), want);
    const work = path.join(dir, 'w-stages');
    assert.equal((await cliIn(['job', 'plan', input, ...job, '--work-dir', work, '-q'])).code, 0);
    await runStages(work);
    assert.deepEqual(warnings(await cliIn(['job', 'report', '--work-dir', work, '--out', path.join(dir, 'stages.tsv')]), 'job report'), want);
    assert.equal(fs.readFileSync(path.join(dir, 'stages.tsv'), 'utf8'), fs.readFileSync(path.join(dir, 'one.tsv'), 'utf8'));
  });

  it('job spans warns of them as spans does (--local, and stage by stage)', async () => {
    const dir = path.join(root, 'spans');
    const { input, first } = csvShards(dir);
    const read = ['--id', 'id', '--skip-invalid', '--dry-run'];
    const want = warnings(await cliIn(['spans', input, ...read]), 'spans');
    assert.equal(want.length, 2, want.join('\n'));
    assert.ok(want[1]!.endsWith(`first: ${first}:2-4`), want[1]);
    const job = [input, ...read, '--task-bytes', '1', '--partitions', '2'];
    assert.deepEqual(warnings(await cliIn(['job', 'spans', ...job, '--local', '--work-dir', path.join(dir, 'w-local')]), '--local'), want);
    const work = path.join(dir, 'w-stages');
    assert.equal((await cliIn(['job', 'spans', ...job, '--work-dir', work, '--plan-only'])).code, 0);
    await runStages(work);
    assert.deepEqual(warnings(await cliIn(['job', 'report', '--work-dir', work]), 'job report'), want);
  });
});
