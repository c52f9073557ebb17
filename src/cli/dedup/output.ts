/**
 * Where and how `neardup dedup` writes its result: pairs or clusters to a sink, or the input again
 * without (dedup) or with (annotate) its duplicates, as a file, a Parquet file or a directory of
 * shards.
 * @module
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { DedupResult } from '../../dedup/dedup.js';
import { UsageError } from '../../common/errors.js';
import type { ReadOptions } from '../../io/read/read.js';
import { openOutput, PendingCommits, type OutputSink } from '../../io/write/output.js';
import { auditFormat, openAudit } from '../../io/write/audit.js';
import type { DedupOptions } from '../../dedup/options.js';
import { keptOf, keptSimilarities, writeDropped } from '../../cluster/dropped.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import { copyNameProblem } from '../../io/write/rewrite.js';
import { formatCluster, pairHeader, type ClusterVerdicts } from '../../io/write/write.js';
import { clusterRemoval, type Removal } from '../../cluster/removal.js';
import { writePairLines } from '../../io/write/pairLines.js';
import { pairColumnsOf } from '../../dedup/pairColumns.js';
import { writeCopy, type CopyTarget } from '../../dedup/dedupFile.js';
import { idOf, type Corpus } from '../corpus.js';
import { pairFormatOf } from '../options.js';
import type { DedupFlags } from './flags.js';
import type { Reporter } from '../report.js';

/** What `neardup dedup` writes the output of, and how it reads its input again. */
export interface ResultRun {
  flags: DedupFlags;
  /** The input, read again by dedup/annotate. */
  file: string;
  corpus: Corpus;
  result: DedupResult;
  target: OutputTarget;
  /** The reader options of the flags, for the second pass of dedup/annotate. */
  read: ReadOptions;
}

/** Writes the chosen output of `run` to `to.sink` or its target; returns the number of records written. */
async function writeOutput(
  run: ResultRun,
  to: { sink?: OutputSink; similarity?: Float64Array; commits?: PendingCommits; onProgress?: (done: number) => void },
): Promise<number> {
  const { flags, corpus, result } = run;
  const sink = to.sink;
  const id = (i: number): string | number => idOf(corpus, i);
  if (flags.output === 'pairs') {
    const fmt = pairFormatOf(flags);
    // The streaming pipeline's pairs are columns (without estimates): written without objects.
    const columns = pairColumnsOf(result);
    const withEstimate = columns ? false : result.pairs.some((p) => p.estimate !== undefined);
    await sink!.write(pairHeader(fmt, withEstimate));
    await writePairLines(sink!, fmt, columns ?? result.pairs, { a: id, b: id });
    return columns ? columns.size : result.pairs.length;
  }
  if (flags.output === 'clusters') {
    const removal = result.removal?.rule === 'verified' ? result.removal : undefined;
    for (let c = 0; c < result.clusters.length; c++) {
      const cl = result.clusters[c]!;
      const rep = cl.representative ?? cl.members[0]!;
      // --keep none: no kept member, written as null.
      await sink!.write(formatCluster(c, cl.members.map(id), rep < 0 ? null : id(rep), removal && clusterVerdicts(cl.members, removal, id)));
    }
    return result.clusters.length;
  }
  // dedup / annotate: a second streaming pass over the input, in the same order as the first (the library's dedupFile runs it too).
  const pass = {
    file: run.file,
    corpus,
    mode: flags.output,
    target: run.target,
    sink,
    read: run.read,
    tagPrefix: flags.tagPrefix,
    commits: to.commits,
    onProgress: to.onProgress,
  };
  return writeCopy(pass, result, to.similarity);
}

/**
 * Refuses the tag and audit flags where the output cannot honour them (exit 2, naming the flag):
 * `--tag-prefix` names annotate's tags, `--removed` and `--dry-run` are about what `--output dedup`
 * drops, and a dry run writes no output to give `--out`.
 */
