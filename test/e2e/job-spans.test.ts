/**
 * `neardup job spans` against `neardup spans` (#50, item 3): random corpora with planted repeats
 * (overlapping, nested and adjacent ones, repeats inside one document, CRLF, astral and CJK text,
 * empty units and documents, a document made only of repeats) cut into JSONL, CSV or quoted TSV
 * shards (some gzipped, some JSONL with a broken record and --skip-invalid) or Parquet shards, with ids or without,
 * through every unit and mode. The job, run in this process (`--local`, in
 * several tasks and partitions, a share of the sets on forked task processes) must write exactly
 * the one-process bytes: every output shard and `_SUCCESS`, the `--removed` audit, and the `--json`
 * summary (its time aside). Then the other runners, cheaply: array stages (`stage S --task i` for
 * every task, then `job report`), BullMQ workers and a work dir in S3 (real Redis and s3rver
 * processes on loopback, skipped where missing, never under CI). With --skip-invalid the job's end warns
 * as neardup spans does. Each option the job refuses exits 2 naming it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { JOB_SPANS_HONOURS } from '../../src/cli/job/spans.js';
import { spansCommand } from '../../src/cli/spans/command.js';
import { STAGES, taskCount, loadJob } from '../../src/shard/files/job.js';
import { requireMarker } from '../../src/shard/files/commit.js';
import type { SpansHashMarker } from '../../src/shard/spans/hash.js';
import { anchoredUnits } from '../../src/spans/options.js';
import { tmpDir } from '../cliUtil.js';
import { startWorker, type WorkerChild } from '../helpers/shards.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { redisMissing, REQUIRE_ALL } from '../helpers/needs.js';
import { neardupAsync } from '../helpers/procs.js';
import { cliIn } from '../helpers/inProcessCli.js';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { readParquetRows } from '../helpers/formats.js';
import { putObject, s3rverMissing, startS3rver, S3_JOB_ENV, type S3Server } from '../helpers/s3.js';
import { assertSame, cli, drawOptions, jobArgs, oneProcess, rng, writeCorpus, corpus, type Case, type Layout } from '../helpers/spansSets.js';
const SETS = Number(process.env.NEARDUP_DIFF_RUNS ?? 60);
const SEED = Number(process.env.NEARDUP_DIFF_SEED ?? 50);
const root = tmpDir();
const cases: Case[] = [];

describe('job spans writes the bytes of neardup spans', () => {
  before(async () => {
    for (let k = 0; k < SETS; k++) {
      const r = rng(SEED * 1000 + k);
      const dir = path.join(root, `set-${k}`);
      const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.2), format: r.pick(['jsonl', 'jsonl', 'jsonl', 'csv', 'csv;', 'tsvq'] as const) };
      writeCorpus(r, path.join(dir, 'in'), corpus(r, 6 + r.int(40)), 1 + r.int(4), o);
      cases.push(await oneProcess(dir, drawOptions(r, o)));
    }
  });
  it(`--local, in several tasks and partitions (${SETS} drawn sets; a share on forked task processes)`, async () => {
    for (const [k, c] of cases.entries()) {
      const r = rng(SEED + k);
      const layout = ['--task-bytes', r.pick(['1', '300', '100000']), '--partitions', String(1 + r.int(3))];
      const processes = k % 10 === 3 ? ['--processes', '2'] : [];
      const got = await cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'local'), ...layout, '--local', ...processes]);
      assert.equal(got.code, 0, `set ${k}: ${got.stderr}`);
      assertSame(c, 'local', got.stdout, `set ${k} (${c.drawn.args.join(' ')} ${layout.join(' ')})`);
    }
    // The sets are not vacuous: most cut something, and every unit and mode is drawn.
    assert.ok(cases.filter((c) => (c.want.summary.unitsRemoved as number) > 0).length >= cases.length / 2, 'most sets remove units');
    for (
      const w of [
        'line',
        'paragraph',
        'sentence',
        'substring',
        '--length-unit',
        '--min-docs',
        '--min-unit-words',
        '--min-doc-words',
        '--dry-run',
        'annotate',
        '--id-field',
        '--skip-invalid',
        '--text',
        '--id',
        '--delimiter',
        '--tsv-quotes',
        '--format',
      ]
    ) assert.ok(cases.some((c) => c.drawn.args.includes(w)), `${w} drawn`);
    assert.ok(cases.some((c) => c.drawn.removed === 'tsv') && cases.some((c) => c.drawn.removed === 'jsonl'), 'both audit formats drawn');
  });

  it('array stages: job spans --plan-only, then stage S --task i for every task, then job report', async () => {
    for (const [k, c] of cases.slice(0, 8).entries()) {
      const work = path.join(c.dir, 'array-work');
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
      assertSame(c, 'array', r.stdout, `set ${k}, array stages`);
    }
  });

  it('substring windows: the anchor stages run and spans-hash passes windows by (not vacuous)', () => {
    let passed = 0;
    let anchored = 0;
    for (const c of cases) {
      const work = path.join(c.dir, 'local-work');
      const job = loadJob(work);
      assert.equal(taskCount(job, 'spans-anchor') > 0, anchoredUnits(job.spans!.options), c.drawn.args.join(' '));
      if (taskCount(job, 'spans-anchor') === 0) continue;
      anchored++;
      for (let t = 0; t < taskCount(job, 'spans-hash'); t++) passed += requireMarker<SpansHashMarker>(work, job, 'spans-hash', t).passed;
    }
    assert.ok(anchored >= 3, `${anchored} anchored sets`);
    assert.ok(passed > 0, 'windows passed by');
  });
});

describe('job spans on Parquet shards writes the bytes of neardup spans', () => {
  const sets: Case[] = [];
  before(async () => {
    for (let k = 0; k < 10; k++) {
      const r = rng(SEED * 1000 + 500 + k);
      const dir = path.join(root, `parquet-${k}`);
      const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.4), format: 'parquet' };
      writeCorpus(r, path.join(dir, 'in'), corpus(r, 6 + r.int(40)), 1 + r.int(4), o);
      sets.push(await oneProcess(dir, drawOptions(r, o)));
    }
    assert.ok(sets.some((c) => c.drawn.output === 'dedup') && sets.some((c) => c.drawn.output === 'annotate'), 'both outputs drawn');
    assert.ok(sets.filter((c) => c.drawn.output !== 'dry' && (c.want.summary.unitsRemoved as number) > 0).length >= 4, 'sets written with units cut');
    assert.ok(sets.some((c) => (c.want.summary.skipped as number) > 0), 'a set with an invalid record');
  });
  it('--local in several tasks and partitions, and array stages', async () => {
    for (const [k, c] of sets.entries()) {
      const r = rng(SEED + 500 + k);
      const layout = ['--task-bytes', r.pick(['1', '300', '100000']), '--partitions', String(1 + r.int(3))];
      const got = await cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'local'), ...layout, '--local']);
      assert.equal(got.code, 0, `set ${k}: ${got.stderr}`);
      assertSame(c, 'local', got.stdout, `Parquet set ${k} (${c.drawn.args.join(' ')} ${layout.join(' ')})`);
    }
    for (const [k, c] of sets.slice(0, 3).entries()) {
      const work = path.join(c.dir, 'array-work');
      const plan = await cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'array'), '--task-bytes', '1', '--partitions', '2', '--plan-only']);
      assert.equal(plan.code, 0, plan.stderr);
      const job = loadJob(work);
      for (const stage of STAGES) {
        for (let t = 0; t < taskCount(job, stage); t++) assert.equal((await cli(['stage', stage, '--work-dir', work, '--task', String(t)])).code, 0);
      }
      const r = await cli(['job', 'report', '--work-dir', work, '--json']);
      assert.equal(r.code, 0, r.stderr);
      assertSame(c, 'array', r.stdout, `Parquet set ${k}, array stages`);
    }
  });
});

describe('job spans on a Parquet shard named without .parquet (a glob names it; its format is read from its bytes)', () => {
  it('writes it as Parquet, the bytes of neardup spans', async () => {
    const dir = path.join(root, 'parquet-noext');
    fs.mkdirSync(path.join(dir, 'in'), { recursive: true });
    const texts = ['Accept all cookies.\nFirst page.', 'Second page.\naccept  ALL cookies.', 'Accept all cookies.'];
    const columnData = [{ name: 'id', data: ['a', 'b', 'c'] }, { name: 'text', data: texts, type: 'STRING' }];
    fs.writeFileSync(path.join(dir, 'in', 'part0'), Buffer.from(parquetWriteBuffer({ columnData: columnData as never, rowGroupSize: 2 })));
    const glob = path.join(dir, 'in', 'part*');
    const one = await cli(['spans', glob, '--id', 'id', '--out', path.join(dir, 'one'), '-q']);
    assert.equal(one.code, 0, one.stderr);
    const job = await cli(['job', 'spans', glob, '--id', 'id', '--out-dir', path.join(dir, 'job'), '--work-dir', path.join(dir, 'w'), '--local', '-q']);
    assert.equal(job.code, 0, job.stderr);
    const want = fs.readFileSync(path.join(dir, 'one', 'part0'));
    assert.ok(fs.readFileSync(path.join(dir, 'job', 'part0')).equals(want));
    assert.equal(want.subarray(0, 4).toString('latin1'), 'PAR1');
    assert.deepEqual((await readParquetRows(path.join(dir, 'job', 'part0'))).rows, [
      { id: 'a', text: texts[0] },
      { id: 'b', text: 'Second page.\n' },
    ]);
  });
});

describe('job spans on BullMQ workers', { skip: REQUIRE_ALL ? undefined : redisMissing() }, () => {
  let redis: RedisChild;
  let worker: WorkerChild;
  before(async () => {
    redis = await startRedis();
    worker = startWorker(redis.url, path.join(root, 'worker'), ['--queue', 'spans']);
  });
  after(async () => {
    await worker?.kill();
    await redis?.stop();
  });

  it('a worker process runs every stage: the one-process bytes (a drawn set, and one of substring windows with anchors)', async () => {
    const c = cases[0] ?? (await oneProcessSet(0));
    for (const x of [c, ...anchoredCase(0).filter((a) => a !== c)]) await onBull(x);
  });

  async function onBull(c: Case): Promise<void> {
    const r = await neardupAsync([
      'job',
      'spans',
      path.join(c.dir, 'in'),
      ...jobArgs(c, 'bull'),
      '--task-bytes',
      '1',
      '--partitions',
      '2',
      '--redis',
      redis.url,
      '--queue',
      'spans',
    ], c.dir);
    assert.equal(r.code, 0, r.stderr + worker.log());
    assertSame(c, 'bull', r.stdout, `BullMQ (${c.drawn.args.join(' ')})`);
  }
});

describe('job spans with its work dir in S3', { skip: REQUIRE_ALL ? undefined : s3rverMissing() }, () => {
  let server: S3Server;
  before(async () => {
    server = await startS3rver('spans');
  });
  after(async () => {
    await server?.stop();
  });

  it('--local on an s3:// work dir: the one-process bytes (a drawn set, and one of substring windows with anchors)', async () => {
    const c1 = cases[1] ?? (await oneProcessSet(1));
    for (const [k, c] of [c1, ...anchoredCase(1).filter((a) => a !== c1)].entries()) {
      const args = jobArgs(c, 's3').map((a) => (a === path.join(c.dir, 's3-work') ? `s3://spans/work-${k}` : a));
      const r = await neardupAsync(
        ['job', 'spans', path.join(c.dir, 'in'), ...args, '--task-bytes', '1', '--partitions', '2', '--local', '--s3-endpoint', server.endpoint],
        c.dir,
        S3_JOB_ENV,
      );
      assert.equal(r.code, 0, r.stderr);
      assertSame(c, 's3', r.stdout, `S3 work dir (${c.drawn.args.join(' ')})`);
    }
  });

  it('Parquet shards in S3, named .parquet or not, dedup and annotate: the one-process bytes with the work dir in S3 and with a local one (the shard copied down); a text column of numbers stops the job with exit 2, naming it', async () => {
    const dir = path.join(root, 's3-parquet');
    fs.mkdirSync(dir, { recursive: true });
    const texts = ['Accept all cookies.\nFirst page.', 'Second page.\naccept  ALL cookies.', 'Accept all cookies.'];
    const columnData = [{ name: 'id', data: ['a', 'b', 'c'] }, { name: 'text', data: texts, type: 'STRING' }];
    const bytes = Buffer.from(parquetWriteBuffer({ columnData: columnData as never, rowGroupSize: 2 }));
    fs.writeFileSync(path.join(dir, 'local.parquet'), bytes);
    const keys = ['pq/part0.parquet', 'noext/part0'];
    for (const key of keys) await putObject(server, 'spans', key, bytes);
    const job = (shard: string, tag: string, rest: string[]) =>
      neardupAsync(
        ['job', 'spans', shard, '--id', 'id', ...rest, '--out-dir', path.join(dir, `out-${tag}`), '--local', '-q', '--s3-endpoint', server.endpoint],
        dir,
        S3_JOB_ENV,
      );
    for (const output of ['dedup', 'annotate']) {
      const want = path.join(dir, `one-${output}.parquet`);
      const one = await cli(['spans', path.join(dir, 'local.parquet'), '--id', 'id', '--output', output, '--out', want, '-q']);
      assert.equal(one.code, 0, one.stderr);
      for (const key of keys) {
        for (const work of ['s3', 'local']) {
          const tag = `${output}-${work}-${key.replace(/\W/g, '_')}`;
          const wd = work === 's3' ? `s3://spans/w-${tag}` : path.join(dir, `w-${tag}`);
          const r = await job(`s3://spans/${key}`, tag, ['--output', output, '--work-dir', wd]);
          assert.equal(r.code, 0, `${tag}: ${r.stderr}`);
          const got = fs.readFileSync(path.join(dir, `out-${tag}`, path.posix.basename(key)));
          assert.ok(got.equals(fs.readFileSync(want)), `${tag}: not the bytes of neardup spans`);
          assert.ok(fs.existsSync(path.join(dir, `out-${tag}`, '_SUCCESS')), tag);
        }
      }
    }
    const bad = Buffer.from(parquetWriteBuffer({ columnData: [{ name: 'id', data: ['a', 'b'] }, { name: 'text', data: [1, 2], type: 'INT32' }] as never }));
    for (const key of ['bad/part0.parquet', 'bad/part1']) {
      await putObject(server, 'spans', key, bad);
      const tag = `bad-${key.replace(/\W/g, '_')}`;
      const r = await job(`s3://spans/${key}`, tag, ['--work-dir', `s3://spans/w-${tag}`]);
      assert.equal(r.code, 2, `${tag}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`column "text" of s3://spans/${key} does not hold strings (INT32)`), r.stderr);
      assert.equal(fs.existsSync(path.join(dir, `out-${tag}`, '_SUCCESS')), false, tag);
    }
  });
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The `skip`-th drawn set whose job has anchor stages (found by its local run's plan), if the local runs were made: none or one. */
function anchoredCase(skip: number): Case[] {
  const found = cases.filter((c) => {
    const work = path.join(c.dir, 'local-work');
    return fs.existsSync(path.join(work, 'job.json')) && taskCount(loadJob(work), 'spans-anchor') > 0;
  });
  return found.slice(skip, skip + 1);
}

