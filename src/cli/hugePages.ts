/**
 * Huge pages for the commands that hold a large store in memory (`serve`, `index`): on Linux with
 * glibc, the process starts again in place (`process.execve`, Node 22.15 and later: the same process
 * id, so a supervisor's signals still reach it) with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, which
 * has glibc ask the kernel for transparent huge pages for its large allocations, the typed arrays a
 * file store opens into. Why: on virtual machines whose first touch of a 4 KiB page is dear, a 10M
 * store opened in 8.0 s with them and 26.4 s without (docs/operations.md, "Fresh memory on Linux").
 * A `GLIBC_TUNABLES` the user set is left as it is, and `NEARDUP_HUGE_PAGES=0` turns this off.
 * @module
 */
import { readFileSync } from 'node:fs';

/** The tunable set, the commands it is set for, and the variable that turns it off. */
export const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb=1';
const COMMANDS = new Set(['serve', 'index']);
export const HUGE_PAGES_ENV = 'NEARDUP_HUGE_PAGES';

/** What {@link hugePagesWanted} decides from. */
export interface HugePagesContext {
  /** The subcommand asked for (argv[2]). */
  command: string | undefined;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Whether this Node can start a process again in place (`process.execve`). */
  canExec: boolean;
  /** The kernel's transparent huge page mode (`/sys/kernel/mm/transparent_hugepage/enabled`), '' when unknown. */
  thp: () => string;
  /** The glibc version of this process, undefined without glibc (musl). */
  glibc: () => string | undefined;
}

/**
 * Whether the process should start again with {@link HUGE_PAGES_TUNABLE}: a store command, on
 * Linux with glibc, a kernel that gives huge pages on request, no `GLIBC_TUNABLES` of the user's
 * and not turned off. The checks that read files run last, only for the commands concerned.
 */
export function hugePagesWanted(c: HugePagesContext): boolean {
  if (c.command === undefined || !COMMANDS.has(c.command) || c.platform !== 'linux' || !c.canExec) return false;
  if (c.env.GLIBC_TUNABLES !== undefined || c.env[HUGE_PAGES_ENV] === '0') return false;
  return /\[(madvise|always)\]/.test(c.thp()) && c.glibc() !== undefined;
}

function thpMode(): string {
  try {
    return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8');
  } catch {
    return '';
  }
}

function glibcVersion(): string | undefined {
  const header = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
  return header?.glibcVersionRuntime;
}

/** `process.execve`'s shape (Node 22.15 and later). */
export type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/**
 * Starts this process again with huge pages when {@link hugePagesWanted} says so (never returns
 * then); otherwise, or when the start fails, returns and the process runs on as it is. Called
 * first thing, before any output or open file. `execve` is the process's own unless a test gives one.
 */
export function startWithHugePages(execve = (process as unknown as { execve?: Execve }).execve): void {
  const context: HugePagesContext = {
    command: process.argv[2],
    env: process.env,
    platform: process.platform,
    canExec: typeof execve === 'function',
    thp: thpMode,
    glibc: glibcVersion,
  };
  if (!hugePagesWanted(context)) return;
  const args = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  try {
    execve!.call(process, process.execPath, args, { ...process.env, GLIBC_TUNABLES: HUGE_PAGES_TUNABLE });
  } catch {
    // Not started again (the binary moved, a sandbox refused execve): run as this process, with the pages it has.
  }
}
