/**
 * `neardup job spans` against `neardup spans` (#50, item 3): random corpora with planted repeats
 * (overlapping, nested and adjacent ones, repeats inside one document, CRLF, astral and CJK text,
 * empty units and documents, a document made only of repeats) cut into JSONL, CSV or quoted TSV
 * shards (some gzipped, some JSONL with a broken record and --skip-invalid), with ids or without,
 * through every unit and mode. The job, run in this process (`--local`, in
 * several tasks and partitions, a share of the sets on forked task processes) must write exactly
 * the one-process bytes: every output shard and `_SUCCESS`, the `--removed` audit, and the `--json`
 * summary (its time aside). Then the other runners, cheaply: array stages (`stage S --task i` for
 * every task, then `job report`), BullMQ workers and a work dir in S3 (real Redis and s3rver
 * processes on loopback, skipped where missing, never under CI). Each option the job refuses exits 2 naming it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createProgram, runProgram } from '../../src/cli/program.js';
import { jobCommand } from '../../src/cli/job/command.js';
import { JOB_SPANS_HONOURS } from '../../src/cli/job/spans.js';
import { stageCommand } from '../../src/cli/job/stage.js';
import { spansCommand } from '../../src/cli/spans/command.js';
import { STAGES, taskCount, loadJob } from '../../src/shard/files/job.js';
import { tmpDir } from '../cliUtil.js';
import { startWorker, type WorkerChild } from '../helpers/shards.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { redisMissing, REQUIRE_ALL } from '../helpers/needs.js';
import { neardupAsync } from '../helpers/procs.js';
import { s3rverMissing, startS3rver, S3_JOB_ENV, type S3Server } from '../helpers/s3.js';

/** Runs `neardup ...args` in this process: exit code, stdout (the --json summary) and stderr. */
async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = createProgram();
  program.addCommand(spansCommand()).addCommand(jobCommand()).addCommand(stageCommand());
  let stderr = '';
  let stdout = '';
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const write = process.stdout.write.bind(process.stdout);
  // The summary is written as a string; the test runner's own reports (buffers) pass through.
  process.stdout.write =
    ((s: string | Uint8Array, ...rest: never[]) => (typeof s === 'string' ? ((stdout += s), true) : write(s, ...rest))) as typeof process.stdout.write;
  try {
    const code = await runProgram(program, ['node', 'neardup', ...args], sink);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = write;
  }
}

/** A small seeded generator (mulberry32), so a failing set is drawn again by its seed. */
function rng(seed: number): { int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]!, chance: (p) => next() < p };
}

/** Pieces that repeat: case and spacing variants (equal once normalized), CJK, astral, blank, and a long passage whose sentences also occur alone (nested). */
const POOL = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Subscribe to our newsletter!',
  '我喜欢猫。他喜欢狗！',
  'Emoji 😀 here. And 𝒜stral.',
  '   ',
  '',
  'Ünïcödé — ok? Yes.',
  'Copyright 2024 Example Inc. All rights reserved.',
  'The cat sat on the mat. The dog ran home. Accept all cookies.',
  'the cat sat on the mat and the dog ran home',
];
const SEPS = ['\n', '\r\n', '\n\n', '\r\n\r\n', '\n \n', ' '];

/** A corpus of `n` documents: pieces of the pool, unique filler words, repeats inside a document, empty documents and one made only of repeats. */
function corpus(r: ReturnType<typeof rng>, n: number): string[] {
  const docs: string[] = [];
  for (let d = 0; d < n; d++) {
    if (r.chance(0.05)) {
      docs.push('');
      continue;
    }
    const parts: string[] = [];
    const m = 1 + r.int(6);
    for (let i = 0; i < m; i++) {
      const p = r.chance(0.3) ? `unique ${d} word${i} w${r.int(1000)}` : r.pick(POOL);
      parts.push(p);
      // Adjacent and in-document repeats.
      if (r.chance(0.15)) parts.push(p);
    }
    const last = r.chance(0.5);
    docs.push(parts.map((p, i) => p + (i + 1 < parts.length || last ? r.pick(SEPS) : '')).join(''));
  }
  docs[r.int(n)] = 'Accept all cookies.\r\nSubscribe to our newsletter!\r\nAccept all cookies.\r\n';
  return docs;
}

/** Writes the corpus as `shards` JSONL shards (a share gzipped) under `dir`, with ids or without, and an extra field whose bytes must stay. */
/** How a set's shards are written: JSONL, CSV (comma or semicolon) or TSV with RFC 4180 quotes (`--tsv-quotes`). */
type Layout = { ids: boolean; invalid: boolean; format: 'jsonl' | 'csv' | 'csv;' | 'tsvq' };

