/**
 * A worker's half of streaming verification: a batch's unsorted fingerprint sets are written by
 * the distinct kernel straight into their blocks of the shared set arena (src/parallel/setArena.ts),
 * and pairs against sets held there are counted by the probe kernel where those sets lie: the
 * worker's set kernels run on the arena's own memory, in a scratch block the batch comes with.
 * @module
 */
import type { TextSigner } from '../sketch/textSigner.js';
import { ProbeTable, probeJaccardAtLeast, probeJaccardAtLeastAt } from '../similarity/probeSet.js';
import { SetKernels } from '../wasm/setKernels.js';
import { arenaTextBytes, type ArenaSetWriter } from '../sketch/arenaSetWriter.js';
import type { DocTexts, ScoreJob, SetTargets } from './rangeJobs.js';

/** What {@link arenaSets} reports: lengths, the sets too long for their blocks, similarities. */
export interface ArenaSetsResult {
  /** Each set's length. */
  setLen: Int32Array;
  /** Sets longer than their block's capacity, concatenated: set i is setData[setStart[i] .. setStart[i+1]) (empty for the others). */
  setData: Uint32Array;
  setStart: Int32Array;
  /** With `score`: pair k's exact Jaccard if ≥ its threshold, else −1. */
  sims?: Float64Array;
}

/**
 * The scratch block for a batch whose documents are at most `units` UTF-16 code units long (which
 * bounds their fingerprints): its bytes, and how many of them are the probe table's region. With
 * `text`, room follows for the text an {@link ArenaSetWriter} makes into a set.
 */
export function scratchLayout(units: number, text: boolean): { bytes: number; tableBytes: number } {
  const tableBytes = SetKernels.regionBytes(units);
  // Without a bound there is no text to place either (every set comes back in the reply).
  return { bytes: tableBytes + (text && units > 0 ? arenaTextBytes(units) : 0), tableBytes };
}

/**
 * A probe table whose kernels run on `memory` (a set arena's), so it loads and probes sets where
 * they lie, its table in the block given to `place` (byte offset, bytes); null without shared
 * kernels (no WebAssembly SIMD and threads).
 */
export function inArenaTable(memory: WebAssembly.Memory): { table: ProbeTable; place(at: number, bytes: number): void } | null {
  const k = SetKernels.shared(memory);
  return k ? { table: new ProbeTable({ kernels: k }), place: (at, bytes) => k.region(at, bytes) } : null;
}

/** The set kernels on the arena this thread last worked for (one instance per arena and signer). */
let onArena: { id: number; signer: TextSigner; table: ProbeTable; k: SetKernels; writer: ArenaSetWriter | null } | null = null;

function sharedTable(arena: SetTargets, signer: TextSigner): { table: ProbeTable; k: SetKernels; writer: ArenaSetWriter | null } | null {
  if (onArena?.id !== arena.id || onArena.signer !== signer) {
    const k = SetKernels.shared(arena.memory);
    onArena = k ? { id: arena.id, signer, k, table: new ProbeTable({ kernels: k }), writer: signer.arenaWriter(k) } : null;
  }
  return onArena;
}

/** What {@link arenaSets} writes the sets with, and where. */
export interface ArenaJob {
  signer: TextSigner;
  /** The caller's own probe table: used when the shared kernels are not available (no WebAssembly SIMD) or a document outgrows the scratch block. */
  table: ProbeTable;
  arena: SetTargets;
  /** The pairs to score once the sets are written, if any. */
  score: ScoreJob | undefined;
}

/**
 * Writes the set of text i into its block (pair i of `arena.targets`: offset, capacity), or
 * into the result's overflow when it does not fit, and scores the pairs of `score`. Texts are
 * strings, or UTF-8 byte spans ({@link DocTexts}).
 */
export function arenaSets(docs: string[] | DocTexts, job: ArenaJob): ArenaSetsResult {
  const { signer, table, arena, score } = job;
  const { texts, bytes: raw, spans } = Array.isArray(docs) ? { texts: docs as (string | null)[], bytes: undefined, spans: undefined } : docs;
  const n = texts.length;
  const u32 = new Uint32Array(arena.memory.buffer);
  const t = arena.targets;
  const shared = sharedTable(arena, signer);
  const [scratch, bytes, tableBytes] = arena.scratch;
  shared?.k.region(scratch * 4, tableBytes);
  shared?.writer?.place(scratch * 4 + tableBytes, bytes - tableBytes);
  const setLen = new Int32Array(n);
  const setStart = new Int32Array(n + 1);
  const over: Uint32Array[] = [];
  const sims = score ? new Float64Array(score.b.length) : undefined;
  let k = 0;
  for (let i = 0; i < n; i++) {
    const at = t[2 * i]!;
    const room = t[2 * i + 1]!;
    let text = texts[i] as string | null;
    let len = -1;
    if (text === null) {
      // UTF-8 bytes: made into a set without becoming a string, unless the writer declines.
      const s = spans![2 * i]!;
      const e = spans![2 * i + 1]!;
      if (shared?.writer) len = shared.writer.distinctBytesTo(raw!, s, e, shared.table, at * 4, room);
      text = len < 0 ? Buffer.from(raw!.buffer, raw!.byteOffset + s, e - s).toString('utf8') : '';
    } else if (shared?.writer) len = shared.writer.distinctTo(text, shared.table, at * 4, room);
    if (len < 0 && shared) len = signer.distinctTo(text, shared.table, at * 4, room);
    const inPlace = len >= 0;
    if (!inPlace) {
      const s = signer.distinctView(text, table);
      len = s.length;
      // Copied out before scoring: probing reuses the memory the view points at.
      if (len <= room) u32.set(s, at);
      else over.push(s.slice());
    }
    setLen[i] = len;
    setStart[i + 1] = setStart[i]! + (len <= room ? 0 : len);
    for (; score !== undefined && k < score.b.length && score.b[k] === i; k++) {
      const a = score.a;
      const off = a[2 * k]!;
      const m = a[2 * k + 1]!;
      sims![k] = inPlace
        ? probeJaccardAtLeastAt(shared!.table, off * 4, m, score.threshold)
        : probeJaccardAtLeast(table, u32.subarray(off, off + m), score.threshold);
    }
  }
  if (score && k !== score.b.length) throw new Error('pairs to score must come in ascending order of b');
  const setData = new Uint32Array(setStart[n]!);
  for (let i = 0, j = 0; i < n; i++) if (setStart[i + 1]! > setStart[i]!) setData.set(over[j++]!, setStart[i]!);
  return { setLen, setData, setStart, sims };
}
