/**
 * The kill -9 tests' writer: runs test/helpers/store-writer.ts on a store until enough adds are
 * acknowledged, then kills it with SIGKILL (mid-write, most of the time).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Adds to `spec` in a child (batches of `batch`, or singles and tens when omitted) until `count` ids
 * are acknowledged; returns them. `env` goes to the child too (test/helpers/store-writer.ts).
 */
export async function killWriter(spec: string, count: number, batch?: number, env: Record<string, string> = {}): Promise<string[]> {
  const args = [path.join(here, 'store-writer.js'), spec, ...(batch === undefined ? [] : [String(batch)])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const acked: string[] = [];
  let buf = '';
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited early: code ${code}`))));
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      acked.push(...lines);
      if (acked.length >= count && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
  });
  return acked;
}
