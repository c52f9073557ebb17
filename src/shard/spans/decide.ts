/**
 * Stage spans-decide of a spans job (one task per hash partition): the partition's table of
 * hashes again (./find.ts), then the texts spans-text read for its repeated hashes, group by group
 * in input order, through the {@link UnitVerifier} of `neardup spans`' check, so that two texts of
 * one hash are two units, each with its own first occurrence and counts, as in one process. Then
 * it decides each occurrence as pass 2 does (keep-first: every one but its text's first;
 * `--min-docs K`: every one of a text in ≥ K documents) and writes the removed ones to `cuts.u32`,
 * grouped by the shard group that holds them (`gstart` and `gbytes` in the marker), packed rows
 * (./rows.ts {@link cutLayout}): document within the group and unit index, and for the audit ({@link cutColumns}) the kept occurrence's
 * global document or 2³²−1 when none is kept, its code-point and byte start, count, documents. The marker also holds the partition's
 * counts and its most repeated units: the job's top N are among the partitions' top N, as units
 * are in exactly one partition.
 * @module
 */
import path from 'node:path';
import { selectTop } from '../../spans/selectTop.js';
import { UnitVerifier, type Occurrence } from '../../spans/verify.js';
import { DamagedFileError } from '../files/columns.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { U32Buf } from '../files/u32buf.js';
import { partitionUnits, type PartitionUnits } from './find.js';
import { readCodeUnits, readPacked, RowPacker, type RowLayout } from './rows.js';
import { TEXT_LAYOUT, type SpansTextMarker } from './text.js';

/**
 * The columns of a job's `cuts.u32`: document and unit index, and, only for the `--removed`
 * audit, the one output that names them, the kept occurrence and counts.
 */
export function cutColumns(job: JobSpec): number {
  return job.spans!.audit !== undefined ? 7 : 2;
}

/**
 * How cuts.u32 stores its rows: document and unit index ascending; the kept occurrence as a
 * difference from the row before's (a passage copied whole has one source, its windows in order).
 */
export function cutLayout(job: JobSpec): RowLayout {
  const kinds = ['delta', 'inDoc', 'delta', 'delta', 'delta', 'var', 'var'] as const;
  return { kinds: kinds.slice(0, cutColumns(job)), doc: 0 };
}

/** No kept occurrence (boilerplate mode). */
export const NONE = 0xffffffff;

/** One of a partition's most repeated units: its first occurrence (global document, unit index) and counts. */
export interface TopCandidate {
  count: number;
  docs: number;
  doc: number;
  k: number;
}

/** The spans-decide task's marker. */
export interface SpansDecideMarker {
  /** Distinct units (by text). */
  distinct: number;
  /** Distinct units occurring more than once. */
  repeated: number;
  /** Rows of cuts.u32 (removed occurrences). */
  removed: number;
  /** Row where each shard group's cuts start (groups + 1). */
  gstart: number[];
  /** Byte where each shard group's cuts start (groups + 1). */
  gbytes: number[];
  /** The partition's most repeated units, in the summary's order. */
  top: TopCandidate[];
}

/** A spans-text task whose texts of a partition are not one a repeated hash's occurrence. */
const damagedTexts = (g: number, p: number): Error =>
  new DamagedFileError(
    `spans-text task ${g}: its texts of partition ${p} are not those of the occurrences spans-find listed: the work dir is damaged; delete the task's directory to run it again`,
  );

/**
 * Feeds the texts of the partition's repeated hashes, in input order, to a verifier over its
 * table; returns it and the side unit of each occurrence that is not its hash's first text
 * (`group:document:unit` → side index: collisions only). A group's texts.u32 rows of the
 * partition are its units.u32 rows of a hash counted more than once, in order (./text.ts).
 */
