/**
 * Stage spans-anchor of a spans job of substring windows (one task per shard group; a job whose
 * windows `neardup spans` does not thin out has none: `anchoredUnits`): the pass before pass 1 of
 * `neardup spans` on the group's records, with the same walker (src/spans/anchors.ts). Each
 * window's anchor hash is counted, saturating at 2, in the group; `anchors.u32` holds each
 * distinct anchor hash of the group once, 4 bytes, grouped by hash partition, and within a
 * partition those counted once before those counted more than once (`pstart`: 2·partitions + 1
 * starts). `runs.u32` keeps the windows' runs of one anchor, document by document, packed rows
 * (./rows.ts: anchor hash, 4 bytes, and windows, a varint), a row of 0 windows ending each document: spans-hash, spans-text
 * and spans-cut walk only the runs whose anchor is repeated in the corpus (./anchorFind.ts), as
 * pass 1 and pass 2 do, instead of counting the anchors again.
 * @module
 */
import path from 'node:path';
import { AnchorCounts, AnchorRuns } from '../../spans/anchors.js';
import { UnitWalker } from '../../spans/walker.js';
import { commitTask, writeSynced } from '../files/commit.js';
import { shardsOfTask, type JobSpec } from '../files/job.js';
import { openShard } from '../files/shardInput.js';
import { groupBy, U32Buf } from '../files/u32buf.js';
import { columnsBuffer, packRows, partitionOf, type RowLayout } from './rows.js';

/** How runs.u32 stores its rows (anchor hash, windows), one group of them. */
export const RUN_LAYOUT: RowLayout = { kinds: ['raw', 'var'] };

/** The spans-anchor task's marker. */
export interface SpansAnchorMarker {
  /** Documents of the group. */
  docs: number;
  /** Rows of runs.u32: a row per run, and one per document. */
  runs: number;
  /** Bytes of runs.u32. */
  runBytes: number;
  /** Windows of the group. */
  windows: number;
  /** Rows of anchors.u32: the group's distinct anchor hashes. */
  anchors: number;
  /** Row where each partition's anchors start (2·partitions + 1): 2p counted once, 2p + 1 more than once. */
  pstart: number[];
}

/**
 * The runs the walker's anchor pass makes, kept as the rows of `runs.u32` (a run: its anchor
 * hash and windows; 0 windows: the document's end) instead of in memory: only a sink of
 * {@link UnitWalker.countAnchors}, never finished.
 */
class RunRows extends AnchorRuns {
  readonly hash = new U32Buf(1 << 16);
  readonly len = new U32Buf(1 << 16);
  windows = 0;

  override add(h: number, len: number): void {
    this.hash.push(h);
    this.len.push(len);
    this.windows += len;
  }

  override endDoc(): void {
    this.hash.push(0);
    this.len.push(0);
    this.docs++;
  }
}

/** Runs spans-anchor task `t` (idempotent). */
export function runSpansAnchor(workDir: string, job: JobSpec, t: number): Promise<SpansAnchorMarker> {
  return commitTask<SpansAnchorMarker>({ workDir, job, stage: 'spans-anchor', task: t }, async (dir) => {
    const walker = new UnitWalker(job.spans!.options);
    const counts = new AnchorCounts();
    const runs = new RunRows();
    const { first, end } = shardsOfTask(job, t);
    for (let s = first; s < end; s++) {
      const input = await openShard(workDir, job, s);
      try {
        for await (const r of input.records) walker.countAnchors(r.text, counts, runs);
      } finally {
        await input.records.return(undefined);
      }
    }
    const P = job.partitions;
    const hash = new U32Buf(counts.distinct);
    const part = new U32Buf(counts.distinct);
    counts.forEach((h, n) => {
      hash.push(h);
      part.push(2 * partitionOf(h, P) + (n > 1 ? 1 : 0));
    });
    const grouped = groupBy(part.view(), 2 * P, [hash.view()]);
    await writeSynced(path.join(dir, 'anchors.u32'), columnsBuffer(grouped.columns, hash.length));
    const packed = packRows([runs.hash.view(), runs.len.view()], RUN_LAYOUT, [0, runs.hash.length]);
    await writeSynced(path.join(dir, 'runs.u32'), packed.buf);
    return {
      docs: runs.docs,
      runs: runs.hash.length,
      runBytes: packed.bytes[1]!,
      windows: runs.windows,
      anchors: hash.length,
      pstart: Array.from(grouped.start),
    };
  });
}
