/**
 * Stage 7, decide (one task per shard group): the components of the verified graph whose smallest
 * document is in the group, each whole (its verified pairs from every link task's bylabel.bin), decided: the clusters of their
 * verified pairs, which member of each is kept (the job's `--removal` rule and `--keep` policy),
 * each member's kept document and similarity to it, and the cluster lines without their numbers
 * (numbers are global: the components stage gives them). Exact copies folded by join come with
 * their representative's component (link's copies.bin) and are decided as one unit with it
 * (src/shard/stages/copyUnits.ts), as `neardup dedup` decides its copy groups. With `--against`, each corpus document's
 * best reference match. The counters a summary needs (clusters, both rules' drops, the recall
 * estimate's sums) go into the verify marker, to be summed over the tasks. Past the task's spill
 * limit its pairs are not held: every step reads them a chunk at a time from a file in the task's
 * directory, the verified walk out of core (src/shard/stages/decidePairs.ts, src/shard/spill/).
 *
 * Outputs in `decide/NNNNN/`:
 * - `clusters.bin` (kind `cluster-lines`): per cluster, ascending smallest member: min (float64),
 *   size (int32), line (string: the cluster's JSON line after `{"cluster":N`), grouped by the shard
 *   group of min with `pstart` (G + 1).
 * - `members.bin` (kind `cluster-members`): per member, cluster after cluster (in a cluster,
 *   ascending): doc (float64 global number), rep (float64: the kept document, -1 with `--keep none`,
 *   or the best reference match), repId (string), size (int32; -1 with --against), sim (float64: to
 *   rep; NaN for a kept member or where unknown), id (string), grouped as clusters.bin (with
 *   --against: one row per matched corpus document, by its group, ascending).
 *
 * Why this file is long: one stage's task, in memory and out of core, with the counters the
 * summary sums.
 * @module
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { clustersOfUnions } from '../../cluster/clusters.js';
import { decideUnits, verifiedRemovalBy, type KeepRanking, type Removal, type UnitWalk } from '../../cluster/removal.js';
import type { RemovalSummary } from '../../dedup/verifiedGraph.js';
import { chooseKept, keepNeedsValues, keepValueError, parseKeepPolicy, ValueStatus, type KeepRule } from '../../cluster/keepPolicy.js';
import { RecallAccumulator, type RecallParts } from '../../lsh/recallEstimate.js';
import { writeColumns, type StrParts } from '../files/columns.js';
import { ByteStrings } from '../files/byteStrings.js';
import { docIds, pushId, writeClusterLine, type DocIds } from '../files/clusterLines.js';
import { commitTask } from '../files/commit.js';
import { rangeOf, type JobSpec } from '../files/job.js';
import { jobDocs, type JobDocs, type ShardDocs } from '../files/docs.js';
import { numbering } from '../files/shardInput.js';
import { withSets, type SetSource } from './setMaker.js';
import { similaritiesToKept } from './keptSims.js';
import { groupCopies, positionUnits, type PositionUnits } from './copyUnits.js';
import { groupVerified, groupVerifiedChunks, pairsInMemory, type PositionPairs } from './decidePairs.js';
import { walkOutOfCore } from '../spill/walk.js';
import { jobHasCopies, writeCopyPairs } from './copyPairs.js';

/** What a verify task's decisions add to its marker. */
export interface Decided {
  /** Clusters of ≥ 2 documents (0 with --against). */
  clusters: number;
  /** Documents in clusters. */
  docsInClusters: number;
  /** Documents beyond the first of each cluster; with --against, corpus documents with a reference match. */
  duplicates: number;
  /** With --against: reference documents with a match (each in one component, so in one task). */
  referenceMatched?: number;
  /** What each removal rule drops (absent with --against). */
  removal?: RemovalSummary;
  /** The recall estimate's sums over this task's verified pairs. */
  recall: RecallParts;
  /** Document pairs its copies add to the verified pairs: inside copy groups, and beyond one per pair of representatives. */
  copyPairs?: number;
  /** Verified pairs decided out of core (the task was past its spill limit: src/shard/spill/limits.ts). */
  spilled?: number;
}

/** Whether the job writes similarities to the kept member: annotate's tags, or dedup's `--removed` audit. */
export function needsSimilarities(job: JobSpec): boolean {
  return job.output.mode === 'annotate' || (job.output.mode === 'dedup' && job.output.removed !== undefined);
}

