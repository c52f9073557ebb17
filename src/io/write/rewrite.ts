/**
 * Writing an input back in its own format and compression, without its duplicates (`dedup`) or
 * with its tags (`annotate`): one file, or a directory of output shards named like
 * the input shards. Every file is written atomically (temp file, then rename), and a directory of
 * output shards gets a `_SUCCESS` marker last, so nothing half-written looks complete.
 * @module
 */
import { refuseOutputInInputs } from './alias.js';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../../common/errors.js';
import { openOutput, type OutputSink } from './output.js';
import { rewriteParquet, type RewriteHow, type RowVerdict } from './parquetWrite.js';
import { openInput, rowCount, type OpenedInput, type ReadOptions } from '../read/read.js';
import { makeContext, type InputRecord } from '../read/record.js';
import type { ShardList } from '../read/shards.js';
import { refuseJobClaim } from './outClaim.js';
import { lockOutputDirectory, refuseHiddenShardNames, refuseStrayOutputs, SUCCESS_MARKER, successText } from './outDir.js';
import { annotateHeader, annotateRecord, tagClashAt } from './write.js';

export type { RewriteHow, RowVerdict } from './parquetWrite.js';

/**
 * Why the rewritten copy of an input of `format` may not be written to a file named `out` (not a
 * directory), or undefined when it may: the copy keeps the input's format, and a reader takes the
 * format of a `.parquet` or `.pq` file from its name. So a Parquet input's copy is named so, and
 * no other input's copy is (JSONL written into `x.parquet` could not be read back).
 */
export function copyNameProblem(format: string, out: string): string | undefined {
  const parquetName = /\.(parquet|pq)$/i.test(out);
  if (format === 'parquet' && !parquetName) return 'the copy of a Parquet input is Parquet, so name it .parquet';
  if (format !== 'parquet' && parquetName) return `the copy of a ${format} input keeps its format, not Parquet, so name it as ${format}`;
  return undefined;
}

/** `dedup` keeps one document per cluster; `annotate` keeps all, with their tags (cluster, cluster_size, duplicate_of, similarity, kept). */
export type RewriteMode = 'dedup' | 'annotate';

export { SUCCESS_MARKER } from './outDir.js';

/**
 * Writes the records of `input` (opened with `raw: true`, not Parquet) to `sink`, keeping or
 * annotating each as `how.verdict` says. Returns the records written.
 */
export async function rewriteRecords(input: OpenedInput, sink: OutputSink, how: Omit<RewriteHow, 'commits'>): Promise<number> {
  const { mode, verdict, tagPrefix = '' } = how;
  let headerDone = false;
  // Rows are written byte for byte: a byte-order mark and each row's own line break (CRLF stays
  // CRLF, also inside quoted CSV fields, which are part of raw; a last row without one gets \n, so
  // that rows never run together) are kept.
  const header = async (): Promise<void> => {
    if (headerDone) return;
    headerDone = true;
    if (input.bom) await sink.write('\ufeff');
    const layout = { format: input.format, delimiter: input.delimiter, columns: input.header?.columns, tagPrefix };
    if (mode === 'annotate') {
      let head: string;
      try {
        head = annotateHeader(layout, input.header?.raw, input.header?.eol);
      } catch (e) {
        throw tagClashAt(e, input.name, input.header ? 1 : undefined);
      }
      await sink.write(head);
    } else if (input.header) await sink.write(input.header.raw + (input.header.eol || '\n'));
  };
  let written = 0;
  for await (const r of input.records) {
    await header();
    const v = verdict(r);
    if (mode === 'annotate') {
      const layout = { format: input.format, delimiter: input.delimiter, columns: input.header?.columns, tagPrefix };
      let line: string;
      try {
        line = annotateRecord(layout, r.raw!, { ...v, kept: v.keep }, r.eol);
      } catch (e) {
        throw tagClashAt(e, input.name, r.line);
      }
      await sink.write(line);
      written++;
    } else if (v.keep) {
      await sink.write(r.raw! + (r.eol || '\n'));
      written++;
    }
  }
  await header();
  return written;
}

/**
 * Rewrites one file (`path`, not a sharded input) into `out`: Parquet as Parquet (see
 * ./parquetWrite.ts), anything else record by record; the compression follows `out`'s name. With
 * `how.commits`, the file is renamed into place by {@link PendingCommits.commit}, not here. Returns
 * the records written and the file's rows (valid and skipped), by which the next shard's are numbered.
 */
