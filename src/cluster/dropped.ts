/**
 * What a deduplication drops, in one process: each clustered document's similarity to its
 * cluster's kept member (the `similarity` tag), and the rows of the `--removed` audit. The memory
 * route gives the texts it holds; the streaming route reads the input once more.
 * @module
 */
import { openInput, type ReadOptions } from '../io/read/read.js';
import type { AuditRow, AuditWriter } from '../io/write/audit.js';
import type { ShingleOptions } from '../text/shingler.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';
import type { Cluster } from './clusters.js';
import { KeptSimilarity } from './keptSimilarity.js';
import type { Removal } from './removal.js';

/** The kept member of a cluster: its representative (-1: none kept, `--keep none`), else its first member. */
export function keptOf(c: Cluster): number {
  return c.representative ?? c.members[0]!;
}

/** Where {@link keptSimilarities} finds the documents' texts. */
export interface KeptTexts {
  /** Documents in the run. */
  count: number;
  /** Their texts, when they are in memory. */
  texts?: readonly string[] | undefined;
  /** Otherwise this input, read again with `read` (its documents numbered as in the run). */
  file: string;
  read: ReadOptions;
}

/** How {@link keptSimilarities} compares documents: the run's shingles, measure and fingerprint width (default 32). */
export interface KeptMeasure {
  shingle?: ShingleOptions | undefined;
  measure?: SetMeasure | undefined;
  fingerprintBits?: 32 | 64 | undefined;
}

/**
 * The similarity of each document to its cluster's kept member, NaN for a kept member, a document
 * in no cluster, and every member under `--keep none`.
 */
export async function keptSimilarities(clusters: readonly Cluster[], docs: KeptTexts, how: KeptMeasure = {}): Promise<Float64Array> {
  const { count, texts, file, read } = docs;
  const sims = new Float64Array(count).fill(NaN);
  const ks = new KeptSimilarity(how.shingle, how.measure, (d, s) => (sims[d] = s), how.fingerprintBits ?? 32);
  for (const c of clusters) {
    const k = keptOf(c);
    if (k < 0) continue;
    for (const m of c.members) if (m !== k) ks.add(m, k);
  }
  if (ks.size === 0) return sims;
  if (texts && texts.length === count) {
    for (let i = 0; i < count; i++) if (ks.wants(i)) ks.feed(i, texts[i]!);
  } else {
    const input = await openInput(file, { ...read, raw: false });
    let i = 0;
    for await (const r of input.records) {
      if (i >= count) break;
      if (ks.wants(i)) ks.feed(i, r.text);
      i++;
    }
    if (i !== count) throw new Error(`${file} changed while it was being read (${i} records instead of ${count})`);
  }
  return sims;
}

/** What {@link writeDropped} lists: a run's clusters, its removal, the similarities to use, and each document's id. */
export interface DroppedRows {
  clusters: readonly Cluster[];
  removal: Removal;
  sims: Float64Array;
  idOf: (i: number) => string | number;
}

/**
 * Writes one audit row per document `--output dedup` drops, in document order, as `removal` says
 * (its similarities, or `sims` when given: the cluster rule's, computed from the texts). Returns the
 * rows written.
 */
export async function writeDropped(audit: AuditWriter, of: DroppedRows): Promise<number> {
  const { clusters, removal, sims, idOf } = of;
  const count = removal.keptBy.length;
  const clusterNo = new Int32Array(count).fill(-1);
  clusters.forEach((c, k) => {
    for (const m of c.members) clusterNo[m] = k;
  });
  let n = 0;
  for (let i = 0; i < count; i++) {
    const kept = removal.keptBy[i]!;
    if (kept === i) continue;
    const row: AuditRow = {
      id: String(idOf(i)),
      keptId: kept < 0 ? null : String(idOf(kept)),
      similarity: Number.isNaN(sims[i]!) ? null : sims[i]!,
      cluster: clusterNo[i]!,
    };
    await audit.write(row);
    n++;
  }
  return n;
}
