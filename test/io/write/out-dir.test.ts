/**
 * src/io/write/outDir.ts: a reused output directory. For `neardup dedup --out-dir` and `neardup job dedup
 * --local --out-dir` (and an `s3://` prefix, staged), a directory that holds files this run will not
 * write is refused (exit 2, naming them, nothing written), one holding only this run's names is
 * rewritten, and `_SUCCESS` lists exactly the shards it vouches for. Drawn over every pair of
 * shard counts: a first run over A shards, a second over B shards into the same directory. Runs
 * writing one directory, or one --out and --removed pair, at once: the second is refused by the
 * first's lock, which a dead process's leaves to be taken over.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { mainJs, tmpDir } from '../../cliUtil.js';
import { neardupAsync } from '../../helpers/procs.js';
import { lockOutputDirectory, OUTPUT_LOCK } from '../../../src/io/write/outDir.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { getObjects, putObject, S3_ENV, s3rverMissing, startS3rver, type S3Server } from '../../helpers/s3.js';

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

const ROUTES = {
  dedup: (input: string, out: string) => ['dedup', input, '--id-field', 'id', '--output', 'dedup', '--out-dir', out, '-q'],
  job: (
    input: string,
    out: string,
    root: string,
  ) => [
    'job',
    'dedup',
    input,
    '--id-field',
    'id',
    '--local',
    '--work-dir',
    fs.mkdtempSync(path.join(root, 'work-')),
    '--output',
    'dedup',
    '--out-dir',
    out,
    '-q',
  ],
};

describe('a reused --out-dir', () => {
  for (const [route, args] of Object.entries(ROUTES)) {
    it(`${route}: files the run will not write are refused; its own names are rewritten; _SUCCESS lists the shards`, async () => {
      const root = fs.realpathSync(tmpDir());
      for (const a of [1, 2, 4]) {
        for (const b of [1, 2, 4]) {
          const out = path.join(root, `out-${a}-${b}`);
          const first = await cliInProcess(args(shards(root, 'x', a), out, root));
          assert.equal(first.code, 0, first.stderr);
          const names = Array.from({ length: a }, (_, i) => `part-000${i}.jsonl`);
          assert.equal(fs.readFileSync(path.join(out, '_SUCCESS'), 'utf8'), names.map((n) => `${n}\n`).join(''));
          const before = new Map(fs.readdirSync(out).map((f) => [f, fs.readFileSync(path.join(out, f))]));
          const second = await cliInProcess(args(shards(root, 'y', b), out, root));
          if (b >= a) {
            // Every file there is one this run writes: rewritten, and vouched for.
            assert.equal(second.code, 0, `${a}→${b}: ${second.stderr}`);
            assert.equal(fs.readFileSync(path.join(out, '_SUCCESS'), 'utf8'), Array.from({ length: b }, (_, i) => `part-000${i}.jsonl\n`).join(''));
            assert.match(fs.readFileSync(path.join(out, 'part-0000.jsonl'), 'utf8'), /"y0a"/);
          } else {
            assert.equal(second.code, 2, `${a}→${b}: ${second.stderr}`);
            const stray = names.slice(b);
            for (const s of stray) assert.ok(second.stderr.includes(s), `${a}→${b} names ${s}: ${second.stderr}`);
            assert.match(second.stderr, /will not write.*Remove them/);
            // Nothing written, nothing removed: the first run's output is as it was, _SUCCESS included.
            assert.deepEqual(new Map(fs.readdirSync(out).map((f) => [f, fs.readFileSync(path.join(out, f))])), before);
          }
        }
      }
    });
  }

  it('hidden names (.crc, _logs) are not shards: left alone, not refused', async () => {
    const root = fs.realpathSync(tmpDir());
    const out = path.join(root, 'out');
    fs.mkdirSync(path.join(out, '_logs'), { recursive: true });
    fs.writeFileSync(path.join(out, '.part-0000.jsonl.crc'), 'x');
    fs.writeFileSync(path.join(out, '_logs', 'a.log'), 'x');
    const r = await cliInProcess(ROUTES.dedup(shards(root, 'x', 2), out));
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(out, '.part-0000.jsonl.crc')) && fs.existsSync(path.join(out, '_logs', 'a.log')));
  });

  it('an input shard whose output name is hidden (_SUCCESS, _x, .x) is refused by every route, nothing written (its records went under _SUCCESS, or where readers skip them, exit 0)', async () => {
    const root = fs.realpathSync(tmpDir());
    const dir = path.join(root, 'in');
    fs.mkdirSync(dir);
    for (const name of ['_SUCCESS', '_c.jsonl', '.d.jsonl', 'b.jsonl']) fs.writeFileSync(path.join(dir, name), doc(name, 1));
    const b = path.join(dir, 'b.jsonl');
    for (const hidden of ['_SUCCESS', '_c.jsonl', '.d.jsonl']) {
      const inputs = [path.join(dir, hidden), b];
      const runs = [
        ['dedup', ...inputs, '--format', 'jsonl', '--output', 'dedup', '--out', path.join(root, 'o-dedup'), '-q'],
        ['spans', ...inputs, '--format', 'jsonl', '--out', path.join(root, 'o-spans'), '-q'],
        ['job', 'spans', ...inputs, '--format', 'jsonl', '--local', '--work-dir', path.join(root, 'w-spans'), '--out-dir', path.join(root, 'o-job'), '-q'],
      ];
      for (const args of runs) {
        const r = await neardupAsync(args, root);
        assert.equal(r.code, 2, `${hidden}: ${args.slice(0, 2).join(' ')}: ${r.stderr}`);
        assert.ok(r.stderr.includes(hidden), r.stderr);
      }
      for (const o of ['o-dedup', 'o-spans', 'o-job', 'w-spans'])
        assert.ok(!fs.existsSync(path.join(root, o)) || fs.readdirSync(path.join(root, o)).length === 0, o);
    }
  });
});

/** The job routes that plan into a --work-dir and write shards into an --out-dir. */
const JOBS = {
  'job dedup': (
    input: string,
    work: string,
    out: string,
  ) => ['job', 'dedup', input, '--id-field', 'id', '--output', 'dedup', '--local', '--work-dir', work, '--output', 'dedup', '--out-dir', out, '-q'],
  'job spans': (input: string, work: string, out: string) => ['job', 'spans', input, '--id-field', 'id', '--local', '--work-dir', work, '--out-dir', out, '-q'],
  'job plan': (
    input: string,
    work: string,
    out: string,
  ) => ['job', 'plan', input, '--id-field', 'id', '--work-dir', work, '--output', 'dedup', '--out-dir', out, '-q'],
};