export function checkAuditFlags(flags: Pick<DedupFlags, 'output' | 'out' | 'tagPrefix' | 'removed' | 'dryRun'>): void {
  if (flags.tagPrefix !== undefined) {
    if (flags.output !== 'annotate') throw new UsageError(`--tag-prefix names the tags of --output annotate: it does not apply to --output ${flags.output}`);
    if (/[\t\r\n"\\,]/.test(flags.tagPrefix))
      throw new UsageError(`--tag-prefix "${flags.tagPrefix}": a column name prefix may not hold tabs, line breaks, quotes, backslashes or commas`);
  }
  if (flags.removed !== undefined) {
    if (flags.output !== 'dedup') throw new UsageError(`--removed lists the documents --output dedup drops: it does not apply to --output ${flags.output}`);
    if (flags.removed === '-' || flags.removed === '') throw new UsageError('--removed needs a file name (.tsv, .jsonl or .parquet), not standard output');
    auditFormat(flags.removed);
  }
  if (flags.dryRun) {
    if (flags.output !== 'dedup')
      throw new UsageError(`--dry-run skips the deduplicated copy of --output dedup: it does not apply to --output ${flags.output}`);
    if (flags.out !== undefined) throw new UsageError(`--dry-run writes no output: drop --out ${flags.out} (the audit goes to --removed)`);
  }
}

/**
 * The output of a run with its tags and audit: each clustered document's similarity to its kept
 * member (when annotate or --removed needs it; 1 for every copy of an --exact run), the --removed
 * audit, and the output itself unless --dry-run (`how.exact`: an --exact run); the output and the audit are put in place together,
 * once both are written whole. With `reporter`, the copy's pass over the input (dedup, annotate) has
 * a progress bar, as the other passes do.
 */
export async function writeResult(
  run: ResultRun,
  how: { options: DedupOptions; exact?: boolean; reporter?: Reporter },
): Promise<{ written: number; removed?: number; lowestSimilarity?: number }> {
  const { flags, file, corpus, result, target, read } = run;
  const { options, exact = false, reporter } = how;
  const removal = result.removal ?? clusterRemoval(corpus.count, result.clusters, (k) => keptOf(result.clusters[k]!));
  // The cluster rule's summary gives the lowest similarity of a dropped member to its survivor.
  const needSims = flags.output === 'annotate' || flags.removed !== undefined || (removal.rule === 'cluster' && !exact && flags.output !== 'pairs');
  let similarity: Float64Array | undefined;
  if (needSims && exact) {
    similarity = new Float64Array(corpus.count).fill(NaN);
    for (let i = 0; i < corpus.count; i++) if (removal.keptBy[i]! >= 0 && removal.keptBy[i] !== i) similarity[i] = 1;
  } else if (needSims && removal.rule === 'verified') similarity = removal.similarity;
  else if (needSims) {
    const secondPass = corpus.input.shards ? read : { ...read, format: corpus.input.format };
    similarity = await keptSimilarities(result.clusters, { count: corpus.count, texts: corpus.texts, file, read: secondPass }, options);
  }
  const lowestSimilarity = similarity && removal.rule === 'cluster' && !exact ? lowest(similarity) : undefined;
  // The output and the audit are both written whole to temp files, and only then both renamed into
  // place (output first; a sharded output's _SUCCESS after its shards): a failure writing either
  // (a full disk) leaves neither.
  const commits = new PendingCommits();
  const audit = flags.removed !== undefined ? await openAudit(flags.removed, false, commits) : undefined;
  let sink: OutputSink | undefined;
  try {
    const removed = audit ? await writeDropped(audit, { clusters: result.clusters, removal, sims: similarity!, idOf: (i) => idOf(corpus, i) }) : undefined;
    let written = 0;
    if (!flags.dryRun) {
      if (target.kind === 'sink') sink = await openOutput(flags.out, commits);
      const bar = flags.output === 'dedup' || flags.output === 'annotate' ? reporter?.progress('write', 'docs', corpus.count) : undefined;
      try {
        written = await writeOutput(run, { sink, similarity, commits, onProgress: bar && ((done) => bar.update(done)) });
      } finally {
        bar?.stop();
      }
      await sink?.close();
      sink = undefined;
    }
    await audit?.close();
    await commits.commit();
    return { written, removed, ...(lowestSimilarity !== undefined ? { lowestSimilarity } : {}) };
  } catch (e) {
    await sink?.abort();
    await audit?.abort();
    await commits.discard();
    throw e;
  }
}

/** The smallest similarity that is not NaN (undefined when there is none). */
function lowest(sims: Float64Array): number | undefined {
  let low = Infinity;
  for (const x of sims) if (x < low) low = x;
  return low === Infinity ? undefined : low;
}

/** Each member's kept member and verified similarity under the verified rule, for the cluster line. */
export function clusterVerdicts(members: readonly number[], removal: Removal, id: (i: number) => string | number): ClusterVerdicts {
  const duplicateOf: (string | number | null)[] = [];
  const similarity: (number | null)[] = [];
  for (const m of members) {
    const k = removal.keptBy[m]!;
    duplicateOf.push(k === m || k < 0 ? null : id(k));
    similarity.push(k === m || k < 0 ? null : removal.similarity[m]!);
  }
  return { duplicateOf, similarity };
}

/** Where `dedup`/`annotate` output goes: the sink (stdout or a text file), a file rewritten in place of a sink (Parquet), or a directory of shards. */
export type OutputTarget = CopyTarget;

/**
 * Chooses where `--output dedup|annotate` writes. A sharded input (glob or directory of shards)
 * writes one output shard per input shard into `--out DIR`; a Parquet input writes a Parquet file
 * (`--out FILE.parquet`, or `--out DIR` for DIR/<input name>); an existing directory as `--out` gets
 * the input's file name; anything else goes to the sink as before.
 */
export async function outputTarget(flags: Pick<DedupFlags, 'output' | 'out' | 'dryRun'>, fileArg: string, input: Corpus['input']): Promise<OutputTarget> {
  if ((flags.output !== 'dedup' && flags.output !== 'annotate') || flags.dryRun) return { kind: 'sink' };
  const out = flags.out === '-' ? undefined : flags.out;
  if (input.shards) {
    const what = input.shards.roots
      ? `the ${input.shards.roots.length} inputs are ${input.shards.shards.length} files`
      : `${input.name} is ${input.shards.shards.length} shard(s)`;
    if (!out) throw new UsageError(`${what}: --output ${flags.output} writes one output shard per input shard, so it needs --out DIR`);
    return { kind: 'shards', path: out };
  }
  const st = out ? await stat(out).catch(() => undefined) : undefined;
  if (input.format === 'parquet') {
    if (!out) throw new UsageError(`--output ${flags.output} of a Parquet input writes Parquet, so it needs --out FILE.parquet (or --out DIR)`);
    const target = st?.isDirectory() ? path.join(out, path.basename(fileArg)) : out;
    const problem = st?.isDirectory() ? undefined : copyNameProblem(input.format, out);
    if (problem) throw new UsageError(`--out ${out}: ${problem}`);
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  if (st?.isDirectory() && fileArg !== '-') {
    // --out DIR writes DIR/<input name>: DIR must not be the input's own directory.
    const target = path.join(out!, path.basename(fileArg));
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  const problem = out && !st?.isDirectory() ? copyNameProblem(input.format, out) : undefined;
  if (problem) throw new UsageError(`--out ${out}: ${problem}`);
  return { kind: 'sink' };
}
