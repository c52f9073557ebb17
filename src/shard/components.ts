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
 *   (float64: global number of the representative, or of the best reference match), repId (string),
 *   grouped by shard with `sstart` (S + 1), ascending doc within a shard. Documents in no cluster
 *   (no match) are absent.
 * @module
 */
import path from 'node:path';
import { clustersOfPairs } from '../dedup/clusters.js';
import { atomicFileSink, type OutputSink } from '../io/output.js';
import { formatCluster } from '../io/write.js';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, requireMarker, taskDir } from './commit.js';
import { rangeOf, taskCount, type JobSpec } from './job.js';
import { numbering } from './shardInput.js';
import { forEachVerified } from './verified.js';
import { jobDocs, type ShardDocs } from './docs.js';
import type { ShardFiles } from './perShard.js';

/** The components task's marker. */
export interface ComponentsMarker {
  /** Clusters of ≥ 2 documents (0 with --against). */
  clusters: number;
  /** Documents in clusters. */
  docsInClusters: number;
  /** Documents beyond the first of each cluster; with --against, corpus documents with a reference match. */
  duplicates: number;
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
    let assign: { doc: Uint32Array; cluster: Int32Array; rep: Float64Array; repId: string[]; sstart: Float64Array };
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
async function clustersOf(workDir: string, job: JobSpec, docOffset: Float64Array, docs: ShardFiles<ShardDocs>, total: number, marker: ComponentsMarker, out: OutputSink) {
  const S = job.shards.length;
  const A = new Float64Array(total);
  const B = new Float64Array(total);
  let n = 0;
  forEachVerified(workDir, job, (sa, a, sb, b) => {
    A[n] = docOffset[sa]! + a;
    B[n] = docOffset[sb]! + b;
    n++;
  });
  const { docs: members, order, start } = clustersOfPairs(A, B, n);
  const P = members.length;
  const K = start.length - 1;
  // Each clustered document's id, shard by shard (one shard's ids in memory at a time).
  const ids: (string | number)[] = new Array<string | number>(P);
  const shard = new Uint32Array(P);
  const sstart = new Float64Array(S + 1);
  for (let p = 0, s = 0; p < P; p++) {
    while (members[p]! >= docOffset[s + 1]!) docs.drop(s++);
    shard[p] = s;
    sstart[s + 1]!++;
    ids[p] = docs.get(s).id(members[p]! - docOffset[s]!);
  }
  for (let s = 0; s < S; s++) sstart[s + 1]! += sstart[s]!;
  const doc = new Uint32Array(P);
  for (let p = 0; p < P; p++) doc[p] = members[p]! - docOffset[shard[p]!]!;
  const cluster = new Int32Array(P);
  const rep = new Float64Array(P);
  const repId: string[] = new Array<string>(P);
  for (let k = 0; k < K; k++) {
    const first = order[start[k]!]!;
    const m: (string | number)[] = [];
    for (let j = start[k]!; j < start[k + 1]!; j++) {
      const p = order[j]!;
      cluster[p] = k;
      rep[p] = members[first]!;
      repId[p] = String(ids[first]);
      m.push(ids[p]!);
    }
    await out.write(formatCluster(k, m));
  }
  marker.clusters = K;
  marker.docsInClusters = P;
  marker.duplicates = P - K;
  return { doc, cluster, rep, repId, sstart };
}

/** With --against: each corpus document with verified pairs and its most similar reference document (the first on ties). */
function bestMatches(workDir: string, job: JobSpec, docOffset: Float64Array, docs: ShardFiles<ShardDocs>, marker: ComponentsMarker) {
  const S = job.shards.length;
  const rows: { shard: number; doc: number; rep: number }[] = [];
  // Pairs come sorted by (shard A, doc A): each NEW document's pairs are consecutive.
  let curShard = -1;
  let cur = -1;
  let best = -1;
  let bestSim = -1;
  const flush = (): void => {
    if (cur < 0) return;
    rows.push({ shard: curShard, doc: cur, rep: best });
    marker.duplicates++;
  };
  forEachVerified(workDir, job, (A, a, s, b, sim) => {
    if (job.shards[A]!.side !== 0) return;
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
    sstart,
  };
}
