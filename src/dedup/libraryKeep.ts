/**
 * The library's keep policy (`dedup(docs, { keep, removal })`): the ranking of the documents from
 * their texts, or from the records' fields or a compare function, as the CLI ranks them from the
 * input's fields (keepValues.ts), and the removal decided with it.
 * @module
 */
import type { Cluster } from '../cluster/clusters.js';
import { chooseKept, keepNeedsValues, keepValue, parseKeepPolicy, ValueStatus } from '../cluster/keepPolicy.js';
import type { DedupOptions, DedupResult, KeepCompare } from './options.js';
import type { DocRecord } from './records.js';
import { checkRemovalRule, type KeepRanking } from '../cluster/removal.js';
import { decideRemoval } from './verifiedGraph.js';

/** Whether `keep` ranks documents by something other than input order. */
export function libraryKeepNeedsTexts(options: Pick<DedupOptions, 'keep' | 'representative'>): boolean {
  const { keep } = options;
  return options.representative === 'longest' || typeof keep === 'function' || (keep !== undefined && keepNeedsValues(parseKeepPolicy(keep)));
}

/**
 * The ranking of the clustered documents under `keep`: `texts` for lengths, `records` for fields
 * and a compare function. A field that is missing or not a number on a clustered document is a
 * RangeError naming the document and the field.
 */
export function libraryRanking(
  clusters: readonly Cluster[],
  n: number,
  keep: DedupOptions['keep'],
  from: { texts?: readonly string[]; records?: readonly DocRecord[] },
): KeepRanking {
  const { texts, records } = from;
  if (keep === undefined) return {};
  if (typeof keep === 'function') {
    if (!records) throw new TypeError('a keep compare function compares records: pass { id, text } records to dedup()');
    const values = new Float64Array(n);
    const docs: number[] = [];
    for (const c of clusters) for (const m of c.members) docs.push(m);
    docs.sort((x, y) => x - y);
    const view = (i: number): Parameters<KeepCompare>[0] => ({ ...records[i]!, id: String(records[i]!.id) });
    const order = docs.slice().sort((x, y) => keep(view(x), view(y)) || x - y);
    order.forEach((d, k) => (values[d] = -k));
    return { values, sign: 1 };
  }
  const rule = parseKeepPolicy(keep);
  if (rule.kind === 'none') return { none: true };
  if (!keepNeedsValues(rule)) return {};
  const values = new Float64Array(n);
  const lo = new Float64Array(n);
  for (const c of clusters) {
    for (const m of c.members) {
      let field: string | undefined;
      if (rule.field !== undefined) {
        if (!records) throw new TypeError(`keep "${keep}" ranks by a field of the records: pass { id, text, ${rule.field} } records to dedup()`);
        const raw = records[m]![rule.field];
        field = raw === undefined || raw === null ? undefined : String(raw);
      }
      const v = keepValue(rule, texts![m]!, field);
      if (v.status !== ValueStatus.Ok) {
        const what = v.status === ValueStatus.Missing ? 'has no value' : 'is not a number or an ISO date';
        throw new RangeError(
          `dedup(): field "${rule.field}" of document ${m} (id "${String(records![m]!.id)}") ${what}: keep "${keep}" ranks near duplicates by it`,
        );
      }
      values[m] = v.value;
      lo[m] = v.lo;
    }
  }
  return { values, lo, sign: rule.kind === 'longest' || rule.kind === 'max' ? 1 : -1 };
}

/**
 * Applies the library's keep policy and removal rule to `result`: under `cluster`, each cluster's
 * representative becomes its best-ranked member (unless a representative policy chose one); then
 * `result.removal` is decided.
 */
export function applyLibraryKeep(
  result: DedupResult,
  options: DedupOptions,
  texts: readonly string[] | undefined,
  records: readonly DocRecord[] | undefined,
): void {
  const rule = checkRemovalRule(options.removal);
  const n = result.clusterOf.length;
  // representative 'longest' is the keep policy of that name.
  const keep = options.keep ?? (options.representative === 'longest' ? 'longest' : undefined);
  const ranking = libraryRanking(result.clusters, n, keep, { texts, records });
  if (rule === 'cluster' && (options.representative ?? 'first') === 'first' && ranking.values) {
    const { values, lo, sign = 1 } = ranking;
    for (const c of result.clusters)
      c.representative = c.members[
        chooseKept({ kind: sign > 0 ? 'max' : 'min' }, c.members.length, (j) => values[c.members[j]!]!, (j) => (lo ? lo[c.members[j]!]! : 0))
      ]!;
  }
  if (rule === 'cluster' && ranking.none) { for (const c of result.clusters) c.representative = -1; }
  decideRemoval(result, rule, ranking);
}
