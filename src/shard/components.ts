/**
 * Stage 5, components (one task): connected components of the verified pairs, i.e. the clusters,
 * with union-find over the documents in some pair only (`clustersOfPairs`): memory grows with the
 * clustered documents and the verified pairs, not with the corpus (see docs/distributed.md).
 * With `--against` there are no clusters: each corpus document with verified pairs is assigned its
 * most similar reference document.
 *
 * Outputs in `components/00000/`:
 * - `clusters.jsonl`: the clusters as `neardup dedup --output clusters` writes them (within a corpus).
 * - `assign.bin` (kind `assignment`): columns doc (uint32), cluster (int32; -1 with --against), rep
 *   (float64: global number of the kept member chosen by the job's keep policy, -1 with `--keep none`,
 *   or of the best reference match), repId (string; '' with `--keep none`), size (int32: the
 *   cluster's members; -1 with --against), sim (float64: exact Jaccard to rep, NaN for the kept
 *   member and under `--keep none`), id (string: the document's own id, for the `--removed` audit),
 *   grouped by shard with `sstart` (S + 1), ascending doc within a shard. Documents in no cluster
 *   (no match) are absent.
 * @module
 */
import path from 'node:path';
import { clustersOfPairs } from '../dedup/clusters.js';
import { atomicFileSink, type OutputSink } from '../io/output.js';
import { formatCluster, type ClusterVerdicts } from '../io/write.js';
import { verifiedRemoval, type KeepRanking, type Removal } from '../dedup/removal.js';
import type { RemovalSummary } from '../dedup/verifiedGraph.js';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, requireMarker, taskDir } from './commit.js';
import { rangeOf, taskCount, type JobSpec } from './job.js';
import { numbering, openShard } from './shardInput.js';
import { KeptSimilarity } from '../dedup/keptSimilarity.js';
import { forEachVerified } from './verified.js';
import { jobDocs, type JobDocs, type ShardDocs } from './docs.js';
import { chooseKept, keepNeedsValues, keepValueError, parseKeepPolicy, ValueStatus, type KeepRule } from '../dedup/keepPolicy.js';
import { RecallAccumulator, type RecallEstimate } from '../lsh/recallEstimate.js';

/** The components task's marker. */
export interface ComponentsMarker {
  /** Clusters of ≥ 2 documents (0 with --against). */
  clusters: number;
  /** Documents in clusters. */
  docsInClusters: number;
  /** Documents beyond the first of each cluster; with --against, corpus documents with a reference match. */
  duplicates: number;
  /** With --against: reference documents with a match among the corpus documents. */
  referenceMatched?: number;
  /** What each removal rule drops (absent with --against, and in the markers of an older neardup, whose rule was `cluster`). */
  removal?: RemovalSummary;
  /**
   * The job's recall estimate from the verified pairs' similarities (each cluster one unit, or with
   * --against each corpus document), made here since this task already reads every pair: the
   * summary no longer reads them all again. NaN fields are stored as null (JSON). Absent from the
   * markers of an older neardup, whose jobs' summaries read the pairs again.
   */
  recall?: StoredRecall;
}

/** A {@link RecallEstimate} as JSON keeps it: NaN becomes null. */
export type StoredRecall = { [K in keyof RecallEstimate]: number | null };

/** The recall estimate of a components marker, its nulls NaN again. */
export function recallOf(stored: StoredRecall): RecallEstimate {
  const n = (x: number | null): number => (x === null ? NaN : x);
  return { found: n(stored.found), estimatedPairs: n(stored.estimatedPairs), estimatedPairsStdError: n(stored.estimatedPairsStdError), recall: n(stored.recall), stdError: n(stored.stdError) };
}

/** Whether the job writes similarities to the kept member: annotate's tags, or dedup's `--removed` audit. */
export function needsSimilarities(job: JobSpec): boolean {
  return job.output.mode === 'annotate' || (job.output.mode === 'dedup' && job.output.removed !== undefined);
}

/** The shard of global document g (docOffset ascending, length S + 1). */
const shardOf = (docOffset: Float64Array, g: number): number => rangeOf(docOffset, g);

/** The number of verified pairs of the job (every verify task must have completed). */
function verifiedCount(workDir: string, job: JobSpec): number {
  let n = 0;
  for (let t = 0; t < taskCount(job, 'verify'); t++) {
    requireMarker(workDir, job, 'verify', t);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'verify', t), 'pairs.bin'), 'verified', job.id);
    try {
      n += f.count('docA');
    } finally {
      f.close();
    }
  }
  return n;
}

