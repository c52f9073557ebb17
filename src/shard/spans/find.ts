/**
 * Stage spans-find of a spans job (one task per hash partition): reads its partition's rows of
 * every spans-hash task, in input order (group by group, each in document and unit order), into
 * the same {@link UnitTable} as `neardup spans`' pass 1, so the first occurrence, the counts and
 * the document counts of each unit are the one-process ones. Then it decides each occurrence as
 * pass 2 does (keep-first: every one but the first; `--min-docs K`: every one of a unit in ≥ K
 * documents) and writes the removed ones to `cuts.u32`, grouped by the shard group that holds them
 * (`gstart` in the marker): seven uint32 columns (document within the group, unit index, the kept
 * occurrence's global document or 2³²−1 when none is kept, its code-point and byte start, count,
 * documents). The marker also holds the partition's counts and its most repeated units: the job's
 * top N are among the partitions' top N, as units are in exactly one partition.
 * @module
 */
import path from 'node:path';
import { UnitTable } from '../../spans/table.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { groupBy, U32Buf } from '../files/u32buf.js';
import { unitColumns, type SpansHashMarker } from './hash.js';
import { columnsBuffer, readRows } from './rows.js';

/** The columns of `cuts.u32`. */
export const CUT_COLUMNS = 7;

/** No kept occurrence (boilerplate mode). */
export const NONE = 0xffffffff;

/** One of a partition's most repeated units: its first occurrence (global document, unit index) and counts. */
export interface TopCandidate {
  count: number;
  docs: number;
  doc: number;
  k: number;
}

/** The spans-find task's marker. */
export interface SpansFindMarker {
  /** Units of the partition. */
  units: number;
  /** Distinct units. */
  distinct: number;
  /** Distinct units occurring more than once. */
  repeated: number;
  /** Rows of cuts.u32 (removed occurrences). */
  removed: number;
  /** Row where each shard group's cuts start (groups + 1). */
  gstart: number[];
  /** The partition's most repeated units, in the summary's order. */
  top: TopCandidate[];
}

/** Each shard group's first global document (groups + 1), from the spans-hash markers. */
export function docBases(workDir: string, job: JobSpec): number[] {
  const G = taskCount(job, 'spans-hash');
  const base = [0];
  for (let g = 0; g < G; g++) base.push(base[g]! + requireMarker<SpansHashMarker>(workDir, job, 'spans-hash', g).docs);
  return base;
}

/** Runs spans-find task `p` (idempotent; every spans-hash task must have completed). */
export function runSpansFind(workDir: string, job: JobSpec, p: number): Promise<SpansFindMarker> {
  return commitTask<SpansFindMarker>({ workDir, job, stage: 'spans-find', task: p }, async (dir) => {
    const o = job.spans!.options;
    const G = taskCount(job, 'spans-hash');
    const base = docBases(workDir, job);
    const parts: Uint32Array[][] = [];
    const table = new UnitTable();
    for (let g = 0; g < G; g++) {
      const m = requireMarker<SpansHashMarker>(workDir, job, 'spans-hash', g);
      const rows = readRows(path.join(taskDir(workDir, 'spans-hash', g), 'units.u32'), { width: unitColumns(job), n: m.units }, m.pstart[p]!, m.pstart[p + 1]!);
      parts.push(rows);
      // Without offsets (no keep-first audit) the table's are 0: nothing reads them.
      const [hi, lo, doc, k, cp, byte] = rows as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array?, Uint32Array?];
      for (let r = 0; r < hi.length; r++) table.add(hi[r]!, lo[r]!, base[g]! + doc[r]!, k[r]!, cp?.[r] ?? 0, byte?.[r] ?? 0);
    }
    const keepFirst = o.minDocs === undefined;
    const cols = Array.from({ length: CUT_COLUMNS }, () => new U32Buf());
    const group = new U32Buf();
    for (let g = 0; g < G; g++) {
      const [hi, lo, doc, k] = parts[g] as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
      for (let r = 0; r < hi.length; r++) {
        const i = table.find(hi[r]!, lo[r]!);
        const removed = keepFirst ? !(table.firstDoc(i) === base[g]! + doc[r]! && table.firstPos(i) === k[r]) : table.docs(i) >= o.minDocs!;
        if (!removed) continue;
        const row = [
          doc[r]!,
          k[r]!,
          keepFirst ? table.firstDoc(i) : NONE,
          keepFirst ? table.firstCp(i) : NONE,
          keepFirst ? table.firstByte(i) : NONE,
          table.count(i),
          table.docs(i),
        ];
        for (let c = 0; c < CUT_COLUMNS; c++) cols[c]!.push(row[c]!);
        group.push(g);
      }
    }
    const grouped = groupBy(group.view(), G, cols.map((c) => c.view()));
    await writeSynced(path.join(dir, 'cuts.u32'), columnsBuffer(grouped.columns, group.length));
    const repeated: number[] = [];
    for (let i = 0; i < table.capacity; i++) if (table.used(i) && table.count(i) > 1) repeated.push(i);
    // The summary's order (as SpanDeduper.endObserving): occurrences, then first seen first; unit indices order units as their starts do.
    repeated.sort((a, b) => table.count(b) - table.count(a) || table.firstDoc(a) - table.firstDoc(b) || table.firstPos(a) - table.firstPos(b));
    const top = repeated.slice(0, o.top).map((i) => ({ count: table.count(i), docs: table.docs(i), doc: table.firstDoc(i), k: table.firstPos(i) }));
    const units = parts.reduce((n, x) => n + x[0]!.length, 0);
    return { units, distinct: table.size, repeated: repeated.length, removed: group.length, gstart: Array.from(grouped.start), top };
  });
}
