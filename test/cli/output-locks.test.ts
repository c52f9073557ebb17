/**
 * src/cli/outputLocks.ts: the locks a run holds on its single output files (`.NAME.neardup-writing`
 * beside `--out` and `--removed`) are removed when the run is ended by SIGTERM, SIGINT or SIGHUP,
 * as on a normal exit: the next run would otherwise find a lock of a live process id (the pid
 * reused) or have to take a stale one over. The run is stopped while it holds its locks and waits
 * on its input (a FIFO nobody writes); it dies of the signal, leaves no output, no temp file and no
 * copy of the pipe. `job run` and `job report` lock the `--removed` their plan records (not on their
 * line) as they lock their own: another live run holding it is exit 2 naming its lock, before any
 * stage runs or anything is written. A signal while the locks are being taken leaves none behind
 * (each is tracked for removal in the same turn of the event loop as it is made).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { tmpDir } from '../cliUtil.js';
import { neardupAsync, neardupChild } from '../helpers/procs.js';

let root: string;
/** Runs still to stop at the end, a test failed or not (else they would wait on their FIFO for ever). */
const holders = new Set<() => Promise<void>>();
before(() => {
  root = fs.realpathSync(tmpDir());
});
after(async () => {
  for (const stop of holders) await stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Waits until `file` exists (the child took its lock), failing when the child exited first. */
async function appears(file: string, exited: () => boolean, timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  while (!fs.existsSync(file)) {
    if (exited() || Date.now() - t0 > timeoutMs) throw new Error(`${file} never appeared`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Another neardup run holding `file` (its --removed), waiting on a FIFO of `dir` nobody writes,
 * once its lock is there; `stop` ends it (SIGTERM).
 */
async function holder(dir: string, file: string): Promise<{ pid: number; stop: () => Promise<void> }> {
  const fifo = path.join(dir, `fifo-${Math.random().toString(36).slice(2)}.jsonl`);
  execFileSync('mkfifo', [fifo]);
  const h = neardupChild(['dedup', fifo, '--id-field', 'id', '--output', 'dedup', '--out', path.join(dir, 'h.jsonl'), '--removed', file, '-q'], { cwd: dir });
  const stop = async (): Promise<void> => {
    holders.delete(stop);
    if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGTERM');
    await h.done;
    fs.rmSync(fifo, { force: true });
  };
  holders.add(stop);
  await appears(path.join(dir, `.${path.basename(file)}.neardup-writing`), () => h.child.exitCode !== null);
  return { pid: h.child.pid!, stop };
}

const CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

describe('the output locks of a run ended by a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal}: --out's and --removed's locks are removed; no output is left`, async () => {
      const dir = fs.mkdtempSync(path.join(root, `${signal}-`));
      const tmp = fs.mkdtempSync(path.join(root, `tmp-${signal}-`));
      const fifo = path.join(dir, 'in.jsonl');
      execFileSync('mkfifo', [fifo]);
      const run = neardupChild(['dedup', fifo, '--id-field', 'id', '--output', 'dedup', '--out', 'X.jsonl', '--removed', 'removed.tsv', '-q'], {
        cwd: dir,
        env: { TMPDIR: tmp },
      });
      const locks = ['.X.jsonl.neardup-writing', '.removed.tsv.neardup-writing'].map((n) => path.join(dir, n));
      try {
        for (const lock of locks) await appears(lock, () => run.child.exitCode !== null);
        // Held by this run: its pid is in the lock.
        assert.match(fs.readFileSync(locks[0]!, 'utf8'), new RegExp(`^${run.child.pid}@`));
        run.child.kill(signal);
        const r = await run.done;
        // Died of the signal (the shell's 128 + n), not a clean exit.
        assert.ok(r.signal === signal || r.code === CODES[signal], `${signal}: code ${r.code}, signal ${r.signal}: ${r.stderr}`);
        assert.notEqual(r.code, 0);
        for (const lock of locks) assert.ok(!fs.existsSync(lock), `${lock} is left`);
        assert.deepEqual(fs.readdirSync(dir), ['in.jsonl'], 'no output, no temp file');
        assert.deepEqual(fs.readdirSync(tmp), [], 'no copy of the pipe');
      } finally {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
        await run.done;
      }
    });
  }
});

describe('a signal while the run takes its locks', () => {
  it('leaves none behind: the signal sent as soon as the first appears, the second being taken (8 rounds)', async () => {
    for (let round = 0; round < 8; round++) {
      const dir = fs.mkdtempSync(path.join(root, `race-${round}-`));
      const fifo = path.join(dir, 'in.jsonl');
      execFileSync('mkfifo', [fifo]);
      const run = neardupChild(['dedup', fifo, '--id-field', 'id', '--output', 'dedup', '--out', 'X.jsonl', '--removed', 'removed.tsv', '-q'], { cwd: dir });
      const locks = ['.X.jsonl.neardup-writing', '.removed.tsv.neardup-writing'].map((n) => path.join(dir, n));
      try {
        const t0 = Date.now();
        while (!fs.existsSync(locks[0]!) && run.child.exitCode === null && Date.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 1));
        run.child.kill('SIGTERM');
        const r = await run.done;
        assert.notEqual(r.code, 0);
        for (const lock of locks) assert.ok(!fs.existsSync(lock), `round ${round}: ${lock} is left`);
      } finally {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
        await run.done;
      }
    }
  });
});

