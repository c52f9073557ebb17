/**
 * Which workers are alive, for the submitter's notices. BullMQ's worker count reads Redis's client
 * list, which keeps a worker that stopped answering: stopped with Ctrl-Z (SIGTSTP), frozen, or on a
 * host that vanished, until TCP keepalive drops its connection (300 s with Redis's defaults). So
 * each worker beats: it sets a key of its own that Redis expires after three beats unless renewed
 * (Redis's clock, not the machines'), listed in a hash of the queue's workers. A worker is alive
 * while its key lives.
 * @module
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from 'bullmq';

/** The keys, under BullMQ's prefix and the queue's name (so removing the queue removes them). */
function keys(queue: string): { index: string; beat: (member: string) => string } {
  return { index: `bull:${queue}:neardup:workers`, beat: (m) => `bull:${queue}:neardup:worker:${m}` };
}

/** A worker's beats; {@link Beats.stop} says it is gone. */
export interface Beats {
  stop(): Promise<void>;
}

/**
 * Beats every `periodMs` for this worker process on `client` (its key lives 3 × periodMs). A beat
 * still waiting (Redis away) is not doubled.
 */
export function startBeats(client: Promise<RedisClient>, queue: string, periodMs: number): Beats {
  const k = keys(queue);
  const member = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  let pending = false;
  const beat = (): void => {
    if (pending) return;
    pending = true;
    void (async () => {
      const c = await client;
      await c.set(k.beat(member), '1', { PX: 3 * periodMs });
      await c.hset(k.index, { [member]: '1' });
    })()
      .catch(() => undefined)
      .finally(() => (pending = false));
  };
  beat();
  const timer = setInterval(beat, periodMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      const c = await client;
      await Promise.all([c.del(k.beat(member)), c.hdel(k.index, member)]);
    },
  };
}

/** The queue's workers whose beat key lives; the others are dropped from the list. */
export async function liveWorkers(client: RedisClient, queue: string): Promise<number> {
  const k = keys(queue);
  const members = Object.keys(await client.hgetall(k.index));
  const beats = await Promise.all(members.map((m) => client.get(k.beat(m))));
  const gone = members.filter((_, i) => beats[i] === null);
  if (gone.length > 0) await client.hdel(k.index, ...gone);
  return members.length - gone.length;
}