/** A set drawn alone (when the differential suite's were not drawn). */
async function oneProcessSet(k: number): Promise<Case> {
  const r = rng(SEED * 1000 + k);
  const dir = path.join(root, `alone-${k}`);
  const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.2), format: r.pick(['jsonl', 'jsonl', 'jsonl', 'csv', 'csv;', 'tsvq'] as const) };
  writeCorpus(r, path.join(dir, 'in'), corpus(r, 6 + r.int(40)), 1 + r.int(4), o);
  return oneProcess(dir, drawOptions(r, o));
}

describe('job spans --skip-invalid', () => {
  it("warns at the job's end as neardup spans does, naming the first invalid record in input order (--local, and stage by stage); without it, exit 2 naming it", async () => {
    const dir = path.join(root, 'skip');
    const input = path.join(dir, 'in');
    fs.mkdirSync(input, { recursive: true });
    const doc = (i: number): string => `${JSON.stringify({ text: `line ${i % 3}\nshared line\nown ${i}\n` })}\n`;
    const lines = Array.from({ length: 18 }, (_, i) => doc(i));
    // The second shard's bad line is its fourth, the third's its second: the first in input order is the second shard's.
    lines[9] = '{"text": \n';
    lines[13] = '{broken\n';
    for (let f = 0; f < 3; f++) fs.writeFileSync(path.join(input, `p${f}.jsonl`), lines.slice(6 * f, 6 * f + 6).join(''));
    const [first, second] = [path.join(input, 'p1.jsonl'), path.join(input, 'p2.jsonl')];
    const warnings = (r: { code: number; stderr: string }, how: string): string[] => {
      assert.equal(r.code, 0, `${how}: ${r.stderr}`);
      return r.stderr.split('\n').filter((l) => l.startsWith('neardup: warning:'));
    };
    const want = warnings(await cliIn(['spans', input, '--skip-invalid', '--dry-run']), 'neardup spans');
    assert.equal(want.length, 1);
    assert.ok(want[0]!.includes(`skipped 2 invalid records in 2 files (${first}: 1, ${second}: 1); first: ${first}:4: `), want[0]);
    const job = [input, '--skip-invalid', '--dry-run', '--task-bytes', '1', '--partitions', '2'];
    assert.deepEqual(warnings(await cliIn(['job', 'spans', ...job, '--work-dir', path.join(dir, 'w-local'), '--local']), '--local'), want);
    const work = path.join(dir, 'w-stages');
    assert.equal((await cliIn(['job', 'spans', ...job, '--work-dir', work, '--plan-only'])).code, 0);
    const plan = loadJob(work);
    for (const stage of STAGES) {
      for (let t = 0; t < taskCount(plan, stage); t++) assert.equal((await cliIn(['stage', stage, '--work-dir', work, '--task', String(t)])).code, 0);
    }
    assert.deepEqual(warnings(await cliIn(['job', 'report', '--work-dir', work]), 'job report'), want);
    const r = await cliIn(['job', 'spans', input, '--dry-run', '--task-bytes', '1', '--work-dir', path.join(dir, 'w-noskip'), '--local']);
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`${first}:4: `), r.stderr);
  });
});

