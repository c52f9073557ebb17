/**
 * The CLI's path resolver for object storage, the one place the CLI meets it. After commander has
 * parsed a command and before the command runs (a `preAction` hook), every `s3://` name among the
 * command's parsed arguments and option values is resolved to a local stand-in (src/io/s3/staging.ts):
 * inputs are copied down first; outputs (`--out`, `--out-dir`, `--data`, `--removed`) are written
 * locally and uploaded after the command succeeded. So every command that takes paths (dedup, spans,
 * report, index snapshot/restore, job dedup --local) takes `s3://bucket/key` without a branch of its
 * own, and nothing rewrites the command line or the process's output streams: what the CLI prints
 * names the `s3://` names because its printers pass their lines through `s3Display`
 * (src/io/s3/staging.ts): the reporter, the error line, the index commands' lines.
 *
 * A job whose `--work-dir` is in S3 is the exception: its tasks read its shards and write its
 * `--out-dir` themselves, wherever they run (src/shard/workdir/s3work.ts), so those names stay as
 * given; `--out` is still resolved. `--s3-endpoint URL` is a program option, accepted anywhere on the
 * line (for such a job or a worker it reaches the task processes as `AWS_ENDPOINT_URL_S3`).
 * @module
 */
import type { Command } from 'commander';
import { UsageError } from '../common/errors.js';
import { isS3Url, setS3Endpoint, setS3Log, s3Requests } from '../io/s3/client.js';
import { S3Stage } from '../io/s3/staging.js';
import { refuseAliasedOutputs } from '../io/write/alias.js';

/** Option attributes whose value is written, not read (`removed`: the audit, uploaded after the output). */
const OUTPUT_OPTIONS = new Set(['out', 'outDir', 'data', 'removed']);

/** Commands whose inputs must stay where other processes read them: a local spool would vanish. */
const IN_PLACE = new Set(['plan', 'submit', 'stage', 'worker']);

/** One `s3://` name the command was given, and how to put its stand-in in its place. */
interface Named {
  /** The option's flag (`--out`), or undefined for a positional argument. */
  option: string | undefined;
  value: string;
  output: boolean;
  /** The `--removed` audit: uploaded after the other outputs. */
  last: boolean;
  replace(local: string): void;
}

/** What a run with resolved names does when its command has ended. */
export interface S3Run {
  /** Uploads the outputs (only when `ok`), then removes the spool. */
  finish(ok: boolean): Promise<void>;
}

/** Each `s3://` value among `cmd`'s parsed arguments (in order), then among its options (in definition order). */
function namedValues(cmd: Command): Named[] {
  const found: Named[] = [];
  const visit = (v: unknown, base: Omit<Named, 'value' | 'replace'>, put: (local: string, i?: number) => void): void => {
    if (typeof v === 'string' && isS3Url(v)) found.push({ ...base, value: v, replace: (l) => put(l) });
    else if (Array.isArray(v)) v.forEach((x, i) => typeof x === 'string' && isS3Url(x) && found.push({ ...base, value: x, replace: (l) => put(l, i) }));
  };
  const args = cmd.processedArgs as unknown[];
  args.forEach((v, i) =>
    visit(v, { option: undefined, output: false, last: false }, (l, j) => {
      if (j === undefined) args[i] = l;
      else (args[i] as string[])[j] = l;
    })
  );
  for (const o of cmd.options) {
    const key = o.attributeName();
    const v: unknown = cmd.getOptionValue(key);
    const output = OUTPUT_OPTIONS.has(key);
    visit(v, { option: o.long ?? o.short, output, last: key === 'removed' }, (l, j) => {
      if (j === undefined) cmd.setOptionValue(key, l);
      else (cmd.getOptionValue(key) as string[])[j] = l;
    });
  }
  return found;
}

/** The command's name with its parents' (`job dedup`), without the program's. */
function commandPath(cmd: Command): string[] {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names;
}

/**
 * Before anything is staged: an `s3://` output that names an `s3://` input object (or, as a prefix,
 * holds one) is refused by name and key, as local outputs are by inode once staged (their local
 * stand-ins are distinct files).
 */
async function refuseAliasedS3(named: readonly Named[]): Promise<void> {
  const outs = named.filter((n) => n.output);
  const ins = named.filter((n) => !n.output);
  if (outs.length === 0 || ins.length === 0) return;
  // An output prefix holds what is under it; an output object is the prefix's one name.
  await refuseAliasedOutputs(
    outs.map((n) => ({ what: n.option!, path: n.value, dir: true })),
    ins.map((n) => ({ what: n.option ?? 'the input', path: n.value })),
  );
}

/**
 * Why an output of a job with a local work dir is written later by other processes (the job's
 * stages and report, its workers) rather than by this one, which could upload its staged copy when
 * it ends: the plan would record the stand-in, a temp directory gone when this command ends, and the
 * job would write there with exit 0. Undefined when this process writes it.
 */
