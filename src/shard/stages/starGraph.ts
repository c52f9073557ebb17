/**
 * The link stage's graph steps over one partition's edges, on typed arrays: each document's distinct
 * neighbours, a large-star or small-star step (Kiveris et al., "Connected Components in MapReduce
 * and Beyond", SoCC 2014), and the edges a step writes, grouped by the partition of their first end.
 * @module
 */
import { writeColumns } from '../files/columns.js';
import { rangeOf } from '../files/job.js';

/** Edges to write, each at the partition of its first end. */
export class EdgeOut {
  private u = new Float64Array(1024);
  private v = new Float64Array(1024);
  n = 0;
  constructor(private readonly starts: Float64Array) {}

  push(u: number, v: number): void {
    if (this.n === this.u.length) {
      const u2 = new Float64Array(this.n * 2);
      const v2 = new Float64Array(this.n * 2);
      u2.set(this.u);
      v2.set(this.v);
      this.u = u2;
      this.v = v2;
    }
    this.u[this.n] = u;
    this.v[this.n++] = v;
  }

  /** Both orientations. */
  both(a: number, b: number): void {
    this.push(a, b);
    this.push(b, a);
  }

  /** Writes edges.bin: {@link columns}. */
  async write(file: string, plan: string): Promise<void> {
    await writeColumns(file, { kind: 'link-edges', plan: plan, meta: {} }, this.columns());
  }

  /** The edges grouped by the partition of u (a stable counting sort), with `pstart`. */
  columns(): { u: Float64Array; v: Float64Array; pstart: Float64Array } {
    const G = this.starts.length - 1;
    const part = new Int32Array(this.n);
    const pstart = new Float64Array(G + 1);
    for (let i = 0; i < this.n; i++) pstart[(part[i] = rangeOf(this.starts, this.u[i]!)) + 1]!++;
    for (let g = 0; g < G; g++) pstart[g + 1]! += pstart[g]!;
    const fill = pstart.slice(0, G);
    const u = new Float64Array(this.n);
    const v = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      const at = fill[part[i]!]!++;
      u[at] = this.u[i]!;
      v[at] = this.v[i]!;
    }
    return { u, v, pstart };
  }
}

/**
 * Each document of [lo, lo + size)'s distinct neighbours from edges (u[i], v[i]) (u in that range):
 * document lo + d's are `nbr[start[d] .. start[d + 1])`, ascending.
 */
export function neighbours(u: Float64Array, v: Float64Array, lo: number, size: number): { start: Float64Array; nbr: Float64Array } {
  const n = u.length;
  const start = new Float64Array(size + 1);
  for (let i = 0; i < n; i++) start[u[i]! - lo + 1]!++;
  for (let d = 0; d < size; d++) start[d + 1]! += start[d]!;
  const fill = start.slice(0, size);
  const all = new Float64Array(n);
  for (let i = 0; i < n; i++) all[fill[u[i]! - lo]!++] = v[i]!;
  const nbr = new Float64Array(n);
  let m = 0;
  for (let d = 0; d < size; d++) {
    const a = start[d]!;
    const e = start[d + 1]!;
    start[d] = m;
    if (e - a > 16) all.subarray(a, e).sort();
    else {
      for (let i = a + 1; i < e; i++) {
        const x = all[i]!;
        let j = i - 1;
        while (j >= a && all[j]! > x) {
          all[j + 1] = all[j]!;
          j--;
        }
        all[j + 1] = x;
      }
    }
    for (let i = a; i < e; i++) if (i === a || all[i] !== all[i - 1]) nbr[m++] = all[i]!;
  }
  start[size] = m;
  return { start, nbr: nbr.subarray(0, m) };
}

/**
 * One large-star step over the neighbourhoods of documents [lo, lo + size): each document u links
 * its larger neighbours to m, the smallest of u and its neighbours (written as (larger, m), for the
 * small-star step after). Also says whether every document was already a star's centre or leaf and,
 * if so, each one's label (its centre).
 */
export function largeStar(
  g: { start: Float64Array; nbr: Float64Array },
  lo: number,
  out: { push(u: number, v: number): void },
): { star: boolean; nodes: number; centres: number; largest: number } {
  const size = g.start.length - 1;
  let star = true;
  let nodes = 0;
  let centres = 0;
  let largest = 0;
  for (let d = 0; d < size; d++) {
    const a = g.start[d]!;
    const e = g.start[d + 1]!;
    if (e === a) continue;
    nodes++;
    const u = lo + d;
    const first = g.nbr[a]!;
    const m = Math.min(u, first);
    if (first > u) {
      centres++;
      largest = Math.max(largest, e - a + 1);
    } else if (e - a !== 1) star = false;
    for (let i = a; i < e; i++) if (g.nbr[i]! > u) out.push(g.nbr[i]!, m);
  }
  return { star, nodes, centres, largest };
}

/**
 * One small-star step over documents [lo, lo + size) and their smaller neighbours: u and each of
 * them are linked to m, the smallest (both orientations, for the large-star step after).
 */
export function smallStar(g: { start: Float64Array; nbr: Float64Array }, lo: number, out: { both(a: number, b: number): void }): number {
  const size = g.start.length - 1;
  let nodes = 0;
  for (let d = 0; d < size; d++) {
    const a = g.start[d]!;
    const e = g.start[d + 1]!;
    if (e === a) continue;
    nodes++;
    const u = lo + d;
    const m = g.nbr[a]!;
    for (let i = a + 1; i < e; i++) out.both(g.nbr[i]!, m);
    out.both(u, m);
  }
  return nodes;
}
