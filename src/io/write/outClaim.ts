/**
 * A job's claim on its `--out-dir` (local or an `s3://` prefix). A sharded job writes its output
 * shards from many tasks, possibly long after it was planned and interleaved with other jobs' tasks
 * on an array runner; two jobs over one output directory would leave a mix of both under one
 * `_SUCCESS`. So a job claims the directory when it is planned: the hidden file `.neardup-job`
 * (readers skip hidden names, so it is never taken for an output shard) names the job's plan id and
 * work dir, and is created exclusively (`O_EXCL` locally; on S3 a conditional PUT, `If-None-Match: *`,
 * then read back: on a store that ignores the condition, s3rver among them, two plans at the same
 * instant are told apart by the read-back only).
 *
 * Another job is refused (exit 2 naming `--out-dir`) while the claim is there. It goes when `_SUCCESS`
 * replaces it (the finished directory holds the shards and `_SUCCESS`, as `neardup dedup` leaves it)
 * or with `job clean --all`. The finished job keeps, in its work dir, the stamp of the `_SUCCESS` it
 * wrote: it may be resumed there (rerun, `job report`) only while that `_SUCCESS` is the one there, as
 * a later run into the directory removes it first. A job whose output stage wrote there and that lost
 * its claim otherwise never writes or vouches for the directory again. A one-process run (`neardup
 * dedup`, `neardup spans`) is refused by a claim as by another run's lock.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { isS3Url, s3Delete, s3Get, s3Head, s3Put } from '../s3/client.js';
import { SUCCESS_MARKER } from './outDir.js';

/** The claim's file name inside the output directory (hidden: not an output shard). */
export const CLAIM_FILE = '.neardup-job';

/** Who claims: a job's work dir (its name, for messages) and plan id (what it is known by). */
export interface Claimant {
  workDir: string;
  plan: string;
}

/** What the claim file holds. */
interface Claim extends Claimant {
  at: string;
  /** The first directory the claim made (`dir` or one above it), when it made any: removed with it when empty. */
  made?: string;
}

/** `name` inside a directory or prefix. */
export const inDir = (dir: string, name: string): string => (isS3Url(dir) ? `${dir.replace(/\/+$/, '')}/${name}` : path.join(dir, name));