describe("a job's --out-dir and --work-dir", () => {
  for (const [route, args] of Object.entries(JOBS)) {
    it(`${route}: an --out-dir that is the work dir or holds it is refused (every spelling), and nothing is written`, async () => {
      const root = fs.realpathSync(tmpDir());
      const input = shards(root, 'x', 2);
      fs.mkdirSync(path.join(root, 'real'));
      fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
      // [work dir, out dir] that overlap: one directory (spelt alike, with ./ and ..; through a link), or the work dir inside.
      const cases: [string, string][] = [
        ['w', 'w'],
        ['w', './w/'],
        ['w/../v', 'v'],
        ['real/w', 'link/w'],
        ['o/w', 'o'],
        ['link/o/w', 'real/o'],
        ['o/a/b', './o'],
      ];
      for (const [work, out] of cases) {
        const r = await cliInProcess(args(input, path.join(root, work), path.join(root, out)));
        assert.equal(r.code, 2, `${work} ${out}: ${r.stderr}`);
        assert.match(r.stderr, /--out-dir .* (is|holds) --work-dir .*: its files would sit among the output shards/);
        assert.deepEqual(fs.readdirSync(path.join(root, 'real')), [], `${work} ${out}: nothing written`);
        for (const d of ['w', 'v', 'o']) assert.ok(!fs.existsSync(path.join(root, d)), `${work} ${out}: ${d} not created`);
      }
    });

    it(`${route}: a refused --out-dir leaves no plan: the command corrected (same --work-dir) runs`, async () => {
      const root = fs.realpathSync(tmpDir());
      const input = shards(root, 'x', 2);
      const stale = path.join(root, 'stale');
      fs.mkdirSync(stale);
      fs.writeFileSync(path.join(stale, 'old.jsonl'), doc('old', 1));
      const work = path.join(root, 'work');
      const refused = await cliInProcess(args(input, work, stale));
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /old\.jsonl/);
      assert.doesNotMatch(refused.stderr, /--out\)/, 'the hint names --out-dir, not --out');
      assert.ok(!fs.existsSync(work), 'no plan left in the work dir');
      const ok = await cliInProcess(args(input, work, path.join(root, 'clean')));
      assert.equal(ok.code, 0, ok.stderr);
    });
  }
});