/**
 * What the keep policy ranks document d of shard s by, from the sign stage's docs.bin. Clustered
 * documents are asked in global order, so the first whose field is missing or not a number is the
 * input error (naming its shard, line or Parquet row group and row, and field), as in neardup dedup.
 */
function keepKey(rule: KeepRule, sd: ShardDocs, shardPath: string, d: number): number {
  const status = sd.keyStatus(d) as ValueStatus;
  if (status === ValueStatus.Ok) return sd.key(d);
  const { line, position } = sd.where(d);
  throw keepValueError({ file: shardPath, line, position }, rule, status);
}

/** A string column: JS strings, or bytes (a task's clusters, src/shard/files/byteStrings.ts). */
type StrColumn = readonly string[] | StrParts;

/** members.bin's columns. */
interface MemberColumns {
  doc: Float64Array;
  rep: Float64Array;
  repId: StrColumn;
  size: Int32Array;
  sim: Float64Array;
  id: StrColumn;
}

/** A task's decisions and their files' columns. */
export interface Decisions {
  marker: Decided;
  clusters: { min: Float64Array; size: Int32Array; line: StrColumn };
  /** The member rows, or what makes them once the cluster lines are written (a task holds one or the other). */
  members: MemberColumns | (() => MemberColumns);
  /** The clustered documents (ascending) and their copy groups, for the pairs output of a job with copies. */
  units?: { members: Float64Array; units: PositionUnits };
}

/** The decide task's marker. */
export type DecideMarker = Decided;

/** The shards whose documents group g's verified pairs touch: what the task reads ids (and texts) of. */
export function decideReads(workDir: string, job: JobSpec, g: number): number[] {
  const { docOffset } = numbering(workDir, job);
  const seen = new Set<number>();
  // A chunk at a time: a giant component's pairs are not held to list the shards they touch.
  groupVerifiedChunks(workDir, job, g, 1 << 20)((a, b, _s, n) => {
    for (let i = 0; i < n; i++) (seen.add(rangeOf(docOffset, a[i]!)), seen.add(rangeOf(docOffset, b[i]!)));
  });
  for (const d of groupCopies(workDir, job, g).member) seen.add(rangeOf(docOffset, d));
  return [...seen].sort((x, y) => x - y);
}

/** Runs decide task g (idempotent; every link task must have completed). */
export function runDecide(workDir: string, job: JobSpec, g: number): Promise<DecideMarker> {
  return commitTask<DecideMarker>({ workDir, job, stage: 'decide', task: g }, async (dir) => {
    const num = numbering(workDir, job);
    // Past the spill limit the pairs go to files under the task's directory, removed before it commits.
    const spillDir = path.join(dir, 'spill');
    const pairs = groupVerified(workDir, job, g, { copies: groupCopies(workDir, job, g), spillDir });
    const docs = jobDocs(workDir, job, num);
    try {
      // Sets only when the cluster rule needs similarities to members the pairs do not give.
      const decided = await withSets(workDir, job, docs, (sets) => decide({ job, pairs, docOffset: num.docOffset, docs, sets }));
      await writeDecisions(dir, job, decided, num.docOffset);
      // With copies, the pairs output is the decide tasks' (src/shard/stages/copyPairs.ts).
      if (job.output.mode === 'pairs' && decided.units && jobHasCopies(workDir, job)) {
        const { members, units } = decided.units;
        await writeCopyPairs({ dir, job, docOffset: num.docOffset, docs, members, units, verified: { ...pairs, ...pairsInMemory(pairs) } });
      }
      return pairs.spilled ? { ...decided.marker, spilled: pairs.count } : decided.marker;
    } finally {
      docs.close();
      rmSync(spillDir, { recursive: true, force: true });
    }
  });
}

/** What a decide task decides from: its verified pairs, its documents (`docOffset`: each shard's first number) and their sets. */
interface DecideInput {
  job: JobSpec;
  pairs: PositionPairs;
  docOffset: Float64Array;
  docs: JobDocs;
  sets: SetSource;
}

/** Decides a decide task's components (see the module comment). */
async function decide(t: DecideInput): Promise<Decisions> {
  return t.job.against ? bestMatches(t) : clustersOf(t);
}