/**
 * Runs the components task (idempotent; every verify task must have completed). Memory grows with
 * the clustered documents and the verified pairs, not with the corpus: ~20 B per clustered
 * document for the clustering (`clustersOfPairs`), 16 B per verified pair (56 B while sorting),
 * and the assignment columns and ids of the clustered documents (measured in bench/RESULTS.md).
 */
export function runComponents(workDir: string, job: JobSpec, task = 0): Promise<ComponentsMarker> {
  if (task !== 0) throw new Error(`components has one task (0), not ${task}`);
  return commitTask<ComponentsMarker>(workDir, job, 'components', 0, async (dir) => {
    const total = verifiedCount(workDir, job);
    const num = numbering(workDir, job);
    const { docOffset } = num;
    const docs = jobDocs(workDir, job, num);
    const marker: ComponentsMarker = { clusters: 0, docsInClusters: 0, duplicates: 0 };
    // The cluster lines of a big job do not fit one string: written through the batching file sink.
    const out = await atomicFileSink(path.join(dir, 'clusters.jsonl'));
    let assign: { doc: Uint32Array; cluster: Int32Array; rep: Float64Array; repId: string[]; size: Int32Array; sim: Float64Array; id: string[]; sstart: Float64Array };
    try {
      assign = job.against ? bestMatches(workDir, job, docOffset, docs, marker) : await clustersOf(workDir, job, docOffset, docs, total, marker, out);
      await out.close();
    } catch (e) {
      await out.abort();
      throw e;
    } finally {
      docs.close();
    }
    await writeColumns(path.join(dir, 'assign.bin'), 'assignment', job.id, {}, { ...assign });
    return marker;
  });
}

