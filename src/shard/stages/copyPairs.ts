/**
 * The pairs output of a job with exact copies: join folded each copy group into its smallest
 * document, so the verified pairs are between representatives. `neardup dedup --output pairs`
 * lists every document pair they stand for: each pair of copies at similarity 1, and a pair of
 * representatives once per pair of their groups' members. A decide task holds whole components
 * with their copies, so it lists its components' pairs, in the verify tasks' file layout; the pairs
 * output then merges the decide tasks' files instead of the verify tasks' (`verified.ts`).
 * @module
 */
import path from 'node:path';
import { formatPair } from '../../io/write/write.js';
import { UsageError } from '../../common/errors.js';
import { writeColumns } from '../files/columns.js';
import { requireMarker, writeSynced } from '../files/commit.js';
import { rangeOf, taskCount, type JobSpec } from '../files/job.js';
import type { JobDocs } from '../files/docs.js';
import type { LinkMarker } from './link.js';
import type { PositionUnits } from './copyUnits.js';
import type { PositionPairs } from './decidePairs.js';

/** Whether join folded any copies, from the link markers (which a decide task reads anyway; every link task must have completed). */
export function jobHasCopies(workDir: string, job: JobSpec): boolean {
  for (let t = 0; t < taskCount(job, 'link'); t++) if ((requireMarker<LinkMarker>(workDir, job, 'link', t).copies ?? 0) > 0) return true;
  return false;
}

/** The refusal past --max-pairs, in the words of the join's. */
export function tooManyPairs(count: number, job: JobSpec): UsageError {
  return new UsageError(
    `${count} near-duplicate pairs once exact copies are listed, more than ${job.maxBucketPairs}; raise --max-pairs, or ask for --output clusters or dedup`,
  );
}

/** A decide task's components, to write the pairs of (see {@link writeCopyPairs}). */
export interface CopyPairsTask {
  /** The task's directory. */
  dir: string;
  job: JobSpec;
  /** Each shard's first document number. */
  docOffset: Float64Array;
  docs: JobDocs;
  members: Float64Array;
  units: PositionUnits;
  verified: PositionPairs;
}

/**
 * Writes pairs.bin and pairs.txt (as verify's: src/shard/stages/verify.ts) of a decide task's components:
 * `members` its clustered documents (ascending global numbers), `units` their copy groups, and the
 * verified pairs (A[i], B[i], sims[i]) between representatives.
 */
export async function writeCopyPairs(o: CopyPairsTask): Promise<number> {
  const { dir, job, docOffset, docs, members, units, verified } = o;
  const { a: A, b: B, sims } = verified;
  const { start, members: byUnit, unitOf } = units;
  const size = (u: number): number => start[u + 1]! - start[u]!;
  let count = 0;
  for (let u = 0; u < units.count; u++) count += (size(u) * (size(u) - 1)) / 2;
  for (let i = 0; i < A.length; i++) count += size(unitOf[A[i]!]!) * size(unitOf[B[i]!]!);
  // dedup refuses past --max-pairs; a task never holds more.
  if (count > job.maxBucketPairs) throw tooManyPairs(count, job);
  const ga = new Float64Array(count);
  const gb = new Float64Array(count);
  const sim = new Float64Array(count);
  let w = 0;
  for (let u = 0; u < units.count; u++) {
    for (let i = start[u]!; i < start[u + 1]!; i++) {
      for (let j = i + 1; j < start[u + 1]!; j++) {
        ga[w] = members[byUnit[i]!]!;
        gb[w] = members[byUnit[j]!]!;
        sim[w++] = 1;
      }
    }
  }
  for (let k = 0; k < A.length; k++) {
    const ua = unitOf[A[k]!]!;
    const ub = unitOf[B[k]!]!;
    for (let i = start[ua]!; i < start[ua + 1]!; i++) {
      const x = members[byUnit[i]!]!;
      for (let j = start[ub]!; j < start[ub + 1]!; j++) {
        const y = members[byUnit[j]!]!;
        ga[w] = Math.min(x, y);
        gb[w] = Math.max(x, y);
        sim[w++] = sims[k]!;
      }
    }
  }
  const order = Int32Array.from({ length: count }, (_, i) => i).sort((x, y) => ga[x]! - ga[y]! || gb[x]! - gb[y]!);
  const S = job.shards.length;
  const cols = { shardA: new Uint32Array(count), docA: new Uint32Array(count), shardB: new Uint32Array(count), docB: new Uint32Array(count) };
  const similarity = new Float64Array(count);
  const bytes = new Uint32Array(count);
  const astart = new Float64Array(S + 1);
  const lines: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const o = order[i]!;
    const sa = rangeOf(docOffset, ga[o]!);
    const sb = rangeOf(docOffset, gb[o]!);
    cols.shardA[i] = sa;
    cols.docA[i] = ga[o]! - docOffset[sa]!;
    cols.shardB[i] = sb;
    cols.docB[i] = gb[o]! - docOffset[sb]!;
    similarity[i] = sim[o]!;
    astart[sa + 1]!++;
    const line = formatPair(job.output.pairFormat, docs.get(sa).id(cols.docA[i]!), docs.get(sb).id(cols.docB[i]!), similarity[i]!);
    lines[i] = line;
    bytes[i] = Buffer.byteLength(line);
  }
  for (let s = 0; s < S; s++) astart[s + 1]! += astart[s]!;
  await writeColumns(path.join(dir, 'pairs.bin'), { kind: 'verified', plan: job.id, meta: {} }, { ...cols, similarity, bytes, astart });
  await writeSynced(path.join(dir, 'pairs.txt'), lines.join(''));
  return count;
}
