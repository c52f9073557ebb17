/**
 * Stage spans-text of a spans job (one task per shard group): reads its group's records again and,
 * for each occurrence spans-find listed (a hash counted more than once), the unit's normalized
 * text, as `neardup spans`' check does (the same {@link UnitWalker}, walking the windows spans-hash
 * walked: ./anchorFind.ts). `keys.u32`: the texts, UTF-16 code units two to a uint32, one stream
 * for the group in which a text the group wrote before is not written again and a window's text
 * that continues the last one shares its code units (./keys.ts). `texts.u32`: per occurrence
 * where its text starts in that stream and its length, packed rows (./rows.ts) grouped by hash
 * partition (`pstart` and `pbytes` in the marker), each partition's in the order of its rows of units.u32 that
 * spans-find listed, so spans-decide pairs them with those rows (their hash, document, unit and
 * offsets) by position.
 * @module
 */
import path from 'node:path';
import { UnitWalker } from '../../spans/walker.js';
import { commitTask, writeSynced } from '../files/commit.js';
import { shardsOfTask, type JobSpec } from '../files/job.js';
import { openShard } from '../files/shardInput.js';
import { groupRuns, walkerAt } from './anchorFind.js';
import { CHECK_LAYOUT, type SpansFindMarker } from './find.js';
import { KeyStream } from './keys.js';
import { groupRows, partitionOf, RowPacker, type RowLayout } from './rows.js';

/** How texts.u32 stores its rows (where a text starts in keys.u32, mostly after the row before's; its length). */
export const TEXT_LAYOUT: RowLayout = { kinds: ['delta', 'var'] };

/** The spans-text task's marker. */
export interface SpansTextMarker {
  /** Rows of texts.u32. */
  rows: number;
  /** Row where each partition starts (partitions + 1). */
  pstart: number[];
  /** Byte where each partition starts in texts.u32 (partitions + 1). */
  pbytes: number[];
  /** Code units in keys.u32. */
  units: number;
}

/** The group's occurrences to check, from every find task, sorted by (document, unit index). */
function groupChecks(workDir: string, job: JobSpec, t: number): Uint32Array[] {
  return groupRows<SpansFindMarker>(workDir, job, { stage: 'spans-find', file: 'checks.u32', layout: CHECK_LAYOUT }, t);
}

/** Runs spans-text task `t` (idempotent; every spans-find task must have completed). */
export function runSpansText(workDir: string, job: JobSpec, t: number): Promise<SpansTextMarker> {
  return commitTask<SpansTextMarker>({ workDir, job, stage: 'spans-text', task: t }, async (dir) => {
    const [cdoc, ck] = groupChecks(workDir, job, t) as [Uint32Array, Uint32Array];
    const walker = new UnitWalker(job.spans!.options);
    walker.runs = groupRuns(workDir, job, t);
    // Rows packed as they come, by hash partition (not a column per field, then grouped by a copy).
    const packer = new RowPacker(TEXT_LAYOUT, job.partitions);
    const row = packer.row;
    const keys = new KeyStream();
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
          walkerAt(walker, d);
          walker.each(r.text, (k) => {
            if (next >= cdoc.length || cdoc[next] !== d || ck[next] !== k) return;
            next++;
            const len = walker.key(k);
            row[0] = keys.add(walker.hash[0]!, walker.hash[1]!, walker.keyUnits.subarray(0, len));
            row[1] = len;
            packer.add(partitionOf(walker.hash[0]!, job.partitions));
          });
        }
      } finally {
        await input.records.return(undefined);
      }
    }
    if (next !== cdoc.length) throw new Error(`spans-text task ${t}: ${cdoc.length - next} units listed by spans-find were not found: an input changed since`);
    const packed = packer.finish();
    await writeSynced(path.join(dir, 'texts.u32'), packed.parts);
    await writeSynced(path.join(dir, 'keys.u32'), keys.bytes());
    return { rows: packed.start[packed.start.length - 1]!, pstart: packed.start, pbytes: packed.bytes, units: keys.used };
  });
}
