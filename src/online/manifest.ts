/**
 * From {@link NearDupIndexOptions} to the index's parameters: defaults, validation, the manifest
 * every store keeps, and the reconciliation with the manifest of a store that already holds an
 * index. The shingler, signer and key maker built to validate the options are kept in a
 * {@link DocPipeline} and reused by the index, not built a second time.
 * @module
 */
import type { ShingleOptions } from '../text/shingler.js';
import { storedPresetName } from '../text/normalize.js';
import { createTextSigner } from '../sketch/textSigner.js';
import { FORMAT_VERSION, SIGNATURE_SPEC } from '../sketch/format.js';
import { chooseBands } from '../lsh/params.js';
import { checkThreshold, ENGINE_DEFAULTS } from '../engine/options.js';
import { honouredValues } from '../engine/routes.js';
import { KeyMaker, DEFAULT_FOREST } from './keys/keys.js';
import { resolveEnsemble } from './keys/ensemble.js';
import { DocPipeline } from './pipeline.js';
import type { IndexManifest, NearDupIndexOptions, OnlineVerify } from './types.js';

/** A manifest and the pipeline that computes what it describes. */
export interface IndexSetup {
  manifest: IndexManifest;
  pipe: DocPipeline;
}

/** Resolves options into a manifest and its pipeline. Throws a RangeError on bad options. */
export function resolveSetup(o: NearDupIndexOptions): IndexSetup {
  const threshold = o.threshold ?? ENGINE_DEFAULTS.threshold;
  checkThreshold(threshold);
  const verify = (o.verify ?? ENGINE_DEFAULTS.verify) as OnlineVerify;
  // The verify modes the online route's table takes (src/engine/routes.ts): an index keeps no unverified candidates.
  const modes = honouredValues('online', 'verify')!;
  if (!modes.includes(verify)) throw new RangeError(`verify must be ${modes.join(' or ')}, got "${String(verify)}"`);
  const bits = o.signatureBits ?? 32;
  if (bits !== 16 && bits !== 32) throw new RangeError(`signatureBits must be 16 or 32, got ${String(o.signatureBits)}`);
  // An exact index keeps fingerprint sets, no signatures: narrow slots would only cost recall.
  if (bits === 16 && verify !== 'estimate')
    throw new RangeError('signatureBits 16 needs verify "estimate": an index with verify "exact" keeps fingerprint sets, not signatures');
  const shingleOpts: ShingleOptions = { ...o.shingle, ...(o.k !== undefined ? { k: o.k } : {}) };
  // With the WebAssembly kernels when the runtime has them: an index that keeps texts (setSource
  // 'text') signs each add with `sign` and makes candidates' sets with `distinct`, both faster there.
  const signer = createTextSigner({ shingle: shingleOpts, minhash: { numPerm: o.numPerm, method: o.method, seed: o.seed } });
  const sh = signer.shingler;
  const hasher = signer.hasher;
  const choice = chooseBands(threshold, hasher.numPerm, {
    ...(o.bands !== undefined ? { bands: o.bands } : {}),
    ...(o.rows !== undefined ? { rows: o.rows } : {}),
    ...(o.minRecall !== undefined ? { minRecallAtThreshold: o.minRecall } : {}),
  });
  const forest = o.forest === false ? null : (o.forest ?? DEFAULT_FOREST);
  const ensembleOption = o.ensemble ?? false;
  if (ensembleOption !== false && verify !== 'exact')
    throw new RangeError('ensemble (containment keys) needs verify "exact": the partitions are by fingerprint set size');
  const setSource = o.setSource ?? 'record';
  if (setSource !== 'record' && setSource !== 'text') throw new RangeError(`setSource must be "record" or "text", got "${String(setSource)}"`);
  if (setSource === 'text' && verify !== 'exact')
    throw new RangeError('setSource "text" needs verify "exact": an index with verify "estimate" keeps no fingerprint sets');
  const ensemble = ensembleOption === false ? null : resolveEnsemble(ensembleOption, hasher.numPerm);
  const keyMaker = new KeyMaker({ bands: choice.bands, rows: choice.rows, forest, numPerm: hasher.numPerm, ensemble });
  const n = shingleOpts.normalize ?? {};
  const manifest: IndexManifest = {
    format: FORMAT_VERSION,
    // Only past definition 1: manifests written before the field stay as they were (stores compare them).
    ...(SIGNATURE_SPEC !== 1 ? { signatureSpec: SIGNATURE_SPEC } : {}),
    threshold,
    verify,
    shingle: {
      kind: sh.options.kind,
      k: sh.options.k,
      seed: sh.options.seed,
      multiset: sh.options.multiset,
      stopwords: sh.options.stopwords,
      normalize: {
        preset: storedPresetName(n.preset),
        keepCase: n.keepCase ?? false,
        stripPunctuation: n.stripPunctuation ?? false,
        stripDiacritics: n.stripDiacritics ?? false,
        custom: n.custom !== undefined,
      },
    },
    // `bits` only when narrowed: manifests of other indexes stay as they were (stores compare them).
    minhash: { method: hasher.method, seed: hasher.seed, numPerm: hasher.numPerm, ...(bits === 16 ? { bits } : {}) },
    bands: choice.bands,
    rows: choice.rows,
    forest: forest ? { trees: forest.trees, depths: [...forest.depths] } : null,
    // Only when on: manifests of indexes without it stay as they were (stores compare them).
    ...(ensemble ? { ensemble } : {}),
    keysPerDoc: keyMaker.keysPerDoc,
    // Only for `text`: manifests of indexes that keep their sets in the records stay as they were.
    ...(setSource === 'text' ? { setSource } : {}),
  };
  return { manifest, pipe: new DocPipeline(manifest, signer, keyMaker) };
}

