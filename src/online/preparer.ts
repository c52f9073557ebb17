/**
 * Turning documents into {@link Prepared} ones for the online index: id and text checks, the
 * pipeline's sketch and keys, and for large `addMany` batches the prepare worker threads
 * (src/online/prepareWorker.ts), whose packed replies are unpacked here. Also the reverse
 * direction the stores need: the keys of an encoded record.
 * @module
 */
import { WorkerPool } from '../parallel/workerPool.js';
import type { DocPipeline } from './pipeline.js';
import type { MinHasher } from '../sketch/minhash.js';
import type { PrepareReply, PrepareRequest, PrepareSetup } from './prepareWorker.js';
import { screenOf } from '../similarity/setScreen.js';
import { withExpiry, readRecordSketch } from './records/record.js';
import { holdsText } from './records/storedText.js';
import type { NewDocument, Prepared } from './types.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** addMany batches at least this large go to the prepare workers (smaller ones are not worth the trip). */
export const WORKER_MIN_BATCH = 64;

/** Throws a TypeError unless `id` is a non-empty well-formed string and `text` a string. */
export function validateDocument(id: string, text: string): void {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('document id must be a non-empty string');
  // Stores write ids as UTF-8: a lone surrogate would come back as U+FFFD, under another id.
  if (LONE_SURROGATE.test(id)) throw new TypeError(`document id ${JSON.stringify(id)} is not well-formed Unicode (lone surrogate)`);
  if (typeof text !== 'string') throw new TypeError(`text of document "${id}" must be a string`);
}

/** Makes `p.set` the set of `text`, computed when first read; `p.text` the text (to probe with it unsorted). */
function lazySet(p: Prepared, text: string, setOfText: (text: string) => Uint32Array): void {
  let set: Uint32Array | undefined;
  Object.defineProperty(p, 'set', { get: () => (set ??= setOfText(text)), enumerable: true, configurable: true });
  p.text = text;
}

/** Prepares documents in this thread, or batches of them on worker threads. */
export class Preparer {
  private readonly pool: WorkerPool<PrepareRequest, PrepareReply> | null;
  private scratch = new Uint32Array(4096);

  /** The manifest's shingling: the sets of records that keep their text instead (setSource `text`). */
  readonly setOfText: (text: string) => Uint32Array;
  /** The manifest's signer (signs stored fingerprint sets). */
  readonly hasher: MinHasher;

  /**
   * `workers` prepare threads (0: none); they rebuild the pipeline from its manifest. `screens`:
   * make each document's screen (for a store that keeps them, {@link Prepared.screen}).
   */
  constructor(
    private readonly pipe: DocPipeline,
    workers: number,
    private readonly screens = false,
  ) {
    this.setOfText = pipe.setOfText;
    this.hasher = pipe.hasher;
    const custom = pipe.manifest.shingle.normalize.custom;
    if (!(Number.isInteger(workers) && workers >= 0)) throw new RangeError(`workers must be a non-negative integer, got ${workers}`);
    if (workers > 0 && custom) throw new RangeError('workers cannot be used with a custom normalization function (functions cannot be sent to worker threads)');
    const setup: PrepareSetup = { manifest: pipe.manifest, screens };
    this.pool = workers > 0 ? new WorkerPool(new URL('./prepareWorker.js', import.meta.url), setup, workers, 'prepare worker') : null;
  }

  /** One document, in this thread. */
  prepare(id: string, text: string, meta: unknown): Prepared {
    validateDocument(id, text);
    // The text goes along only when the record may keep it instead of the set (checked again when
    // encoded); the set is then computed only if a candidate is verified against it.
    if (this.pipe.setFromText(text, meta)) return Object.assign(this.pipe.lazySketch(text, this.screens), { id, meta, text });
    return { id, meta, ...this.pipe.sketch(text, this.screens) };
  }

  /** True when a batch of `n` documents goes to the workers ({@link prepareInWorkers}). */
  usesWorkers(n: number): boolean {
    return this.pool !== null && n >= WORKER_MIN_BATCH;
  }

  /**
   * Prepares a batch on a worker thread (only when {@link usesWorkers}); results are views into the
   * reply's transferred buffers. Every document is checked here first, before any is sent.
   */
  async prepareInWorkers(docs: NewDocument[]): Promise<Prepared[]> {
    for (const d of docs) validateDocument(d.id, d.text);
    // Metadata that is only the text (what `index add` keeps) is not serialized here nor sent twice:
    // null tells the worker to store {text}, and to serialize it there, off this thread.
    const metas = docs.map((d) => (d.meta === undefined ? undefined : onlyText(d.meta, d.text) ? null : JSON.stringify(d.meta)));
    const r = await this.pool!.run({ texts: docs.map((d) => d.text), metas });
    const P = this.pipe.manifest.minhash.numPerm;
    const K = this.pipe.manifest.keysPerDoc;
    const empty = new Float64Array(0);
    return docs.map((d, i) => {
      const p: Prepared = {
        id: d.id,
        meta: d.meta,
        set: r.sets.subarray(r.setOff[i]!, r.setOff[i + 1]!),
        sig: r.hasSig[i] ? r.sigs.subarray(i * P, (i + 1) * P) : null,
        keys: r.hasSig[i] ? r.keys.subarray(i * K, (i + 1) * K) : empty,
        record: r.records.subarray(r.recOff[i]!, r.recOff[i + 1]!),
      };
      if (r.screenOff[i + 1]! > r.screenOff[i]!) p.screen = r.screens.subarray(r.screenOff[i]!, r.screenOff[i + 1]!);
      // Its record keeps its text: the worker sent no set; computed here only if a candidate is verified.
      if (r.fromText[i]) lazySet(p, d.text, this.pipe.setOfText);
      return p;
    });
  }

  /** The record to store for a prepared document (the worker's, or encoded now). */
  recordOf(p: Prepared): Uint8Array {
    if (p.record) return p.expiresAt === undefined ? p.record : withExpiry(p.record, p.expiresAt);
    return this.pipe.record(p, p.meta, p.expiresAt, p.text);
  }

  /** The band and forest keys of an encoded record, as the stores index it. */
  keysOfRecord(bytes: Uint8Array): Float64Array {
    return this.entryOfRecord(bytes).keys;
  }

  /** The keys of an encoded record, and its set's screen when screens are made and the record holds or keeps the set. */
  entryOfRecord(bytes: Uint8Array): { keys: Float64Array; screen?: Uint8Array } {
    const r = readRecordSketch(bytes, this.scratch, this.pipe.setOfText);
    const sig = r.signature ?? (r.set ? this.pipe.hasher.sign(r.set) : null);
    if (!sig) return { keys: new Float64Array(0) };
    const keys = this.pipe.keyMaker.keys(sig, r.set?.length ?? 0);
    return this.screens && r.set ? { keys, screen: screenOf(r.set) } : { keys };
  }

  /** Stops the worker threads. */
  async close(): Promise<void> {
    await this.pool?.close();
  }
}

/** True when `meta` is exactly `{ text }` as stored: a plain object whose one key is `text`, holding the document's text. */
function onlyText(meta: unknown, text: string): boolean {
  return holdsText(meta, text) && Object.keys(meta as object).length === 1;
}
