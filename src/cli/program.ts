/**
 * The `neardup` program: global help, error handling and exit codes.
 * Exit codes: 0 success, 1 runtime failure, 2 usage or input error.
 * @module
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { isUserError } from '../common/errors.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { ArenaFullError } from '../parallel/setArena.js';
import { tooManyPairsMessage } from './tooManyPairs.js';
import { flagHint } from './flagHints.js';
import { neardupRoot } from '../web/assets.js';
import { resolveS3Paths, type S3Run } from './s3paths.js';
import { lockOutputFiles } from './outputLocks.js';
import { s3Display } from '../io/s3/staging.js';
import { setZstdLevel } from '../io/codec/zstd.js';
import { readingInputs } from '../io/read/inputStamps.js';

/** Exit code of a successful run. */
export const EXIT_OK = 0;
/** Exit code of an unexpected runtime failure (a bug, a full disk…). */
export const EXIT_FAILURE = 1;
/** Exit code of a usage mistake or bad input. */
export const EXIT_USAGE = 2;

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(neardupRoot(), 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The root command, without subcommands: main.ts registers them. */
export function createProgram(): Command {
  return new Command('neardup')
    .description('Find near-duplicate documents: shingles → MinHash → LSH → verified pairs → clusters.')
    .version(version(), '-V, --version')
    .option('--s3-endpoint <url>', 'an S3-compatible store (http://host:port) for the s3:// names, anywhere on the line (default: AWS_ENDPOINT_URL)')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Examples:
  $ neardup dedup ads.tsv --text 'Title,Short Description' > pairs.tsv
  $ neardup dedup ads.tsv --text Title --output dedup --out unique.tsv
  $ neardup dedup docs.jsonl --text-field body --id-field meta.id --output clusters
  $ neardup params --threshold 0.8 --num-perm 128
  $ neardup compare a.txt b.txt
  $ neardup bench ads.tsv --text 'Title,Short Description' -k 10 --normalize lowercase-collapse

Inputs and outputs may be s3://bucket/key names (a key, a glob of keys, or a prefix); for an
S3-compatible store add --s3-endpoint http://host:port (or set AWS_ENDPOINT_URL). See docs/distributed.md.

Exit codes: 0 ok, 1 runtime failure, 2 usage or input error. See docs/cli.md.`,
    );
}

function applyToAll(cmd: Command, write: (s: string) => void): void {
  cmd.exitOverride();
  // Each command's --help lists the program's own options too (--s3-endpoint).
  cmd.configureHelp({ showGlobalOptions: true });
  cmd.configureOutput({ writeErr: write, outputError: (s, w) => w(s.startsWith('error:') ? `neardup: ${s}` : s) });
  for (const sub of cmd.commands) applyToAll(sub, write);
}

/** Per program: whether this run names S3 objects, its resolved names and what releases its output files' locks, until the command has ended. */
interface RunState {
  s3: boolean;
  staged: S3Run | undefined;
  unlock: (() => Promise<void>) | undefined;
}
const runs = new WeakMap<Command, RunState>();

/** The program's run state, with its `preAction` hook installed once (a program may run several times in one process: the tests). */
function s3Runs(program: Command): RunState {
  let run = runs.get(program);
  if (!run) {
    const state: RunState = { s3: false, staged: undefined, unlock: undefined };
    program.hook('preAction', async (_, action) => {
      // First: nothing is read or written before the run holds its single output files (./outputLocks.ts).
      state.unlock = await lockOutputFiles(action);
      if (state.s3) state.staged = await resolveS3Paths(action);
    });
    runs.set(program, run = state);
  }
  return run;
}

/**
 * Parses `argv` and runs the chosen command. Returns the exit code instead of exiting, so tests can
 * call it. User mistakes print one line (never a stack trace); other errors print their message and
 * exit 1 (with the stack under NEARDUP_DEBUG=1).
 */
export async function runProgram(program: Command, argv: readonly string[], stderr: NodeJS.WritableStream = process.stderr): Promise<number> {
  applyToAll(program, (s) => stderr.write(s));
  // Process-wide: a command without --zstd-level must not inherit an earlier run's (tests run many in one process).
  setZstdLevel(undefined);
  const run = s3Runs(program);
  // s3:// names become local stand-ins once parsed, before the command runs, for every command (./s3paths.ts).
  run.s3 = argv.some((a) => a.includes('s3://') || a.startsWith('--s3-endpoint'));
  run.staged = undefined;
  try {
    // The run's input files are stamped as first read and checked before each output is put in place, and at the end (outputs to standard output).
    await readingInputs(() => program.parseAsync([...argv]));
    const done = run.staged as S3Run | undefined;
    run.staged = undefined;
    await done?.finish(true);
    return EXIT_OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT_OK;
      if (e.exitCode === 0) return EXIT_OK;
      return EXIT_USAGE;
    }
    if (isUserError(e)) {
      stderr.write(`neardup: ${s3Display(e.message)}${flagHint(e.fix)}\n`);
      return EXIT_USAGE;
    }
    if (e instanceof TooManyPairsError) {
      stderr.write(`neardup: ${tooManyPairsMessage(e)}\n`);
      return EXIT_USAGE;
    }
    if (e instanceof ArenaFullError) {
      // The in-memory route verifies without the shared arena.
      stderr.write(
        `neardup: verification needs more than ${
          e.limit / 2 ** 30
        } GiB of shared memory for fingerprint sets (lower --memory-budget or --batch-size, or use --no-stream)\n`,
      );
      return EXIT_FAILURE;
    }
    const err = e as Error;
    stderr.write(`neardup: ${s3Display(err?.message ?? String(e))}\n`);
    if (process.env.NEARDUP_DEBUG) stderr.write(`${err?.stack ?? ''}\n`);
    return EXIT_FAILURE;
  } finally {
    // After the error is written: until then its stand-ins are named by their s3:// names.
    await (run.staged as S3Run | undefined)?.finish(false).catch(() => {});
    run.staged = undefined;
    // Last: the outputs are in place (or the run failed); a release that fails leaves a lock the next run takes over.
    await run.unlock?.().catch(() => {});
    run.unlock = undefined;
  }
}