function checkTexts(workDir: string, job: JobSpec, p: number, pu: PartitionUnits): { v: UnitVerifier; sideOf: Map<string, number> } {
  const v = new UnitVerifier(pu.table);
  // Overlapping windows' first texts stored as continuations, as one process stores them (a partition
  // sees a document's windows in order): whole, byte windows of 100 took 580 MB for a 52 MB input.
  v.chain = job.spans!.options.unit === 'substring';
  const sideOf = new Map<string, number>();
  const at: Occurrence = { doc: 0, pos: 0, cp: 0, byte: 0 };
  for (let g = 0; g < taskCount(job, 'spans-text'); g++) {
    const m = requireMarker<SpansTextMarker>(workDir, job, 'spans-text', g);
    const from = m.pstart[p]!;
    const to = m.pstart[p + 1]!;
    const dir = taskDir(workDir, 'spans-text', g);
    const [off, len] = readPacked(path.join(dir, 'texts.u32'), TEXT_LAYOUT, { rows: m.pstart, bytes: m.pbytes }, [p, p + 1]) as Uint32Array[];
    // The group's whole stream: a text may share its code units with another partition's.
    const keys = to > from ? readCodeUnits(path.join(dir, 'keys.u32'), m.units, 0, m.units) : new Uint16Array(0);
    // Without a keep-first audit, units.u32 has no offsets, and nothing reads the kept occurrence's.
    const [hi, lo, doc, k, cp, byte] = pu.parts[g] as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array?, Uint32Array?];
    let x = 0;
    for (let r = 0; r < hi.length; r++) {
      const i = pu.table.find(hi[r]!, lo[r]!);
      if (pu.table.count(i) < 2) continue;
      if (x >= off!.length) throw damagedTexts(g, p);
      at.doc = pu.base[g]! + doc[r]!;
      at.pos = k[r]!;
      at.cp = cp?.[r] ?? 0;
      at.byte = byte?.[r] ?? 0;
      const s = v.check(i, keys.subarray(off![x]!, off![x]! + len![x]!), len![x]!, at);
      x++;
      if (s >= 0) sideOf.set(`${g}:${doc[r]}:${k[r]}`, s);
    }
    if (x !== off!.length) throw damagedTexts(g, p);
  }
  v.end();
  return { v, sideOf };
}

/**
 * The partition's repeated units counted, and its `top` most repeated in the summary's order (as
 * SpanDeduper: occurrences, then first seen first; unit indices order units as their starts do),
 * picked by a heap: an object per repeated unit, all sorted, was 200 MB of a 52 MB input's byte windows.
 */
function mostRepeated(v: UnitVerifier, top: number): { repeated: number; top: TopCandidate[] } {
  const slot = new U32Buf();
  const side = new U32Buf();
  v.eachRepeated((i, s) => {
    slot.push(i);
    side.push(s);
  });
  const at = (x: number): [number, number] => [slot.view()[x]! | 0, side.view()[x]! | 0];
  const order = selectTop(slot.length, top, (a, b) => {
    const [ia, sa] = at(a);
    const [ib, sb] = at(b);
    return v.count(ib, sb) - v.count(ia, sa) || v.firstDoc(ia, sa) - v.firstDoc(ib, sb) || v.firstPos(ia, sa) - v.firstPos(ib, sb);
  });
  return {
    repeated: slot.length,
    top: order.map((x) => {
      const [i, s] = at(x);
      return { count: v.count(i, s), docs: v.docs(i, s), doc: v.firstDoc(i, s), k: v.firstPos(i, s) };
    }),
  };
}

/** Runs spans-decide task `p` (idempotent; every spans-text task must have completed). */
export function runSpansDecide(workDir: string, job: JobSpec, p: number): Promise<SpansDecideMarker> {
  return commitTask<SpansDecideMarker>({ workDir, job, stage: 'spans-decide', task: p }, async (dir) => {
    const o = job.spans!.options;
    const pu = partitionUnits(workDir, job, p);
    const { table, parts, base } = pu;
    const { v, sideOf } = checkTexts(workDir, job, p, pu);
    const keepFirst = o.minDocs === undefined;
    const width = cutColumns(job);
    const packer = new RowPacker(cutLayout(job), parts.length);
    const row = packer.row;
    for (const [g, rows] of parts.entries()) {
      const [hi, lo, doc, k] = rows as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
      for (let r = 0; r < hi.length; r++) {
        const i = table.find(hi[r]!, lo[r]!);
        // Only a hash that collided has occurrences of several texts.
        const s = v.collides(i) ? (sideOf.get(`${g}:${doc[r]}:${k[r]}`) ?? -1) : -1;
        const removed = keepFirst ? !v.isFirst(i, s, base[g]! + doc[r]!, k[r]!) : v.docs(i, s) >= o.minDocs!;
        if (!removed) continue;
        row[0] = doc[r]!;
        row[1] = k[r]!;
        if (width > 2) {
          row[2] = keepFirst ? v.firstDoc(i, s) : NONE;
          row[3] = keepFirst ? v.firstCp(i, s) : NONE;
          row[4] = keepFirst ? v.firstByte(i, s) : NONE;
          row[5] = v.count(i, s);
          row[6] = v.docs(i, s);
        }
        packer.add(g);
      }
    }
    const packed = packer.finish();
    await writeSynced(path.join(dir, 'cuts.u32'), packed.parts);
    return {
      distinct: v.distinct,
      ...mostRepeated(v, o.top),
      removed: packed.start[packed.start.length - 1]!,
      gstart: packed.start,
      gbytes: packed.bytes,
    };
  });
}
