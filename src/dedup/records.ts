/**
 * What `dedup()` accepts: an iterable of texts, or of `{ id, text }` records whose ids the result
 * then reports. A bare string is refused (iterating it would make each character a document).
 * @module
 */
import type { ScoredPair } from '../similarity/bruteForce.js';
import type { Cluster } from '../cluster/clusters.js';
import type { DedupResult } from './options.js';

/** A document with its own id, for `dedup(records)`. */
export interface DocRecord {
  /** The document's id, unique in the input (a number is reported as its decimal string). */
  id: string | number;
  /** The document's text. */
  text: string;
  /** Other fields, read by `keep: 'max:FIELD'` / `'min:FIELD'` and a keep compare function. */
  [field: string]: unknown;
}

/** A verified pair with the ids of its documents. */
export interface IdPair extends ScoredPair {
  /** The id of document `a`. */
  idA: string;
  /** The id of document `b`. */
  idB: string;
}

/** A cluster with the ids of its members. */
export interface IdCluster extends Cluster {
  /** The ids of `members`, in the same order. */
  memberIds: string[];
  /** The id of the representative (the member a deduplicated copy keeps). */
  representativeId: string;
}

/** A document a deduplicated copy drops, with the kept document it duplicates. */
export interface RemovedRecord {
  /** The dropped document's id. */
  id: string;
  /** The kept document's id; null when nothing of its cluster is kept (`keep: 'none'`). */
  duplicateOf: string | null;
  /** Its similarity to that document (verified under the default removal rule); null when not known. */
  similarity: number | null;
}

/** The result of `dedup(records)`: the result of `dedup(texts)` with the records' ids. */
export interface DedupRecordsResult extends DedupResult {
  /** The documents a deduplicated copy drops, in input order (from `removal`). */
  removed: RemovedRecord[];
  /** `ids[i]` is the id of document i (the i-th record). */
  ids: string[];
  /** Verified pairs with the ids of both documents. */
  pairs: IdPair[];
  /** Clusters with the ids of their members. */
  clusters: IdCluster[];
}

/**
 * The texts of `docs` and, for records, their ids. Throws a TypeError for a bare string, for an
 * element that is neither a string nor an `{ id, text }` record, and for a mix of both; a
 * RangeError for a repeated id.
 */
export function textsOf(docs: Iterable<string | DocRecord>, what = 'dedup()'): { texts: Iterable<string>; ids: string[] | undefined; records?: DocRecord[] } {
  if (typeof docs === 'string') {
    throw new TypeError(
      `${what} takes an iterable of texts or of { id, text } records, not a string: a string would be read as one document per character (pass [text])`,
    );
  }
  if (docs == null || typeof (docs as Iterable<unknown>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`${what} takes an iterable of texts or of { id, text } records, got ${docs === null ? 'null' : typeof docs}`);
  }
  let list: (string | DocRecord)[];
  if (Array.isArray(docs)) list = docs as (string | DocRecord)[];
  else {
    // An iterable that is not an array: texts stream through (checked one by one), records are listed.
    const it = docs[Symbol.iterator]();
    const head = it.next();
    if (head.done) return { texts: [], ids: undefined };
    if (typeof head.value === 'string') return { texts: checkedTexts(head.value, it, what), ids: undefined };
    list = [head.value];
    for (let n = it.next(); !n.done; n = it.next()) list.push(n.value);
  }
  const first = list[0];
  if (first === undefined || typeof first === 'string') {
    for (let i = 0; i < list.length; i++)
      if (typeof list[i] !== 'string') throw new TypeError(`${what}: document ${i} is ${describe(list[i])}, not a string like document 0`);
    return { texts: list as string[], ids: undefined };
  }
  const texts: string[] = new Array(list.length);
  const ids: string[] = new Array(list.length);
  const seen = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    const r = list[i] as DocRecord;
    if (r === null || typeof r !== 'object' || typeof r.text !== 'string' || (typeof r.id !== 'string' && typeof r.id !== 'number')) {
      throw new TypeError(`${what}: document ${i} is ${describe(r)}, not an { id, text } record (id a string or number, text a string) like document 0`);
    }
    const id = String(r.id);
    const earlier = seen.get(id);
    if (earlier !== undefined) throw new RangeError(`${what}: id "${id}" of document ${i} is also the id of document ${earlier}; ids must be unique`);
    seen.set(id, i);
    texts[i] = r.text;
    ids[i] = id;
  }
  return { texts, ids, records: list as DocRecord[] };
}

function* checkedTexts(first: string, rest: Iterator<string | DocRecord>, what: string): Generator<string> {
  yield first;
  let i = 1;
  for (let n = rest.next(); !n.done; n = rest.next(), i++) {
    if (typeof n.value !== 'string') throw new TypeError(`${what}: document ${i} is ${describe(n.value)}, not a string like document 0`);
    yield n.value;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'object') return `an object with keys ${JSON.stringify(Object.keys(v as object))}`;
  return `a ${typeof v}`;
}

/** `result` with the ids of its documents (the same object, its pairs and clusters extended in place). */
export function withIds(result: DedupResult, ids: string[]): DedupRecordsResult {
  const r = result as DedupRecordsResult;
  r.ids = ids;
  for (const p of r.pairs) {
    p.idA = ids[p.a]!;
    p.idB = ids[p.b]!;
  }
  for (const c of r.clusters) {
    c.memberIds = c.members.map((m) => ids[m]!);
    c.representativeId = ids[c.representative ?? c.members[0]!]!;
  }
  r.removed = [];
  const removal = r.removal;
  if (removal) {
    for (let i = 0; i < removal.keptBy.length; i++) {
      const k = removal.keptBy[i]!;
      if (k === i) continue;
      const s = removal.similarity[i]!;
      r.removed.push({ id: ids[i]!, duplicateOf: k < 0 ? null : ids[k]!, similarity: Number.isNaN(s) ? null : s });
    }
  }
  return r;
}
