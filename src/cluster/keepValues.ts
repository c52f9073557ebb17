/**
 * A keep policy applied to the clusters of one process's run: one more pass over the input reads
 * what the policy ranks by (text length, or a field), and each cluster's kept member is chosen.
 * The memory and streaming routes both run it, so they keep the same documents.
 * @module
 */
import { openInput, type ReadOptions } from '../io/read/read.js';
import { recordWhere } from '../io/read/record.js';
import { shardName } from '../io/read/shards.js';
import type { Cluster } from './clusters.js';
import { chooseKept, keepNeedsValues, keepReadOptions, keepReadError, keepValue, keepValueError, ValueStatus, type KeepRule } from './keepPolicy.js';
import type { KeepRanking } from './removal.js';

/** Where a keep policy reads its values: the run's input, read again as the run read it. */
export interface KeepSource {
  /** The file the run read (its documents numbered as in the run). */
  file: string;
  read: ReadOptions;
  /** Told the records read so far (every 1024) during the pass. */
  onProgress?: ((done: number) => void) | undefined;
}

/**
 * Ranks the clustered documents (of the run's `count`) under `rule` for keeping, and sets
 * `representative` of each cluster to its best-ranked member (-1 for `none`), the member the
 * cluster removal rule keeps. The source is read again when the rule ranks by a value. A clustered
 * document whose field is missing or not a number is an input error naming the file, line and
 * field (the first in input order).
 */
export async function applyKeep(source: KeepSource, clusters: Cluster[], count: number, rule: KeepRule): Promise<KeepRanking> {
  const { file } = source;
  // source: the first member (inputs are numbered in the order given), as chooseKept says.
  if (rule.kind === 'first' || rule.kind === 'source') return {};
  if (!keepNeedsValues(rule)) {
    for (const c of clusters) c.representative = -1;
    return { none: true };
  }
  const clustered = new Uint8Array(count);
  for (const c of clusters) for (const m of c.members) clustered[m] = 1;
  const values = new Float64Array(count);
  const lo = new Float64Array(count);
  let read_: number;
  try {
    read_ = await rank(source, rule, clustered, { values, lo });
  } catch (e) {
    throw keepReadError(e, rule);
  }
  if (read_ !== count) throw new Error(`${file} changed while it was being read (${read_} records instead of ${count})`);
  for (const c of clusters) {
    const j = chooseKept(rule, c.members.length, (x) => values[c.members[x]!]!, (x) => lo[c.members[x]!]!);
    c.representative = c.members[j]!;
  }
  return { values, lo, sign: rule.kind === 'longest' || rule.kind === 'max' ? 1 : -1 };
}

/** Reads the values of the clustered documents into `values` (and `lo`); returns the number of records read (at most values.length + 1). */
async function rank(source: KeepSource, rule: KeepRule, clustered: Uint8Array, into: { values: Float64Array; lo: Float64Array }): Promise<number> {
  const { file, read, onProgress } = source;
  const { values, lo } = into;
  const input = await openInput(file, keepReadOptions({ ...read, raw: false }, rule));
  let i = 0;
  for await (const r of input.records) {
    if (i >= values.length) return i + 1;
    if (onProgress && (i & 1023) === 0) onProgress(i);
    if (clustered[i]) {
      const v = keepValue(rule, r.text, r.title);
      if (v.status !== ValueStatus.Ok) {
        const name = r.shard !== undefined && input.shards ? shardName(input.shards.shards[r.shard]!) : input.name;
        const { line, position } = recordWhere(r);
        throw keepValueError({ file: name, line, position }, rule, v.status);
      }
      values[i] = v.value;
      lo[i] = v.lo;
    }
    i++;
  }
  onProgress?.(i);
  return i;
}