/** The clusters of the verified pairs: cluster lines written to `out`, the assignment returned. */
async function clustersOf(workDir: string, job: JobSpec, docOffset: Float64Array, docs: JobDocs, total: number, marker: ComponentsMarker, out: OutputSink) {
  const S = job.shards.length;
  const A = new Float64Array(total);
  const B = new Float64Array(total);
  const sims = new Float64Array(total);
  let n = 0;
  forEachVerified(workDir, job, (sa, a, sb, b, sim) => {
    A[n] = docOffset[sa]! + a;
    B[n] = docOffset[sb]! + b;
    sims[n] = sim;
    n++;
  });
  const pairCluster = new Int32Array(n);
  const { docs: members, order, start } = clustersOfPairs(A, B, n, pairCluster);
  const P = members.length;
  const K = start.length - 1;
  // Each clustered document's id, shard by shard (one shard's ids in memory at a time).
  const ids: (string | number)[] = new Array<string | number>(P);
  // What the keep policy ranks each clustered document by, when it ranks by a value.
  const rule = parseKeepPolicy(job.keep ?? 'first');
  const key = keepNeedsValues(rule) ? new Float64Array(P) : undefined;
  const keyLo = key ? new Float64Array(P) : undefined;
  const shard = new Uint32Array(P);
  const sstart = new Float64Array(S + 1);
  for (let p = 0, s = 0; p < P; p++) {
    while (members[p]! >= docOffset[s + 1]!) docs.drop(s++);
    shard[p] = s;
    sstart[s + 1]!++;
    const sd = docs.get(s);
    const d = members[p]! - docOffset[s]!;
    ids[p] = sd.id(d);
    if (key) {
      key[p] = keepKey(job, rule, sd, s, d);
      keyLo![p] = sd.keyLo(d);
    }
  }
  for (let s = 0; s < S; s++) sstart[s + 1]! += sstart[s]!;
  const doc = new Uint32Array(P);
  for (let p = 0; p < P; p++) doc[p] = members[p]! - docOffset[shard[p]!]!;
  const cluster = new Int32Array(P);
  const rep = new Float64Array(P);
  const repId: string[] = new Array<string>(P);
  const size = new Int32Array(P);
  const keptOf = new Float64Array(K);
  // The verified rule decides per document from the pairs, between positions among the clustered documents.
  const verified = (job.removal ?? 'cluster') === 'verified' ? verifiedOfPositions(members, A, B, sims, n, rule, key, keyLo) : undefined;
  for (let k = 0; k < K; k++) {
    // Members in global document order: ties of the policy go to the earliest, as in neardup dedup.
    const j0 = start[k]!;
    const c = chooseKept(rule, start[k + 1]! - j0, (x) => key![order[j0 + x]!]!, (x) => keyLo![order[j0 + x]!]!);
    const kept = c < 0 ? -1 : order[j0 + c]!;
    keptOf[k] = kept < 0 ? -1 : members[kept]!;
    const m: (string | number)[] = [];
    const verdicts: ClusterVerdicts | undefined = verified && { duplicateOf: [], similarity: [] };
    for (let j = j0; j < start[k + 1]!; j++) {
      const p = order[j]!;
      cluster[p] = k;
      size[p] = start[k + 1]! - j0;
      const r = verified ? verified.keptBy[p]! : kept;
      rep[p] = r < 0 ? -1 : members[r]!;
      repId[p] = r < 0 ? '' : String(ids[r]);
      m.push(ids[p]!);
      if (verdicts) {
        verdicts.duplicateOf.push(r === p || r < 0 ? null : ids[r]!);
        verdicts.similarity.push(r === p || r < 0 ? null : verified!.similarity[p]!);
      }
    }
    await out.write(formatCluster(k, m, kept < 0 ? null : ids[kept], verdicts));
  }
  // Each cluster is one unit of the estimate's standard error, as in neardup dedup (summed in cluster order).
  const acc = new RecallAccumulator(job.bands, job.rows, Math.max(1, K));
  for (let i = 0; i < n; i++) acc.add(sims[i]!, 1, pairCluster[i]!);
  marker.recall = acc.result();
  marker.clusters = K;
  marker.docsInClusters = P;
  marker.duplicates = P - K;
  // Only annotate's tag and dedup's --removed audit need similarities; the verified rule has them from its pairs.
  const tags = needsSimilarities(job);
  const sim = verified ? verified.similarity : tags ? await similaritiesToKept(workDir, job, docOffset, members, rep, keptOf, A, B, sims, pairCluster, n) : new Float64Array(P).fill(NaN);
  let largest = 0;
  for (let k = 0; k < K; k++) largest = Math.max(largest, start[k + 1]! - start[k]!);
  const clusterDrops = rule.kind === 'none' ? P : P - K;
  if (verified) marker.removal = { rule: 'verified', verifiedDrops: verified.dropped, clusterDrops };
  else {
    // The cluster rule's summary says what the verified rule would drop, and how far its dropped members can be.
    let low = Infinity;
    for (const x of sim) if (x < low) low = x;
    const verifiedDrops = verifiedOfPositions(members, A, B, sims, n, rule, key, keyLo).dropped;
    marker.removal = { rule: 'cluster', verifiedDrops, clusterDrops, largestCluster: largest, ...(low !== Infinity ? { lowestSimilarity: low } : {}) };
  }
  return { doc, cluster, rep, repId, size, sim, id: ids.map(String), sstart };
}

/**
 * Each clustered document's exact Jaccard to its kept member (NaN for the kept member and under
 * `--keep none`), as `neardup dedup` tags it: a verified pair's similarity when the two are one,
 * else computed from the two texts, read from their shards (only the shards that hold such documents).
 */
async function similaritiesToKept(workDir: string, job: JobSpec, docOffset: Float64Array, members: Float64Array, rep: Float64Array, keptOf: Float64Array, A: Float64Array, B: Float64Array, sims: Float64Array, pairCluster: Int32Array, n: number): Promise<Float64Array> {
  const P = members.length;
  const sim = new Float64Array(P).fill(NaN);
  const positionOf = (g: number): number => positionIn(members, g);
  for (let i = 0; i < n; i++) {
    const kept = keptOf[pairCluster[i]!]!;
    if (kept === A[i]) sim[positionOf(B[i]!)] = sims[i]!;
    else if (kept === B[i]) sim[positionOf(A[i]!)] = sims[i]!;
  }
  const ks = new KeptSimilarity(job.shingle, 'jaccard', (g, x) => (sim[positionOf(g)] = x));
  const shards = new Set<number>();
  for (let p = 0; p < P; p++) {
    if (rep[p]! < 0 || rep[p] === members[p] || !Number.isNaN(sim[p]!)) continue;
    ks.add(members[p]!, rep[p]!);
    shards.add(shardOf(docOffset, members[p]!));
    shards.add(shardOf(docOffset, rep[p]!));
  }
  for (const s of [...shards].sort((x, y) => x - y)) {
    const input = await openShard(workDir, job, s);
    let d = 0;
    for await (const r of input.records) {
      const g = docOffset[s]! + d++;
      if (ks.wants(g)) ks.feed(g, r.text);
    }
  }
  return sim;
}

