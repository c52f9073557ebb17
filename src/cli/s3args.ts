/**
 * The one place the CLI meets object storage: before a command is parsed, every `s3://` name in its
 * arguments is replaced by a local stand-in (src/io/s3/staging.ts): inputs are copied down first,
 * outputs (`--out`, `-o`, `--out-dir`, `--data`, `--removed`) are uploaded after the command succeeded. So every
 * command that takes paths (dedup, report, index snapshot/restore, job dedup --local) takes
 * `s3://bucket/key` without a branch of its own. A job whose `--work-dir` is in S3 is the
 * exception: its tasks read its shards and write its `--out-dir` themselves, wherever they run
 * (src/shard/workdir/s3work.ts), so those names stay as given; `--out` is still staged. `--s3-endpoint URL`
 * may appear anywhere (and, for such a job or a worker, reaches its task processes as `AWS_ENDPOINT_URL_S3`).
 * @module
 */
import { UsageError } from '../common/errors.js';
import { isS3Url, setS3Endpoint, setS3Log, s3Requests } from '../io/s3/client.js';
import { S3Stage } from '../io/s3/staging.js';
import { refuseAliasedOutputs } from '../io/write/alias.js';

/** Options whose value is written, not read (`--removed`: the audit, uploaded after the output). */
const OUTPUT_OPTIONS = new Set(['--out', '-o', '--out-dir', '--data', '--removed']);

/** Commands whose inputs must stay where other processes read them: a local spool would vanish. */
const IN_PLACE = new Set(['plan', 'submit', 'stage', 'worker']);

/** The arguments with local stand-ins, and the step to run when the command has finished. */
export interface StagedArgs {
  /** argv with every `s3://` name replaced and `--s3-endpoint` taken out. */
  argv: string[];
  /** Uploads the outputs (only when `ok`), then removes the spool. */
  finish(ok: boolean): Promise<void>;
}

/**
 * Until the returned function is called, what the command prints names the `s3://` names instead of
 * their local stand-ins (the summary's input and output lines, error messages naming a file).
 */
function speakS3Names(stage: S3Stage): () => void {
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((s) => s.write);
  for (const [i, s] of streams.entries()) {
    const write = writes[i]!.bind(s) as (chunk: unknown, ...rest: unknown[]) => boolean;
    s.write = ((chunk: unknown, ...rest: unknown[]) => write(typeof chunk === 'string' ? stage.display(chunk) : chunk, ...rest)) as typeof s.write;
  }
  return () => streams.forEach((s, i) => (s.write = writes[i]!));
}

/** The option a value of `rest` is given to (undefined: a positional argument), and the value. */
function optionAndValue(rest: readonly string[], i: number): [string | undefined, string] {
  const a = rest[i]!;
  const eq = a.startsWith('--') ? a.indexOf('=') : -1;
  return eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [rest[i - 1]?.startsWith('-') ? rest[i - 1] : undefined, a];
}

/**
 * Before anything is staged: an `s3://` output that names an `s3://` input object (or, as a prefix,
 * holds one) is refused by name and key, as local outputs are by inode once staged (their local
 * stand-ins are distinct files).
 */
async function refuseAliasedS3(rest: readonly string[]): Promise<void> {
  const named = rest.map((_, i) => optionAndValue(rest, i)).filter(([, v]) => isS3Url(v));
  const outs = named.filter(([o]) => o !== undefined && OUTPUT_OPTIONS.has(o));
  const ins = named.filter(([o]) => !(o !== undefined && OUTPUT_OPTIONS.has(o)));
  if (outs.length === 0 || ins.length === 0) return;
  // An output prefix holds what is under it; an output object is the prefix's one name.
  await refuseAliasedOutputs(outs.map(([o, v]) => ({ what: o!, path: v, dir: true })), ins.map(([o, v]) => ({ what: o ?? 'the input', path: v })));
}

