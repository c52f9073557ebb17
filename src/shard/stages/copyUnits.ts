/**
 * Exact copies in the decide stage: join folded each copy group into its smallest document, so the
 * verified pairs are between representatives; link sends each group's other members to the decide
 * task of its representative's component (link's copies.bin). Here they become units, as `neardup
 * dedup`'s copy groups are: decided whole by the verified rule, at similarity 1 to each other.
 * @module
 */
import path from 'node:path';
import { groupRows } from '../files/columns.js';
import { requireMarker, taskDir } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import type { UnitMembers } from '../../cluster/removal.js';

/** A decide task's copies: member[i] is a copy of representative rep[i] (global numbers). */
export interface GroupCopies {
  rep: Float64Array;
  member: Float64Array;
}

/** Group g's copies from every link task's copies.bin (those whose representative's component's smallest document is in the group). */
export function groupCopies(workDir: string, job: JobSpec, g: number): GroupCopies {
  const files = Array.from({ length: taskCount(job, 'link') }, (_, v) => {
    requireMarker(workDir, job, 'link', v);
    return path.join(taskDir(workDir, 'link', v), 'copies.bin');
  });
  const { rep, member } = groupRows({ files, kind: 'labelled-copies', plan: job.id }, g, ['rep', 'member']);
  return { rep, member };
}

/** The clustered documents (positions into ascending `members`) grouped into units: copy groups, and every other document alone. */
export interface PositionUnits extends UnitMembers {
  /** Units. */
  count: number;
  /** Each position's unit. */
  unitOf: Int32Array;
  /** Each position's representative (a position: itself when it is no copy). */
  repPos: Int32Array;
}

/** The units of P clustered documents (positions) given their copies: position copyMember[i] is a copy of position copyRep[i]. */
export function positionUnits(P: number, copyRep: Int32Array, copyMember: Int32Array): PositionUnits {
  const repPos = new Int32Array(P);
  for (let p = 0; p < P; p++) repPos[p] = p;
  for (let i = 0; i < copyRep.length; i++) repPos[copyMember[i]!] = copyRep[i]!;
  const unitOf = new Int32Array(P);
  let count = 0;
  // A representative is its group's smallest member: it comes before its copies.
  for (let p = 0; p < P; p++) unitOf[p] = repPos[p] === p ? count++ : unitOf[repPos[p]!]!;
  const start = new Int32Array(count + 1);
  for (let p = 0; p < P; p++) start[unitOf[p]! + 1]!++;
  for (let u = 0; u < count; u++) start[u + 1]! += start[u]!;
  const fill = start.slice(0, count);
  const members = new Int32Array(P);
  for (let p = 0; p < P; p++) members[fill[unitOf[p]!]!++] = p;
  return { count, unitOf, repPos, start, members };
}