// The hostile review found job dedup and job spans writing into an --out-dir inside their input
// directory (exit 0), which neardup dedup and neardup spans refuse: a rerun would read the output
// shards as input. Every route, every spelling of "inside": nested, through a link, a glob's base.
describe("an --out-dir inside the input's directory", () => {
  it('is refused by every route (the one-process commands and the jobs), naming it, and nothing is written', async () => {
    const root = fs.realpathSync(tmpDir());
    const input = shards(root, 'x', 2);
    fs.symlinkSync(input, path.join(root, 'inlink'));
    const routes: Record<string, (inp: string, out: string) => string[]> = {
      dedup: (inp, out) => ['dedup', inp, '--id-field', 'id', '--output', 'dedup', '--out-dir', out, '-q'],
      spans: (inp, out) => ['spans', inp, '--id-field', 'id', '--out', out, '-q'],
      ...Object.fromEntries(Object.entries(JOBS).map(([k, f]) => [k, (inp: string, out: string) => f(inp, path.join(root, `w-${k.replace(' ', '-')}`), out)])),
    };
    const cases: [string, string][] = [
      [input, path.join(input, 'clean')],
      [input, path.join(input, 'a', 'b')],
      [path.join(root, 'inlink'), path.join(input, 'clean')],
      [input, path.join(root, 'inlink', 'clean')],
      [path.join(input, '*.jsonl'), path.join(input, 'clean')],
    ];
    for (const [route, args] of Object.entries(routes)) {
      for (const [inp, out] of cases) {
        const r = await cliInProcess(args(inp, out));
        assert.equal(r.code, 2, `${route} ${inp} -> ${out}: ${r.stderr}`);
        assert.match(r.stderr, /overlaps the input/, `${route} ${inp} -> ${out}`);
        assert.deepEqual(fs.readdirSync(input).sort(), ['part-0000.jsonl', 'part-0001.jsonl'], `${route} ${inp} -> ${out}: nothing written`);
      }
    }
  });
});

// The hostile review found the jobs planning their --work-dir inside the input directory (exit 0):
// its files (pairs.txt, clusters.jsonl) then sat among the user's shards, read by the next run.
describe("a --work-dir inside the input's directory", () => {
  it('is refused by every job route, naming it, and nothing is written', async () => {
    const root = fs.realpathSync(tmpDir());
    const input = shards(root, 'x', 2);
    fs.symlinkSync(input, path.join(root, 'inlink'));
    const cases: [string, string][] = [
      [input, path.join(input, 'work')],
      [input, path.join(input, 'a', 'b')],
      [path.join(root, 'inlink'), path.join(input, 'work')],
      [input, path.join(root, 'inlink', 'work')],
      [path.join(input, '*.jsonl'), path.join(input, 'work')],
    ];
    for (const [route, args] of Object.entries(JOBS)) {
      for (const [inp, work] of cases) {
        const r = await cliInProcess(args(inp, work, path.join(root, `o-${route.replace(' ', '-')}`)));
        assert.equal(r.code, 2, `${route} ${inp} -> ${work}: ${r.stderr}`);
        assert.match(r.stderr, /--work-dir .* overlaps the input/, `${route} ${inp} -> ${work}`);
        assert.deepEqual(fs.readdirSync(input).sort(), ['part-0000.jsonl', 'part-0001.jsonl'], `${route} ${inp} -> ${work}: nothing written`);
      }
    }
  });
});

describe('--out-dir with an output that is one file', () => {
  it('job dedup / job plan --output pairs|clusters --out-dir: refused naming --out-dir, never ignored (the pairs went to standard output, exit 0)', async () => {
    const root = fs.realpathSync(tmpDir());
    const input = shards(root, 'x', 2);
    for (const cmd of [['job', 'dedup', '--local'], ['job', 'plan']]) {
      for (const output of ['pairs', 'clusters']) {
        const work = path.join(root, `w-${cmd[1]}-${output}`);
        const r = await cliInProcess([...cmd, input, '--id-field', 'id', '--work-dir', work, '--output', output, '--out-dir', path.join(root, 'od')]);
        assert.equal(r.code, 2, `${cmd.join(' ')} ${output}: ${r.stderr}`);
        assert.match(r.stderr, /--out-dir applies to --output dedup or annotate/);
        assert.ok(!fs.existsSync(work) && !fs.existsSync(path.join(root, 'od')), 'nothing written');
      }
    }
  });
});

// Two jobs planned over one --out-dir (two work dirs): test/io/write/out-claim.test.ts.