/**
 * `options` with `setSource: 'text'` when the documents' texts are kept in `meta.text` (`storeText`:
 * `neardup index add`, `serve` and named indexes keep them by default) and the index verifies
 * exactly, unless the options choose a set source themselves: a new index then recomputes a
 * candidate's fingerprint set from its stored text instead of keeping it in every record
 * (docs/stores.md). A record whose metadata does not hold its text keeps its set, so the answers
 * are the same; an existing index keeps its own choice.
 */
export function withTextSets<T extends Pick<NearDupIndexOptions, 'verify' | 'setSource'>>(options: T, storeText = true): T {
  return storeText && options.setSource === undefined && (options.verify ?? 'exact') === 'exact' ? { ...options, setSource: 'text' } : options;
}

/** Resolves options into a manifest. Throws a RangeError on bad options. */
export function resolveManifest(o: NearDupIndexOptions): IndexManifest {
  return resolveSetup(o).manifest;
}

/**
 * A RangeError when `m` (a stored manifest: `where` is "store" or a snapshot's path) follows another
 * signature definition than this code computes: its keys and signatures would not match new ones.
 */
export function checkSignatureSpec(m: IndexManifest, where: string): void {
  const spec = m.signatureSpec ?? 1;
  if (spec === SIGNATURE_SPEC) return;
  throw new RangeError(
    `${where} holds an index whose signatures follow signature definition ${
      String(spec)
    }; this version computes definition ${SIGNATURE_SPEC} (docs/formats.md, "Signatures, exactly"), so its keys and signatures would not match new ones: rebuild the index from the texts with this version, or open it with the version that wrote it`,
  );
}

/** The fields every stored manifest has had since its format began, and what each must be. */
const SHAPE: [string, string, (v: unknown) => boolean][] = [
  ['threshold', 'a number in (0, 1]', (v) => typeof v === 'number' && v > 0 && v <= 1],
  ['shingle', 'an object', isObject],
  ['shingle.kind', '"char", "word" or "spot"', (v) => v === 'char' || v === 'word' || v === 'spot'],
  ['shingle.k', 'a positive integer', isCount],
  ['minhash', 'an object', isObject],
  ['minhash.numPerm', 'a positive integer', isCount],
  ['bands', 'a positive integer', isCount],
  ['rows', 'a positive integer', isCount],
  ['keysPerDoc', 'a positive integer', isCount],
];

function isObject(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isCount(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) > 0;
}

/**
 * A RangeError naming the field when `m` (a store's manifest, named by `where`) lacks a parameter or holds one of another type: a damaged manifest is said so, never met as
 * a TypeError deep inside the index (`Cannot read properties of undefined`).
 */
