/**
 * The batch pipeline: shingle → sign → LSH candidates → verify → cluster. {@link dedup} runs the
 * steps: ./signedGroups.ts signs and folds identical documents, ./verifyGroups.ts lists and checks
 * candidates, {@link finishDedup} clusters and counts.
 * @module
 */
import { createTextSigner } from '../sketch/textSigner.js';
import { chooseBands } from '../lsh/params.js';
import { SignedGroups } from './signedGroups.js';
import { verifyGroups } from './verifyGroups.js';
import { dedupKinds, needsKinds } from './kinds.js';
import { resolveDedupOptions, type DedupOptions, type DedupResult } from './options.js';
import { finishDedup } from './finish.js';
import { textsOf, withIds, type DocRecord, type DedupRecordsResult } from './records.js';
import { applyLibraryKeep, libraryKeepNeedsTexts } from './libraryKeep.js';
import { checkRemovalRule } from '../cluster/removal.js';

export { DEDUP_DEFAULTS, resolveDedupOptions, type CandidateMethod, type DedupOptions, type DedupResult, type DedupStats, type VerifyMode } from './options.js';
export { finishDedup } from './finish.js';
export type { DocRecord, IdPair, IdCluster, DedupRecordsResult, RemovedRecord } from './records.js';

/**
 * Finds the near-duplicate pairs and clusters of a corpus: an iterable of texts (document i is the
 * i-th text), or of `{ id, text }` records, whose result also carries the ids (`ids`, and `idA`/`idB`
 * on each pair, `memberIds`/`representativeId` on each cluster). Deterministic: the same texts and
 * options give the same output. Identical documents go through LSH and verification once (see
 * `stats.copies`); the result lists their pairs as a full run would.
 * Throws a `TooManyPairsError` rather than hold more than `maxPairs` pairs, and a TypeError for a
 * bare string (it would be one document per character: pass `[text]`) or an element of another type.
 * @example
 * ```ts
 * const { pairs } = dedup([{ id: 'ad1', text: '…' }, { id: 'ad2', text: '…' }], { threshold: 0.8 });
 * for (const p of pairs) console.log(p.idA, p.idB, p.similarity);
 * ```
 */
export function dedup(records: Iterable<DocRecord>, options?: DedupOptions): DedupRecordsResult;
export function dedup(texts: Iterable<string>, options?: DedupOptions): DedupResult;
export function dedup(docs: Iterable<string> | Iterable<DocRecord>, options: DedupOptions = {}): DedupResult | DedupRecordsResult {
  const found = textsOf(docs as Iterable<string | DocRecord>);
  const { ids, records } = found;
  checkRemovalPolicy(options);
  // A keep policy ranking by length reads the texts again: a stream of texts is listed first.
  const texts = libraryKeepNeedsTexts(options) && !Array.isArray(found.texts) ? [...found.texts] : found.texts;
  const result = needsKinds(options) ? dedupKinds(texts, options, dedupTexts) : dedupTexts(texts, options);
  applyLibraryKeep(result, options, Array.isArray(texts) ? (texts as string[]) : undefined, records);
  return ids ? withIds(result, ids) : result;
}

/**
 * Refuses the cluster policies that choose one survivor per cluster under the verified removal
 * rule, where what is kept follows from the verified pairs instead.
 */
export function checkRemovalPolicy(options: Pick<DedupOptions, 'removal' | 'clusters' | 'representative'>): void {
  if (checkRemovalRule(options.removal) !== 'verified') return;
  if ((options.clusters ?? 'components') !== 'components')
    throw new RangeError(
      `clusters "${options.clusters}" chooses one survivor per cluster: it needs removal: 'cluster' (the verified rule keeps every document no kept document duplicates)`,
    );
  if (options.representative === 'central')
    throw new RangeError(
      `representative "central" chooses one survivor per cluster: it needs removal: 'cluster' (under the verified rule, keep orders the documents)`,
    );
}

/** {@link dedup} of texts with the plain MinHash-LSH pipeline. */
function dedupTexts(texts: Iterable<string>, options: DedupOptions): DedupResult {
  const t0 = performance.now();
  const { threshold, verify, keepPairs, maxPairs } = resolveDedupOptions(options);
  // The fused signer gives the same sets and signatures as createShingler + createMinHasher, faster.
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const expected = Array.isArray(texts) ? texts.length : 1024;

  // 1. Sign, folding identical documents into groups.
  const signed = new SignedGroups(signer, verify, expected);
  for (const text of texts) {
    const d = signed.docs;
    signed.add(text);
    if (options.onProgress && (d & 1023) === 0) options.onProgress('sign', d, 0);
  }
  const groups = signed.groups();
  const t1 = performance.now();

  // 2. LSH candidates among the groups, verified.
  const v = verifyGroups(signed, {
    threshold,
    verify,
    bands,
    groups,
    keepPairs,
    maxPairs,
    bucketwise: options.removal === 'cluster',
    onProgress: options.onProgress,
  }, t1);

  // 3. Pairs back to documents, clusters, counters.
  const run = {
    n: signed.docs,
    pairs: v.pairs,
    empty: signed.empty,
    bands,
    chars: signed.chars,
    cstats: v.cstats,
    groups,
    keepPairs,
    maxPairs,
    counts: v.counts,
    estimateRecall: verify === 'exact',
  };
  // Bucket-wise clustering interleaves LSH and verification: its time is counted as verification.
  // Sets built during verification count as shingling, not verification.
  return finishDedup(run, { t0, t1, t2: v.t2, shingle: signed.shingleMs, sign: signed.signMs, shingleAfterT2: signed.shingleMs - v.shingledAtT2 });
}
