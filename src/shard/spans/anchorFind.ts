/**
 * Stage spans-anchor-find of a spans job of substring windows (one task per hash partition): its
 * partition's anchor hashes of every spans-anchor task counted together, saturating at 2 as one
 * process counts them (a hash counted once in each of two groups is repeated), and each group's
 * repeated ones listed back in `repeated.u32`, one uint32 column grouped by shard group (`gstart`
 * in the marker): a group's windows of such an anchor may occur more than once in the corpus, the
 * others once. {@link groupRuns} puts a group's runs and repeated anchors together for the stages
 * that walk its windows.
 * @module
 */
import path from 'node:path';
import { AnchorCounts, AnchorRuns } from '../../spans/anchors.js';
import type { UnitWalker } from '../../spans/walker.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { groupBy, U32Buf } from '../files/u32buf.js';
import { RUN_LAYOUT, type SpansAnchorMarker } from './anchor.js';
import { columnsBuffer, readPacked, readRows } from './rows.js';

/** The spans-anchor-find task's marker. */
export interface SpansAnchorFindMarker {
  /** Distinct anchor hashes of the partition. */
  anchors: number;
  /** Rows of repeated.u32: per group, its anchor hashes of the partition counted more than once in the corpus. */
  repeated: number;
  /** Row where each shard group's repeated anchors start (groups + 1). */
  gstart: number[];
}

/** Partition `p`'s anchors of group `g`: those it counted once, then those it counted more than once. */
function groupAnchors(workDir: string, job: JobSpec, g: number, p: number): { once: Uint32Array; more: Uint32Array } {
  const m = requireMarker<SpansAnchorMarker>(workDir, job, 'spans-anchor', g);
  const file = path.join(taskDir(workDir, 'spans-anchor', g), 'anchors.u32');
  const [all] = readRows(file, { width: 1, n: m.anchors }, m.pstart[2 * p]!, m.pstart[2 * p + 2]!) as [Uint32Array];
  const split = m.pstart[2 * p + 1]! - m.pstart[2 * p]!;
  return { once: all.subarray(0, split), more: all.subarray(split) };
}

/** Runs spans-anchor-find task `p` (idempotent; every spans-anchor task must have completed). */
export function runSpansAnchorFind(workDir: string, job: JobSpec, p: number): Promise<SpansAnchorFindMarker> {
  return commitTask<SpansAnchorFindMarker>({ workDir, job, stage: 'spans-anchor-find', task: p }, async (dir) => {
    const G = taskCount(job, 'spans-anchor');
    const counts = new AnchorCounts();
    const groups: { once: Uint32Array; more: Uint32Array }[] = [];
    for (let g = 0; g < G; g++) {
      const x = groupAnchors(workDir, job, g, p);
      groups.push(x);
      for (const h of x.once) counts.add(h);
      for (const h of x.more) {
        counts.add(h);
        counts.add(h);
      }
    }
    const hash = new U32Buf();
    const group = new U32Buf();
    groups.forEach((x, g) => {
      for (const list of [x.once, x.more]) {
        for (const h of list) {
          if (!counts.repeated(h)) continue;
          hash.push(h);
          group.push(g);
        }
      }
    });
    const grouped = groupBy(group.view(), G, [hash.view()]);
    await writeSynced(path.join(dir, 'repeated.u32'), columnsBuffer(grouped.columns, hash.length));
    return { anchors: counts.distinct, repeated: hash.length, gstart: Array.from(grouped.start) };
  });
}

/**
 * Group `g`'s windows as runs of one anchor, each walked or passed over by whether its anchor is
 * repeated in the corpus (finished: src/spans/anchors.ts), for a {@link UnitWalker}'s `runs`; or
 * undefined when the job's windows have no anchors (no spans-anchor task), and every window is walked.
 */
export function groupRuns(workDir: string, job: JobSpec, g: number): AnchorRuns | undefined {
  if (taskCount(job, 'spans-anchor') === 0) return undefined;
  const repeated = new AnchorCounts();
  for (let p = 0; p < taskCount(job, 'spans-anchor-find'); p++) {
    const m = requireMarker<SpansAnchorFindMarker>(workDir, job, 'spans-anchor-find', p);
    const file = path.join(taskDir(workDir, 'spans-anchor-find', p), 'repeated.u32');
    const [hs] = readRows(file, { width: 1, n: m.repeated }, m.gstart[g]!, m.gstart[g + 1]!) as [Uint32Array];
    for (const h of hs) {
      repeated.add(h);
      repeated.add(h);
    }
  }
  const m = requireMarker<SpansAnchorMarker>(workDir, job, 'spans-anchor', g);
  const [hash, len] = readPacked(
    path.join(taskDir(workDir, 'spans-anchor', g), 'runs.u32'),
    RUN_LAYOUT,
    { rows: [0, m.runs], bytes: [0, m.runBytes] },
    [0, 1],
  ) as [
    Uint32Array,
    Uint32Array,
  ];
  const runs = new AnchorRuns();
  for (let r = 0; r < hash.length; r++) {
    if (len[r] === 0) runs.endDoc();
    else runs.add(hash[r]!, len[r]!);
  }
  runs.finish(repeated);
  return runs;
}

/**
 * Points `walker` at document `doc` of its group, whose windows' runs it holds (with anchors):
 * a document the anchor pass did not see is an input changed since.
 */
export function walkerAt(walker: UnitWalker, doc: number): void {
  if (!walker.runs) return;
  if (doc >= walker.runs.docs)
    throw new Error(`document ${doc} of the group is past the ${walker.runs.docs} whose anchors spans-anchor counted: an input changed since`);
  walker.doc = doc;
}

/** Checks that a group's stage read the `docs` documents whose anchors spans-anchor counted (with anchors). */
export function walkedAll(runs: AnchorRuns | undefined, docs: number): void {
  if (runs && docs !== runs.docs)
    throw new Error(`${docs} documents in the group, but spans-anchor counted the anchors of ${runs.docs}: an input changed since`);
}