export async function rewriteFile(file: string, out: string, options: ReadOptions, how: RewriteHow): Promise<{ written: number; rows: number }> {
  const probe = options.format && options.format !== 'auto' ? options.format : undefined;
  const input = probe === 'parquet' ? undefined : await openInput(file, { ...options, raw: true });
  // The file's rows (valid and skipped), for a caller that numbers the next shard's.
  let last = -1;
  let valid = 0;
  const counted = {
    ...how,
    verdict: (r: InputRecord): RowVerdict => {
      last = r.row;
      valid++;
      return how.verdict(r);
    },
  };
  if (!input || input.format === 'parquet') {
    const ctx = makeContext(options.displayName ?? file, false, options.skipInvalid ?? false, { count: 0, examples: [] });
    const written = await rewriteParquet(file, out, { ctx, spec: options.fields ?? {}, limit: options.limit }, counted);
    return { written, rows: rowCount(last, valid, ctx.stats.count) };
  }
  const sink = await openOutput(out, how.commits);
  try {
    const written = await rewriteRecords(input, sink, counted);
    await sink.close();
    return { written, rows: rowCount(last, valid, input.skips.count) };
  } catch (e) {
    await sink.abort();
    throw e;
  }
}

/**
 * Checks and prepares `outDir` for the output shards of `list`: it must not be (or lie inside) the
 * input's base directory, nor be a file, nor hold files other than the shards of `list` (./outDir.ts);
 * it is created when missing, and an old `_SUCCESS` marker is removed first, so a directory from an
 * earlier run does not look complete while it is rewritten.
 */
export async function prepareOutputDirectory(list: ShardList, outDir: string): Promise<() => Promise<void>> {
  const st = await fsp.stat(outDir).catch(() => undefined);
  if (st && !st.isDirectory())
    throw new UsageError(`output ${outDir}: the input has ${list.shards.length} shard(s), so the output is a directory of shards, but ${outDir} is a file`, {
      option: 'out',
    });
  // Before the directory is made: a refused run leaves nothing inside the input.
  refuseHiddenShardNames(outDir, list.shards.map((s) => s.rel), 'output directory');
  await refuseOutputInInputs({ what: 'output directory', path: outDir }, list.roots ?? [list.base]);
  await fsp.mkdir(outDir, { recursive: true });
  // Checked and written under the directory's lock: two runs at once never mix their shards.
  const release = await lockOutputDirectory(outDir);
  try {
    await checkOutputDirectory(list, outDir);
  } catch (e) {
    await release();
    throw e;
  }
  return release;
}

/** The checks of {@link prepareOutputDirectory}, with the directory locked. */
async function checkOutputDirectory(list: ShardList, outDir: string): Promise<void> {
  await refuseStrayOutputs(outDir, list.shards.map((s) => s.rel), 'output directory');
  // A sharded job's output directory: refused while that job writes there (./outClaim.ts).
  await refuseJobClaim(outDir, 'output directory');
  await fsp.rm(path.join(outDir, SUCCESS_MARKER), { force: true });
}

/**
 * Rewrites every shard of `list` into `outDir`, under the shard's own relative name (so the same
 * format and compression), then writes the `_SUCCESS` marker. `verdict` sees the records of all
 * shards in order, with rows numbered across shards as {@link openInput} numbers them. With
 * `how.commits`, the shards' renames and the marker wait for {@link PendingCommits.commit}.
 */
export async function rewriteShards(list: ShardList, outDir: string, options: ReadOptions, how: RewriteHow): Promise<number> {
  const release = await prepareOutputDirectory(list, outDir);
  let written: number;
  try {
    written = await rewriteLocked(list, outDir, options, how);
  } catch (e) {
    await release();
    throw e;
  }
  // With commits, the directory stays locked until its renames are done (or discarded).
  if (how.commits) how.commits.add(release, release);
  else await release();
  return written;
}

/** {@link rewriteShards} once the output directory is locked and checked. */
async function rewriteLocked(list: ShardList, outDir: string, options: ReadOptions, how: RewriteHow): Promise<number> {
  let written = 0;
  let offset = 0;
  for (let k = 0; k < list.shards.length; k++) {
    const shard = list.shards[k]!;
    const out = path.join(outDir, shard.rel);
    await fsp.mkdir(path.dirname(out), { recursive: true });
    const base = offset;
    const verdict = (r: InputRecord): RowVerdict => {
      r.row += base;
      r.shard = k;
      return how.verdict(r);
    };
    const done = await rewriteFile(shard.path, out, { ...options, inputs: undefined, displayName: shard.name }, { ...how, verdict });
    written += done.written;
    offset += done.rows;
  }
  const marker = async (): Promise<void> => {
    try {
      await fsp.writeFile(path.join(outDir, SUCCESS_MARKER), successText(list.shards.map((s) => s.rel)));
    } catch (e) {
      throw new InputError(path.join(outDir, SUCCESS_MARKER), undefined, `cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  };
  if (how.commits) how.commits.add(marker);
  else await marker();
  return written;
}
