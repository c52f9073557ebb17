/**
 * The single output files of a command (`--out`, `--removed`, `--data`), locked for the whole run
 * before anything is read or written (the program's `preAction` hook, for every command) and
 * released when the command ends, failed or not (src/cli/program.ts): two runs on one `--out X
 * --removed Y` cannot leave X from one and Y from the other. The lock is the output directory's
 * (src/io/write/outDir.ts): another live run's is exit 2 naming it, a dead process's is taken over.
 * Standard output and `s3://` names (written by this run's upload alone) take none.
 * @module
 */
import type { Command } from 'commander';
import { isS3Url } from '../io/s3/client.js';
import { lockOutputFile } from '../io/write/outDir.js';

/** Options whose value is one file the command writes (`--out-dir` has the directory's own lock). */
const FILE_OPTIONS = ['out', 'removed', 'data'];

/** Commands that record outputs for other processes (a plan) and write none themselves. */
const RECORD_ONLY = new Set(['plan', 'submit', 'stage', 'worker']);

/**
 * Locks the local single output files `cmd` was given, in option order; returns what releases
 * them. When one is refused, those already taken are released first.
 */
export async function lockOutputFiles(cmd: Command): Promise<() => Promise<void>> {
  const releases: (() => Promise<void>)[] = [];
  const held = new Set<string>();
  const release = async (): Promise<void> => {
    for (const r of releases.splice(0).reverse()) await r();
  };
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.push(c.name());
  if (names.some((n) => RECORD_ONLY.has(n)) || cmd.getOptionValue('planOnly') === true) return release;
  try {
    for (const key of FILE_OPTIONS) {
      const value: unknown = cmd.getOptionValue(key);
      // A dry run writes no --out (its --removed audit, yes).
      if (typeof value !== 'string' || value === '' || value === '-' || isS3Url(value) || (key === 'out' && cmd.getOptionValue('dryRun') === true)) continue;
      const option = cmd.options.find((o) => o.attributeName() === key);
      const r = await lockOutputFile(value, option?.long ?? `--${key}`, held);
      if (r) releases.push(r);
    }
  } catch (e) {
    await release();
    throw e;
  }
  return release;
}