describe('a reused s3:// output prefix', { skip: s3rverMissing() }, () => {
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

  it('dedup --out-dir s3://…: objects the run did not write are refused before any upload', async () => {
    const root = fs.realpathSync(tmpDir());
    await putObject(s3, 'bkt', 'clean/part-0003.jsonl', doc('old', 3));
    const r = await cliInProcess([
      'dedup',
      shards(root, 'x', 2),
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out-dir',
      's3://bkt/clean/',
      '--s3-endpoint',
      s3.endpoint,
      '-q',
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /part-0003\.jsonl/);
    assert.deepEqual([...(await getObjects(s3, 'bkt', 'clean/')).keys()], ['part-0003.jsonl'], 'nothing uploaded');
    const ok = await cliInProcess([
      'dedup',
      shards(root, 'y', 4),
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out-dir',
      's3://bkt/clean/',
      '--s3-endpoint',
      s3.endpoint,
      '-q',
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const got = await getObjects(s3, 'bkt', 'clean/');
    assert.equal(got.get('_SUCCESS')?.toString(), 'part-0000.jsonl\npart-0001.jsonl\npart-0002.jsonl\npart-0003.jsonl\n');
  });
});

describe('runs writing one --out-dir at once', () => {
  it('never mix their shards: each run writes the whole directory or is refused naming the other (processes racing, 6 rounds)', async () => {
    const root = fs.realpathSync(tmpDir());
    const a = shards(root, 'x', 4);
    const b = shards(root, 'y', 1);
    for (let round = 0; round < 6; round++) {
      const out = path.join(root, `race-${round}`);
      const runs = await Promise.all([a, b, a].map((input) => neardupAsync(ROUTES.dedup(input, out), root)));
      const won = runs.filter((r) => r.code === 0);
      assert.ok(won.length >= 1, runs.map((r) => r.stderr).join('\n'));
      for (const r of runs) {
        assert.ok(r.code === 0 || r.code === 2, r.stderr);
        if (r.code === 2) assert.match(r.stderr, /being written by another run|will not write/);
      }
      // The directory is one run's whole output: the shards _SUCCESS lists, and nothing else visible.
      const listed = fs.readFileSync(path.join(out, '_SUCCESS'), 'utf8').split('\n').filter(Boolean);
      const visible = fs.readdirSync(out).filter((f) => !f.startsWith('.') && !f.startsWith('_')).sort();
      assert.deepEqual(visible, listed.sort(), `round ${round}`);
      const other = listed.length === 4 ? 'y' : 'x';
      for (const f of listed)
        assert.doesNotMatch(fs.readFileSync(path.join(out, f), 'utf8'), new RegExp(`"${other}\\d`), `round ${round}: ${f} from the other run`);
      assert.ok(!fs.existsSync(path.join(out, OUTPUT_LOCK)), 'the lock is released');
    }
  });

  it('a lock left by a process that is gone is taken over; a live one is refused', async () => {
    const dir = fs.realpathSync(tmpDir());
    fs.writeFileSync(path.join(dir, OUTPUT_LOCK), `999999999@${(await import('node:os')).hostname()} 2026-01-01T00:00:00Z\n`);
    const release = await lockOutputDirectory(dir);
    await assert.rejects(lockOutputDirectory(dir), /being written by another run/);
    await release();
    assert.ok(!fs.existsSync(path.join(dir, OUTPUT_LOCK)));
  });
});

describe('runs writing one --out and --removed at once', () => {
  const lockOf = (f: string): string => path.join(path.dirname(f), `.${path.basename(f)}${OUTPUT_LOCK}`);
  const locksIn = (dir: string): string[] => fs.readdirSync(dir).filter((f) => f.endsWith(OUTPUT_LOCK));
  /** `n` documents with ids `tag0…`, every third a copy of the one before (so --removed lists some). */
  const docs = (tag: string, n: number): string =>
    Array.from(
      { length: n },
      (_, i) => JSON.stringify({ id: `${tag}${i}`, text: `${tag} note ${i - (i % 3 === 2 ? 1 : 0)}: a flat near the station, a view\nand a garden` }) + '\n',
    )
      .join('');
  const COMMANDS = {
    dedup: (input: string, out: string, removed: string) => ['dedup', input, '--id-field', 'id', '--output', 'dedup', '--out', out, '--removed', removed, '-q'],
    spans: (input: string, out: string, removed: string) => ['spans', input, '--id-field', 'id', '--out', out, '--removed', removed, '-q'],
  };

  for (const [name, command] of Object.entries(COMMANDS)) {
    it(`${name}: a second run while the first holds the files exits 2 naming the lock; the first writes both, whole; no lock is left`, async () => {
      const root = fs.realpathSync(tmpDir());
      const [out, removed] = [path.join(root, 'out.jsonl'), path.join(root, 'removed.tsv')];
      const [a, b] = [path.join(root, 'a.jsonl'), path.join(root, 'b.jsonl')];
      fs.writeFileSync(a, docs('a', 300));
      fs.writeFileSync(b, docs('b', 40));
      // What the first run writes alone.
      const ref = await neardupAsync(command(a, path.join(root, 'ref.jsonl'), path.join(root, 'ref.tsv')), root);
      assert.equal(ref.code, 0, ref.stderr);
      // The first run reads standard input, held open (a slow input) until the second has been refused.
      const first = spawn(process.execPath, [mainJs, ...command('-', out, removed)], { cwd: root, stdio: ['pipe', 'ignore', 'pipe'] });
      let firstErr = '';
      first.stderr!.on('data', (d: Buffer) => (firstErr += d.toString()));
      const firstDone = new Promise<number | null>((resolve) => first.on('close', (code) => resolve(code)));
      for (const t0 = Date.now(); !fs.existsSync(lockOf(removed));) {
        assert.ok(Date.now() - t0 < 60_000 && first.exitCode === null, `the first run never took its locks: ${firstErr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const second = await neardupAsync(command(b, out, removed), root);
      assert.equal(second.code, 2, second.stderr);
      assert.match(second.stderr, new RegExp(`^neardup: --out ${out} is being written by another run \\(${first.pid}@`));
      assert.ok(second.stderr.includes(`in ${lockOf(out)})`), second.stderr);
      assert.ok(!fs.existsSync(out) && !fs.existsSync(removed), 'the second run wrote nothing');
      first.stdin!.end(fs.readFileSync(a));
      assert.equal(await firstDone, 0, firstErr);
      assert.equal(fs.readFileSync(out, 'utf8'), fs.readFileSync(path.join(root, 'ref.jsonl'), 'utf8'));
      assert.equal(fs.readFileSync(removed, 'utf8'), fs.readFileSync(path.join(root, 'ref.tsv'), 'utf8'));
      assert.ok(fs.readFileSync(removed, 'utf8').split('\n').length > 3, 'the audit lists removals');
      assert.deepEqual(locksIn(root), []);
      // A run that fails (an invalid record) releases its locks too.
      fs.writeFileSync(b, '{"id": "b0", "text": \n');
      const failed = await neardupAsync(command(b, out, removed), root);
      assert.equal(failed.code, 2, failed.stderr);
      assert.deepEqual(locksIn(root), []);
    });
  }

  it("a dead process's locks are taken over; a live run's lock refuses job dedup and job spans too (exit 2, nothing planned)", async () => {
    const root = fs.realpathSync(tmpDir());
    const host = (await import('node:os')).hostname();
    const [out, removed, input] = [path.join(root, 'out.jsonl'), path.join(root, 'removed.tsv'), path.join(root, 'in.jsonl')];
    fs.writeFileSync(input, docs('a', 30));
    for (const f of [out, removed]) fs.writeFileSync(lockOf(f), `999999999@${host} 2026-01-01T00:00:00Z\n`);
    const r = await neardupAsync(COMMANDS.dedup(input, out, removed), root);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(out) && fs.existsSync(removed));
    assert.deepEqual(locksIn(root), []);
    // This test's own process is alive: its lock stands for a run in progress.
    fs.writeFileSync(lockOf(removed), `${process.pid}@${host} 2026-01-01T00:00:00Z\n`);
    const jobs = [
      [
        'job',
        'dedup',
        input,
        '--id-field',
        'id',
        '--output',
        'dedup',
        '--local',
        '--work-dir',
        path.join(root, 'w-dedup'),
        '--out-dir',
        path.join(root, 'o'),
        '--removed',
        removed,
      ],
      ['job', 'spans', input, '--local', '--work-dir', path.join(root, 'w-spans'), '--out-dir', path.join(root, 'o'), '--removed', removed],
    ];
    for (const args of jobs) {
      const j = await neardupAsync(args, root);
      assert.equal(j.code, 2, j.stderr);
      assert.ok(j.stderr.includes(`--removed ${removed} is being written by another run (${process.pid}@${host}`), j.stderr);
      assert.ok(!fs.existsSync(path.join(root, `w-${args[1]}`)), 'nothing planned');
    }
    assert.deepEqual(locksIn(root), [path.basename(lockOf(removed))], 'the live lock is left alone');
  });
});
