/**
 * src/cli/outputLocks.ts: the locks a run holds on its single output files (`.NAME.neardup-writing`
 * beside `--out` and `--removed`) are removed when the run is ended by SIGTERM, SIGINT or SIGHUP,
 * as on a normal exit: the next run would otherwise find a lock of a live process id (the pid
 * reused) or have to take a stale one over. The run is stopped while it holds its locks and waits
 * on its input (a FIFO nobody writes); it dies of the signal, leaves no output, no temp file and no
 * copy of the pipe.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../cliUtil.js';
import { neardupChild } from '../helpers/procs.js';

let root: string;
before(() => {
  root = fs.realpathSync(tmpDir());
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Waits until `file` exists (the child took its lock), failing when the child exited first. */
async function appears(file: string, exited: () => boolean, timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  while (!fs.existsSync(file)) {
    if (exited() || Date.now() - t0 > timeoutMs) throw new Error(`${file} never appeared`);
    await new Promise((r) => setTimeout(r, 50));
  }
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
