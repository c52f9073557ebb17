/**
 * A job's work dir in object storage (`--work-dir s3://bucket/prefix`): commit without rename.
 *
 * A task copies what it reads (other tasks' markers and files, all at keys computed from the plan,
 * never listed; its input shards) into a local spool, runs the stage there as on any work dir,
 * uploads its files under a prefix of its own attempt (`<stage>/<task>/attempt-<random>/<file>`,
 * each a PUT or a multipart upload completed last, so nothing is visible half-written), and only
 * then writes its marker `<stage>/<task>/_SUCCESS.json` with a conditional PUT (`If-None-Match: *`).
 * The marker names the attempt and holds the task's marker as a local one does (files with their
 * sizes and, for text files, SHA-256; column files carry CRCs of their own). Readers follow the
 * marker only; an object it names that is missing or of another size is an error naming it.
 *
 * Two attempts of one task (a task taken for stalled while still running) are deterministic and
 * write the same files. Where the store honours the condition, the second marker PUT answers 412
 * and that attempt adopts the first; where the store ignores it (s3rver), the last marker stands,
 * and it names an attempt whose objects were all written before it: either way readers get a
 * complete attempt of identical content, and correctness never depends on which one wins.
 * `neardup job clean` removes the attempts no marker names. A running task keeps a running record
 * (./s3running.ts) for `job status`.
 * Why this file is long: it is the whole of one work dir kind (fetch a task's inputs, run it,
 * publish its attempt, the status view, clean), each part the counterpart of the others.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { InputError, UsageError } from '../../common/errors.js';
import { removeOnSignal } from '../../io/write/output.js';
import {
  inParallel,
  isS3Url,
  PARALLEL,
  parseS3Url,
  S3_BLOCK,
  s3Delete,
  s3Download,
  s3Get,
  s3GetParsed,
  s3Head,
  s3List,
  s3Put,
  s3PutSettled,
  s3Upload,
} from '../../io/s3/client.js';
import { ObjectCache } from './objectCache.js';
import { DamagedFileError } from '../files/columns.js';
import { failedFile, MARKER, parseMarker, sealMarker, taskDir, type FailedRecord, type MarkerBase } from '../files/commit.js';
import {
  isJobEntry,
  JOB_VERSION,
  jobFile,
  parseJob,
  roundOf,
  roundStage,
  sameJob,
  shardsOfTask,
  STAGES,
  taskCount,
  type JobSpec,
  type TaskStage,
} from '../files/job.js';
import { followUpReads, runTask } from '../stages/registry.js';
import { jobReads, taskInputs, type TaskRead } from '../files/taskReads.js';
import { convergedRound, type RoundState } from '../stages/linkDriver.js';
import { markRunning, runningView, staleRunning } from './s3running.js';
import { mapStrings, translated, type Names } from './s3names.js';
import { checkOutputClaim, markOutputDir, releaseOutputDir, type WorkDir } from './workDir.js';
import { fetchPartition } from './s3partition.js';
import { faultHooks } from '../../common/faults.js';
import { ownTempDir } from '../../io/read/inputStamps.js';

const pad = (t: number): string => String(t).padStart(5, '0');

/** The error for an object a marker names that is missing or of another size. */
const damagedObject = (url: string, bytes: number, markerUrl: string) => (what: string): DamagedFileError =>
  new DamagedFileError(
    `${url}: ${what}, though the task's marker ${markerUrl} names it${
      what === 'missing' ? '' : ` with ${bytes} bytes`
    }: the work dir is damaged; delete that marker to run the task again`,
  );

/** A committed marker as read from storage: the attempt it names, its body (checked) and its text as a local marker file holds it. */
interface Stored {
  attempt: string;
  body: MarkerBase;
  text: string;
}

async function spoolDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = ownTempDir(await fsp.mkdtemp(path.join(process.env.NEARDUP_S3_SPOOL ?? tmpdir(), 'neardup-task-')));
  const untrack = removeOnSignal(dir);
  return {
    dir,
    async remove() {
      // Never in place of the task's own error: a leftover spool is only disk.
      await fsp.rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      untrack();
    },
  };
}

