/**
 * `neardup/internals`: the building blocks under the public API (src/index.ts), for benchmarks,
 * tests and experiments. No stability promise: names and signatures here may change in any release
 * (docs/api.md).
 * @packageDocumentation
 */
// Node's types appear in the API (streams, Buffer): the package depends on @types/node, and this
// directive (kept in the emitted .d.ts) loads them for a consumer whose tsconfig lists no `types`.
/// <reference types="node" preserve="true" />
export { charShingles } from './text/charShingles.js';
export { wordShingles } from './text/wordShingles.js';
export { spotShingles } from './text/spotShingles.js';
export { tokens, tokenHashes } from './text/tokens.js';
export { stopwordHashes } from './text/stopwords.js';
export { toSortedSet } from './text/fingerprintSet.js';
export { createSymbolizer, type Symbolizer } from './text/symbolizer.js';
export { fmix32, splitmix32 } from './hash/mix.js';
export { murmur3Utf16, murmur3Words } from './hash/murmur3.js';
export { SignatureMatrix } from './sketch/signatureMatrix.js';
export { bandKeys } from './lsh/bandKeys.js';
export { lshCandidates, candidatesFromBandKeys, type CandidateStats } from './lsh/candidates.js';
export { intersectionSize } from './similarity/jaccard.js';
export { UnionFind } from './cluster/clusters.js';
export { readLineBatches, type ReadLinesOptions } from './dedup/lineSource.js';
export { SignPool, defaultWorkers, type SignPoolOptions } from './parallel/signPool.js';
export { signCorpusParallel, type SignCorpusOptions } from './parallel/signCorpus.js';
export { htmlToText } from './io/read/html.js';
export { resolveManifest } from './online/manifest.js';
export { KeyMaker, DEFAULT_FOREST } from './online/keys/keys.js';