describe("job run and job report: the plan's --removed", () => {
  it('a live run holding it refuses them (exit 2 naming the lock, nothing written); once it is gone they write it; a --removed on the line is theirs instead', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'job-'));
    const input = path.join(dir, 'in.jsonl');
    // Every third document a copy of the one before: the audit lists some.
    fs.writeFileSync(
      input,
      Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `a${i}`, text: `note ${i - (i % 3 === 2 ? 1 : 0)}: a flat near the station, a view` }) + '\n')
        .join(''),
    );
    const removed = path.join(dir, 'removed.tsv');
    const lock = path.join(dir, '.removed.tsv.neardup-writing');
    const work = path.join(dir, 'work');
    const plan = await neardupAsync(
      ['job', 'plan', input, '--work-dir', work, '--id-field', 'id', '--output', 'dedup', '--out-dir', path.join(dir, 'out'), '--removed', removed, '-q'],
      dir,
    );
    assert.equal(plan.code, 0, plan.stderr);
    const refused = (r: { code: number; stderr: string }, pid: number): void => {
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^neardup: --removed ${removed} is being written by another run \\(${pid}@`));
      assert.ok(r.stderr.includes(`in ${lock})`), r.stderr);
    };
    const jobRun = ['job', 'run', '--work-dir', work, '--local', '-q'];
    const jobReport = ['job', 'report', '--work-dir', work, '-q'];

    let h = await holder(dir, removed);
    refused(await neardupAsync(jobRun, dir), h.pid);
    assert.ok(!fs.existsSync(removed), 'job run wrote no audit');
    assert.ok(!fs.existsSync(path.join(work, 'sign')) || fs.readdirSync(path.join(work, 'sign')).length === 0, 'no stage ran');
    await h.stop();
    const ran = await neardupAsync(jobRun, dir);
    assert.equal(ran.code, 0, ran.stderr);
    const audit = fs.readFileSync(removed, 'utf8');
    assert.ok(audit.split('\n').length > 3, 'the audit lists removals');
    assert.ok(!fs.existsSync(lock), 'job run released the lock');

    h = await holder(dir, removed);
    fs.writeFileSync(removed, 'left alone\n');
    refused(await neardupAsync(jobReport, dir), h.pid);
    assert.equal(fs.readFileSync(removed, 'utf8'), 'left alone\n');
    // --removed on the line: the plan's is not written, so not locked.
    const elsewhere = await neardupAsync([...jobReport, '--removed', path.join(dir, 'other.tsv')], dir);
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'other.tsv'), 'utf8'), audit);
    await h.stop();
    const reported = await neardupAsync(jobReport, dir);
    assert.equal(reported.code, 0, reported.stderr);
    assert.equal(fs.readFileSync(removed, 'utf8'), audit);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.neardup-writing')), []);
  });
});

describe('--out naming a directory of output shards', () => {
  /** A directory of two shards (ids a… and b…, every third document a copy of the one before). */
  const shardsIn = (dir: string): string => {
    const input = path.join(dir, 'in');
    fs.mkdirSync(input);
    for (const tag of ['a', 'b'])
      fs.writeFileSync(
        path.join(input, `${tag}.jsonl`),
        Array.from(
          { length: 12 },
          (_, i) => JSON.stringify({ id: `${tag}${i}`, text: `${tag} note ${i - (i % 3 === 2 ? 1 : 0)}: a flat near the station` }) + '\n',
        )
          .join(''),
      );
    return input;
  };
  const COMMANDS: Record<string, (input: string, out: string) => string[]> = {
    'dedup of a directory of shards': (input, out) => ['dedup', input, '--id-field', 'id', '--output', 'dedup', '--out', out, '-q'],
    'dedup of several inputs': (
      input,
      out,
    ) => ['dedup', path.join(input, 'a.jsonl'), path.join(input, 'b.jsonl'), '--id-field', 'id', '--output', 'annotate', '--out', out, '-q'],
    'spans of a directory of shards': (input, out) => ['spans', input, '--id-field', 'id', '--out', out, '-q'],
  };
  for (const [name, command] of Object.entries(COMMANDS)) {
    it(`${name}: takes the directory's lock only, not a file lock beside it`, async () => {
      const dir = fs.mkdtempSync(path.join(root, 'outdir-'));
      const input = shardsIn(dir);
      const out = path.join(dir, 'out');
      // A file lock beside the directory held by a live process (this one): not the directory's lock.
      const beside = path.join(dir, '.out.neardup-writing');
      fs.writeFileSync(beside, `${process.pid}@${hostname()} 2026-01-01T00:00:00Z\n`);
      const r = await neardupAsync(command(input, out), dir);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(fs.readdirSync(out).sort(), ['_SUCCESS', 'a.jsonl', 'b.jsonl']);
      assert.ok(fs.existsSync(beside), 'left alone');
      // The directory's own lock, held by a live process, refuses the run.
      fs.writeFileSync(path.join(out, '.neardup-writing'), `${process.pid}@${hostname()} 2026-01-01T00:00:00Z\n`);
      const again = await neardupAsync(command(input, out), dir);
      assert.equal(again.code, 2, again.stderr);
      assert.match(again.stderr, new RegExp(`^neardup: output directory ${out} is being written by another run \\(${process.pid}@`));
    });
  }

  it('dedup of one file into an existing --out DIR: DIR/NAME, the file it writes, is locked', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'into-'));
    const input = path.join(shardsIn(dir), 'a.jsonl');
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const lock = path.join(out, '.a.jsonl.neardup-writing');
    fs.writeFileSync(lock, `${process.pid}@${hostname()} 2026-01-01T00:00:00Z\n`);
    const args = ['dedup', input, '--id-field', 'id', '--output', 'dedup', '--out', out, '-q'];
    const r = await neardupAsync(args, dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^neardup: --out ${path.join(out, 'a.jsonl')} is being written by another run \\(${process.pid}@`));
    assert.deepEqual(fs.readdirSync(out), [path.basename(lock)], 'nothing written');
    fs.rmSync(lock);
    const ok = await neardupAsync(args, dir);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(fs.readdirSync(out), ['a.jsonl'], 'written, no lock left');
  });

  it('--output pairs of a directory of shards: --out is one file, locked beside it', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'outfile-'));
    const input = shardsIn(dir);
    const out = path.join(dir, 'pairs.tsv');
    fs.writeFileSync(path.join(dir, '.pairs.tsv.neardup-writing'), `${process.pid}@${hostname()} 2026-01-01T00:00:00Z\n`);
    const r = await neardupAsync(['dedup', input, '--id-field', 'id', '--output', 'pairs', '--out', out, '-q'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^neardup: --out ${out} is being written by another run \\(${process.pid}@`));
    assert.ok(!fs.existsSync(out));
  });
});
