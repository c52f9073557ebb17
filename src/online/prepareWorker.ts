/**
 * Worker-thread entry of the online index's prepare pool: sketches and encodes batches of documents
 * (the CPU-heavy part of `addMany`) while the index's own thread talks to the store.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DocPipeline } from './pipeline.js';
import type { IndexManifest } from './types.js';

/** A batch to prepare: texts, and each document's metadata as JSON text (undefined: none; null: `{ text }`, the document's text alone). */
export interface PrepareRequest {
  texts: string[];
  metas: (string | null | undefined)[];
}

/**
 * Packed results: document i has set sets[setOff[i] .. setOff[i+1]) (none when fromText[i]: its
 * record keeps its text instead, and the set is computed only if needed, from the text), a signature
 * sigs[i·numPerm ..] when hasSig[i], keys keys[i·keysPerDoc ..] when hasSig[i], and record
 * records[recOff[i] .. recOff[i+1]).
 */
export interface PrepareReply {
  error?: string;
  sets: Uint32Array;
  setOff: Int32Array;
  sigs: Uint32Array;
  hasSig: Uint8Array;
  /** 1 when the document's record keeps its text instead of its set (setSource `text`). */
  fromText: Uint8Array;
  keys: Float64Array;
  records: Uint8Array;
  recOff: Int32Array;
  /** Document i's screen is screens[screenOff[i] .. screenOff[i+1]) (empty: none), when the pool makes screens. */
  screens: Uint8Array;
  screenOff: Int32Array;
}

/** What each worker of the pool is started with. */
export interface PrepareSetup {
  manifest: IndexManifest;
  /** Whether to make each document's screen (the index's store keeps them). */
  screens: boolean;
}

const setup = workerData as PrepareSetup;
const pipe = DocPipeline.fromManifest(setup.manifest);
const port = parentPort!;

port.on('message', (req: PrepareRequest) => {
  try {
    const n = req.texts.length;
    const P = pipe.manifest.minhash.numPerm;
    const K = pipe.manifest.keysPerDoc;
    const metas: unknown[] = req.metas.map((m, i) => (m === undefined ? undefined : m === null ? { text: req.texts[i] } : JSON.parse(m)));
    const fromText = new Uint8Array(n);
    for (let i = 0; i < n; i++) fromText[i] = pipe.setFromText(req.texts[i]!, metas[i]) ? 1 : 0;
    // A document whose record keeps its text needs no sorted set here (lazySketch computes none).
    const sketches = req.texts.map((t, i) => (fromText[i] ? pipe.lazySketch(t, setup.screens) : pipe.sketch(t, setup.screens)));
    const recs = sketches.map((d, i) => pipe.record(d, metas[i], undefined, req.texts[i]));
    const screenOff = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) screenOff[i + 1] = screenOff[i]! + (sketches[i]!.screen?.length ?? 0);
    const screens = new Uint8Array(screenOff[n]!);
    for (let i = 0; i < n; i++) if (sketches[i]!.screen) screens.set(sketches[i]!.screen!, screenOff[i]!);
    const setOff = new Int32Array(n + 1);
    const recOff = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      setOff[i + 1] = setOff[i]! + (fromText[i] ? 0 : sketches[i]!.set.length);
      recOff[i + 1] = recOff[i]! + recs[i]!.length;
    }
    const sets = new Uint32Array(setOff[n]!);
    const records = new Uint8Array(recOff[n]!);
    const sigs = new Uint32Array(n * P);
    const hasSig = new Uint8Array(n);
    const keys = new Float64Array(n * K);
    for (let i = 0; i < n; i++) {
      const d = sketches[i]!;
      if (!fromText[i]) sets.set(d.set, setOff[i]!);
      records.set(recs[i]!, recOff[i]!);
      if (d.sig) {
        hasSig[i] = 1;
        sigs.set(d.sig, i * P);
        keys.set(d.keys, i * K);
      }
    }
    const reply: PrepareReply = { sets, setOff, sigs, hasSig, fromText, keys, records, recOff, screens, screenOff };
    const moved = [sets, setOff, sigs, hasSig, fromText, keys, records, recOff, screens, screenOff].map((a) => a.buffer);
    port.postMessage(reply, moved);
  } catch (e) {
    port.postMessage({ error: (e as Error).message ?? String(e) });
  }
});
