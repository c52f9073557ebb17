/**
 * Several positional inputs of `neardup dedup` (`dedup A.tsv B/ 'C/*.parquet'`), read as one corpus
 * in the order given, as `neardup job dedup` reads its arguments: the same shard files (its
 * `listShards`), rows and row-number ids continuing across inputs, and for `--output dedup|annotate`
 * the same output names under `--out DIR` (each shard under its path relative to the directory
 * that holds every input, `outputNames`), so both routes write the same files.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { refuseRepeatedFiles } from '../../io/write/alias.js';
import type { InputFormat } from '../../io/read/formats.js';
import { globBase, isGlob, resolveShards, type ShardList } from '../../io/read/shards.js';
import { listShards } from '../../shard/plan/plan.js';
import { outputNames } from '../../shard/files/layout.js';

/**
 * The shards of several inputs, as one {@link ShardList} for `ReadOptions.inputs`: named by the
 * arguments joined with spaces, shards in argument order (a directory's or a glob's sorted), each
 * input's own directory or file as a root the output must not overlap. Standard input and a file
 * given twice are usage errors.
 */
export async function severalInputs(args: readonly string[], format: InputFormat | 'auto' = 'auto'): Promise<ShardList> {
  if (args.includes('-')) throw new UsageError('- (standard input) cannot be one of several inputs: give files, directories or globs, or pipe one input alone');
  for (const a of args) {
    const st = await fsp.stat(a).catch(() => undefined);
    // listShards would say "a sharded job": name what dedup itself cannot do.
    if (st?.isDirectory() && !(await resolveShards(a, format)))
      throw new UsageError(
        `${a} is a directory of documents (.txt/.md/.html, one document per file): several inputs are read as record files (JSONL, TSV, CSV, Parquet; .gz or .zst), so give it alone`,
      );
    // Read once, as it comes: an output that reads the inputs twice would wait on it for ever.
    if (st !== undefined && !st.isFile() && !st.isDirectory())
      throw new UsageError(
        `${a} is a pipe, not a file: several inputs are read as files; write it to a file first, or give the pipe alone (it is then copied)`,
      );
  }
  const paths = await listShards(args, format);
  // As job dedup refuses it: the same documents twice would all be duplicates of themselves.
  await refuseRepeatedFiles(paths);
  const names = outputNames(paths);
  const base = paths[0]!.slice(0, paths[0]!.length - names[0]!.length).replace(/[\\/]+$/, '') || path.sep;
  const roots = await Promise.all(args.map(async (a) => {
    const st = await fsp.stat(a).catch(() => undefined);
    return path.resolve(st || !isGlob(a) ? a : globBase(a));
  }));
  return { name: args.join(' '), base, shards: paths.map((p, i) => ({ path: p, rel: names[i]! })), roots };
}

/** Bytes on disk of the inputs' shards (for the choice of streaming). */
export async function inputsSize(list: ShardList): Promise<number> {
  let n = 0;
  for (const s of list.shards) n += (await fsp.stat(s.path).catch(() => undefined))?.size ?? 0;
  return n;
}
