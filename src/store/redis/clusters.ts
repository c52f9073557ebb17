/**
 * Cluster labels in Redis (src/store/clusterState.ts), the same in both key layouts, P the prefix:
 *   P:cl:label       hash        document id → label (members of clusters of 2 or more)
 *   P:cl:m:<label>   set         the members of one cluster
 *   P:cl:size        sorted set  label → −size (ZRANGE lists the largest first, ties by label)
 *   P:cl:ready       string      present once the labels cover every document
 *   P:cl:lock        string      the cross-process lock (SET NX with an expiry, renewed while held)
 * Every command names one key, so this works on Redis Cluster too; on standalone Redis with
 * scripts allowed, a write is one MULTI (atomic).
 * @module
 */
import { Redis, type Cluster } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { byString, labelOf, type ClusterState, type ClusterSummary } from '../clusterState.js';

/** How long the lock lives without renewal (a crashed holder blocks others at most this long). */
const LOCK_MS = 5_000;

/** Cluster labels in Redis. */
export class RedisClusterState implements ClusterState {
  private chain: Promise<unknown> = Promise.resolve();
  /** This process's name in lock values. */
  private readonly owner = randomBytes(8).toString('hex');

  /**
   * @param fail turns connection errors into the store's StoreUnavailableError (HTTP 503), as the
   *   RedisStore does for its own commands.
   */
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly p: string,
    private readonly atomic: boolean,
    private readonly fail: (e: unknown) => never = (e) => {
      throw e;
    },
  ) {}

  private get labelKey(): string {
    return `${this.p}:cl:label`;
  }

  private setKey(label: string): string {
    return `${this.p}:cl:m:${label}`;
  }

  private get sizeKey(): string {
    return `${this.p}:cl:size`;
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(async () => {
      const key = `${this.p}:cl:lock`;
      const token = `${this.owner}:${randomBytes(4).toString('hex')}`;
      for (let wait = 2;; wait = Math.min(100, wait * 2)) {
        if ((await this.redis.set(key, token, 'PX', LOCK_MS, 'NX').catch(this.fail)) === 'OK') break;
        // This process never holds the lock twice (the chain above): a lock in our own name was left
        // by a holder whose release never reached Redis (Redis restarted meanwhile). Take it back.
        const held = await this.redis.get(key).catch(this.fail);
        if (held?.startsWith(`${this.owner}:`) && (await this.redis.set(key, token, 'PX', LOCK_MS, 'XX').catch(this.fail)) === 'OK') break;
        await new Promise((r) => setTimeout(r, wait));
      }
      const renew = setInterval(() => void this.redis.pexpire(key, LOCK_MS).catch(() => undefined), LOCK_MS / 3);
      try {
        return await fn();
      } finally {
        clearInterval(renew);
        // Delete only our own lock (it may have expired and been taken by another process).
        // (Redis may be away now: then the lock expires by itself.)
        await this.redis
          .get(key)
          .then((v) => (v === token ? this.redis.del(key) : 0))
          .catch(() => undefined);
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  isReady(): Promise<boolean> {
    return this.isReadyRaw().catch(this.fail);
  }

  private async isReadyRaw(): Promise<boolean> {
    return (await this.redis.exists(`${this.p}:cl:ready`)) === 1;
  }

  setReady(ready: boolean): Promise<void> {
    return this.setReadyRaw(ready).catch(this.fail);
  }

  private async setReadyRaw(ready: boolean): Promise<void> {
    if (ready) {
      await this.redis.set(`${this.p}:cl:ready`, '1');
      return;
    }
    await this.redis.del(`${this.p}:cl:ready`);
    for (;;) {
      const labels = await this.redis.zrange(this.sizeKey, '0', '999');
      if (labels.length === 0) break;
      await Promise.all(labels.map((l) => this.redis.del(this.setKey(l))));
      await this.redis.zrem(this.sizeKey, ...labels);
    }
    await this.redis.del(this.labelKey);
  }

  labels(ids: string[]): Promise<(string | null)[]> {
    return this.labelsRaw(ids).catch(this.fail);
  }

  private async labelsRaw(ids: string[]): Promise<(string | null)[]> {
    if (ids.length === 0) return [];
    return this.redis.hmget(this.labelKey, ...ids);
  }

  members(label: string): Promise<string[]> {
    return this.membersRaw(label).catch(this.fail);
  }

  private async membersRaw(label: string): Promise<string[]> {
    return (await this.redis.smembers(this.setKey(label))).sort(byString);
  }

  write(drop: string[], put: string[][]): Promise<void> {
    return this.writeRaw(drop, put).catch(this.fail);
  }

  private async writeRaw(drop: string[], put: string[][]): Promise<void> {
    const dropped = await Promise.all(drop.map((l) => this.redis.smembers(this.setKey(l))));
    const groups = put.filter((g) => g.length >= 2).map((g) => ({ label: labelOf(g), ids: g }));
    const inGroup = new Set(groups.flatMap((g) => g.ids));
    const alone = dropped.flat().filter((id) => !inGroup.has(id));
    type Cmd = [string, ...(string | number)[]];
    const cmds: Cmd[] = [];
    for (const l of drop) cmds.push(['del', this.setKey(l)]);
    if (drop.length) cmds.push(['zrem', this.sizeKey, ...drop]);
    if (alone.length) cmds.push(['hdel', this.labelKey, ...alone]);
    for (const g of groups) {
      cmds.push(['del', this.setKey(g.label)]);
      cmds.push(['sadd', this.setKey(g.label), ...g.ids]);
      cmds.push(['hset', this.labelKey, ...g.ids.flatMap((id) => [id, g.label])]);
      cmds.push(['zadd', this.sizeKey, -g.ids.length, g.label]);
    }
    if (cmds.length === 0) return;
    if (this.atomic && this.redis instanceof Redis) {
      const res = await this.redis.multi(cmds).exec();
      for (const [err] of res ?? []) if (err) throw err;
      return;
    }
    // Cluster: keys live in different slots; in order, one after the other, under the lock.
    for (const c of cmds) await this.redis.call(c[0], ...c.slice(1));
  }

  list(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }> {
    return this.listRaw(offset, limit).catch(this.fail);
  }

  private async listRaw(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }> {
    const [total, flat] = await Promise.all([
      this.redis.zcard(this.sizeKey),
      this.redis.zrange(this.sizeKey, String(offset), String(offset + limit - 1), 'WITHSCORES'),
    ]);
    const clusters: ClusterSummary[] = [];
    for (let i = 0; i < flat.length; i += 2) clusters.push({ id: flat[i]!, size: -Number(flat[i + 1]) });
    return { total, clusters };
  }
}