/** Writes clusters.bin and members.bin into the task's directory. */
export async function writeDecisions(dir: string, job: JobSpec, d: Decisions, docOffset: Float64Array): Promise<void> {
  const starts = Float64Array.from(job.groups, (s) => docOffset[s]!);
  const G = starts.length - 1;
  const byGroup = (xs: Float64Array): Float64Array => {
    const p = new Float64Array(G + 1);
    for (const x of xs) p[rangeOf(starts, x) + 1]!++;
    for (let g = 0; g < G; g++) p[g + 1]! += p[g]!;
    return p;
  };
  const clusterStart = byGroup(d.clusters.min);
  await writeColumns(path.join(dir, 'clusters.bin'), { kind: 'cluster-lines', plan: job.id, meta: {} }, { ...d.clusters, pstart: clusterStart });
  // The lines are in their file: let them go before the member rows are made (a giant cluster's line is ~30 B a member).
  d.clusters.line = [];
  const members = typeof d.members === 'function' ? d.members() : d.members;
  // Members come cluster after cluster: a group's members begin where its first cluster's do.
  const memberStart = new Float64Array(G + 1);
  if (job.against) memberStart.set(byGroup(members.doc));
  else {
    let at = 0;
    let k = 0;
    for (let g = 0; g < G; g++) {
      memberStart[g] = at;
      for (; k < clusterStart[g + 1]!; k++) at += d.clusters.size[k]!;
    }
    memberStart[G] = at;
  }
  await writeColumns(path.join(dir, 'members.bin'), { kind: 'cluster-members', plan: job.id, meta: {} }, { ...members, pstart: memberStart });
}

/** The clustered documents' ids by position and, with a keep policy that ranks by a value, their keys. */
function readIds(
  job: JobSpec,
  members: Float64Array,
  o: { docOffset: Float64Array; docs: JobDocs; rule: KeepRule },
): { ids: DocIds; key?: Float64Array; keyLo?: Float64Array } {
  const { docOffset, docs, rule } = o;
  const P = members.length;
  const ids = docIds(P);
  const key = keepNeedsValues(rule) ? new Float64Array(P) : undefined;
  const keyLo = key ? new Float64Array(P) : undefined;
  // Members ascend, so shard after shard: each shard's view is let go once passed (a giant component
  // touches every shard, and holding them all held the corpus's ids).
  for (let p = 0, last = -1; p < P; p++) {
    const s = rangeOf(docOffset, members[p]!);
    if (s !== last && last >= 0) docs.drop(last);
    last = s;
    const sd = docs.get(s);
    const d = members[p]! - docOffset[s]!;
    pushId(ids, p, sd.id(d));
    if (key) {
      key[p] = keepKey(rule, sd, job.shards[s]!.path, d);
      keyLo![p] = sd.keyLo(d);
    }
  }
  if (P > 0) docs.drop(rangeOf(docOffset, members[P - 1]!));
  return { ids, key, keyLo };
}

/** The clusters of the verified pairs of whole components and of their copies, decided. */
async function clustersOf({ job, pairs, docOffset, docs, sets }: DecideInput): Promise<Decisions> {
  const { members } = pairs;
  const c = pairs.copyRep.length;
  // Each copy joins its representative's cluster: an edge for clustering, not a verified pair.
  const { order, start, clusterOf } = clustersOfUnions(members.length, (union) => {
    pairs.forEach((a, b, _s, n) => {
      for (let i = 0; i < n; i++) union(a[i]!, b[i]!);
    });
    for (let j = 0; j < c; j++) union(pairs.copyRep[j]!, pairs.copyMember[j]!);
  });
  const P = members.length;
  const units = positionUnits(P, pairs.copyRep, pairs.copyMember);
  const K = start.length - 1;
  const rule = parseKeepPolicy(job.keep ?? 'first');
  // Ids and cluster lines are held as bytes (src/shard/files/clusterLines.ts): per document, not per JS string.
  const { ids, key, keyLo } = readIds(job, members, { docOffset, docs, rule });
  const verified = (job.removal ?? 'cluster') === 'verified' ? verifiedOfPositions({ pairs, rule, key, keyLo, units }) : undefined;
  const repPos = new Int32Array(P);
  const line = new ByteStrings(K);
  const min = new Float64Array(K);
  const size = new Int32Array(K);
  for (let k = 0; k < K; k++) {
    const j0 = start[k]!;
    const c = chooseKept(rule, start[k + 1]! - j0, (x) => key![order[j0 + x]!]!, (x) => keyLo![order[j0 + x]!]!);
    const kept = c < 0 ? -1 : order[j0 + c]!;
    min[k] = members[order[j0]!]!;
    size[k] = start[k + 1]! - j0;
    for (let j = j0; j < start[k + 1]!; j++) repPos[order[j]!] = verified ? verified.keptBy[order[j]!]! : kept;
    writeClusterLine(line, ids, { order, j0, j1: start[k + 1]!, kept, verdicts: verified });
  }
  const { recall, copyPairs } = recallOf(job, pairs, { units, clusterOf, K });
  const sim = verified
    ? verified.similarity
    : needsSimilarities(job)
    ? await similaritiesToKept(pairs, repsOf(members, repPos), sets, units.repPos)
    : new Float64Array(P).fill(NaN);
  const removal = removalOf({ pairs, rule, key, keyLo, units, verified, sim, size });
  const rows = { members, order, start, size, repPos, sim, ids };
  return {
    marker: { clusters: K, docsInClusters: P, duplicates: P - K, removal, recall, ...(copyPairs > 0 ? { copyPairs } : {}) },
    clusters: { min, size, line },
    // Made once the lines are written (writeDecisions), holding only what the rows need.
    members: () => memberRows(rows),
    ...(job.output.mode === 'pairs' ? { units: { members, units } } : {}),
  };
}