/** The position of document g among the clustered documents `members` (ascending; g is one of them). */
function positionIn(members: Float64Array, g: number): number {
  let lo = 0;
  let hi = members.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (members[mid]! < g) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The verified removal rule over the clustered documents (`members`, ascending global numbers; pair
 * i joins A[i] and B[i]), ranked by the keep policy's `key` (by position) or in document order.
 */
function verifiedOfPositions(members: Float64Array, A: Float64Array, B: Float64Array, sims: Float64Array, n: number, rule: KeepRule, key: Float64Array | undefined, keyLo: Float64Array | undefined): Removal {
  const P = members.length;
  const positionOf = (g: number): number => positionIn(members, g);
  const a = new Int32Array(n);
  const b = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    a[i] = positionOf(A[i]!);
    b[i] = positionOf(B[i]!);
  }
  const ranking: KeepRanking = rule.kind === 'none' ? { none: true } : key ? { values: key, lo: keyLo, sign: rule.kind === 'longest' || rule.kind === 'max' ? 1 : -1 } : {};
  return verifiedRemoval(P, { units: P, count: n, a, b, similarity: sims }, ranking);
}

/**
 * What the keep policy ranks document d of shard s by, from the sign stage's docs.bin. Clustered
 * documents are asked in global order, so the first whose field is missing or not a number is the
 * input error (naming its shard, line and field), as in neardup dedup.
 */
function keepKey(job: JobSpec, rule: KeepRule, sd: ShardDocs, s: number, d: number): number {
  const status = sd.keyStatus(d) as ValueStatus;
  if (status !== ValueStatus.Ok) throw keepValueError(job.shards[s]!.path, sd.line(d), rule, status);
  return sd.key(d);
}

/** With --against: each corpus document with verified pairs and its most similar reference document (the first on ties). */
function bestMatches(workDir: string, job: JobSpec, docOffset: Float64Array, docs: JobDocs, marker: ComponentsMarker) {
  const S = job.shards.length;
  const rows: { shard: number; doc: number; rep: number; sim: number }[] = [];
  const refSeen = new Set<number>();
  // Pairs come sorted by (shard A, doc A): each NEW document's pairs are consecutive.
  let curShard = -1;
  let cur = -1;
  let best = -1;
  let bestSim = -1;
  // Each corpus document with its reference matches is one unit of the recall estimate.
  const acc = new RecallAccumulator(job.bands, job.rows);
  let unit = -1;
  let lastA = -1;
  let lasta = -1;
  const flush = (): void => {
    if (cur < 0) return;
    rows.push({ shard: curShard, doc: cur, rep: best, sim: bestSim });
    marker.duplicates++;
  };
  forEachVerified(workDir, job, (A, a, s, b, sim) => {
    if (A !== lastA || a !== lasta) {
      unit++;
      lastA = A;
      lasta = a;
    }
    acc.add(sim, 1, unit);
    if (job.shards[A]!.side !== 0) return;
    refSeen.add(docOffset[s]! + b);
    if (a !== cur || A !== curShard) {
      flush();
      curShard = A;
      cur = a;
      bestSim = -1;
    }
    if (sim > bestSim) {
      bestSim = sim;
      best = docOffset[s]! + b;
    }
  });
  flush();
  marker.recall = acc.result();
  marker.referenceMatched = refSeen.size;
  rows.sort((x, y) => x.shard - y.shard || x.doc - y.doc);
  const sstart = new Float64Array(S + 1);
  for (const r of rows) sstart[r.shard + 1]!++;
  for (let s = 0; s < S; s++) sstart[s + 1]! += sstart[s]!;
  const idOf = (g: number): string | number => {
    const s = shardOf(docOffset, g);
    return docs.get(s).id(g - docOffset[s]!);
  };
  return {
    doc: Uint32Array.from(rows, (r) => r.doc),
    cluster: new Int32Array(rows.length).fill(-1),
    rep: Float64Array.from(rows, (r) => r.rep),
    repId: rows.map((r) => String(idOf(r.rep))),
    size: new Int32Array(rows.length).fill(-1),
    sim: Float64Array.from(rows, (r) => r.sim),
    id: rows.map((r) => String(idOf(docOffset[r.shard]! + r.doc))),
    sstart,
  };
}