export function checkManifestShape(m: IndexManifest, where: string): void {
  for (const [field, what, ok] of SHAPE) {
    let v: unknown = m;
    for (const part of field.split('.')) v = isObject(v) ? (v as Record<string, unknown>)[part] : undefined;
    if (!ok(v))
      throw new RangeError(
        `${where} holds a damaged index manifest: "${field}" is ${v === undefined ? 'missing' : JSON.stringify(v)}, not ${what}; restore a backup`,
      );
  }
}

/**
 * A RangeError when `m` (a stored manifest) says its records keep their fingerprint sets in a way
 * this version does not know: it could not verify them.
 */
export function checkSetSource(m: IndexManifest, where: string): void {
  const s = (m as { setSource?: unknown }).setSource;
  if (s === undefined || s === 'text') return;
  throw new RangeError(
    `${where} holds an index whose records keep their fingerprint sets as ${
      JSON.stringify(s)
    }; this version knows the sets kept in the records (no setSource) and "text" (docs/formats.md, "Document records"): open it with the version that wrote it`,
  );
}

/**
 * The manifest fields an explicitly given option fixes, for the reopen check. `setSource` is not
 * one: it changes only where a set is read from, never an answer, so an existing index keeps its own.
 */
function explicitFields(o: NearDupIndexOptions): string[] {
  const f: string[] = [];
  if (o.shingle !== undefined || o.k !== undefined) f.push('shingle');
  if (o.numPerm !== undefined || o.method !== undefined || o.seed !== undefined || o.signatureBits !== undefined) f.push('minhash');
  if (o.bands !== undefined || o.rows !== undefined || o.minRecall !== undefined || o.threshold !== undefined) f.push('bands', 'rows');
  if (o.verify !== undefined) f.push('verify');
  if (o.forest !== undefined) f.push('forest');
  if (o.ensemble !== undefined) f.push('ensemble');
  return f;
}

/** True when two JSON values serialize the same (manifests are plain JSON, fields in a fixed order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The manifest to run with when the store already holds an index with manifest `existing`: its
 * parameters, with the threshold of the options when given. An explicitly given option that
 * contradicts the stored parameters is a RangeError naming the fields (and, when only the threshold
 * was given, why its bands differ).
 */
export function reconcileManifest(existing: IndexManifest, wanted: IndexManifest, options: NearDupIndexOptions): IndexManifest {
  if (existing.format !== FORMAT_VERSION)
    throw new RangeError(`store holds an index of format ${String(existing.format)}; this version reads ${FORMAT_VERSION}`);
  checkManifestShape(existing, 'store');
  checkSignatureSpec(existing, 'store');
  checkSetSource(existing, 'store');
  const bad = explicitFields(options).filter((f) =>
    !sameJson((existing as unknown as Record<string, unknown>)[f], (wanted as unknown as Record<string, unknown>)[f])
  );
  // The bands follow from the threshold: when only the threshold was given, say so.
  const onlyThreshold = options.bands === undefined && options.rows === undefined && options.minRecall === undefined && options.threshold !== undefined;
  if (onlyThreshold && bad.includes('bands')) {
    const rest = bad.filter((f) => f !== 'bands' && f !== 'rows');
    throw new RangeError(
      `the store was created with threshold ${existing.threshold}, given ${options.threshold}: its LSH bands (${existing.bands} × ${existing.rows} rows) were chosen for ${existing.threshold}, and ${options.threshold} needs ${wanted.bands} × ${wanted.rows}. `
        + `Open it without a threshold (or with ${existing.threshold}); a lower threshold for one query is the query's own threshold option${
          rest.length ? `; also different: ${rest.join(', ')}` : ''
        }`,
    );
  }
  if (bad.length) {
    throw new RangeError(
      `the store was created with different parameters (${
        bad
          .map((f) =>
            `${f}: stored ${JSON.stringify((existing as unknown as Record<string, unknown>)[f])}, given ${
              JSON.stringify((wanted as unknown as Record<string, unknown>)[f])
            }`
          )
          .join('; ')
      })`,
    );
  }
  return { ...existing, threshold: options.threshold ?? existing.threshold };
}

/**
 * True when a pipeline built for manifest `a` computes the same as one built for `b`: everything
 * but the threshold (which only the searches use) is equal.
 */
export function samePipeline(a: IndexManifest, b: IndexManifest): boolean {
  return sameJson({ ...a, threshold: 0 }, { ...b, threshold: 0 });
}