/** What each removal rule drops, for the marker (the cluster rule's says what the verified rule would drop, and how far its dropped members can be). */
function removalOf(
  o: {
    pairs: PositionPairs;
    rule: KeepRule;
    key?: Float64Array;
    keyLo?: Float64Array;
    units: PositionUnits;
    verified?: Removal;
    sim: Float64Array;
    size: Int32Array;
  },
): RemovalSummary {
  const { pairs, rule, verified, sim, size } = o;
  const P = pairs.members.length;
  const K = size.length;
  const clusterDrops = rule.kind === 'none' ? P : P - K;
  if (verified) return { rule: 'verified', verifiedDrops: verified.dropped, clusterDrops };
  let largest = 0;
  for (let k = 0; k < K; k++) largest = Math.max(largest, size[k]!);
  let low = Infinity;
  for (const x of sim) if (x < low) low = x;
  const verifiedDrops = verifiedOfPositions(o).dropped;
  return { rule: 'cluster', verifiedDrops, clusterDrops, largestCluster: largest, ...(low !== Infinity ? { lowestSimilarity: low } : {}) };
}

/** Each position's kept document (−1: none), from the kept position `repPos` of each. */
function repsOf(members: Float64Array, repPos: Int32Array): Float64Array {
  return Float64Array.from(repPos, (r) => (r < 0 ? -1 : members[r]!));
}

/** The member rows, cluster after cluster (cluster k's members are positions order[start[k]..start[k + 1])). */
function memberRows(
  o: { members: Float64Array; order: Int32Array; start: Int32Array; size: Int32Array; repPos: Int32Array; sim: Float64Array; ids: DocIds },
): MemberColumns {
  const { members, order, start, size, repPos, sim, ids } = o;
  const P = members.length;
  const doc = new Float64Array(P);
  const repOut = new Float64Array(P);
  const repId = new ByteStrings(P);
  const sizeOut = new Int32Array(P);
  const simOut = new Float64Array(P);
  const id = new ByteStrings(P);
  for (let k = 0, i = 0; k < size.length; k++) {
    for (let j = start[k]!; j < start[k + 1]!; j++, i++) {
      const p = order[j]!;
      doc[i] = members[p]!;
      repOut[i] = repPos[p]! < 0 ? -1 : members[repPos[p]!]!;
      if (repPos[p]! < 0) repId.end();
      else repId.pushFrom(ids.text, repPos[p]!);
      sizeOut[i] = size[k]!;
      simOut[i] = sim[p]!;
      id.pushFrom(ids.text, p);
    }
  }
  return { doc, rep: repOut, repId, size: sizeOut, sim: simOut, id };
}

/**
 * The recall estimate's sums over a task's pairs and copies (its `units`, its K clusters, `clusterOf`
 * each position's), and the document pairs its copies add. Each cluster is one unit of the estimate's
 * standard error, as in neardup dedup; a pair of representatives counts the document pairs it
 * stands for, and copies are pairs at similarity 1. The pairs are read in their order (spilled or
 * not): the sums are the same floats.
 */
