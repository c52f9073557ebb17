/**
 * Whether the Redis server behind a client is still the run a process read from. A restart (or a
 * Cluster failover) may come back with less than the process had read: an RDB snapshot older than
 * the last writes, a backup restored, the last second of an `everysec` AOF. What the process derived
 * from the old run (the log layout's table, folded up to a list position) must then be read again.
 *
 * A run is known by INFO's `run_id`. It is asked only after the client made a new connection (a
 * restart always breaks the old one), so lookups pay nothing for it.
 * @module
 */
import { Cluster, ReplyError } from 'ioredis';
import type { Client } from './shared.js';

/** The server's run id(s); undefined when the server does not say (a proxy, INFO refused). */
async function runIds(redis: Client): Promise<string | undefined> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  try {
    const ids: string[] = [];
    for (const info of await Promise.all(nodes.map((n) => n.info('server')))) {
      const m = /^run_id:(\w+)/m.exec(info);
      if (!m) return undefined;
      ids.push(m[1]!);
    }
    return ids.sort().join(',');
  } catch (e) {
    if (e instanceof ReplyError) return undefined;
    throw e;
  }
}

/** Watches a client's connections for a new server run (see the module comment). */
export class ServerRun {
  private id: string | undefined;
  private reconnected = false;

  constructor(private readonly redis: Client) {
    // ioredis emits these synchronously, before any reply read on the new connection.
    const mark = (): void => void (this.reconnected = true);
    if (redis instanceof Cluster) redis.on('+node', mark);
    else redis.on('ready', mark);
  }

  /** Notes the run in force (call before reading what depends on it). */
  async start(): Promise<void> {
    this.reconnected = false;
    this.id = await runIds(this.redis);
  }

  /**
   * True when replies may come from another run than the last one noted: the client reconnected
   * and the run id differs, or cannot be known. Notes the run in force.
   */
  async changed(): Promise<boolean> {
    if (!this.reconnected) return false;
    this.reconnected = false;
    let id: string | undefined;
    try {
      id = await runIds(this.redis);
    } catch (e) {
      this.reconnected = true;
      throw e;
    }
    const same = id !== undefined && id === this.id;
    this.id = id;
    return !same;
  }
}