describe('job spans refuses what it cannot honour, by name (exit 2)', () => {
  const dir = path.join(root, 'refuse');
  before(() => {
    fs.mkdirSync(path.join(dir, 'in'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'in', 'a.jsonl'), '{"text":"a\\nb\\n"}\n');
    const numbers = [{ name: 'text', data: [1, 2], type: 'INT32' }];
    fs.writeFileSync(path.join(dir, 'b.parquet'), Buffer.from(parquetWriteBuffer({ columnData: numbers as never })));
    fs.writeFileSync(path.join(dir, 'c.txt'), 'a line\n');
  });
  const cases: [string, string[], RegExp][] = [
    ['--out', ['--out', 'x.jsonl'], /--out: a spans job writes one output shard per input shard: give --out-dir/],
    ['--limit', ['--limit', '3'], /--limit: a spans job reads every record/],
    ['--zstd-level', ['--zstd-level', '5'], /--zstd-level: a spans job writes \.zst output shards at the default level/],
  ];
  for (const [name, extra, re] of cases) {
    it(name, async () => {
      const r = await cli([
        'job',
        'spans',
        path.join(dir, 'in'),
        '--work-dir',
        path.join(dir, `w-${name.replace(/\W/g, '')}`),
        '--local',
        '--out-dir',
        path.join(dir, 'o'),
        ...extra,
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, re);
    });
  }
  it('every option of neardup spans is honoured (drawn above) or refused by name', async () => {
    // An option added to neardup spans must be drawn here and honoured, or it is refused meanwhile.
    const drawn = [
      'format',
      'text',
      'id',
      'textField',
      'idField',
      'delimiter',
      'tsvQuotes',
      'skipInvalid',
      'unit',
      'window',
      'minLength',
      'lengthUnit',
      'minDocs',
      'minUnitWords',
      'minDocWords',
      'normalize',
      'output',
      'removed',
      'dryRun',
      'top',
      'quiet',
      'verbose',
      'json',
    ];
    assert.deepEqual([...JOB_SPANS_HONOURS].sort(), drawn.sort());
    for (const o of spansCommand().options.filter((x) => !JOB_SPANS_HONOURS.has(x.attributeName()))) {
      const value = o.required || o.optional ? ['1'] : [];
      const r = await cli([
        'job',
        'spans',
        path.join(dir, 'in'),
        '--work-dir',
        path.join(dir, `w-any-${o.attributeName()}`),
        '--local',
        '--out-dir',
        path.join(dir, 'o'),
        o.long!,
        ...value,
      ]);
      assert.equal(r.code, 2, `${o.long}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${o.long}:`), `${o.long} named: ${r.stderr}`);
    }
  });
  it('a Parquet text column of numbers (dedup output), text lines (annotate), standard input', async () => {
    let r = await cli(['job', 'spans', path.join(dir, 'b.parquet'), '--work-dir', path.join(dir, 'w-pq'), '--local', '--out-dir', path.join(dir, 'o')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /column "text" of .*b\.parquet does not hold strings \(INT32\)/);
    r = await cli([
      'job',
      'spans',
      path.join(dir, 'c.txt'),
      '--work-dir',
      path.join(dir, 'w-txt'),
      '--local',
      '--output',
      'annotate',
      '--out-dir',
      path.join(dir, 'o'),
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /annotating adds two fields, and a text line/);
    r = await cli(['job', 'spans', '-', '--work-dir', path.join(dir, 'w-stdin'), '--local', '--dry-run']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /a spans job reads its shards twice, from files every task sees: not standard input/);
  });
});
