/**
 * A worker's half of streaming verification: a batch's unsorted fingerprint sets go straight from
 * the probe table's memory into their blocks of the shared arena (src/parallel/setArena.ts), one
 * copy each, and pairs against sets held in the arena are scored in place.
 * @module
 */
import type { TextSigner } from '../sketch/textSigner.js';
import { probeJaccardAtLeast, type ProbeTable } from '../similarity/probeSet.js';
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

/**
 * Writes the set of `texts[i]` into the block at triple i of `arena.targets` (chunk, offset,
 * capacity), or into the result's overflow when it does not fit, and scores the pairs of `score`.
 * `table` is the caller's scratch probe table.
 */
export function arenaSets(texts: string[], signer: TextSigner, table: ProbeTable, arena: SetTargets, score: ScoreJob | undefined): ArenaSetsResult {
  const n = texts.length;
  const views = arena.chunks.map((c) => new Uint32Array(c));
  const t = arena.targets;
  const setLen = new Int32Array(n);
  const setStart = new Int32Array(n + 1);
  const over: Uint32Array[] = [];
  const sims = score ? new Float64Array(score.b.length) : undefined;
  let k = 0;
  for (let i = 0; i < n; i++) {
    const s = signer.distinctView(texts[i]!, table);
    const fits = s.length <= t[3 * i + 2]!;
    setLen[i] = s.length;
    // Copied out before scoring: probing reuses the memory the view points at.
    if (fits) views[t[3 * i]!]!.set(s, t[3 * i + 1]!);
    else over.push(s.slice());
    setStart[i + 1] = setStart[i]! + (fits ? 0 : s.length);
    for (; score !== undefined && k < score.b.length && score.b[k] === i; k++) {
      const a = score.a;
      const at = a[3 * k + 1]!;
      sims![k] = probeJaccardAtLeast(table, views[a[3 * k]!]!.subarray(at, at + a[3 * k + 2]!), score.threshold);
    }
  }
  if (score && k !== score.b.length) throw new Error('pairs to score must come in ascending order of b');
  const setData = new Uint32Array(setStart[n]!);
  for (let i = 0, j = 0; i < n; i++) if (setStart[i + 1]! > setStart[i]!) setData.set(over[j++]!, setStart[i]!);
  return { setLen, setData, setStart, sims };
}
