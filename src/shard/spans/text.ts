/**
 * Stage spans-text of a spans job (one task per shard group): reads its group's records again and,
 * for each occurrence spans-find listed (a hash counted more than once), the unit's normalized
 * text, as `neardup spans`' check does (the same {@link UnitWalker}, walking the windows spans-hash
 * walked: ./anchorFind.ts). `texts.u32`: eight uint32
 * columns (document within the group, unit index, hash high and low, code-point and UTF-8 byte
 * start, where its text starts among its partition's texts and its length), rows grouped by hash
 * partition (`pstart` in the marker); `keys.u32`: the texts, UTF-16 code units two to a uint32,
 * each distinct (hash, text) of the group once, partition by partition (`kstart`). Only repeated
 * hashes' texts are written, each once per group.
 * @module
 */
import path from 'node:path';
import { OffsetCursor } from '../../spans/offsets.js';
import { grown } from '../../spans/unitHash.js';
import { UnitWalker } from '../../spans/walker.js';
import { commitTask, writeSynced } from '../files/commit.js';
import { shardsOfTask, type JobSpec } from '../files/job.js';
import { openShard } from '../files/shardInput.js';
import { groupBy, U32Buf } from '../files/u32buf.js';
import { groupRuns, walkerAt } from './anchorFind.js';
import { CHECK_COLUMNS, type SpansFindMarker } from './find.js';
import { columnsBuffer, groupRows, partitionOf } from './rows.js';

/** The columns of `texts.u32`. */
export const TEXT_COLUMNS = 8;

/** The spans-text task's marker. */
export interface SpansTextMarker {
  /** Rows of texts.u32. */
  rows: number;
  /** Row where each partition starts (partitions + 1). */
  pstart: number[];
  /** Code units in keys.u32. */
  units: number;
  /** Code unit where each partition's texts start in keys.u32 (partitions + 1). */
  kstart: number[];
}

/** One partition's distinct texts of the group: code units, and (hash, text) → where it starts. */
interface PartTexts {
  buf: Uint16Array;
  used: number;
  seen: Map<string, number>;
}

/** The group's occurrences to check, from every find task, sorted by (document, unit index). */
function groupChecks(workDir: string, job: JobSpec, t: number): Uint32Array[] {
  return groupRows<SpansFindMarker>(workDir, job, { stage: 'spans-find', file: 'checks.u32', width: CHECK_COLUMNS, rows: (m) => m.checks }, t);
}

/** Runs spans-text task `t` (idempotent; every spans-find task must have completed). */
export function runSpansText(workDir: string, job: JobSpec, t: number): Promise<SpansTextMarker> {
  return commitTask<SpansTextMarker>({ workDir, job, stage: 'spans-text', task: t }, async (dir) => {
    const [cdoc, ck, chi, clo] = groupChecks(workDir, job, t) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    const walker = new UnitWalker(job.spans!.options);
    walker.runs = groupRuns(workDir, job, t);
    const cursor = new OffsetCursor();
    const cols = Array.from({ length: TEXT_COLUMNS }, () => new U32Buf());
    const part = new U32Buf();
    const texts = new Map<number, PartTexts>();
    let next = 0;
    let doc = 0;
    const { first, end } = shardsOfTask(job, t);
    // Reading stops after the last listed unit's document (a group without one reads nothing).
    for (let s = first; s < end && next < cdoc.length; s++) {
      const input = await openShard(workDir, job, s);
      try {
        for await (const r of input.records) {
          if (next >= cdoc.length) break;
          const d = doc++;
          if (next >= cdoc.length || cdoc[next] !== d) continue;
          cursor.reset(r.text);
          walkerAt(walker, d);
          walker.each(r.text, (k) => {
            if (next >= cdoc.length || cdoc[next] !== d || ck[next] !== k) return;
            const hi = chi[next]!;
            const lo = clo[next]!;
            next++;
            const p = partitionOf(hi, job.partitions);
            const len = walker.key(k);
            const at = textAt(
              texts,
              p,
              `${hi}:${lo}:${Buffer.from(walker.keyUnits.buffer, walker.keyUnits.byteOffset, 2 * len).toString('latin1')}`,
              walker.keyUnits.subarray(0, len),
            );
            cursor.at(walker.units.start[k]!);
            cols[0]!.push(d);
            cols[1]!.push(k);
            cols[2]!.push(hi);
            cols[3]!.push(lo);
            cols[4]!.push(cursor.cp);
            cols[5]!.push(cursor.byte);
            cols[6]!.push(at);
            cols[7]!.push(len);
            part.push(p);
          });
        }
      } finally {
        await input.records.return(undefined);
      }
    }
    if (next !== cdoc.length) throw new Error(`spans-text task ${t}: ${cdoc.length - next} units listed by spans-find were not found: an input changed since`);
    const grouped = groupBy(part.view(), job.partitions, cols.map((c) => c.view()));
    const keys = keysFile(texts, job.partitions);
    await writeSynced(path.join(dir, 'texts.u32'), columnsBuffer(grouped.columns, part.length));
    await writeSynced(path.join(dir, 'keys.u32'), keys.bytes);
    return { rows: part.length, pstart: Array.from(grouped.start), units: keys.units, kstart: keys.kstart };
  });
}

/** Where `key` (the text `units`) starts among partition `p`'s texts, added the first time. */
function textAt(texts: Map<number, PartTexts>, p: number, key: string, units: Uint16Array): number {
  let x = texts.get(p);
  if (!x) texts.set(p, x = { buf: new Uint16Array(256), used: 0, seen: new Map() });
  const at = x.seen.get(key);
  if (at !== undefined) return at;
  if (x.buf.length < x.used + units.length) x.buf = grown(x.buf, x.used + units.length);
  x.buf.set(units, x.used);
  x.seen.set(key, x.used);
  x.used += units.length;
  return x.used - units.length;
}

/** The partitions' texts one after the other, two code units to a uint32 (padded), and where each partition's start. */
function keysFile(texts: Map<number, PartTexts>, partitions: number): { bytes: Buffer; units: number; kstart: number[] } {
  const kstart = [0];
  for (let p = 0; p < partitions; p++) kstart.push(kstart[p]! + (texts.get(p)?.used ?? 0));
  const units = kstart[partitions]!;
  const all = new Uint16Array(2 * Math.ceil(units / 2));
  for (const [p, x] of texts) all.set(x.buf.subarray(0, x.used), kstart[p]!);
  return { bytes: Buffer.from(all.buffer, all.byteOffset, all.byteLength), units, kstart };
}
