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
import type { ScoreJob, SetTargets } from './rangeJobs.js';

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

/** Bytes of the scratch block for a batch whose largest document has at most `n` fingerprints. */
export function scratchBytes(n: number): number {
  return SetKernels.regionBytes(n);
}

/** The set kernels on the arena this thread last worked for (one instance per arena). */
let onArena: { id: number; table: ProbeTable; k: SetKernels } | null = null;

function sharedTable(arena: SetTargets): { table: ProbeTable; k: SetKernels } | null {
  if (onArena?.id !== arena.id) {
    const k = SetKernels.shared(arena.memory);
    onArena = k ? { id: arena.id, k, table: new ProbeTable({ kernels: k }) } : null;
  }
  return onArena;
}

/**
 * Writes the set of `texts[i]` into its block (pair i of `arena.targets`: offset, capacity), or
 * into the result's overflow when it does not fit, and scores the pairs of `score`. `table` is the
 * caller's own probe table, used when the shared kernels are not available (no WebAssembly SIMD)
 * or a document outgrows the scratch block.
 */
export function arenaSets(texts: string[], signer: TextSigner, table: ProbeTable, arena: SetTargets, score: ScoreJob | undefined): ArenaSetsResult {
  const n = texts.length;
  const u32 = new Uint32Array(arena.memory.buffer);
  const t = arena.targets;
  const shared = sharedTable(arena);
  shared?.k.region(arena.scratch[0] * 4, arena.scratch[1]);
  const setLen = new Int32Array(n);
  const setStart = new Int32Array(n + 1);
  const over: Uint32Array[] = [];
  const sims = score ? new Float64Array(score.b.length) : undefined;
  let k = 0;
  for (let i = 0; i < n; i++) {
    const at = t[2 * i]!;
    const room = t[2 * i + 1]!;
    let len = shared ? signer.distinctTo(texts[i]!, shared.table, at * 4, room) : -1;
    const inPlace = len >= 0;
    if (!inPlace) {
      const s = signer.distinctView(texts[i]!, table);
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
