/**
 * neardup: near-duplicate document detection with shingles, MinHash and LSH.
 * @packageDocumentation
 */
export { normalize, makeNormalizer, type NormalizeOptions, type NormalizePreset } from './text/normalize.js';
export { charShingles } from './text/charShingles.js';
export { wordShingles } from './text/wordShingles.js';
export { spotShingles } from './text/spotShingles.js';
export { tokens, tokenHashes } from './text/tokens.js';
export { stopwordList, stopwordHashes } from './text/stopwords.js';
export { toSortedSet } from './text/fingerprintSet.js';
export { createShingler, fingerprintSet, defaultK, type Shingler, type ShingleKind, type ShingleOptions } from './text/shingler.js';
export { fmix32, splitmix32 } from './hash/mix.js';
export { murmur3Utf16, murmur3Words } from './hash/murmur3.js';
export { createMinHasher, estimateJaccard, DEFAULT_NUM_PERM, type MinHasher, type MinHashMethod, type MinHashOptions } from './sketch/minhash.js';
export { SignatureMatrix } from './sketch/signatureMatrix.js';
export {
  chooseBands,
  candidateProbability,
  falsePositiveArea,
  falseNegativeArea,
  type BandChoice,
  type ChooseBandsOptions,
} from './lsh/params.js';
export { bandKeys } from './lsh/bandKeys.js';
export { lshCandidates, type CandidateStats } from './lsh/candidates.js';
export { jaccard, jaccardAtLeast, intersectionSize } from './similarity/jaccard.js';
export { commonPassages, type Passage, type PassageOptions, type PassageResult, type PassageFold } from './similarity/passages.js';
export { bruteForcePairs, type ScoredPair, type BruteForceOptions } from './similarity/bruteForce.js';
export { dedup, DEDUP_DEFAULTS, type DedupOptions, type DedupResult, type DedupStats, type VerifyMode } from './dedup/dedup.js';
export { clusterPairs, UnionFind, type Cluster } from './dedup/clusters.js';
export { TooManyPairsError } from './lsh/tooManyPairs.js';
export { createTextSigner, type TextSigner, type TextSignerOptions } from './sketch/textSigner.js';
export { createSymbolizer, type Symbolizer } from './text/symbolizer.js';
export { candidatesFromBandKeys } from './lsh/candidates.js';
export { SignPool, defaultWorkers, type SignPoolOptions } from './parallel/signPool.js';
export { signCorpusParallel, type SignCorpusOptions } from './parallel/signCorpus.js';
export { dedupStream, type DocSource, type StreamDedupOptions, type StreamDedupExtra } from './dedup/streamDedup.js';
export { readLineBatches, type ReadLinesOptions } from './dedup/lineSource.js';
export { openInput, type OpenedInput, type ReadOptions } from './io/read.js';
export type { InputRecord } from './io/record.js';
export { INPUT_FORMATS, type InputFormat } from './io/formats.js';
export { InputError, UsageError } from './io/errors.js';
export { atomicFileSink, openOutput, type OutputSink } from './io/output.js';
export { htmlToText } from './io/html.js';
export { NearDupIndex, resolveManifest, type NearDupIndexOptions, type Match, type NewDocument, type IndexedDocument, type QueryOptions, type IndexManifest, type IndexStats, type OnlineVerify } from './online/nearDupIndex.js';
export { KeyMaker, DEFAULT_FOREST, type ForestOptions } from './online/keys.js';
export type { NearDupStore, StoredDoc, PutEntry, StoreManifest } from './store/types.js';
export { MemoryStore } from './store/memory.js';
export { openStore } from './store/open.js';
export { StoreUnavailableError } from './store/errors.js';
export { checkIndex, type CheckReport, type CheckOptions } from './online/check.js';
export * as format from './sketch/format.js';
export { buildReportData, type ReportData, type ReportDataOptions, type HistogramBin, type ReportMember, type ReportComparison } from './report/data.js';
export { renderReportHtml, type RenderReportOptions } from './report/html.js';
export { prefixJoin, prefixJoin64, type PrefixJoinOptions, type PrefixJoinResult, type PrefixJoinStats, type SetMeasure } from './similarity/prefixJoin.js';
export { containment, maxContainment, bruteForceContainment } from './similarity/containment.js';
export { exactDuplicates, type ExactDuplicatesOptions } from './dedup/exactDups.js';
export { clusterWithPolicy, type ClusterMode, type RepresentativePolicy, type ClusterPolicyOptions } from './dedup/clusterPolicy.js';
export { autoCandidates, type CandidateMethod } from './dedup/kinds.js';
export { sketchCandidates, sketchKeys } from './lsh/sketchCandidates.js';
export { createSet64 } from './text/fingerprint64.js';
