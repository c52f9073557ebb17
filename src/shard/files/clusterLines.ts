/**
 * A decide task's ids and cluster lines as bytes (src/shard/files/byteStrings.ts): each clustered
 * document's id as it is printed, and each cluster's line after `{"cluster":N` written straight
 * into the clusters.bin column, byte for byte what src/io/write/write.ts `formatCluster` gives
 * (test/shard/files/clusterLines.test.ts compares them), without the arrays it stringifies.
 * @module
 */
import { ByteStrings } from './byteStrings.js';

/** How an id is written as JSON: quoted as its bytes are, through JSON.stringify (it has characters JSON escapes), or a number. */
const IdKind = { Plain: 0, Escaped: 1, Number: 2 } as const;

/** Documents' ids by position: their text (a number's decimal digits) and how each is written as JSON. */
export interface DocIds {
  text: ByteStrings;
  kind: Uint8Array;
}

/** Room for `count` ids. */
export function docIds(count: number): DocIds {
  return { text: new ByteStrings(count), kind: new Uint8Array(count) };
}

/** Whether JSON.stringify writes `s` as its characters in quotes (no quote, backslash, control character or surrogate). */
function plainJson(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** Appends the next position's id (a string from the input, or a document number). */
export function pushId(ids: DocIds, p: number, id: string | number): void {
  if (typeof id === 'number') {
    ids.kind[p] = IdKind.Number;
    ids.text.push(String(id));
  } else {
    ids.kind[p] = plainJson(id) ? IdKind.Plain : IdKind.Escaped;
    ids.text.push(id);
  }
}

/** Adds position p's id, as JSON, to the line being built. */
function writeId(out: ByteStrings, ids: DocIds, p: number): void {
  const k = ids.kind[p];
  if (k === IdKind.Number) out.copy(ids.text, p);
  else if (k === IdKind.Plain) {
    out.write('"');
    out.copy(ids.text, p);
    out.write('"');
  } else out.writeText(JSON.stringify(ids.text.get(p)));
}

/** One cluster: its members' positions `order[j0..j1)`, the kept one (−1: none), and with the verified rule each member's kept document and similarity. */
export interface LineOf {
  order: Int32Array;
  j0: number;
  j1: number;
  kept: number;
  verdicts?: { keptBy: Int32Array; similarity: Float64Array };
}

/** Appends a cluster's line after `{"cluster":N` (as formatCluster writes it, with a newline). */
export function writeClusterLine(out: ByteStrings, ids: DocIds, c: LineOf): void {
  const { order, j0, j1, kept, verdicts } = c;
  out.write(`,"size":${j1 - j0},"representative":`);
  if (kept < 0) out.write('null');
  else writeId(out, ids, kept);
  out.write(',"members":[');
  for (let j = j0; j < j1; j++) {
    if (j > j0) out.write(',');
    writeId(out, ids, order[j]!);
  }
  out.write(']');
  if (verdicts) {
    // A kept member (or any under --keep none) has nulls: it duplicates nothing.
    out.write(',"duplicate_of":[');
    for (let j = j0; j < j1; j++) {
      const p = order[j]!;
      const r = verdicts.keptBy[p]!;
      if (j > j0) out.write(',');
      if (r === p || r < 0) out.write('null');
      else writeId(out, ids, r);
    }
    out.write('],"similarity":[');
    for (let j = j0; j < j1; j++) {
      const p = order[j]!;
      const r = verdicts.keptBy[p]!;
      const x = verdicts.similarity[p]!;
      if (j > j0) out.write(',');
      // JSON writes a number as String does, and NaN or an infinity as null.
      out.write(r === p || r < 0 || !Number.isFinite(x) ? 'null' : String(x));
    }
    out.write(']');
  }
  out.write('}\n');
  out.end();
}