function writtenLater(cmd: Command, path: readonly string[], n: Named): string | undefined {
  const command = `neardup ${path.join(' ')}`;
  if (cmd.getOptionValue('planOnly') === true || path.some((c) => IN_PLACE.has(c)))
    return `"${command}" records it in the plan for the job's stages and report`;
  const job = path[0] === 'job' && (path[1] === 'dedup' || path[1] === 'spans');
  if (job && cmd.getOptionValue('local') !== true && n.option === '--out-dir') return `"${command}" without --local has its workers write the output shards`;
  return undefined;
}

/** Refuses a name no local stand-in can serve: an input of a command that hands it to other processes, an output they write, or a name given twice. */
function refuseUnstageable(n: Named, staged: readonly Named[], o: { handedOn: string | undefined; later: string | undefined }): void {
  const { handedOn, later } = o;
  if (handedOn && !n.output) {
    throw new UsageError(
      `${n.value}: "${handedOn}" hands its inputs to other processes, which cannot read this machine's copy of S3 objects; give the job a work dir in S3 too (--work-dir s3://bucket/prefix), or run "neardup job dedup --local" or "neardup dedup"`,
    );
  }
  if (later && n.output) {
    throw new UsageError(
      `${n.option} ${n.value}: ${later}, in other processes, which cannot upload this machine's copy; give the job a work dir in S3 too (--work-dir s3://bucket/prefix), or run it with --local`,
    );
  }
  const twice = staged.find((s) => s.value === n.value);
  if (!twice) return;
  if (n.output) {
    throw new UsageError(
      twice.output
        ? `${n.option} ${n.value} is also ${twice.option}: two outputs cannot be one object`
        : `${n.option} ${n.value} is also an input: it would be overwritten`,
    );
  }
  if (twice.output) throw new UsageError(`${n.value} is both an input and an output`);
}

/** Sets the endpoint and the request log from the parsed flags; returns whether `-v` is on. */
function configureS3(cmd: Command, s3Job: boolean, path: readonly string[]): boolean {
  const opts = cmd.optsWithGlobals<{ s3Endpoint?: string; verbose?: boolean }>();
  if (opts.s3Endpoint !== undefined) {
    setS3Endpoint(opts.s3Endpoint);
    // A job in S3 or a worker runs its tasks in processes of their own: they learn the endpoint this way.
    if (s3Job || path[0] === 'worker') process.env.AWS_ENDPOINT_URL_S3 = opts.s3Endpoint;
  }
  const verbose = opts.verbose === true;
  setS3Log(verbose ? (line) => process.stderr.write(`${line}\n`) : undefined);
  return verbose;
}

/**
 * Resolves the `s3://` names of the parsed command `cmd` to local stand-ins, in place; see the
 * module comment. Undefined when the command names no object and sets no endpoint.
 */
export async function resolveS3Paths(cmd: Command): Promise<S3Run | undefined> {
  const workDir: unknown = cmd.getOptionValue('workDir');
  const s3Job = typeof workDir === 'string' && isS3Url(workDir);
  const path = commandPath(cmd);
  const verbose = configureS3(cmd, s3Job, path);
  // A job in S3: its tasks, wherever they run, read the s3:// shards and write an s3:// --out-dir
  // themselves (src/shard/workdir/s3work.ts); only the submitter's --out is resolved here.
  const named = namedValues(cmd).filter((n) => !s3Job || n.option === '--out');
  if (named.length === 0) return undefined;
  // A job run by workers elsewhere (job dedup --redis) reads its shards where the plan says.
  const handedOn = s3Job
    ? undefined
    : path.find((c) => IN_PLACE.has(c)) ?? (path.join(' ') === 'job dedup' && cmd.getOptionValue('local') !== true ? 'job dedup --redis' : undefined);
  const stage = new S3Stage();
  const staged: Named[] = [];
  try {
    if (!s3Job) await refuseAliasedS3(named);
    // Inputs first: an output that repeats one is refused as overwriting it.
    for (const n of [...named.filter((x) => !x.output), ...named.filter((x) => x.output)]) {
      refuseUnstageable(n, staged, { handedOn, later: n.output ? writtenLater(cmd, path, n) : undefined });
      n.replace(n.output ? await stage.output(n.value, n.last) : await stage.input(n.value));
      staged.push(n);
    }
  } catch (e) {
    await stage.cleanup();
    throw e;
  }
  if (verbose)
    process.stderr.write(
      `s3: ${stage.moved.down} object(s) read (${stage.moved.downBytes} bytes, ${s3Requests.count} requests, ${s3Requests.retries} retried)\n`,
    );
  return {
    async finish(ok) {
      try {
        if (!ok) return;
        await stage.commit();
        if (verbose && stage.moved.up) {
          process.stderr.write(
            `s3: ${stage.moved.up} object(s) written (${stage.moved.upBytes} bytes; ${s3Requests.count} requests in all, ${s3Requests.retries} retried)\n`,
          );
        }
      } finally {
        await stage.cleanup();
      }
    },
  };
}