/** Replaces the `s3://` names of `argv` (a full process.argv) by local paths; see the module comment. */
export async function stageS3Args(argv: readonly string[]): Promise<StagedArgs> {
  const out: string[] = [];
  const verbose = argv.includes('-v') || argv.includes('--verbose');
  setS3Log(verbose ? (line) => process.stderr.write(`${line}\n`) : undefined);
  const stage = new S3Stage();
  const staged: { option: string | undefined; value: string }[] = [];
  // First pass: take out --s3-endpoint, wherever it is, before any name is resolved.
  const rest: string[] = [];
  let endpointGiven: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--s3-endpoint') {
      if (argv[i + 1] === undefined) throw new UsageError('--s3-endpoint needs a URL, e.g. http://127.0.0.1:9000');
      setS3Endpoint(endpointGiven = argv[++i]);
    } else if (a.startsWith('--s3-endpoint=')) setS3Endpoint(endpointGiven = a.slice('--s3-endpoint='.length));
    else rest.push(a);
  }
  const subcommands = rest.slice(2, 4);
  // A job whose work dir is in S3: its tasks, wherever they run, read the s3:// shards and write an
  // s3:// --out-dir themselves (src/shard/workdir/s3work.ts); only the submitter's --out is staged here.
  const wdAt = rest.findIndex((a) => a === '--work-dir' || a.startsWith('--work-dir='));
  const s3Job = wdAt >= 0 && isS3Url(rest[wdAt]!.startsWith('--work-dir=') ? rest[wdAt]!.slice('--work-dir='.length) : rest[wdAt + 1]);
  // A worker runs its tasks in task processes of its own: they learn the endpoint the same way.
  if ((s3Job || subcommands[0] === 'worker') && endpointGiven) process.env.AWS_ENDPOINT_URL_S3 = endpointGiven;
  try {
    if (!s3Job) await refuseAliasedS3(rest);
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      const eq = a.startsWith('--') ? a.indexOf('=') : -1;
      const [option, value] = eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [rest[i - 1]?.startsWith('-') ? rest[i - 1] : undefined, a];
      if (!isS3Url(value)) {
        out.push(a);
        continue;
      }
      const where = option ?? 'an input';
      const submitterOut = option === '--out' || option === '-o';
      if (s3Job && !submitterOut) {
        out.push(a);
        continue;
      }
      // A job run by workers elsewhere (job dedup --redis) reads its shards where the plan says.
      const cmd = s3Job
        ? undefined
        : subcommands.find((c) => IN_PLACE.has(c)) ?? (subcommands.join(' ') === 'job dedup' && !rest.includes('--local') ? 'job dedup --redis' : undefined);
      if (cmd)
        throw new UsageError(
          `${value}: "${cmd}" hands its inputs to other processes, which cannot read this machine's copy of S3 objects; give the job a work dir in S3 too (--work-dir s3://bucket/prefix), or run "neardup job dedup --local" or "neardup dedup"`,
        );
      const isOut = option !== undefined && OUTPUT_OPTIONS.has(option);
      const twice = isOut ? staged.find((s) => s.value === value) : undefined;
      if (twice)
        throw new UsageError(
          twice.option && OUTPUT_OPTIONS.has(twice.option)
            ? `${where} ${value} is also ${twice.option}: two outputs cannot be one object`
            : `${where} ${value} is also an input: it would be overwritten`,
        );
      if (!isOut && staged.some((s) => s.option && OUTPUT_OPTIONS.has(s.option) && s.value === value))
        throw new UsageError(`${value} is both an input and an output`);
      const local = isOut ? await stage.output(value, option === '--removed') : await stage.input(value);
      staged.push({ option, value });
      out.push(eq > 0 ? `${option}=${local}` : local);
    }
  } catch (e) {
    await stage.cleanup();
    throw e;
  }
  const restore = staged.length ? speakS3Names(stage) : () => {};
  if (staged.length && verbose)
    process.stderr.write(
      `s3: ${stage.moved.down} object(s) read (${stage.moved.downBytes} bytes, ${s3Requests.count} requests, ${s3Requests.retries} retried)\n`,
    );
  return {
    argv: out,
    async finish(ok) {
      try {
        if (ok && staged.length) {
          await stage.commit();
          if (verbose && stage.moved.up)
            process.stderr.write(
              `s3: ${stage.moved.up} object(s) written (${stage.moved.upBytes} bytes; ${s3Requests.count} requests in all, ${s3Requests.retries} retried)\n`,
            );
        }
      } finally {
        restore();
        await stage.cleanup();
      }
    },
  };
}
