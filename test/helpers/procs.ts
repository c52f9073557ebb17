/**
 * Test helper: `neardup` child processes run asynchronously (several at once against one store, or
 * workers beside a job), and `neardup serve` children.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { leashed } from './leash.js';
import { mainJs } from '../cliUtil.js';

/** The outcome of an asynchronous `neardup` run. */
export interface AsyncRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `neardup args` as a child process without blocking this one (the developer's NEARDUP_DEBUG and NEARDUP_PROGRESS cleared). */
export function neardupChild(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): { child: ChildProcess; done: Promise<AsyncRun>; stderrMatch: (re: RegExp, timeoutMs?: number) => Promise<void> } {
  const child = spawn(process.execPath, [mainJs, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NEARDUP_DEBUG: '', NEARDUP_PROGRESS: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': the pipes are read to their end, so a message written just before exit is kept.
  const done = new Promise<AsyncRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  // Waits on what the child said, not on a fixed sleep: a loaded machine starts Node slower.
  const stderrMatch = async (re: RegExp, timeoutMs = 120_000): Promise<void> => {
    const t0 = Date.now();
    while (!re.test(stderr)) {
      if (child.exitCode !== null || Date.now() - t0 > timeoutMs) throw new Error(`stderr never matched ${re}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, done, stderrMatch };
}

/** Runs `neardup args` to its end without blocking this one (so workers keep running meanwhile); a signal's exit is code -1. */
export async function neardupAsync(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await neardupChild(args, { cwd, env }).done;
  return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A running `neardup serve`. */
export interface ServeChild {
  url: string;
  child: ChildProcess;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `neardup serve --port 0 args`; resolves once it listens. */
export async function startServe(args: string[]): Promise<ServeChild> {
  const child = spawn(...leashed(process.execPath, [mainJs, 'serve', '--port', '0', ...args]), { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    child,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
