/**
 * A shard's identity: what it was when the job was planned (size, modification time, a hash of its
 * ends), taken of a local file or an object in S3, and checked by every task that reads it.
 * @module
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { InputError } from '../../common/errors.js';
import { parseS3Url, s3Get, s3Head } from '../../io/s3/client.js';

/**
 * What a shard was when the job was planned: every stage that reads it checks it is still that
 * file, so a shard rewritten, appended to or replaced between stages is an input error, never a
 * mix of two versions. Size and modification time, and a hash of the first and last 64 KiB.
 */
export interface ShardIdentity {
  size: number;
  mtimeMs: number;
  /** SHA-256 (hex, first 32 digits) of the first and last 64 KiB. */
  ends: string;
}

const ENDS = 1 << 16;

/** The identity of a shard file now. */
export function shardIdentity(file: string): ShardIdentity {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new InputError(file, undefined, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const st = fstatSync(fd);
    const h = createHash('sha256');
    const head = Buffer.alloc(Math.min(ENDS, st.size));
    readSync(fd, head, 0, head.length, 0);
    h.update(head);
    if (st.size > ENDS) {
      const tail = Buffer.alloc(Math.min(ENDS, st.size - ENDS));
      readSync(fd, tail, 0, tail.length, st.size - tail.length);
      h.update(tail);
    }
    return { size: st.size, mtimeMs: st.mtimeMs, ends: h.digest('hex').slice(0, 32) };
  } finally {
    closeSync(fd);
  }
}

/**
 * The identity of a shard in object storage, the same as {@link shardIdentity} gives its local copy
 * once that copy has the object's modification time: size, last-modified time, and the hash of the
 * first and last 64 KiB (two ranged GETs).
 */
export async function s3ShardIdentity(url: string): Promise<ShardIdentity> {
  const info = await s3Head(url);
  if (!info) throw new InputError(url, undefined, `the bucket has no key "${parseS3Url(url).key}"`);
  const h = createHash('sha256');
  if (info.size > 0) h.update((await s3Get(url, [0, Math.min(ENDS, info.size) - 1]))!);
  if (info.size > ENDS) h.update((await s3Get(url, [info.size - Math.min(ENDS, info.size - ENDS), info.size - 1]))!);
  return { size: info.size, mtimeMs: info.lastModified, ends: h.digest('hex').slice(0, 32) };
}

/** What differs between two identities, in words, or undefined when they are the same file. */
export function identityChange(then: ShardIdentity, now: ShardIdentity): string | undefined {
  if (then.size !== now.size) return `${then.size} bytes when the job was planned, ${now.size} now`;
  if (then.ends !== now.ends) return 'its contents differ from when the job was planned';
  if (then.mtimeMs !== now.mtimeMs)
    return `modified since the job was planned (${new Date(then.mtimeMs).toISOString()} then, ${new Date(now.mtimeMs).toISOString()} now)`;
  return undefined;
}

/** Checks that shard `s` is still the file the job was planned on (an input error naming it otherwise). */
export function checkShard(workDir: string, job: { shards: readonly { path: string; identity: ShardIdentity }[] }, s: number): void {
  const sh = job.shards[s]!;
  const change = identityChange(sh.identity, shardIdentity(sh.path));
  if (change)
    throw new InputError(
      sh.path,
      undefined,
      `changed since the job in ${workDir} was planned (${change}): a job reads the shards it was planned on; plan again in a new --work-dir (or remove ${workDir} first)`,
    );
}
