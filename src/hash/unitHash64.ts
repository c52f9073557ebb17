/**
 * The 64-bit hash of `neardup spans`' line, paragraph and sentence units: of a unit's normalized
 * UTF-16 code units, computed in the WebAssembly kernels (src/wasm/kernels.wat, `hashUnits`) and
 * here, for runtimes without them (`NEARDUP_NO_WASM`); the two give the same bits
 * (test/hash/unitHash64.test.ts). Two 64-bit lanes take 8 code units a step, 4 each, as one
 * little-endian word: a lane is x ← ((x ^ word) · P) ^ ((x ^ word) · P >>> 32). The last 1–7
 * code units: 4 into lane a, the rest (1–3, zero above them) into lane b. Then b takes the length,
 * lane a and a zero word, with three other multipliers. Its low and high 32 bits are the unit's
 * hash (`out[0]`, `out[1]`).
 *
 * Why not `textHash2` (./murmur3.ts): its 32-bit lanes take two code units a step, each step
 * waiting on the last multiply; these take eight, so a unit costs about a quarter (a third of a
 * line run's kernel time was that hash). JavaScript has no 64-bit multiply without BigInt, so here
 * each product is made of 16-bit pieces, at 4–5 times `textHash2`'s cost: where the kernels exist,
 * src/spans/unitHash.ts hashes every unit in them, the string path's too.
 * @module
 */

/** The starting lanes and the multipliers, as [high, low] 32-bit halves (scripts/build-wasm.mjs has the same in hex). */
const A0: readonly [number, number] = [0x243f6a88, 0x85a308d3];
const B0: readonly [number, number] = [0x13198a2e, 0x03707344];
const PA: readonly [number, number] = [0x9e3779b9, 0x7f4a7c15];
const PB: readonly [number, number] = [0xc2b2ae3d, 0x27d4eb4f];
const PC: readonly [number, number] = [0x165667b1, 0x9e3779f9];
const PD: readonly [number, number] = [0xd6e8feb8, 0x6659fd93];

/** The lanes being hashed, as 32-bit halves: a module's scratch (the hash calls nothing that could enter it again). */
let aHi = 0;
let aLo = 0;
let bHi = 0;
let bLo = 0;
/** {@link mix}'s answer. */
let rHi = 0;
let rLo = 0;

/**
 * (r) ← ((x ^ k) · p mod 2⁶⁴) ^ that >>> 32, all as 32-bit halves. The low halves' full product
 * from 16-bit pieces (each below 2³², their sums below 2⁵³: exact as doubles); the cross
 * products' low halves by `Math.imul`.
 * Why these parameters: the halves of three 64-bit values, in the hot loop of the string path, where an object would allocate per word.
 */
function mix(xHi: number, xLo: number, kHi: number, kLo: number, p: readonly [number, number]): void {
  const h = (xHi ^ kHi) >>> 0;
  const l = (xLo ^ kLo) >>> 0;
  const pl = p[1];
  const l0 = l & 0xffff;
  const l1 = l >>> 16;
  const p0 = pl & 0xffff;
  const p1 = pl >>> 16;
  const mid = l0 * p1 + l1 * p0;
  const low = l0 * p0 + (mid % 0x10000) * 0x10000;
  const lo = low >>> 0;
  const carry = Math.floor(low / 0x100000000);
  const hi = (l1 * p1 + Math.floor(mid / 0x10000) + carry + Math.imul(h, pl) + Math.imul(l, p[0])) >>> 0;
  rHi = hi;
  rLo = (lo ^ hi) >>> 0;
}

/** The 64-bit word of code units `c[i]`, `c[i + 1]` (low half) and `c[i + 2]`, `c[i + 3]` (high half) into lane a. */
function laneA(c: ArrayLike<number>, i: number): void {
  mix(aHi, aLo, c[i + 2]! | (c[i + 3]! << 16), c[i]! | (c[i + 1]! << 16), PA);
  aHi = rHi;
  aLo = rLo;
}

/** The same into lane b. */
function laneB(kHi: number, kLo: number, p: readonly [number, number]): void {
  mix(bHi, bLo, kHi, kLo, p);
  bHi = rHi;
  bLo = rLo;
}

/**
 * The hash of the `len` code units of `c` from `at`: its low 32 bits to `out[0]`, its high 32 bits to `out[1]`. Returns `len`.
 */
export function unitHash64(c: ArrayLike<number>, at: number, len: number, out: Uint32Array): number {
  aHi = A0[0];
  aLo = A0[1];
  bHi = B0[0];
  bLo = B0[1];
  const blocks = at + (len & ~7);
  let i = at;
  for (; i < blocks; i += 8) {
    laneA(c, i);
    laneB(c[i + 6]! | (c[i + 7]! << 16), c[i + 4]! | (c[i + 5]! << 16), PB);
  }
  let r = len & 7;
  if (r >= 4) {
    laneA(c, i);
    i += 4;
    r -= 4;
  }
  if (r > 0) laneB(r > 2 ? c[i + 2]! : 0, c[i]! | (r > 1 ? c[i + 1]! << 16 : 0), PB);
  laneB(0, len, PC);
  laneB(aHi, aLo, PD);
  laneB(0, 0, PA);
  out[0] = bLo;
  out[1] = bHi;
  return len;
}

/** {@link unitHash64} of a string's code units. */
export function unitHash64Text(text: string, out: Uint32Array): number {
  const c = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) c[i] = text.charCodeAt(i);
  return unitHash64(c, 0, c.length, out);
}
