/**
 * Stage 5, components (one task): connected components of the verified pairs, i.e. the clusters,
 * with union-find over global document numbers. Memory: 8 bytes per document of the job (parent and
 * cluster arrays) plus the members of clusters and their ids; the pairs stream through shard by
 * shard. (1B documents: ~8 GB in this one task; see docs/distributed.md for going past that.)
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
import { UnionFind, componentsOf } from '../dedup/clusters.js';
import { formatCluster } from '../io/write.js';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, requireMarker, taskDir, writeSynced } from './commit.js';
import { rangeOf, taskCount, type JobSpec } from './job.js';
import { numbering } from './shardInput.js';
import { JobDocs } from './docs.js';

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

/** Calls fn for every verified pair of the job, in global order (task by task). */
export function forEachVerified(workDir: string, job: JobSpec, fn: (shardA: number, docA: number, shardB: number, docB: number, sim: number) => void): void {
  for (let t = 0; t < taskCount(job, 'verify'); t++) {
    requireMarker(workDir, job, 'verify', t);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'verify', t), 'pairs.bin'), 'verified', job.id);
    try {
      const sa = f.u32('shardA');
      const a = f.u32('docA');
      const s = f.u32('shardB');
      const b = f.u32('docB');
      const sim = f.f64('similarity');
      for (let i = 0; i < a.length; i++) fn(sa[i]!, a[i]!, s[i]!, b[i]!, sim[i]!);
    } finally {
      f.close();
    }
  }
}

/** Runs the components task (idempotent; every verify task must have completed). */
export function runComponents(workDir: string, job: JobSpec, task = 0): Promise<ComponentsMarker> {
  if (task !== 0) throw new Error(`components has one task (0), not ${task}`);
  return commitTask<ComponentsMarker>(workDir, job, 'components', 0, async (dir) => {
    const S = job.shards.length;
    for (let t = 0; t < taskCount(job, 'verify'); t++) requireMarker(workDir, job, 'verify', t);
    const num = numbering(workDir, job);
    const { docOffset } = num;
    const docs = new JobDocs(workDir, job, num);
    const rows: { shard: number; doc: number; cluster: number; rep: number; repId: string }[] = [];
    const idOf = (g: number): string | number => {
      const s = shardOf(docOffset, g);
      return docs.get(s).id(g - docOffset[s]!);
    };
    const marker: ComponentsMarker = { clusters: 0, docsInClusters: 0, duplicates: 0 };
    let clusterLines = '';
    try {
      if (!job.against) {
        const N = docOffset[S]!;
        const uf = new UnionFind(N);
        forEachVerified(workDir, job, (A, a, s, b) => uf.union(docOffset[A]! + a, docOffset[s]! + b));
        const { clusters } = componentsOf(uf, N);
        const lines: string[] = [];
        clusters.forEach((c, k) => {
          const ids = c.members.map(idOf);
          lines.push(formatCluster(k, ids));
          c.members.forEach((m, j) => {
            const s = shardOf(docOffset, m);
            rows.push({ shard: s, doc: m - docOffset[s]!, cluster: k, rep: c.members[0]!, repId: String(ids[0]) });
            void j;
          });
          marker.docsInClusters += c.members.length;
          marker.duplicates += c.members.length - 1;
        });
        marker.clusters = clusters.length;
        clusterLines = lines.join('');
      } else {
        // Pairs come sorted by (shard A, doc A): each NEW document's pairs are consecutive.
        let curShard = -1;
        let cur = -1;
        let best = -1;
        let bestSim = -1;
        const flush = (): void => {
          if (cur < 0) return;
          rows.push({ shard: curShard, doc: cur, cluster: -1, rep: best, repId: String(idOf(best)) });
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
      }
    } finally {
      docs.close();
    }
    rows.sort((x, y) => x.shard - y.shard || x.doc - y.doc);
    const sstart = new Float64Array(S + 1);
    for (const r of rows) sstart[r.shard + 1]!++;
    for (let s = 0; s < S; s++) sstart[s + 1]! += sstart[s]!;
    await writeColumns(path.join(dir, 'assign.bin'), 'assignment', job.id, {}, {
      doc: Uint32Array.from(rows, (r) => r.doc),
      cluster: Int32Array.from(rows, (r) => r.cluster),
      rep: Float64Array.from(rows, (r) => r.rep),
      repId: rows.map((r) => r.repId),
      sstart,
    });
    await writeSynced(path.join(dir, 'clusters.jsonl'), clusterLines);
    return marker;
  });
}
