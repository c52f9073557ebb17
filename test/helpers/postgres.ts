/**
 * Test helper: a private PostgreSQL server, initdb'd into a temp directory and listening on a free
 * 127.0.0.1 port (its unix socket in that directory too), without fsync. The test spawns the
 * `postgres` server process itself (not through `pg_ctl start`, which detaches it) so that stop()
 * and a dying test take it down. PostgreSQL refuses to run as root: as root, initdb and the server
 * run as the `postgres` user (Debian's package creates it) and the directory is given to it.
 * Debian puts the binaries in /usr/lib/postgresql/<version>/bin, not on PATH: they are found there.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { leashed } from './leash.js';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, untilReady } from './redis.js';

/** The command that installs the server (what the skip reason and the errors say). */
export const POSTGRES_INSTALL = 'apt-get install -y postgresql';

/** The directory holding `initdb` and `postgres`: on PATH, else the newest /usr/lib/postgresql/<version>/bin. */
export function postgresBinDir(): string | undefined {
  const has = (d: string) => existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres'));
  for (const d of (process.env.PATH ?? '').split(path.delimiter)) if (d && has(d)) return d;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (has(path.join(root, v, 'bin'))) return path.join(root, v, 'bin');
  return undefined;
}

/** A running PostgreSQL server. */
export interface PostgresChild {
  /** postgres://postgres@127.0.0.1:PORT/postgres (add `?schema=NAME` per test). */
  url: string;
  port: number;
  /** Stops the server (immediate shutdown), waits for it and removes its directory. */
  stop(): Promise<void>;
  /**
   * Takes the server down, keeping its data: SIGQUIT (immediate shutdown, the backends go with it)
   * or SIGKILL (the postmaster alone, as `kill -9`); resolves once it has exited.
   */
  kill(signal: 'SIGQUIT' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and data (retrying while a killed server's backends linger). */
  restart(): Promise<void>;
}

/** uid and gid to run the server as: ours, or the `postgres` user's when we are root. */
function serverUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const u = id('-u');
  const g = id('-g');
  if (u.status !== 0 || g.status !== 0) {
    throw new Error(
      "PostgreSQL refuses to run as root and there is no `postgres` user to run it as (Debian's postgresql package creates one; or: useradd -r postgres)",
    );
  }
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** initdb into a new temp directory, then starts the server; throws with the install command when absent. */
export async function startPostgres(): Promise<PostgresChild> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(`PostgreSQL is not installed: the PostgreSQL store tests need initdb and postgres (${POSTGRES_INSTALL}; .ci/run does this in CI)`);
  const user = serverUser();
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-pg-'));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const data = path.join(dir, 'data');
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...user,
    encoding: 'utf8',
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  }
  const port = await freePort();
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=100'];
  const launch = async (): Promise<ChildProcess> => {
    const c: ChildProcess = spawn(...leashed(path.join(bin, 'postgres'), args), { ...user, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await untilReady(c, c.stderr!, 'ready to accept connections', `postgres on port ${port}`, POSTGRES_INSTALL, 20000);
    } catch (e) {
      c.kill('SIGKILL');
      throw e;
    }
    return c;
  };
  let child: ChildProcess;
  try {
    child = await launch();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const kill = async (signal: 'SIGQUIT' | 'SIGKILL') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    kill,
    async restart() {
      const deadline = Date.now() + 30000;
      for (;;) {
        try {
          child = await launch();
          return;
        } catch (e) {
          // After a kill -9 the orphaned backends hold the shared memory until they notice.
          if (Date.now() > deadline) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    async stop() {
      // SIGQUIT: immediate shutdown, the postmaster takes its backends down with it.
      await kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
