/**
 * The single output files of a command (`--out`, `--removed`, `--data`), locked for the whole run
 * before anything is read or written (the program's `preAction` hook, for every command) and
 * released when the command ends, failed or not (src/cli/program.ts): two runs on one `--out X
 * --removed Y` cannot leave X from one and Y from the other. The lock is the output directory's
 * (src/io/write/outDir.ts): another live run's is exit 2 naming it, a dead process's is taken over.
 * Standard output and `s3://` names (written by this run's upload alone) take none. `job run` and
 * `job report` write the files their plan records (`--removed` of `job plan`) unless their own line
 * names others: they lock those once they have read the plan ({@link lockPlannedOutputs}), released
 * with the others.
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { isS3Url } from '../io/s3/client.js';
import { lockOutputFile } from '../io/write/outDir.js';
import { resolveShards } from '../io/read/shards.js';
import type { InputFormat } from '../io/read/formats.js';
import { parseStoreSpec } from '../store/spec.js';

/** Options whose value is one file the command writes (`--out-dir`, and `--out` naming a directory of output shards, have the directory's own lock). */
const FILE_OPTIONS = ['out', 'removed', 'data'];

/** Commands that record outputs for other processes (a plan) and write none themselves. */
const RECORD_ONLY = new Set(['plan', 'submit', 'stage', 'worker']);

/** The locks a command's run holds: their files (one lock for a file named twice) and what releases each. */
interface HeldLocks {
  held: Set<string>;
  releases: (() => Promise<void>)[];
}
const runs = new WeakMap<Command, HeldLocks>();

/** Takes the lock of `value` (option `key` of `cmd`) into `run`, unless it is standard output or `s3://`. */
async function lockInto(run: HeldLocks, cmd: Command, key: string, value: string): Promise<void> {
  if (value === '' || value === '-' || isS3Url(value)) return;
  const option = cmd.options.find((o) => o.attributeName() === key);
  const r = await lockOutputFile(value, option?.long ?? `--${key}`, run.held);
  if (r) run.releases.push(r);
}

/**
 * The file `--out out` of `cmd` (its names up to the program, `names`) writes, to lock: undefined
 * for the directory of output shards of `dedup --output dedup|annotate` or `spans` of several
 * inputs, a directory of shards, a glob or `s3://` names (it has its own lock); `DIR/NAME` for
 * dedup's copy of one input file `NAME` into an existing directory `DIR`; else `out` (as
 * src/cli/dedup/run.ts, src/cli/dedup/output.ts and src/cli/spans/command.ts decide). Undefined too
 * for the directory `index backup` of a file store writes: the backup locks its work directory
 * (src/cli/index/command.ts).
 */
async function outFile(cmd: Command, names: readonly string[], out: string): Promise<string | undefined> {
  if (names[0] === 'backup' && names[1] === 'index') return backsUpFileStore(cmd) ? undefined : out;
  if (names.length !== 1 || (names[0] !== 'dedup' && names[0] !== 'spans')) return out;
  const output: unknown = cmd.getOptionValue('output');
  if (names[0] === 'dedup' && output !== 'dedup' && output !== 'annotate') return out;
  const args = cmd.args;
  if (args.length !== 1) return args.length > 1 ? undefined : out;
  const [input] = args as [string];
  if (input === '-') return out;
  if (isS3Url(input)) return undefined;
  const format: unknown = cmd.getOptionValue('format');
  if ((await resolveShards(input, typeof format === 'string' ? (format as InputFormat | 'auto') : 'auto').catch(() => undefined)) !== undefined)
    return undefined;
  const st = isS3Url(out) ? undefined : await stat(out).catch(() => undefined);
  return names[0] === 'dedup' && st?.isDirectory() ? path.join(out, path.basename(input)) : out;
}

/** Whether `index backup` (`cmd`) copies a file store: its `--out` is then a directory. */
function backsUpFileStore(cmd: Command): boolean {
  const store: unknown = cmd.getOptionValue('store');
  try {
    return typeof store === 'string' && parseStoreSpec(store).kind === 'file';
  } catch {
    return false; // the command refuses it by name
  }
}

/**
 * Locks the local single output files `cmd` was given, in option order; returns what releases
 * them (and those {@link lockPlannedOutputs} adds later). When one is refused, those already taken
 * are released first.
 */
export async function lockOutputFiles(cmd: Command): Promise<() => Promise<void>> {
  const run: HeldLocks = { held: new Set(), releases: [] };
  runs.set(cmd, run);
  const release = async (): Promise<void> => {
    for (const r of run.releases.splice(0).reverse()) await r();
  };
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.push(c.name());
  if (names.some((n) => RECORD_ONLY.has(n)) || cmd.getOptionValue('planOnly') === true) return release;
  try {
    for (const key of FILE_OPTIONS) {
      const value: unknown = cmd.getOptionValue(key);
      // A dry run writes no --out (its --removed audit, yes).
      if (typeof value !== 'string' || (key === 'out' && cmd.getOptionValue('dryRun') === true)) continue;
      // The directory of output shards has its own lock, taken as it is written (src/io/write/rewrite.ts).
      const file = key === 'out' ? await outFile(cmd, names, value) : value;
      if (file !== undefined) await lockInto(run, cmd, key, file);
    }
  } catch (e) {
    await release();
    throw e;
  }
  return release;
}

/**
 * For a command that writes the single output files a plan records (`job run`, `job report`): locks
 * those of `planned` its own line does not replace, as {@link lockOutputFiles} locks the line's, into
 * the same run (a file named by both takes one lock; all are released together when the command
 * ends). Call it once the plan is read, before anything is written. Another live run's lock is a
 * UsageError (exit 2) naming it.
 */
export async function lockPlannedOutputs(cmd: Command, planned: { out?: string; removed?: string }): Promise<void> {
  const run = runs.get(cmd);
  if (!run) throw new Error(`neardup ${cmd.name()}: its output files were not locked first (lockOutputFiles)`);
  for (const key of FILE_OPTIONS) {
    const value = planned[key as keyof typeof planned];
    if (value !== undefined && cmd.getOptionValue(key) === undefined) await lockInto(run, cmd, key, value);
  }
}
