/**
 * Exactness of `neardup spans` and `neardup job spans` (#50): with the unit hashes masked to 4–8
 * bits by a test hook (src/common/faults.ts; in this process, and in forked task processes through
 * NODE_OPTIONS: test/helpers/faults.ts), different units share a hash everywhere, and each route
 * must still write the bytes of the unmasked run (whose answer test/spans/ checks against the
 * brute-force oracle): every output shard, the `--removed` audit and the `--json` summary, for
 * drawn corpora, units and modes.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { installFaultHooks } from '../../src/common/faults.js';
import { loadJob, STAGES, taskCount } from '../../src/shard/files/job.js';
import { tmpDir } from '../cliUtil.js';
import { faultEnv, withFaultEnv } from '../helpers/faults.js';
import { neardupAsync } from '../helpers/procs.js';
import { assertSame, cli, corpus, drawOptions, jobArgs, oneProcess, rng, writeCorpus, type Case, type Layout } from '../helpers/spansSets.js';

const SETS = Number(process.env.NEARDUP_DIFF_RUNS ?? 40);
const SEED = Number(process.env.NEARDUP_DIFF_SEED ?? 77);
const root = tmpDir();
const cases: { c: Case; bits: number }[] = [];

/** Runs `fn` with unit hashes masked to `bits` bits in this process and the processes it starts. */
async function masked<T>(bits: number, fn: () => Promise<T>): Promise<T> {
  installFaultHooks({ spansHashBits: () => bits });
  try {
    return await withFaultEnv({ spansHashBits: bits }, fn);
  } finally {
    installFaultHooks({ spansHashBits: undefined });
  }
}

describe('hashes masked to a few bits: every route writes the bytes of an exact run', () => {
  before(async () => {
    for (let k = 0; k < SETS; k++) {
      const r = rng(SEED * 1000 + k);
      const dir = path.join(root, `set-${k}`);
      const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.2), format: r.pick(['jsonl', 'jsonl', 'csv', 'tsvq'] as const) };
      writeCorpus(r, path.join(dir, 'in'), corpus(r, 10 + r.int(40)), 1 + r.int(4), o);
      cases.push({ c: await oneProcess(dir, drawOptions(r, o)), bits: 4 + r.int(5) });
    }
    // Not vacuous: in some sets there are more distinct units than masked hashes, so some must share one.
    assert.ok(cases.filter(({ c, bits }) => (c.want.summary.distinctUnits as number) > 2 ** bits).length >= SETS / 4, 'collisions forced');
  });

  it('neardup spans, one process', async () => {
    for (const [k, { c, bits }] of cases.entries()) {
      const args = jobArgs(c, 'masked').filter((a, i, all) => a !== '--work-dir' && all[i - 1] !== '--work-dir').map((a) => (a === '--out-dir' ? '--out' : a));
      const got = await masked(bits, () => cli(['spans', path.join(c.dir, 'in'), ...args]));
      assert.equal(got.code, 0, got.stderr);
      assertSame(c, 'masked', got.stdout, `set ${k} (${bits} bits: ${c.drawn.args.join(' ')})`);
    }
  });

  it('neardup spans to standard output (the check reads the input before pass 2, which cannot be run again): a CLI process', async () => {
    let ran = 0;
    for (const [k, { c, bits }] of cases.slice(0, 8).entries()) {
      if (c.drawn.output === 'dry') continue;
      ran++;
      const args = c.drawn.args;
      const input = path.join(c.dir, 'in', fs.readdirSync(path.join(c.dir, 'in')).sort()[0]!);
      const want = await neardupAsync(['spans', input, ...args, '-q'], c.dir);
      assert.equal(want.code, 0, want.stderr);
      const got = await neardupAsync(['spans', input, ...args, '-q'], c.dir, faultEnv({ spansHashBits: bits }));
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, want.stdout, `set ${k} (${bits} bits: ${args.join(' ')})`);
    }
    assert.ok(ran >= 3, `${ran} sets written to standard output`);
  });

  it('job spans --local, in several tasks and partitions, a share on forked task processes', async () => {
    for (const [k, { c, bits }] of cases.entries()) {
      const r = rng(SEED + k);
      const layout = ['--task-bytes', r.pick(['1', '300', '100000']), '--partitions', String(1 + r.int(3)), ...(k % 5 === 2 ? ['--processes', '2'] : [])];
      const got = await masked(bits, () => cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'local'), ...layout, '--local']));
      assert.equal(got.code, 0, `set ${k}: ${got.stderr}`);
      assertSame(c, 'local', got.stdout, `set ${k} (${bits} bits: ${c.drawn.args.join(' ')} ${layout.join(' ')})`);
    }
  });

  it('array stages: stage S --task i for every task, then job report', async () => {
    for (const [k, { c, bits }] of cases.slice(0, 6).entries()) {
      const work = path.join(c.dir, 'array-work');
      await masked(bits, async () => {
        const plan = await cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'array'), '--task-bytes', '1', '--partitions', '2', '--plan-only']);
        assert.equal(plan.code, 0, plan.stderr);
        const job = loadJob(work);
        for (const stage of STAGES) {
          for (let t = 0; t < taskCount(job, stage); t++) {
            const r = await cli(['stage', stage, '--work-dir', work, '--task', String(t)]);
            assert.equal(r.code, 0, `${stage} ${t}: ${r.stderr}`);
          }
        }
        const r = await cli(['job', 'report', '--work-dir', work, '--json']);
        assert.equal(r.code, 0, r.stderr);
        assertSame(c, 'array', r.stdout, `set ${k}, array stages (${bits} bits)`);
      });
    }
  });
});