/** A delimited record: the text quoted (it may hold line breaks), the id and a number as they are. */
function delimited(d: string, text: string, id: string | undefined, n: number): string {
  const q = `"${text.replace(/"/g, '""')}"`;
  return id !== undefined ? [id, q, n].join(d) : [q, n].join(d);
}

function writeCorpus(r: ReturnType<typeof rng>, dir: string, docs: string[], shards: number, o: Layout): void {
  fs.mkdirSync(dir, { recursive: true });
  const per = Math.ceil(docs.length / shards);
  const d = o.format === 'csv' ? ',' : o.format === 'csv;' ? ';' : '\t';
  for (let s = 0; s < shards; s++) {
    const lines = docs.slice(s * per, (s + 1) * per).map((text, i) => {
      if (o.format !== 'jsonl') return delimited(d, text, o.ids ? `d${s}-${i}` : undefined, i);
      return o.ids ? `{"id":"d${s}-${i}", "meta":{"k":[1, 2]},"text":${JSON.stringify(text)}}` : `{"text":${JSON.stringify(text)},"n":${i}}`;
    });
    // A broken record (with --skip-invalid): skipped, counted, and still a row of the row-number ids.
    if (o.invalid && o.format === 'jsonl' && r.chance(0.5)) lines.splice(r.int(lines.length + 1), 0, '{"text": broken');
    if (o.format !== 'jsonl') lines.unshift((o.ids ? ['id', 'text', 'n'] : ['text', 'n']).join(d));
    const body = lines.map((l) => l + (r.chance(0.2) ? '\r\n' : '\n')).join('');
    const name = `part-${String(s).padStart(2, '0')}.${o.format === 'jsonl' ? 'jsonl' : o.format === 'tsvq' ? 'tsv' : 'csv'}`;
    if (r.chance(0.25)) fs.writeFileSync(path.join(dir, `${name}.gz`), zlib.gzipSync(body));
    else fs.writeFileSync(path.join(dir, name), body);
  }
}

/** One drawn option set of `neardup spans` (argv words), and what it writes. */
interface Drawn {
  args: string[];
  output: 'dedup' | 'annotate' | 'dry';
  removed?: 'tsv' | 'jsonl';
}

function drawOptions(r: ReturnType<typeof rng>, o: Layout): Drawn {
  const unit = r.pick(['line', 'paragraph', 'sentence', 'substring'] as const);
  const args = ['--unit', unit];
  if (unit === 'sentence' && r.chance(0.7)) args.push('--window', String(1 + r.int(3)));
  if (unit === 'substring') args.push('--min-length', String(1 + r.int(5)));
  if (r.chance(0.4)) args.push('--min-docs', String(1 + r.int(3)));
  if (r.chance(0.4)) args.push('--min-unit-words', String(r.int(3)));
  if (r.chance(0.5)) args.push('--min-doc-words', String(r.int(3)));
  if (r.chance(0.3)) args.push('--top', String(r.int(6)));
  if (r.chance(0.2)) args.push('--normalize', r.pick(['none', 'lowercase-collapse']));
  if (o.format === 'jsonl' && o.ids) args.push('--id-field', 'id');
  if (o.format !== 'jsonl') args.push('--text', 'text', ...(o.ids ? ['--id', 'id'] : []));
  if (o.format === 'csv;') args.push('--delimiter', ';');
  if (o.format === 'tsvq') args.push('--tsv-quotes');
  if (o.format === 'csv' && r.chance(0.5)) args.push('--format', r.pick(['csv', 'auto']));
  if (o.invalid) args.push('--skip-invalid');
  const output = r.pick(['dedup', 'dedup', 'annotate', 'dry'] as const);
  if (output === 'annotate') args.push('--output', 'annotate');
  if (output === 'dry') args.push('--dry-run');
  const removed = r.pick([undefined, 'tsv', 'jsonl'] as const);
  return { args, output, removed };
}

/** Every file under `dir` (relative name → bytes). */
function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.set(path.relative(dir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name)));
  }
  return out;
}

/** The --json summary without its time. */
function summary(stdout: string): Record<string, unknown> {
  const { seconds: _s, ...rest } = JSON.parse(stdout) as Record<string, unknown>;
  return rest;
}

/** One set: the corpus in `dir`/in, the one-process answer in `dir`/one*. */
interface Case {
  dir: string;
  drawn: Drawn;
  want: { out: Map<string, Buffer>; audit?: Buffer; summary: Record<string, unknown> };
}