/** A stored marker object's attempt and checked marker; a DamagedFileError naming `url` when it is not one. */
function storedOf(b: Buffer, url: string, job: JobSpec): Stored {
  let o: { attempt?: unknown; marker?: unknown };
  try {
    o = JSON.parse(b.toString('utf8')) as typeof o;
  } catch {
    throw new DamagedFileError(`${url}: damaged task marker (not JSON): delete it to run the task again`);
  }
  if (!o || typeof o.attempt !== 'string' || !/^[0-9a-f]{16}$/.test(o.attempt) || !o.marker || typeof o.marker !== 'object') {
    throw new DamagedFileError(`${url}: damaged task marker (no attempt named): delete it to run the task again`);
  }
  const text = JSON.stringify(o.marker);
  return { attempt: o.attempt, body: parseMarker(text, url, job), text };
}

/** A work dir under an `s3://` prefix; see the module comment. */
export class S3WorkDir implements WorkDir {
  readonly name: string;
  private plan: JobSpec | undefined;
  /** Committed markers read (they never change in content once written). */
  private readonly stored = new Map<string, Stored>();
  /** Objects copied by this process's tasks: an attempt's files and the shards never change. */
  private readonly cache = new ObjectCache();

  constructor(name: string) {
    this.name = name.replace(/\/+$/, '');
    parseS3Url(this.name);
  }

  private markerUrl(stage: string, t: number): string {
    return `${this.name}/${stage}/${pad(t)}/${MARKER}`;
  }

  private attemptUrl(stage: string, t: number, attempt: string, file: string): string {
    return `${this.name}/${stage}/${pad(t)}/attempt-${attempt}/${file}`;
  }

  private failedUrl(stage: string, t: number): string {
    return `${this.name}/${stage}/.failed-${pad(t)}.json`;
  }

  /** Reads the plan. */
  async load(): Promise<JobSpec> {
    if (this.plan) return this.plan;
    const plan = await s3GetParsed(jobFile(this.name), (b) => parseJob(this.name, b.toString('utf8')));
    if (!plan) throw new UsageError(`${this.name} holds no job (no ${jobFile(this.name)}): create one with "neardup job plan" or "neardup job dedup"`);
    return (this.plan = plan);
  }

