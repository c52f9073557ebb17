/**
 * Test helper: tests that need a program outside Node (redis-server, a browser) skip with a one-line
 * reason and the install command when it is absent, so `npm test` passes on a machine with only Node.
 * Under NEARDUP_REQUIRE_ALL=1 (set by .ci/run) they never skip: they run and fail on the missing
 * program, so CI always runs everything. The skip-summary reporter lists every skip at the end.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { bundledChromium } from './bundledChromium.js';
import { POSTGRES_INSTALL, postgresBinDir } from './postgres.js';

/** True when a missing program must fail the run instead of skipping (CI). */
export const REQUIRE_ALL = process.env.NEARDUP_REQUIRE_ALL === '1';

/** Options for `test()`: a skip reason, or none. */
export interface NeedOptions {
  skip?: string;
}

function need(missing: string | undefined): NeedOptions {
  if (missing === undefined || REQUIRE_ALL) return {};
  return { skip: missing };
}

function onPath(program: string): boolean {
  return !spawnSync(program, ['--version'], { stdio: 'ignore' }).error;
}

/** Why the Redis tests cannot run here, or undefined when redis-server (and redis-cli) are on PATH. */
export function redisMissing(withCli = false): string | undefined {
  const absent = ['redis-server', ...(withCli ? ['redis-cli'] : [])].filter((p) => !onPath(p));
  if (absent.length === 0) return undefined;
  return `needs ${absent.join(' and ')}, not on PATH; install: apt-get install -y redis-server`;
}

/** `test()` options for a test that starts its own redis-server (and redis-cli for a cluster). */
export function needsRedis(withCli = false): NeedOptions {
  return need(redisMissing(withCli));
}

/** Why the PostgreSQL tests cannot run here, or undefined when initdb and postgres are found (src: test/helpers/postgres.ts). */
export function postgresMissing(): string | undefined {
  return postgresBinDir() ? undefined : `needs PostgreSQL (initdb and postgres, on PATH or in /usr/lib/postgresql/*/bin); install: ${POSTGRES_INSTALL}`;
}

/** `test()` options for a test that starts its own PostgreSQL server. */
export function needsPostgres(): NeedOptions {
  return need(postgresMissing());
}

/** `test()` options for a test that runs the `zstd` command (the reference decoder, and checksums to compare with). */
export function needsZstd(): NeedOptions {
  return need(onPath('zstd') ? undefined : 'needs the zstd command, not on PATH; install: apt-get install -y zstd');
}

/** The browser the tests drive: its path and extra environment, or why there is none. */
export type BrowserChoice = { executablePath: string; env: Record<string, string> } | { missing: string };

let choice: BrowserChoice | undefined;

/** The first `chromium` on PATH, if any. */
function systemChromium(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'chromium'))) return path.join(dir, 'chromium');
  }
  return undefined;
}

/**
 * Picks Chromium: NEARDUP_CHROMIUM when set (a path, or "bundled"), else `chromium` on PATH (Debian's
 * package), else the one inside the @sparticuz/chromium devDependency (unpacked to the temp directory).
 */
export function browserChoice(): BrowserChoice {
  if (choice) return choice;
  const wanted = process.env.NEARDUP_CHROMIUM;
  if (wanted && wanted !== 'bundled') {
    choice = existsSync(wanted) ? { executablePath: wanted, env: {} } : { missing: `NEARDUP_CHROMIUM=${wanted} does not exist` };
  } else if (!wanted && systemChromium()) {
    choice = { executablePath: systemChromium()!, env: {} };
  } else {
    try {
      choice = bundledChromium();
    } catch (e) {
      choice = { missing: `the bundled Chromium could not be unpacked: ${(e as Error).message}` };
    }
  }
  return choice;
}

/** `test()` options for a test that drives Chromium. */
export function needsBrowser(): NeedOptions {
  const c = browserChoice();
  return need('missing' in c ? `needs Chromium: ${c.missing}; install: npm ci (bundled @sparticuz/chromium) or apt-get install -y chromium` : undefined);
}
