/**
 * Test helper: inputs turned into named pipes (FIFOs) at their own paths, each filled by a writer
 * process, so a run can be compared with the same run on the regular files (same names, same bytes).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Run } from '../cliUtil.js';
import { neardupChild } from './procs.js';

/**
 * Turns each file of `names` (in `dir`) into a FIFO at the same path that a writer process fills
 * with the file's bytes (`hold`: and keeps open, without ending); `restore` puts the files back.
 */
export function toFifos(dir: string, names: readonly string[], hold = false): { writers: ChildProcess[]; restore: () => Promise<void> } {
  const saved = names.map((n) => fs.readFileSync(path.join(dir, n)));
  const srcOf = (i: number): string => path.join(dir, `.fifo-src-${i}-${path.basename(names[i]!)}`);
  const writers = names.map((n, i) => {
    const fifo = path.join(dir, n);
    fs.writeFileSync(srcOf(i), saved[i]!);
    fs.rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    // `exec sleep`: the holding writer stays this one process, killed by its pid.
    return spawn('sh', ['-c', `exec > "$2"; cat "$1"; ${hold ? 'exec sleep 600' : ''}`, 'sh', srcOf(i), fifo], { stdio: 'ignore' });
  });
  const restore = async (): Promise<void> => {
    await Promise.all(writers.map((w) => {
      const exited = w.exitCode !== null || w.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => w.once('exit', () => r()));
      w.kill('SIGKILL');
      return exited;
    }));
    names.forEach((n, i) => {
      fs.rmSync(path.join(dir, n), { force: true });
      fs.rmSync(srcOf(i), { force: true });
      fs.writeFileSync(path.join(dir, n), saved[i]!);
    });
  };
  return { writers, restore };
}

/** A fresh, empty TMPDIR under `dir` for one run, to see the copies it leaves. */
export function freshTmp(dir: string): string {
  const t = fs.mkdtempSync(path.join(dir, 'tmp-'));
  fs.chmodSync(t, 0o755);
  return t;
}

/**
 * `neardup args` run in `dir` with the files of `pipes` read from FIFOs at their paths; asserts the
 * run left nothing in its TMPDIR (the copies of the pipes are removed).
 */
export async function throughFifos(dir: string, args: readonly string[], pipes: readonly string[]): Promise<Run> {
  const fifos = toFifos(dir, pipes);
  const tmp = freshTmp(dir);
  try {
    const run = neardupChild([...args], { cwd: dir, env: { TMPDIR: tmp } });
    // A run that opens a FIFO twice waits for ever on the second: killed, and said so.
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 120_000);
    const r = await run.done;
    clearTimeout(timer);
    assert.deepEqual(fs.readdirSync(tmp), [], `${args.join(' ')}: the copies of the pipes are removed`);
    return { code: r.code ?? -1, stdout: r.stdout, stderr: r.signal ? `${r.stderr}\n(killed by ${r.signal}: it waited on a FIFO)` : r.stderr };
  } finally {
    await fifos.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