  /**
   * Writes the plan with a conditional PUT, or finds the same job planned there. On a store that
   * ignores the condition, two submissions racing on a new prefix both write; each reads back what
   * stands and goes on with that plan when it is the same job.
   */
  async save(spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec> {
    const url = jobFile(this.name);
    const { bucket, key } = parseS3Url(this.name);
    for (let i = 0; i < 3; i++) {
      const found = await s3GetParsed(url, (b) => parseJob(this.name, b.toString('utf8')));
      if (found) return (this.plan = sameJob(this.name, found, spec));
      // Planning a new job: one LIST, to refuse objects that belong to no plan.
      const leftovers = (await s3List(bucket, key ? `${key}/` : '')).map((o) => o.key.slice(key ? key.length + 1 : 0));
      if (leftovers.length > 0) {
        throw new UsageError(
          `${this.name} holds ${leftovers.slice(0, 3).join(', ')}${
            leftovers.length > 3 ? ', …' : ''
          } but no job.json: outputs of a removed or unfinished plan are never reused; use a new --work-dir, or remove everything under it first (neardup job clean --all needs a plan: delete the objects)`,
        );
      }
      const job: JobSpec = { version: JOB_VERSION, id: randomBytes(6).toString('hex'), ...spec };
      const { stored: now } = await s3PutSettled(url, JSON.stringify(job, null, 2) + '\n', (b) => parseJob(this.name, b.toString('utf8')), {
        ifNoneMatch: true,
      });
      if (!now) continue;
      return (this.plan = now.id === job.id ? job : sameJob(this.name, now, spec));
    }
    throw new UsageError(`${this.name}: another process keeps replacing job.json; use a new --work-dir`);
  }

  /** The committed marker of a task, checked, or undefined. */
  private async storedMarker(job: JobSpec, stage: string, t: number): Promise<Stored | undefined> {
    const url = this.markerUrl(stage, t);
    const known = this.stored.get(url);
    if (known) return known;
    // A marker that does not parse is read again first: on a store that writes in place it may be torn, not damaged.
    const s = await s3GetParsed(url, (b) => storedOf(b, url, job));
    if (s) this.stored.set(url, s);
    return s;
  }

  /** The task's marker, when it has committed. */
  async marker(job: JobSpec, stage: TaskStage, t: number): Promise<object | undefined> {
    return (await this.storedMarker(job, stage, t))?.body;
  }

  /** Whether the task has committed. */
  async isDone(job: JobSpec, stage: TaskStage, t: number): Promise<boolean> {
    return (await this.storedMarker(job, stage, t)) !== undefined;
  }

  /** Copies one object an attempt wrote, after checking it is there with the size its marker gives. */
  private async fetchObject(url: string, bytes: number, file: string, markerUrl: string): Promise<void> {
    const damaged = damagedObject(url, bytes, markerUrl);
    await this.cache.place(url, file, async (to) => {
      // A small object is one GET, its length checked; a large one a HEAD, then ranged GETs.
      if (bytes <= S3_BLOCK) {
        const b = await s3Get(url);
        if (!b) throw damaged('missing');
        if (b.length !== bytes) throw damaged(`${b.length} bytes`);
        await fsp.writeFile(to, b);
        return;
      }
      const info = await s3Head(url);
      if (!info) throw damaged('missing');
      if (info.size !== bytes) throw damaged(`${info.size} bytes`);
      await s3Download(url, bytes, to);
    });
  }

  /** Copies the markers of `reads` into the local work dir `dir`, and the files of theirs named there. A missing marker is "run that stage first" when `required`. */
  private async fetchReads(job: JobSpec, reads: readonly TaskRead[], dir: string, required: boolean): Promise<void> {
    const jobs: (() => Promise<void>)[] = [];
    for (const r of reads) {
      for (const t of r.tasks) {
        jobs.push(async () => {
          const m = await this.storedMarker(job, r.stage, t);
          if (!m) {
            if (required) throw new UsageError(`${r.stage} task ${t} has not completed (no ${this.markerUrl(r.stage, t)}): run that stage first`);
            return;
          }
          const local = taskDir(dir, r.stage, t);
          await fsp.mkdir(local, { recursive: true });
          await fsp.writeFile(path.join(local, MARKER), m.text);
          for (const f of r.files) {
            const want = m.body.files[f];
            if (!want) continue;
            const url = this.attemptUrl(r.stage, t, m.attempt, f);
            if (r.partition === undefined) await this.fetchObject(url, want.bytes, path.join(local, f), this.markerUrl(r.stage, t));
            else await fetchPartition({
                url,
                bytes: want.bytes,
                file: path.join(local, f),
                part: r.partition,
                plan: job.id,
                damaged: damagedObject(url, want.bytes, this.markerUrl(r.stage, t)),
              });
          }
        });
      }
    }
    await inParallel(jobs, PARALLEL * 2);
  }

  /** Copies the input shards `shards` to their places in the local plan, with their objects' modification times (the plan's identity checks them). */
  private async fetchShards(job: JobSpec, local: JobSpec, shards: readonly number[]): Promise<void> {
    await inParallel(
      shards.map((s) => async () => {
        const url = job.shards[s]!.path;
        if (!isS3Url(url)) return;
        const file = local.shards[s]!.path;
        await fsp.mkdir(path.dirname(file), { recursive: true });
        // Cached by name and planned identity: a copy of another object at that name is not reused.
        const id = job.shards[s]!.identity;
        await this.cache.place(`${url}#${id.size}:${id.mtimeMs}:${id.ends}`, file, async (to) => {
          const info = await s3Head(url);
          if (!info) throw new InputError(url, undefined, `no such object: it was there when the job in ${this.name} was planned`);
          await s3Download(url, info.size, to);
          const when = new Date(info.lastModified);
          await fsp.utimes(to, when, when);
        });
      }),
      PARALLEL,
    );
  }

  /** The plan as a task runs it in its spool: shards in storage at local paths (same names), an output prefix as a local directory. */
  private localPlan(job: JobSpec, spool: string): { local: JobSpec; names: Names } {
    const names: Names = [];
    const shards = job.shards.map((sh, s) => {
      if (!isS3Url(sh.path)) return sh;
      const p = path.join(spool, 'in', String(s), path.posix.basename(parseS3Url(sh.path).key));
      names.push([p, sh.path]);
      return { ...sh, path: p };
    });
    let output = job.output;
    if (output.dir && isS3Url(output.dir)) {
      names.push([path.join(spool, 'out'), output.dir]);
      output = { ...output, dir: path.join(spool, 'out') };
    }
    names.push([spool, this.name]);
    names.sort((a, b) => b[0].length - a[0].length);
    return { local: { ...job, shards, output }, names };
  }

  /** Runs the task in a local spool and commits it here (see the module comment). */
  async run(job: JobSpec, stage: TaskStage, t: number): Promise<object> {
    const done = await this.storedMarker(job, stage, t);
    if (done) return done.body;
    await checkOutputClaim(this, job, stage, () => Promise.resolve(false));
    const spool = await spoolDir();
    const { local, names } = this.localPlan(job, spool.dir);
    const ended = await markRunning(this.name, stage, t);
    try {
      // A link task reads every round up to the converged one: which that is, its markers say.
      const round = stage === 'link'
        ? await convergedRound(job, async (st, q) => (await this.storedMarker(job, st, q))?.body as RoundState | undefined)
        : undefined;
      if (stage === 'link' && round === undefined)
        throw new UsageError(`link task ${t}: the link rounds have not converged (run "neardup stage link", which runs them)`);
      const first = taskInputs(job, stage, t, round !== undefined ? [round] : undefined);
      await this.fetchReads(job, first.reads, spool.dir, true);
      let shards = first.shards;
      // What else the task reads, the stage says from its first inputs (verify's and decide's pairs, the verify markers).
      const known = followUpReads({ workDir: spool.dir, job: local, stage, task: t, round });
      if (known) {
        const more = taskInputs(job, stage, t, known);
        await this.fetchReads(job, more.reads.slice(first.reads.length), spool.dir, true);
        shards = more.shards;
      }
      await this.fetchShards(job, local, shards);
      await runTask(spool.dir, stage, t, local);
      return await this.publish({ job, local, spool: spool.dir, stage, t, names });
    } catch (e) {
      const err = translated(e, names);
      await this.recordFailure(stage, t, err);
      throw err;
    } finally {
      await ended();
      await spool.remove();
    }
  }

  /**
   * Uploads task `t`'s files from the local spool under a new attempt (and a filter task's output
   * shards, from the `local` plan's places), then its marker, conditionally.
   */
  private async publish(o: { job: JobSpec; local: JobSpec; spool: string; stage: TaskStage; t: number; names: Names }): Promise<object> {
    const { job, local, spool, stage, t, names } = o;
    const dir = taskDir(spool, stage, t);
    const body = mapStrings(parseMarker(await fsp.readFile(path.join(dir, MARKER), 'utf8'), path.join(dir, MARKER), job), names);
    const attempt = randomBytes(8).toString('hex');
    const uploads: [string, string][] = [];
    if (stage === 'filter' && job.output.dir && isS3Url(job.output.dir)) {
      // The shards go straight to the output prefix: checked again after the task's long run.
      await checkOutputClaim(this, job, stage, () => Promise.resolve(false));
      const { first, end } = shardsOfTask(job, t);
      for (let s = first; s < end; s++) uploads.push([path.join(local.output.dir!, job.shards[s]!.out), `${job.output.dir}/${job.shards[s]!.out}`]);
    }
    for (const n of Object.keys(body.files).sort()) uploads.push([path.join(dir, n), this.attemptUrl(stage, t, attempt, n)]);
    let paused = false;
    await inParallel(
      uploads.map(([file, url]) => async () => {
        const st = await fsp.stat(file).catch(() => undefined);
        if (!st) return; // A filter task writes no output for a reference or skipped shard.
        await s3Upload(file, st.size, url);
        if (!paused) {
          paused = true;
          await faultHooks().afterFirstUpload?.();
        }
      }),
      PARALLEL,
    );
    const url = this.markerUrl(stage, t);
    // Read back: on a store that ignores the condition, members running the same task (a stolen link
    // round task) all write, and one writing in place can tear the marker; the read-back mends that.
    const { written, stored } = await s3PutSettled(url, JSON.stringify({ attempt, marker: sealMarker(body) }), (b) => storedOf(b, url, job), {
      ifNoneMatch: true,
    });
    if (!written) {
      // Another attempt committed first: the same files; adopt it and drop ours. (Or ours did, and
      // the answer to our PUT was lost and the retry found it: then it is ours that stands.)
      if (stored && stored.attempt !== attempt)
        await inParallel(uploads.filter(([, u]) => u.includes(`/attempt-${attempt}/`)).map(([, u]) => () => s3Delete(u).catch(() => undefined)), PARALLEL);
      if (stored) return stored.body;
      throw new Error(`${url}: the store refused the marker as already there, yet there is none`);
    }
    // Written, yet another writer's may stand: adopt it, and keep our files (a store that ignored the
    // condition gives no word on which write is last, so ours may yet be named).
    // A failure record of an earlier attempt stays (status reads records of unfinished tasks only); job clean removes it.
    return stored && stored.attempt !== attempt ? stored.body : body;
  }

  /** Records a failed attempt for `job status` (not an error of its own when it cannot be written). */
  private async recordFailure(stage: string, t: number, e: unknown): Promise<void> {
    const err = e instanceof Error ? e : new Error(String(e));
    const rec: FailedRecord = { stage, task: t, error: err.message, kind: err.constructor.name, at: Date.now(), host: hostname(), pid: process.pid };
    await s3Put(this.failedUrl(stage, t), JSON.stringify(rec) + '\n').catch(() => undefined);
  }

  /** Runs `fn` on a local copy of the markers (and, for the report, the output files); errors name the objects. */
  async withView<T>(job: JobSpec, report: boolean, fn: (dir: string) => Promise<T>): Promise<T> {
    const spool = await spoolDir();
    const names: Names = [[spool.dir, this.name]];
    try {
      await fsp.writeFile(path.join(spool.dir, 'job.json'), JSON.stringify(job));
      await this.fetchReads(job, jobReads(job, report), spool.dir, false);
      // The link rounds' markers (what the link stage cost), up to the round its tasks name.
      const last = (await this.marker(job, 'link', 0)) as { round?: number } | undefined;
      if (last?.round !== undefined)
        await this.fetchReads(
          job,
          Array.from({ length: last.round + 1 }, (_, r) => ({
            stage: roundStage(r),
            tasks: Array.from({ length: taskCount(job, 'link') }, (_, t) => t),
            files: [],
          })),
          spool.dir,
          false,
        );
      if (!report) {
        const failed: (() => Promise<void>)[] = [];
        for (const stage of STAGES) {
          failed.push(() => runningView(this.name, stage, spool.dir));
          for (let t = 0; t < taskCount(job, stage); t++) {
            failed.push(async () => {
              if (await this.storedMarker(job, stage, t)) return;
              const b = await s3Get(this.failedUrl(stage, t));
              if (!b) return;
              await fsp.mkdir(path.join(spool.dir, stage), { recursive: true });
              await fsp.writeFile(failedFile(spool.dir, stage, t), b);
            });
          }
        }
        await inParallel(failed, PARALLEL * 2);
      }
      return await fn(spool.dir);
    } catch (e) {
      throw translated(e, names);
    } finally {
      await spool.remove();
    }
  }

  /** `_SUCCESS` of the output prefix (or directory), under the job's claim (./workDir.ts). */
  markOutput(job: JobSpec, complete: boolean): Promise<void> {
    return markOutputDir(this, job, complete);
  }

  /**
   * Deletes the objects of attempts that their task's marker does not name, and the failure records
   * of committed tasks; with `all`, every object of the job. Tasks without a marker are left alone:
   * they may be running. Run it when no task of the job runs (on a store that ignores conditional
   * PUTs, a late duplicate attempt could otherwise commit objects just deleted).
   */
  async clean(job: JobSpec, all: boolean): Promise<string[]> {
    if (all) await releaseOutputDir(this, job);
    const { bucket, key } = parseS3Url(this.name);
    const prefix = key ? `${key}/` : '';
    const objects = (await s3List(bucket, prefix)).map((o) => o.key);
    const doomed: string[] = [];
    for (const k of objects) {
      if (all) {
        // The job's own objects only (plan, stages), never an output under the work dir's prefix.
        const outputs = [job.output.dir, job.output.removed].filter((x): x is string => isS3Url(x)).map((x) => parseS3Url(x).key.replace(/\/+$/, ''));
        if (isJobEntry(k.slice(prefix.length)) && !outputs.some((o) => k === o || k.startsWith(`${o}/`))) doomed.push(k);
        continue;
      }
      if (/^[a-z]+(\/r\d{4,})?\/\.running-/.test(k.slice(prefix.length))) continue;
      const m = /^([a-z]+(?:\/r\d{4,})?)\/(\d{5})\/attempt-([0-9a-f]+)\//.exec(k.slice(prefix.length))
        ?? /^([a-z]+(?:\/r\d{4,})?)\/\.failed-(\d{5})\.json$/.exec(k.slice(prefix.length));
      if (!m || !((STAGES as readonly string[]).includes(m[1]!) || roundOf(m[1]!) !== undefined)) continue;
      const stored = await this.storedMarker(job, m[1]!, Number(m[2]));
      if (stored && stored.attempt !== m[3]) doomed.push(k);
    }
    if (!all) doomed.push(...(await staleRunning(this.name)));
    // The plan last: a clean cut short leaves a plan to clean again.
    const plan = `${prefix}job.json`;
    await inParallel(doomed.filter((k) => k !== plan).map((k) => () => s3Delete(`s3://${bucket}/${k}`)), PARALLEL * 2);
    if (doomed.includes(plan)) await s3Delete(`s3://${bucket}/${plan}`);
    return doomed.map((k) => `s3://${bucket}/${k}`);
  }
}
