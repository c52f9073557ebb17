/**
 * One 53-bit store key of a slot range of a signature, salted: the form of every key the online
 * index writes (bands, LSH-Forest prefixes, ensemble containment keys; docs/formats.md).
 * @module
 */
import { bandKey53, rangeHash } from '../../lsh/bandKeys.js';

const HI = new Uint32Array(1);
const LO = new Uint32Array(1);

/**
 * The band key (as `bandKeys` + `bandKey53`) of the `rows` slots of `sig` from `start`, with the
 * murmur3 seeds `s1` and `s2`, the high half XORed with `salt`: no subarray per key.
 * Why these parameters: called once per key of every added or queried document; an options object would be an allocation per key.
 */
export function rangeKey(sig: Uint32Array, start: number, rows: number, s1: number, s2: number, salt: number): number {
  rangeHash(sig, start, rows, s1, s2, HI, LO, 0);
  return bandKey53((HI[0]! ^ salt) >>> 0, LO[0]!);
}