function recallOf(
  job: JobSpec,
  pairs: PositionPairs,
  o: { units: PositionUnits; clusterOf: Int32Array; K: number },
): { recall: RecallParts; copyPairs: number } {
  const { units, clusterOf, K } = o;
  const acc = new RecallAccumulator(job.bands, job.rows, Math.max(1, K));
  const c = pairs.copyRep.length;
  const unitSize = (p: number): number => units.start[units.unitOf[p]! + 1]! - units.start[units.unitOf[p]!]!;
  let copyPairs = 0;
  for (let u = 0; u < units.count; u++) {
    const m = units.start[u + 1]! - units.start[u]!;
    if (m < 2) continue;
    acc.add(1, (m * (m - 1)) / 2);
    copyPairs += (m * (m - 1)) / 2;
  }
  pairs.forEach((A, B, sims, n) => {
    for (let i = 0; i < n; i++) {
      const w = c === 0 ? 1 : unitSize(A[i]!) * unitSize(B[i]!);
      acc.add(sims[i]!, w, clusterOf[A[i]!]!);
      copyPairs += w - 1;
    }
  });
  return { recall: acc.parts(), copyPairs };
}

/**
 * The verified removal rule over the clustered documents (`members`, ascending global numbers; pair
 * i joins representatives A[i] and B[i]; copy groups are `units`), ranked by the keep policy's
 * `key` (by position) or in document order.
 */
function verifiedOfPositions(
  { pairs, rule, key, keyLo, units }: { pairs: PositionPairs; rule: KeepRule; key?: Float64Array; keyLo?: Float64Array; units: PositionUnits },
): Removal {
  const P = pairs.members.length;
  // Without copies every position is its own unit: the pairs' positions serve as they are.
  const unitOf = pairs.copyRep.length > 0 ? units.unitOf : undefined;
  const inPair = (mark: (u: number) => void): void =>
    pairs.forEach((a, b, _s, m) => {
      for (let i = 0; i < m; i++) (mark(unitOf ? unitOf[a[i]!]! : a[i]!), mark(unitOf ? unitOf[b[i]!]! : b[i]!));
    });
  let walk: UnitWalk['walk'];
  const { spilled } = pairs;
  // Spilled pairs are walked out of core, a bucket of rows at a time: the same answer as decideUnits.
  if (spilled) walk = (order) => walkOutOfCore({ units: units.count, pairs, unitOf, order, dir: path.join(spilled.dir, 'walk'), rows: spilled.rows });
  else {
    const a = unitOf ? Int32Array.from(pairs.a, (p) => unitOf[p]!) : pairs.a;
    const b = unitOf ? Int32Array.from(pairs.b, (p) => unitOf[p]!) : pairs.b;
    walk = (order) => decideUnits({ units: units.count, count: pairs.count, a, b, similarity: pairs.sims }, order);
  }
  const ranking: KeepRanking = rule.kind === 'none'
    ? { none: true }
    : key
    ? { values: key, lo: keyLo, sign: rule.kind === 'longest' || rule.kind === 'max' ? 1 : -1 }
    : {};
  return verifiedRemovalBy(P, { units: units.count, inPair, walk }, ranking, units);
}

/** With --against: each corpus document with verified pairs and its most similar reference document (the first on ties). */
function bestMatches({ job, pairs, docOffset, docs }: DecideInput): Decisions {
  const { members } = pairs;
  const doc: number[] = [];
  const rep: number[] = [];
  const sim: number[] = [];
  const refSeen = new Set<number>();
  // Each corpus document with its reference matches is one unit of the recall estimate.
  const acc = new RecallAccumulator(job.bands, job.rows);
  let unit = -1;
  let last = -1;
  // Pairs come by corpus document (first end): spilled or not, a chunk at a time.
  pairs.forEach((pa, pb, sims, n) => {
    for (let i = 0; i < n; i++) {
      const a = members[pa[i]!]!;
      const b = members[pb[i]!]!;
      if (a !== last) {
        unit++;
        last = a;
        doc.push(a);
        rep.push(b);
        sim.push(sims[i]!);
      } else if (sims[i]! > sim[sim.length - 1]!) {
        rep[rep.length - 1] = b;
        sim[sim.length - 1] = sims[i]!;
      }
      acc.add(sims[i]!, 1, unit);
      refSeen.add(b);
    }
  });
  const idOf = (g: number): string => {
    const s = rangeOf(docOffset, g);
    return String(docs.get(s).id(g - docOffset[s]!));
  };
  return {
    marker: { clusters: 0, docsInClusters: 0, duplicates: doc.length, referenceMatched: refSeen.size, recall: acc.parts() },
    clusters: { min: new Float64Array(0), size: new Int32Array(0), line: [] },
    members: {
      doc: Float64Array.from(doc),
      rep: Float64Array.from(rep),
      repId: rep.map(idOf),
      size: new Int32Array(doc.length).fill(-1),
      sim: Float64Array.from(sim),
      id: doc.map(idOf),
    },
  };
}
