/**
 * Stage spans-find of a spans job (one task per hash partition): reads its partition's rows of
 * every spans-hash task, in input order (group by group, each in document and unit order), into
 * the same {@link UnitTable} as `neardup spans`' pass 1, so the first occurrence, the counts and
 * the document counts of each hash are the one-process ones. A hash counted more than once is the
 * only kind anything is cut for, and its occurrences may be of different texts (a collision): the
 * task lists them in `checks.u32`, grouped by the shard group that holds them (`gstart` in the
 * marker, and `gbytes`), packed rows (./rows.ts) of document within the group and unit index, so that spans-text reads
 * their texts and spans-decide compares them (./decide.ts).
 * @module
 */
import path from 'node:path';
import { UnitTable } from '../../spans/table.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { unitLayout, type SpansHashMarker } from './hash.js';
import { readPacked, RowPacker, type RowLayout } from './rows.js';

/** How checks.u32 stores its rows (document, unit index: ascending). */
export const CHECK_LAYOUT: RowLayout = { kinds: ['delta', 'inDoc'], doc: 0 };

/** The spans-find task's marker. */
export interface SpansFindMarker {
  /** Units of the partition. */
  units: number;
  /** Occurrences of hashes counted more than once (rows of checks.u32). */
  checks: number;
  /** Row where each shard group's checks start (groups + 1). */
  gstart: number[];
  /** Byte where each shard group's checks start (groups + 1). */
  gbytes: number[];
}

/** Each shard group's first global document (groups + 1), from the spans-hash markers. */
export function docBases(workDir: string, job: JobSpec): number[] {
  const G = taskCount(job, 'spans-hash');
  const base = [0];
  for (let g = 0; g < G; g++) base.push(base[g]! + requireMarker<SpansHashMarker>(workDir, job, 'spans-hash', g).docs);
  return base;
}

/** A partition's units: the table of their hashes, and each group's rows of units.u32 (hash high, low, document, unit index[, code point, byte]). */
export interface PartitionUnits {
  table: UnitTable;
  parts: Uint32Array[][];
  /** Each group's first global document. */
  base: number[];
}

/** Reads partition `p`'s rows of every spans-hash task into a {@link UnitTable}, in input order. */
export function partitionUnits(workDir: string, job: JobSpec, p: number): PartitionUnits {
  const G = taskCount(job, 'spans-hash');
  const base = docBases(workDir, job);
  const parts: Uint32Array[][] = [];
  const table = new UnitTable();
  for (let g = 0; g < G; g++) {
    const m = requireMarker<SpansHashMarker>(workDir, job, 'spans-hash', g);
    const rows = readPacked(path.join(taskDir(workDir, 'spans-hash', g), 'units.u32'), unitLayout(job), { rows: m.pstart, bytes: m.pbytes }, [p, p + 1]);
    parts.push(rows);
    // The first occurrences' offsets come to the check with their texts (./decide.ts).
    const [hi, lo, doc, k] = rows as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    for (let r = 0; r < hi.length; r++) table.add(hi[r]!, lo[r]!, base[g]! + doc[r]!, k[r]!);
  }
  return { table, parts, base };
}

/** Runs spans-find task `p` (idempotent; every spans-hash task must have completed). */
export function runSpansFind(workDir: string, job: JobSpec, p: number): Promise<SpansFindMarker> {
  return commitTask<SpansFindMarker>({ workDir, job, stage: 'spans-find', task: p }, async (dir) => {
    const { table, parts } = partitionUnits(workDir, job, p);
    const packer = new RowPacker(CHECK_LAYOUT, parts.length);
    const row = packer.row;
    for (const [g, rows] of parts.entries()) {
      const [hi, lo, doc, k] = rows as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
      for (let r = 0; r < hi.length; r++) {
        if (table.count(table.find(hi[r]!, lo[r]!)) < 2) continue;
        row[0] = doc[r]!;
        row[1] = k[r]!;
        packer.add(g);
      }
    }
    const packed = packer.finish();
    await writeSynced(path.join(dir, 'checks.u32'), packed.parts);
    const units = parts.reduce((n, x) => n + x[0]!.length, 0);
    return { units, checks: packed.start[packed.start.length - 1]!, gstart: packed.start, gbytes: packed.bytes };
  });
}
