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
import { isPipe, spoolInput, type InputCopy } from '../corpus.js';

/**
 * The shards of several inputs, as one {@link ShardList} for `ReadOptions.inputs`: named by the
 * arguments joined with spaces, shards in argument order (a directory's or a glob's sorted), each
 * input's own directory or file as a root the output must not overlap. A named pipe among them
 * (`<(zcat a.gz)`, a FIFO) is copied to a temp file first and joins `copies`, for the caller to
 * remove: some outputs read the inputs twice. It then reads as a file at the pipe's path would (the
 * same output name, messages naming the pipe). Standard input and a file given twice are usage errors.
 */
export async function severalInputs(args: readonly string[], format: InputFormat | 'auto', copies: InputCopy[]): Promise<ShardList> {
  if (args.includes('-')) throw new UsageError('- (standard input) cannot be one of several inputs: give files, directories or globs, or pipe one input alone');
  const pipeArgs: string[] = [];
  for (const a of args) {
    const st = await fsp.stat(a).catch(() => undefined);
    // listShards would say "a sharded job": name what dedup itself cannot do.
    if (st?.isDirectory() && !(await resolveShards(a, format)))
      throw new UsageError(
        `${a} is a directory of documents (.txt/.md/.html, one document per file): several inputs are read as record files (JSONL, TSV, CSV, Parquet; .gz or .zst), so give it alone`,
      );
    if (await isPipe(a)) pipeArgs.push(a);
  }
  // Before any pipe is read: a pipe given twice would wait for a second writer for ever.
  await refuseRepeatedFiles(pipeArgs);
  const pipes = new Map<string, InputCopy>();
  for (const a of pipeArgs) pipes.set(a, (await spoolInput(a, { copies }))!);
  const paths = await listShards(args.map((a) => pipes.get(a)?.file ?? a), format);
  // As job dedup refuses it: the same documents twice would all be duplicates of themselves.
  await refuseRepeatedFiles(paths);
  // A pipe's copy is named, and its output named, as a file at the pipe's path would be.
  const asGiven = new Map([...pipes.values()].map((c) => [path.resolve(c.file), c.displayName]));
  const shown = paths.map((p) => (asGiven.has(p) ? path.resolve(asGiven.get(p)!) : p));
  const names = outputNames(shown);
  const base = shown[0]!.slice(0, shown[0]!.length - names[0]!.length).replace(/[\\/]+$/, '') || path.sep;
  const roots = await Promise.all(args.map(async (a) => {
    const st = await fsp.stat(a).catch(() => undefined);
    return path.resolve(st || !isGlob(a) ? a : globBase(a));
  }));
  return { name: args.join(' '), base, shards: paths.map((p, i) => ({ path: p, rel: names[i]!, name: asGiven.get(p) })), roots };
}

/** Bytes on disk of the inputs' shards (for the choice of streaming). */
export async function inputsSize(list: ShardList): Promise<number> {
  let n = 0;
  for (const s of list.shards) n += (await fsp.stat(s.path).catch(() => undefined))?.size ?? 0;
  return n;
}
