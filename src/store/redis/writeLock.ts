/**
 * The cross-process write lock of the Redis store (`P:writer`): SET NX PX with a random token,
 * released by a compare-and-delete script, so that no other process writes between one process's
 * lookups and its write (documents added at once by several processes see each other).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { StoreUnavailableError } from '../errors.js';
import { unavailable, type Client } from './shared.js';

/** How long a writer waits for another process's write lock before giving up (ms). */
export const REDIS_LOCK_WAIT_MS = 30_000;
/**
 * Expiry of the write lock (ms): a process that dies holding it blocks other writers at most this
 * long. A write batch that takes longer loses the lock; its documents are still all written.
 */
export const REDIS_LOCK_TTL_MS = 10_000;

/** Deletes the lock key only when it still holds this writer's token. KEYS: lock. ARGV: token. */
const UNLOCK_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The write lock of one store. */
export class RedisWriteLock {
  /**
   * Lock tokens this process may have left behind: a SET NX that timed out may still run when Redis
   * comes back, and an unlock may fail. They are released before the next acquisition.
   */
  private readonly strayLocks = new Set<string>();

  constructor(
    private readonly redis: Client,
    /** The lock key, `P:writer`. */
    private readonly key: string,
    /** The prefix, for messages. */
    private readonly prefix: string,
    /** Turns connection failures into StoreUnavailableError (naming the server). */
    private readonly fail: (e: unknown) => never = (e) => unavailable(e),
  ) {}

  /**
   * Runs `fn` holding the lock. Waits up to {@link REDIS_LOCK_WAIT_MS}, then fails with
   * {@link StoreUnavailableError}.
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const key = this.key;
    for (const t of this.strayLocks) {
      await this.redis.eval(UNLOCK_LUA, 1, key, t).catch(this.fail);
      this.strayLocks.delete(t);
    }
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + REDIS_LOCK_WAIT_MS;
    let wait = 1;
    for (;;) {
      let ok: string | null;
      try {
        ok = await this.redis.set(key, token, 'PX', REDIS_LOCK_TTL_MS, 'NX');
      } catch (e) {
        this.strayLocks.add(token);
        this.fail(e);
      }
      if (ok === 'OK') break;
      if (Date.now() >= deadline)
        throw new StoreUnavailableError(`Redis store at prefix "${this.prefix}" is busy: another process held ${key} for ${REDIS_LOCK_WAIT_MS / 1000} s`, 1);
      await sleep(wait * (0.5 + Math.random()));
      wait = Math.min(wait * 2, 20);
    }
    try {
      return await fn();
    } finally {
      await this.redis.eval(UNLOCK_LUA, 1, key, token).catch(() => this.strayLocks.add(token));
    }
  }
}