/** A small file or object's text, undefined when there is none. */
export async function readSmall(file: string): Promise<string | undefined> {
  if (isS3Url(file)) return (await s3Get(file))?.toString('utf8');
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The claim of `dir`, undefined when none; one that does not parse is held by a job we cannot name. */
async function readClaim(dir: string): Promise<Claim | undefined> {
  const text = await readSmall(inDir(dir, CLAIM_FILE));
  if (text === undefined) return undefined;
  try {
    const c = JSON.parse(text) as Claim;
    if (typeof c.workDir === 'string' && typeof c.plan === 'string' && c.plan !== '') return c;
  } catch {
    // damaged: below
  }
  return { workDir: `(unreadable claim ${inDir(dir, CLAIM_FILE)})`, plan: '', at: '' };
}

/** A job is known by its plan id (random): its work dir may be spelt another way by another member. */
const own = (c: Claim | undefined, me: Claimant): boolean => c !== undefined && c.plan !== '' && c.plan === me.plan;

const holder = (c: Claim): string => `work dir ${c.workDir}${c.plan ? `, plan ${c.plan}` : ''}${c.at ? `, since ${c.at}` : ''}`;

/** Creates the claim exclusively: false when one is there. */
async function createClaim(dir: string, c: Claim): Promise<boolean> {
  const file = inDir(dir, CLAIM_FILE);
  const text = `${JSON.stringify(c)}\n`;
  if (isS3Url(dir)) return s3Put(file, text, true);
  const made = await fsp.mkdir(dir, { recursive: true });
  try {
    await fsp.writeFile(file, `${JSON.stringify({ ...c, made })}\n`, { flag: 'wx' });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

async function removeClaim(dir: string): Promise<void> {
  if (isS3Url(dir)) await s3Delete(inDir(dir, CLAIM_FILE));
  else await fsp.rm(inDir(dir, CLAIM_FILE), { force: true });
}

/**
 * The stamp of `dir/_SUCCESS` (its inode, change time and size; an object's time and size), undefined
 * when there is none: a run that writes the directory again removes `_SUCCESS` first, so its stamp changes.
 */
export async function successStamp(dir: string): Promise<string | undefined> {
  const file = inDir(dir, SUCCESS_MARKER);
  if (isS3Url(dir)) {
    const h = await s3Head(file);
    return h && `${h.lastModified}:${h.size}`;
  }
  const st = await fsp.stat(file, { bigint: true }).catch(() => undefined);
  return st && `${st.ino}:${st.ctimeNs}:${st.size}`;
}

/** What a job says about its own output directory when it has no claim there. */
export interface ClaimHistory {
  /** Whether its output stage has written there. */
  wrote(): Promise<boolean>;
  /** The stamp of the `_SUCCESS` it wrote there when it finished (undefined: it has not finished). */
  finished(): Promise<string | undefined>;
}

/** Whether a job without a claim on `dir` left it as it is: it finished there, and its `_SUCCESS` is still the one. */
async function untouched(dir: string, history: ClaimHistory): Promise<boolean> {
  const stamp = await history.finished();
  return stamp !== undefined && stamp === (await successStamp(dir));
}

function lostError(dir: string, me: Claimant, c: Claim | undefined): UsageError {
  return new UsageError(
    `--out-dir ${dir}: this job (work dir ${me.workDir}) wrote output shards there, but ${
      c ? `the directory is now claimed by another job (${holder(c)})` : 'another run has written there since'
    }: its shards there may have been overwritten; plan the job again with a new --work-dir`,
  );
}

/**
 * Claims `dir` for the job `me` (planned, or planned again to resume). Refused (exit 2, naming
 * `--out-dir`) while another job holds it, and for a job that wrote there and lost it since.
 */
export async function claimOutputDirectory(dir: string, me: Claimant, history: ClaimHistory): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const c = await readClaim(dir);
    if (own(c, me)) return;
    if (c) {
      if (await history.wrote()) throw lostError(dir, me, c);
      throw new UsageError(
        `--out-dir ${dir} is claimed by another job (${
          holder(c)
        }), which has not finished writing there: give another --out-dir, or finish that job (or run "neardup job clean --all --work-dir ${c.workDir}"); remove ${
          inDir(dir, CLAIM_FILE)
        } if that job no longer exists`,
      );
    }
    if ((await history.wrote()) && !(await untouched(dir, history))) throw lostError(dir, me, undefined);
    if (await createClaim(dir, { ...me, at: new Date().toISOString() })) {
      // A store that ignores the condition lets a racing plan overwrite ours: the read-back decides.
      if (own(await readClaim(dir), me)) return;
    }
  }
  throw new UsageError(`--out-dir ${dir}: other jobs keep claiming it; give another --out-dir`);
}

/** Refuses (exit 2) a task of job `me` about to write into `dir` when the job does not hold its claim. */
export async function requireClaim(dir: string, me: Claimant): Promise<void> {
  const c = await readClaim(dir);
  if (own(c, me)) return;
  throw new UsageError(
    `--out-dir ${dir}: ${
      c ? `claimed by another job (${holder(c)})` : `this job's claim ${inDir(dir, CLAIM_FILE)} is gone`
    }; this job (work dir ${me.workDir}) no longer writes there: plan it again with a new --work-dir`,
  );
}

/**
 * Marks `dir` complete for job `me`: `write` writes `_SUCCESS` and returns its stamp, which the job
 * keeps (`keep`); then the claim goes. A job without its claim whose `_SUCCESS` is still there (a
 * finished job reported again) has nothing to do; any other is refused (exit 2).
 */
export async function completeUnderClaim(
  dir: string,
  me: Claimant,
  o: { history: ClaimHistory; write(): Promise<void>; keep(stamp: string): Promise<void> },
): Promise<void> {
  const c = await readClaim(dir);
  if (!own(c, me)) {
    if (!c && (await untouched(dir, o.history))) return;
    if (!c) throw lostError(dir, me, undefined);
    await requireClaim(dir, me);
  }
  await o.write();
  await o.keep((await successStamp(dir))!);
  await removeClaim(dir);
}

/** For `job clean --all`: the claim of job `me` on `dir` goes (its shards stay, without `_SUCCESS`), and `dir` when it is empty then. */
export async function releaseClaim(dir: string, me: Claimant): Promise<void> {
  const c = await readClaim(dir);
  if (!own(c, me)) return;
  await removeClaim(dir);
  // The directories the claim made at plan time go too, when nothing was written there.
  const made = c!.made;
  if (isS3Url(dir) || typeof made !== 'string' || path.relative(made, dir).startsWith('..')) return;
  let d: string = dir;
  while (await fsp.rmdir(d).then(() => true, () => false)) {
    if (d === made) break;
    d = path.dirname(d);
  }
}

/**
 * For a one-process run about to rewrite `dir`: refused (exit 2) while a sharded job holds it. `what`
 * is the option that named `dir`.
 */
export async function refuseJobClaim(dir: string, what: string): Promise<void> {
  const c = await readClaim(dir);
  if (!c) return;
  throw new UsageError(
    `${what} ${dir} is being written by a sharded job (${holder(c)}): give another directory, or wait for that job to finish; remove ${
      inDir(dir, CLAIM_FILE)
    } if that job no longer exists`,
    what === '--out-dir' ? undefined : { option: 'out' },
  );
}

/** A small file or object written whole (a temp file renamed into place locally). */
export async function writeSmall(file: string, text: string): Promise<void> {
  if (isS3Url(file)) {
    await s3Put(file, text);
    return;
  }
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fsp.writeFile(tmp, text);
  await fsp.rename(tmp, file);
}
