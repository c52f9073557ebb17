/**
 * Consistency check of an online index (`neardup index check`): every record decodes, every
 * document's keys are in the store and point back to it, counts agree, plus the store's own checks.
 * @module
 */
import { decodeRecord } from './records/record.js';
import type { NearDupIndex } from './nearDupIndex.js';

/** What {@link checkIndex} found. */
export interface CheckReport {
  /** Documents scanned. */
  documents: number;
  /** What the store reports as its size. */
  size: number;
  /** Keys looked up. */
  keysChecked: number;
  /** Inconsistencies (the check fails when there is any). */
  errors: string[];
  /** Harmless leftovers (e.g. of writes that were never acknowledged). */
  warnings: string[];
}

/** Options of {@link checkIndex}. */
export interface CheckOptions {
  /** Called every 1000 documents. */
  onProgress?: (documents: number) => void;
  /** Errors listed in full before they are only counted. Default 20. */
  maxListed?: number;
}

/**
 * Checks an index: one membership test per document key (SQLite, Redis), or one lookup per key
 * for stores without `NearDupStore.hasPostings` (the memory store: O(keys × bucket size)).
 */
export async function checkIndex(index: NearDupIndex, options: CheckOptions = {}): Promise<CheckReport> {
  const maxListed = options.maxListed ?? 20;
  const errors: string[] = [];
  let errorCount = 0;
  const fail = (msg: string) => {
    if (errorCount++ < maxListed) errors.push(msg);
  };
  const keysPerDoc = index.manifest.keysPerDoc;
  let documents = 0;
  let keysChecked = 0;
  const seen = new Set<string>();
  for await (const d of index.store.scan()) {
    documents++;
    if (seen.has(d.id)) fail(`document "${d.id}" is listed twice`);
    seen.add(d.id);
    let keys: Float64Array;
    try {
      decodeRecord(d.record, `record of "${d.id}"`);
      keys = index.keysOfRecord(d.record);
    } catch (e) {
      fail((e as Error).message);
      continue;
    }
    if (keys.length !== 0 && keys.length !== keysPerDoc) fail(`document "${d.id}" has ${keys.length} keys, the manifest says ${keysPerDoc}`);
    // Each key must lead back to the document by itself: a membership test where the store has one,
    // else one lookup per key (which fetches whole buckets: slow with shallow forest keys).
    let present: boolean[];
    if (index.store.hasPostings) present = await index.store.hasPostings(d.id, keys);
    else {
      const lists = await index.store.lookup(
        Array.from(keys, (_, i) => keys.subarray(i, i + 1)),
        Number.MAX_SAFE_INTEGER,
      );
      present = lists.map((l) => l.some((c) => c.id === d.id));
    }
    keysChecked += keys.length;
    const missing = present.filter((x) => !x).length;
    if (missing) fail(`document "${d.id}": ${missing} of its ${keys.length} keys do not lead back to it`);
    if (documents % 1000 === 0) options.onProgress?.(documents);
  }
  const size = await index.store.size();
  const warnings: string[] = [];
  const extra = index.store.checkStore ? await index.store.checkStore() : { errors: [], warnings: [] };
  for (const e of extra.errors) fail(e);
  warnings.push(...extra.warnings);
  // Redis counts ids whose record was never written (a warning above); elsewhere sizes must agree.
  if (size !== documents && !(index.store.kind === 'redis' && size > documents && warnings.length > 0)) {
    fail(`the store reports ${size} documents but ${documents} were scanned`);
  }
  if (errorCount > maxListed) errors.push(`… ${errorCount} errors in all`);
  return { documents, size, keysChecked, errors, warnings };
}
