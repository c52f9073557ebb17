/**
 * Loading BullMQ (an optional dependency) on use, and its Redis connection options from a URL.
 * @module
 */
import { UsageError } from '../common/errors.js';
import { loadPackage } from '../common/lazy.js';

/** The BullMQ module. */
export type BullMQ = typeof import('bullmq');

/** Imports bullmq, or says which package to install. */
export function loadBullmq(): Promise<BullMQ> {
  return loadPackage<BullMQ>('bullmq', 'running distributed jobs');
}

/** The default queue name. */
export const DEFAULT_QUEUE = 'neardup';

/** ioredis options (as BullMQ takes them) from a redis:// or rediss:// URL. */
export function connectionFromUrl(url: string): Record<string, unknown> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--redis must be a URL like redis://host:6379/0, got "${url}"`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new UsageError(`--redis must start with redis:// or rediss://, got "${url}"`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new UsageError(`--redis: bad database number in "${url}"`);
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db,
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ workers block on Redis; it requires this to be null.
    maxRetriesPerRequest: null,
  };
}

/** The data of one queued task. */
export interface TaskData {
  /** The job directory (absolute; the same path on every machine). */
  workDir: string;
  stage: string;
  task: number;
}

/** Prefix of failure reasons caused by the input (exit code 2 for the submitter), not by a bug or the machine. */
export const INPUT_FAILURE = 'input error: ';
