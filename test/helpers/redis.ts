/**
 * Test helper: a private redis-server child on a free 127.0.0.1 port, without persistence.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { leashed } from './leash.js';
import { createServer } from 'node:net';

/** A running redis-server child. */
export interface RedisChild {
  /** redis://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Stops the server (SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Spawns redis-server with `args` and resolves once it accepts connections (rejects if it exits
 * first or is not ready within 10 s; `what` names it in those errors).
 */
export async function spawnRedis(args: string[], what: string): Promise<ChildProcess> {
  const child = spawn(...leashed('redis-server', args), { stdio: ['ignore', 'pipe', 'pipe'] });
  await untilReady(child, child.stdout!, 'Ready to accept connections', `redis-server ${what}`, 'apt-get install -y redis-server', 10000);
  return child;
}

/**
 * Resolves once `out` (a stream of the server child) has printed `marker`; rejects (and kills it)
 * when it exits first or is not ready within `timeoutMs`, or at once when it cannot be started
 * (not installed: the error gives `install`). The stream keeps flowing afterwards.
 */
export async function untilReady(
  child: ChildProcess,
  out: NodeJS.ReadableStream,
  marker: string,
  what: string,
  install: string,
  timeoutMs: number,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not start: ${text}`));
    }, timeoutMs);
    out.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes(marker)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with code ${code}: ${text}`));
    });
    // Not on PATH (ENOENT): say so at once instead of waiting for the timeout.
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${what} could not be started: ${e.message} (install: ${install})`));
    });
  });
  out.resume();
}

/** Kills a redis-server child (SIGKILL) and waits for it to exit. */
export function killRedis(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Starts redis-server, or throws a clear error when it is not installed. */
export async function startRedis(): Promise<RedisChild> {
  const which = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (which.error) {
    throw new Error('redis-server is not installed: the Redis tests need it (apt-get install -y redis-server; .ci/run does this in CI)');
  }
  const port = await freePort();
  const child = await spawnRedis(['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], `on port ${port}`);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => killRedis(child),
  };
}

/** A running Redis Cluster of private redis-server children. */
export interface RedisClusterChild {
  /** redis://127.0.0.1:PORT?cluster=1 for the first node (a seed: the client discovers the rest). */
  url: string;
  ports: number[];
  /** Stops every node (SIGKILL), waits for them to exit and removes their working directory. */
  stop(): Promise<void>;
}

/** A free loopback port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = await freePort();
    if (port + 10000 > 65535 || taken.has(port) || taken.has(port + 10000)) continue;
    const busFree = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.unref();
      s.once('error', () => resolve(false));
      s.listen(port + 10000, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (busFree) return port;
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

/**
 * Starts a real Redis Cluster of `nodes` masters (no replicas, no persistence) on loopback and
 * waits until every node reports cluster_state:ok, so multi-slot routing is exercised for real.
 */
export async function startRedisCluster(nodes = 3): Promise<RedisClusterChild> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < nodes; i++) {
    const p = await freeClusterPort(taken);
    taken.add(p).add(p + 10000);
    ports.push(p);
  }
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(killRedis));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      ports.map(async (port) => {
        const args = [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
        ];
        children.push(await spawnRedis(args, `(cluster node) on port ${port}`));
      }),
    );
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    // Slots are assigned; wait until every node has heard of every other (gossip) and says ok.
    const deadline = Date.now() + 20000;
    for (;;) {
      const ok = ports.every((p) => {
        const info = spawnSync('redis-cli', ['-p', String(p), 'cluster', 'info'], { encoding: 'utf8' });
        return /cluster_state:ok/.test(info.stdout) && new RegExp(`cluster_known_nodes:${nodes}\\b`).test(info.stdout);
      });
      if (ok) break;
      if (Date.now() > deadline) throw new Error('the Redis Cluster did not reach cluster_state:ok within 20 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `redis://127.0.0.1:${ports[0]}?cluster=1`, ports, stop };
}
