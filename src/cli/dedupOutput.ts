/**
 * Where and how `neardup dedup` writes its result: pairs or clusters to a sink, or the input again
 * without (dedup) or with (annotate) its duplicates, as a file, a Parquet file or a directory of
 * shards.
 * @module
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { DedupResult } from '../dedup/dedup.js';
import { UsageError } from '../io/errors.js';
import { openInput, type ReadOptions } from '../io/read.js';
import type { OutputSink } from '../io/output.js';
import { refuseAliasedOutputs } from '../io/alias.js';
import { formatCluster, pairHeader } from '../io/write.js';
import { writePairLines } from '../io/pairLines.js';
import { pairColumnsOf } from '../dedup/pairColumns.js';
import { rewriteFile, rewriteRecords, rewriteShards, type RowVerdict } from '../io/rewrite.js';
import type { InputRecord } from '../io/record.js';
import { idOf, type Corpus } from './corpus.js';
import { pairFormatOf } from './options.js';
import type { DedupFlags } from './dedupFlags.js';

/**
 * Writes the chosen output; returns the number of records written. `read` are the reader options of
 * the flags, for the second pass of dedup/annotate.
 */
export async function writeOutput(flags: DedupFlags, file: string, corpus: Corpus, result: DedupResult, sink: OutputSink | undefined, target: OutputTarget, read: ReadOptions): Promise<number> {
  const id = (i: number): string | number => idOf(corpus, i);
  if (flags.output === 'pairs') {
    const fmt = pairFormatOf(flags);
    // The streaming pipeline's pairs are columns (without estimates): written without objects.
    const columns = pairColumnsOf(result);
    const withEstimate = columns ? false : result.pairs.some((p) => p.estimate !== undefined);
    await sink!.write(pairHeader(fmt, withEstimate));
    await writePairLines(sink!, fmt, columns ?? result.pairs, id, id);
    return columns ? columns.size : result.pairs.length;
  }
  if (flags.output === 'clusters') {
    for (let c = 0; c < result.clusters.length; c++) {
      const cl = result.clusters[c]!;
      await sink!.write(formatCluster(c, cl.members.map(id), id(cl.representative ?? cl.members[0]!)));
    }
    return result.clusters.length;
  }
  // dedup / annotate: a second streaming pass over the input, in the same order as the first.
  const n = corpus.count;
  const clusterNo = new Int32Array(n).fill(-1);
  result.clusters.forEach((c, k) => {
    for (const m of c.members) clusterNo[m] = k;
  });
  let i = 0;
  const name = corpus.input.name;
  const verdict = (r: InputRecord): RowVerdict => {
    if (i >= n || r.row !== corpus.rows[i]) throw new Error(`${name} changed while it was being read (record ${i})`);
    const c = clusterNo[i]!;
    const rep = c >= 0 ? (result.clusters[c]!.representative ?? result.clusters[c]!.members[0]!) : i;
    const v: RowVerdict = { keep: rep === i, cluster: c >= 0 ? c : undefined, duplicateOf: rep !== i ? String(id(rep)) : undefined };
    i++;
    return v;
  };
  const mode = flags.output;
  // Sharded input: a directory of output shards; Parquet: a Parquet file; both need --out.
  const readOptions = { ...read, displayName: corpus.input.shards ? undefined : name, raw: true };
  let written: number;
  if (target.kind === 'shards') {
    written = await rewriteShards(corpus.input.shards!, target.path, readOptions, mode, verdict);
  } else if (target.kind === 'file') {
    written = await rewriteFile(file, target.path, { ...readOptions, format: corpus.input.format }, mode, verdict);
  } else {
    const input = await openInput(file, { ...readOptions, format: corpus.input.format });
    written = await rewriteRecords(input, sink!, mode, verdict);
  }
  if (i !== n) throw new Error(`${name} changed while it was being read (${i} records instead of ${n})`);
  return written;
}

/** Where `dedup`/`annotate` output goes: the sink (stdout or a text file), a file rewritten in place of a sink (Parquet), or a directory of shards. */
export type OutputTarget = { kind: 'sink' } | { kind: 'file'; path: string } | { kind: 'shards'; path: string };

/**
 * Chooses where `--output dedup|annotate` writes. A sharded input (glob or directory of shards)
 * writes one output shard per input shard into `--out DIR`; a Parquet input writes a Parquet file
 * (`--out FILE.parquet`, or `--out DIR` for DIR/<input name>); an existing directory as `--out` gets
 * the input's file name; anything else goes to the sink as before.
 */
export async function outputTarget(flags: DedupFlags, fileArg: string, input: Corpus['input']): Promise<OutputTarget> {
  if (flags.output !== 'dedup' && flags.output !== 'annotate') return { kind: 'sink' };
  const out = flags.out === '-' ? undefined : flags.out;
  if (input.shards) {
    if (!out) throw new UsageError(`${input.name} is ${input.shards.shards.length} shard(s): --output ${flags.output} writes one output shard per input shard, so it needs --out DIR`);
    return { kind: 'shards', path: out };
  }
  const st = out ? await stat(out).catch(() => undefined) : undefined;
  if (input.format === 'parquet') {
    if (!out) throw new UsageError(`--output ${flags.output} of a Parquet input writes Parquet, so it needs --out FILE.parquet (or --out DIR)`);
    const target = st?.isDirectory() ? path.join(out, path.basename(fileArg)) : out;
    if (!st?.isDirectory() && !/\.(parquet|pq)$/i.test(out)) throw new UsageError(`--out ${out}: the output of a Parquet input is Parquet, so name it .parquet`);
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  if (st?.isDirectory() && fileArg !== '-') {
    // --out DIR writes DIR/<input name>: DIR must not be the input's own directory.
    const target = path.join(out!, path.basename(fileArg));
    await refuseAliasedOutputs([{ what: '--out', path: target }], [{ what: 'the input', path: fileArg }]);
    return { kind: 'file', path: target };
  }
  return { kind: 'sink' };
}
