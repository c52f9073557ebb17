/**
 * Worker-thread entry of the signing pool: signs batches of texts with its own TextSigner and
 * returns packed signatures, or (for the streaming pipeline) only the LSH band keys.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createTextSigner, type TextSignerOptions } from '../sketch/textSigner.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { textHash2 } from '../hash/murmur3.js';
import { ProbeTable } from '../similarity/probeSet.js';
import {
  signRange,
  textsAt,
  type DocTexts,
  type ReadScratch,
  type RangeSetsRequest,
  type ScoreJob,
  type SetTargets,
  type SignRangeRequest,
} from './rangeJobs.js';
import { arenaSets } from './arenaSets.js';
import { collectSharedBuckets, type BandKeyTable, type SharedBuckets } from '../lsh/candidates.js';

/** What the pool sends to a worker: a batch of texts and what to return for them. */
export interface SignRequest {
  id: number;
  kind?: undefined;
  texts: string[];
  /** When set, return band keys of this banding instead of full signatures. */
  bands?: { bands: number; rows: number };
  /** Also return full signatures when returning band keys. */
  withSignatures?: boolean;
  /**
   * Make the texts' fingerprint sets (unsorted, distinct) instead of signatures, each written into
   * its block of the shared set arena (see src/parallel/setArena.ts): `SignReply.setLen` gets its
   * length, and a set longer than its block comes back in `setData` instead.
   */
  arena?: SetTargets;
  /**
   * With `arena`: pairs to verify here (see {@link ScoreJob}). `SignReply.sims[k]` gets pair k's
   * exact Jaccard if ≥ threshold, else −1 (`probeJaccardAtLeast`).
   */
  score?: ScoreJob;
}

/**
 * A worker's answer: signatures (n × numPerm, document by document) and/or band keys (hi and lo,
 * band by band: document i's key in band b at [b·n + i]).
 */
export interface SignReply {
  id: number;
  count: number;
  present: Uint8Array;
  sigs?: Uint32Array;
  hi?: Uint32Array;
  lo?: Uint32Array;
  /**
   * With `arena`: the sets too long for their blocks, concatenated; set i is
   * setData[setStart[i] .. setStart[i+1]) (empty for the sets that fit).
   */
  setData?: Uint32Array;
  setStart?: Int32Array;
  /** With `arena`: each set's length (a set longer than its block's capacity is in `setData`). */
  setLen?: Int32Array;
  /** With `score`: one similarity per pair (−1 below the threshold). */
  sims?: Float64Array;
  /** With band keys: two 32-bit hashes of each text (`textHash2`), to fold identical texts. */
  th?: Uint32Array;
  error?: string;
}

/**
 * LSH on the workers: bucket bands [from, to) of band keys in shared memory and return the kept buckets (`collectSharedBuckets`), which the caller
 * joins in band order with `mergeSharedBuckets`.
 */
export interface BucketsRequest {
  id: number;
  kind: 'buckets';
  keys: BandKeyTable;
  from: number;
  to: number;
}

/** The kept buckets of a {@link BucketsRequest}'s bands. */
export interface BucketsReply extends SharedBuckets {
  id: number;
  error?: string;
}

const signer = createTextSigner(workerData as TextSignerOptions);
const table = new ProbeTable();
const port = parentPort!;
const readScratch: ReadScratch = {};

/** Streaming verification's batch: sets into the shared arena, pairs scored here (./arenaSets.ts). */
function setsIntoArena(id: number, texts: string[] | DocTexts, arena: SetTargets, score: ScoreJob | undefined): void {
  const r = arenaSets(texts, { signer, table, arena, score });
  const reply: SignReply = { id, count: r.setLen.length, present: new Uint8Array(0), ...r };
  const moved: ArrayBuffer[] = [r.setData.buffer as ArrayBuffer, r.setStart.buffer as ArrayBuffer, r.setLen.buffer as ArrayBuffer];
  if (r.sims) moved.push(r.sims.buffer as ArrayBuffer);
  port.postMessage(reply, moved);
}

function buckets(req: BucketsRequest): void {
  try {
    const b = collectSharedBuckets(req.keys, req.from, req.to);
    const reply: BucketsReply = { id: req.id, ...b };
    port.postMessage(reply, [
      b.members.buffer as ArrayBuffer,
      b.start.buffer as ArrayBuffer,
      b.digestHi.buffer as ArrayBuffer,
      b.digestLo.buffer as ArrayBuffer,
    ]);
  } catch (e) {
    port.postMessage({ id: req.id, error: (e as Error).message });
  }
}

/** Jobs that read their own input (see ./rangeJobs.ts). */
async function rangeJob(req: SignRangeRequest | RangeSetsRequest): Promise<void> {
  try {
    if (req.kind === 'signRange') {
      const { reply, transfer } = await signRange(req, signer);
      port.postMessage(reply, transfer);
    } else {
      // This worker makes the batch's sets before it reads the next batch's texts.
      setsIntoArena(req.id, await textsAt(req, readScratch), req.arena, req.score);
    }
  } catch (e) {
    port.postMessage({ id: req.id, count: 0, present: new Uint8Array(0), error: (e as Error).message } satisfies SignReply);
  }
}

port.on('message', (req: SignRequest | SignRangeRequest | RangeSetsRequest | BucketsRequest) => {
  if (req.kind === 'buckets') return buckets(req);
  if (req.kind !== undefined) return void rangeJob(req);
  try {
    if (req.arena) return setsIntoArena(req.id, req.texts, req.arena, req.score);
    const n = req.texts.length;
    const k = signer.numPerm;
    const present = new Uint8Array(n);
    const wantSigs = !req.bands || req.withSignatures;
    const sigs = wantSigs ? new Uint32Array(n * k) : undefined;
    const row = new Uint32Array(k);
    const nb = req.bands?.bands ?? 0;
    const hi = req.bands ? new Uint32Array(n * nb) : undefined;
    const lo = req.bands ? new Uint32Array(n * nb) : undefined;
    const th = req.bands ? new Uint32Array(2 * n) : undefined;
    for (let i = 0; i < n; i++) {
      if (th) textHash2(th, i, req.texts[i]!);
      if (!signer.signInto(req.texts[i]!, row)) continue;
      present[i] = 1;
      if (sigs) sigs.set(row, i * k);
      if (req.bands) bandKeys(row, nb, req.bands.rows, hi!, lo!, i, n);
    }
    const reply: SignReply = { id: req.id, count: n, present, sigs, hi, lo, th };
    const transfer = [present.buffer, sigs?.buffer, hi?.buffer, lo?.buffer, th?.buffer].filter((b): b is ArrayBuffer => b !== undefined);
    port.postMessage(reply, transfer);
  } catch (e) {
    port.postMessage({ id: req.id, count: 0, present: new Uint8Array(0), error: (e as Error).message } satisfies SignReply);
  }
});