/** Runs `neardup spans` on a drawn set and keeps its answer. */
async function oneProcess(dir: string, drawn: Drawn): Promise<Case> {
  const audit = drawn.removed ? path.join(dir, `one.${drawn.removed}`) : undefined;
  const r = await cli([
    'spans',
    path.join(dir, 'in'),
    ...drawn.args,
    ...(drawn.output === 'dry' ? [] : ['--out', path.join(dir, 'one')]),
    ...(audit ? ['--removed', audit] : []),
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return { dir, drawn, want: { out: files(path.join(dir, 'one')), audit: audit ? fs.readFileSync(audit) : undefined, summary: summary(r.stdout) } };
}

/** Asserts that a job's outputs (under `tag`) are the one-process bytes. */
function assertSame(c: Case, tag: string, stdout: string, what: string): void {
  assert.deepEqual([...files(path.join(c.dir, `${tag}-out`)).keys()].sort(), [...c.want.out.keys()].sort(), `${what}: the output files`);
  for (const [name, bytes] of files(path.join(c.dir, `${tag}-out`)))
    assert.ok(bytes.equals(c.want.out.get(name)!), `${what}: ${name} differs\n${bytes.toString()}\n---\n${c.want.out.get(name)!.toString()}`);
  if (c.drawn.removed) assert.equal(fs.readFileSync(path.join(c.dir, `${tag}.${c.drawn.removed}`), 'utf8'), c.want.audit!.toString(), `${what}: the audit`);
  assert.deepEqual(summary(stdout), c.want.summary, `${what}: the summary`);
}

/** The job's own arguments for a set, writing under `tag`. */
function jobArgs(c: Case, tag: string): string[] {
  return [
    ...c.drawn.args,
    ...(c.drawn.output === 'dry' ? [] : ['--out-dir', path.join(c.dir, `${tag}-out`)]),
    ...(c.drawn.removed ? ['--removed', path.join(c.dir, `${tag}.${c.drawn.removed}`)] : []),
    '--work-dir',
    path.join(c.dir, `${tag}-work`),
    '--json',
  ];
}

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

  it('a worker process runs every stage: the one-process bytes', async () => {
    const k = 0;
    const c = cases[k] ?? (await oneProcessSet(k));
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
    assertSame(c, 'bull', r.stdout, 'BullMQ');
  });
});

describe('job spans with its work dir in S3', { skip: REQUIRE_ALL ? undefined : s3rverMissing() }, () => {
  let server: S3Server;
  before(async () => {
    server = await startS3rver('spans');
  });
  after(async () => {
    await server?.stop();
  });

  it('--local on an s3:// work dir: the one-process bytes', async () => {
    const c = cases[1] ?? (await oneProcessSet(1));
    const args = jobArgs(c, 's3').map((a) => (a === path.join(c.dir, 's3-work') ? 's3://spans/work' : a));
    const r = await neardupAsync(
      ['job', 'spans', path.join(c.dir, 'in'), ...args, '--task-bytes', '1', '--partitions', '2', '--local', '--s3-endpoint', server.endpoint],
      c.dir,
      S3_JOB_ENV,
    );
    assert.equal(r.code, 0, r.stderr);
    assertSame(c, 's3', r.stdout, 'S3 work dir');
  });
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A set drawn alone (when the differential suite's were not drawn). */
async function oneProcessSet(k: number): Promise<Case> {
  const r = rng(SEED * 1000 + k);
  const dir = path.join(root, `alone-${k}`);
  const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.2), format: r.pick(['jsonl', 'jsonl', 'jsonl', 'csv', 'csv;', 'tsvq'] as const) };
  writeCorpus(r, path.join(dir, 'in'), corpus(r, 6 + r.int(40)), 1 + r.int(4), o);
  return oneProcess(dir, drawOptions(r, o));
}

describe('job spans refuses what it cannot honour, by name (exit 2)', () => {
  const dir = path.join(root, 'refuse');
  before(() => {
    fs.mkdirSync(path.join(dir, 'in'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'in', 'a.jsonl'), '{"text":"a\\nb\\n"}\n');
    fs.writeFileSync(path.join(dir, 'b.parquet'), 'PAR1');
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
  it('Parquet shards (dedup output), text lines (annotate), standard input', async () => {
    let r = await cli(['job', 'spans', path.join(dir, 'b.parquet'), '--work-dir', path.join(dir, 'w-pq'), '--local', '--out-dir', path.join(dir, 'o')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /spans cannot rewrite Parquet yet/);
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
