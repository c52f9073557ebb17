/**
 * Stage spans-hash of a spans job (one task per shard group): reads the group's records in input
 * order and hashes every compared unit exactly as `neardup spans` does (the same
 * {@link UnitWalker}), into `units.u32`: rows (hash high, hash low, the document within the
 * group, the unit's index in its document; and its code-point and UTF-8 byte start for a
 * keep-first audit: {@link unitColumns}) grouped by the hash's partition (`pstart` and `pbytes`
 * in the marker), packed (./rows.ts: the hash 8 bytes, the rest a varint difference from the
 * row before, mostly a byte each), about 12 bytes a unit. Substring windows that one process
 * thins out by their anchors are walked as its pass 1 walks them: only the runs of windows whose
 * anchor is repeated in the corpus (./anchorFind.ts); the others, each of which occurs once, are
 * counted in the marker (`passed`), as the summary counts them (units, and distinct ones).
 * `docs.json` holds each document's id (null when the record has none) and row within its shard,
 * for the audit's ids.
 * @module
 */
import path from 'node:path';
import { rowCount } from '../../io/read/read.js';
import { UnitWalker } from '../../spans/walker.js';
import { OffsetCursor } from '../../spans/offsets.js';
import { commitTask, writeSynced } from '../files/commit.js';
import { shardsOfTask, type JobSpec } from '../files/job.js';
import { openShard } from '../files/shardInput.js';
import { partitionOf, RowPacker, type RowLayout } from './rows.js';
import { groupRuns, walkedAll, walkerAt } from './anchorFind.js';

/**
 * The columns of a job's `units.u32`, in file order: hash high and low, document, unit index (16
 * bytes a unit), and the code-point and byte start only when the job writes a keep-first audit,
 * the one output that names where a kept occurrence starts (24 bytes a unit then).
 */
export function unitColumns(job: JobSpec): number {
  return job.spans!.audit !== undefined && job.spans!.options.minDocs === undefined ? 6 : 4;
}

/** How units.u32 stores a row of {@link unitColumns} columns: the hash raw, the rest ascending. */
export function unitLayout(job: JobSpec): RowLayout {
  const kinds = ['raw', 'raw', 'delta', 'inDoc', 'inDoc', 'inDoc'] as const;
  return { kinds: kinds.slice(0, unitColumns(job)), doc: 2 };
}

/** What a shard of the group held. */
export interface SpansShardCount {
  /** Documents read. */
  docs: number;
  /** Rows, skipped invalid records included (the shard's share of the row numbers). */
  rows: number;
  /** Invalid records skipped (`--skip-invalid`), and the first problem (file, line and reason). */
  skipped: number;
  firstSkip?: string;
  /** Records that span several lines (a quoted line break), and where the first lies; absent when none. */
  multiline?: number;
  firstMultiline?: string;
}

/** The spans-hash task's marker. */
export interface SpansHashMarker {
  shards: SpansShardCount[];
  /** Documents of the group. */
  docs: number;
  /** Units compared (rows of units.u32). */
  units: number;
  /** Substring windows passed over (their anchor counted once in the corpus): each a unit, and a distinct one. */
  passed: number;
  /** Whether some record had an explicit id. */
  explicit: boolean;
  /** Row where each hash partition starts in units.u32 (partitions + 1). */
  pstart: number[];
  /** Byte where each hash partition starts in units.u32 (partitions + 1). */
  pbytes: number[];
  /** The resolved input format of each shard. */
  formats: string[];
}

/** Runs spans-hash task `t` (idempotent; with anchors, every spans-anchor-find task must have completed). */
export function runSpansHash(workDir: string, job: JobSpec, t: number): Promise<SpansHashMarker> {
  return commitTask<SpansHashMarker>({ workDir, job, stage: 'spans-hash', task: t }, async (dir) => {
    const walker = new UnitWalker(job.spans!.options);
    walker.runs = groupRuns(workDir, job, t);
    const cursor = new OffsetCursor();
    const width = unitColumns(job);
    // Rows packed as they come, by hash partition.
    const packer = new RowPacker(unitLayout(job), job.partitions);
    const row = packer.row;
    const ids: (string | null)[] = [];
    const rows: number[] = [];
    const marker: SpansHashMarker = { shards: [], docs: 0, units: 0, passed: 0, explicit: false, pstart: [], pbytes: [], formats: [] };
    const { first, end } = shardsOfTask(job, t);
    for (let s = first; s < end; s++) {
      const input = await openShard(workDir, job, s);
      let docs = 0;
      let last = -1;
      try {
        for await (const r of input.records) {
          const doc = marker.docs++;
          docs++;
          last = r.row;
          ids.push(r.id ?? null);
          rows.push(r.row);
          if (r.id !== undefined) marker.explicit = true;
          cursor.reset(r.text);
          walkerAt(walker, doc);
          walker.each(r.text, (k) => {
            row[0] = walker.hash[0]!;
            row[1] = walker.hash[1]!;
            row[2] = doc;
            row[3] = k;
            if (width === 6) {
              cursor.at(walker.units.start[k]!);
              row[4] = cursor.cp;
              row[5] = cursor.byte;
            }
            packer.add(partitionOf(walker.hash[0]!, job.partitions));
          });
          if (walker.runs) marker.passed += walker.skipped;
        }
      } finally {
        await input.records.return(undefined);
      }
      const firstSkip = input.skips.examples[0]?.message;
      marker.shards.push({
        docs,
        rows: rowCount(last, docs, input.skips.count),
        skipped: input.skips.count,
        ...(firstSkip !== undefined ? { firstSkip } : {}),
        ...(input.skips.multiline ? { multiline: input.skips.multiline, firstMultiline: input.skips.firstMultiline } : {}),
      });
      marker.formats.push(input.format);
    }
    walkedAll(walker.runs, marker.docs);
    const packed = packer.finish();
    marker.units = packed.start[packed.start.length - 1]!;
    marker.pstart = packed.start;
    marker.pbytes = packed.bytes;
    await writeSynced(path.join(dir, 'units.u32'), packed.parts);
    await writeSynced(path.join(dir, 'docs.json'), JSON.stringify({ ids, rows }));
    return marker;
  });
}
