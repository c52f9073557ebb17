/**
 * Test helper: the servers a test file starts die with it. The test runner kills a file that passes
 * its time limit, and that file's `after` hooks never run: its s3rver, Redis, PostgreSQL, Slurm
 * daemons and neardup workers would live on, holding ports, memory and CPU for the rest of the run.
 * `setpriv --pdeathsig` (util-linux, on every Debian) sets the parent-death signal and then execs
 * the program in its own place, so the child's pid, signals and pipes are the program's as before.
 */
import { spawnSync } from 'node:child_process';

let setpriv: string | null | undefined;

/** The command and arguments that run `file args` with SIGTERM sent to it when this process dies (as they are where setpriv is missing). */
export function leashed(file: string, args: readonly string[]): [string, string[]] {
  if (setpriv === undefined) {
    const r = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' });
    setpriv = r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : null;
  }
  return setpriv ? [setpriv, ['--pdeathsig', 'TERM', file, ...args]] : [file, [...args]];
}
