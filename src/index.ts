/**
 * neardup: near-duplicate document detection with shingles, MinHash and LSH.
 *
 * This is the public API (docs/api.md): batch dedup, the online index and its stores, the shingler
 * and hasher factories, similarity and the LSH parameter maths, input readers and output writers,
 * the report, and the error classes. Building blocks below that (hash mixers, band keys, union-find,
 * worker pools, kernels) are in `neardup/internals` (src/internals.ts), with no stability promise.
 * @packageDocumentation
 */
// Node's types appear in the API (streams, Buffer): the package depends on @types/node, and this
// directive (kept in the emitted .d.ts) loads them for a consumer whose tsconfig lists no `types`.
/// <reference types="node" preserve="true" />
// Batch deduplication: in memory, and streamed (two passes over a re-readable source).
export {
  dedup,
  DEDUP_DEFAULTS,
  type DedupOptions,
  type DedupResult,
  type DedupStats,
  type VerifyMode,
  type DocRecord,
  type IdPair,
  type IdCluster,
  type DedupRecordsResult,
  type RemovedRecord,
} from './dedup/dedup.js';
export { REMOVAL_RULES, type Removal, type RemovalRule } from './cluster/removal.js';
export type { KeepCompare } from './dedup/options.js';
export type { EngineOptions } from './engine/config.js';
export { dedupFile, type DedupFileOptions, type DedupFileResult } from './dedup/dedupFile.js';
export { dedupSpans, type SpanRecord, type SpansDocument, type SpansAuditRow, type SpansResult } from './spans/dedupSpans.js';
export { dedupSpansFile, type SpansFileOptions, type SpansFileResult } from './spans/file/file.js';
export { LENGTH_UNITS, SPANS_DEFAULTS, type LengthUnit, type SpansOptions } from './spans/options.js';
export type { CutRange, SpansSummary, TopUnit } from './spans/deduper.js';
export { UNIT_KINDS, type UnitKind } from './spans/units.js';
export { dedupStream, type DocSource, type StreamDedupOptions, type StreamDedupExtra } from './dedup/streamDedup.js';
export { clusterPairs, type Cluster } from './cluster/clusters.js';

// The online index and its stores.
export {
  NearDupIndex,
  type NearDupIndexOptions,
  type Match,
  type NewDocument,
  type IndexedDocument,
  type QueryOptions,
  type AddOptions,
  type TopKMatch,
  type TopKOptions,
  type MetaFilter,
  type FilterScalar,
  type IndexManifest,
  type IndexStats,
  type OnlineVerify,
  type RecallWarning,
} from './online/nearDupIndex.js';
export type { ForestOptions } from './online/keys/keys.js';
export { MATCH_FIELDS, DOCUMENT_FIELDS, type MatchField, type DocumentField, type LeanMatch } from './online/fields.js';
export type { OnlineCluster, ClusterPage, ClusterListOptions } from './online/clusters.js';
export type { IndexChange, IndexObserver, AddedDocument } from './online/events.js';
export type { ClusterState, ClusterSummary } from './store/clusterState.js';
export type { NearDupStore, StoredDoc, PutEntry, RemoveEntry, StoreManifest, StoreCompaction } from './store/types.js';
export { parseStoreSpec, type StoreSpec, type RedisUrlOptions, type PostgresUrlOptions } from './store/spec.js';
export { MemoryStore } from './store/memory/store.js';
export { openStore } from './store/open/open.js';
export { checkIndex, type CheckReport, type CheckOptions } from './online/check.js';
export {
  IndexRegistry,
  IndexExistsError,
  type NamedIndexInfo,
  type NamedIndexOptions,
  type CreateIndexOptions,
  type NamedStore,
} from './online/registry/registry.js';

// Text → shingles → MinHash signatures.
export { normalize, makeNormalizer, resolvePreset, NORMALIZE_PRESETS, PRESET_ALIASES, type NormalizeOptions, type NormalizePreset } from './text/normalize.js';
export { createShingler, fingerprintSet, defaultK, type Shingler, type ShingleKind, type ShingleOptions } from './text/shingler.js';
export { stopwordList } from './text/stopwords.js';
export { createMinHasher, estimateJaccard, DEFAULT_NUM_PERM, type MinHasher, type MinHashMethod, type MinHashOptions } from './sketch/minhash.js';
export { createTextSigner, type TextSigner, type TextSignerOptions, type DocSketch } from './sketch/textSigner.js';

// Similarity and LSH parameters.
export { jaccard, jaccardAtLeast } from './similarity/jaccard.js';
export {
  commonPassages,
  shingleRuns,
  type Passage,
  type PassageOptions,
  type PassageResult,
  type PassageFold,
  type ShingleRun,
} from './similarity/passages.js';
export { bruteForcePairs, type ScoredPair, type BruteForceOptions } from './similarity/bruteForce.js';
export {
  chooseBands,
  checkThreshold,
  candidateProbability,
  falsePositiveArea,
  falseNegativeArea,
  type BandChoice,
  type ChooseBandsOptions,
} from './lsh/params.js';
export { estimateRecall, RecallAccumulator, type RecallEstimate } from './lsh/recallEstimate.js';

// Readers and writers.
export { openInput, type OpenedInput, type ReadOptions } from './io/read/read.js';
export type { InputRecord } from './io/read/record.js';
export { INPUT_FORMATS, type InputFormat } from './io/read/formats.js';
export { atomicFileSink, openOutput, type OutputSink } from './io/write/output.js';
/** The binary signature and snapshot formats (docs/formats.md). */
export * as format from './format.js';

// The HTML report.
export { buildReportData, type ReportData, type ReportDataOptions, type HistogramBin, type ReportMember, type ReportComparison } from './report/data.js';
export { renderReportHtml, type RenderReportOptions } from './report/html.js';
export { prefixJoin, prefixJoin64, type PrefixJoinOptions, type PrefixJoinResult, type PrefixJoinStats, type SetMeasure } from './similarity/prefixJoin.js';
export { containment, maxContainment, bruteForceContainment } from './similarity/containment.js';
export { exactDuplicates, type ExactDuplicatesOptions } from './dedup/exactDups.js';
export { clusterWithPolicy, type ClusterMode, type RepresentativePolicy, type ClusterPolicyOptions } from './cluster/clusterPolicy.js';
export { autoCandidates, type CandidateMethod } from './dedup/kinds.js';
export { sketchCandidates, sketchKeys } from './lsh/sketchCandidates.js';
export { createSet64 } from './text/fingerprint64.js';

// Errors a caller may handle.
export { InputError, UsageError, type InputFix } from './common/errors.js';
export { InputChangedError } from './io/read/inputStamps.js';
export { TooManyPairsError } from './lsh/tooManyPairs.js';
export { StoreFullError, StoreUnavailableError, MissingDependencyError } from './store/errors.js';
