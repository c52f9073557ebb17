/**
 * The spans job's packed row files (src/shard/spans/rows.ts): drawn grouped rows (documents
 * ascending within a group, offsets ascending within a document, hashes and values anywhere in
 * uint32, empty groups) read back as themselves, group by group and over ranges of groups; and a
 * torn file, or a marker whose byte starts are not the groups', is a damaged file, never rows;
 * readers' sorted shares merge into one sorted list (mergeByDoc).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DamagedFileError } from '../../../src/shard/files/columns.js';
import { mergeByDoc, packRows, readPacked, type RowLayout } from '../../../src/shard/spans/rows.js';
import { rng } from '../../helpers/spansSets.js';

const LAYOUTS: RowLayout[] = [
  { kinds: ['raw', 'raw', 'delta', 'inDoc', 'inDoc', 'inDoc'], doc: 2 },
  { kinds: ['delta', 'inDoc', 'delta', 'delta', 'delta', 'var', 'var'], doc: 0 },
  { kinds: ['delta', 'var'] },
];

/** Drawn groups of rows as the stages write them: per group, documents ascending, each document's offsets ascending. */
function draw(seed: number, layout: RowLayout): { cols: Uint32Array[]; start: number[] } {
  const r = rng(seed);
  const big = (): number => (r.chance(0.1) ? 0xffffffff - r.int(3) : r.chance(0.5) ? r.int(1 << 30) * 4 + r.int(4) : r.int(300));
  const rows: number[][] = [];
  const start = [0];
  for (let g = 0, groups = 1 + r.int(5); g < groups; g++) {
    let doc = r.chance(0.3) ? r.int(1 << 20) : 0;
    let off = 0;
    for (let i = 0, n = r.chance(0.2) ? 0 : r.int(60); i < n; i++) {
      if (r.chance(0.3)) {
        doc += r.chance(0.1) ? r.int(1 << 28) : 1 + r.int(3);
        off = 0;
      }
      off += r.chance(0.1) ? r.int(1 << 20) : r.int(5);
      rows.push(layout.kinds.map((k, c) => (c === (layout.doc ?? 0) ? doc : k === 'inDoc' ? off + c : big())));
    }
    start.push(rows.length);
  }
  return { cols: layout.kinds.map((_, c) => Uint32Array.from(rows, (x) => x[c]!)), start };
}

describe('packed row files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rows-'));
  const file = path.join(dir, 'rows.u32');

  it('read back as the rows written, group by group and over ranges (drawn rows)', () => {
    for (let seed = 0; seed < 300; seed++) {
      const layout = LAYOUTS[seed % LAYOUTS.length]!;
      const { cols, start } = draw(seed, layout);
      const packed = packRows(cols, layout, start);
      writeFileSync(file, packed.buf);
      const G = start.length - 1;
      const r = rng(seed + 1000);
      const a = r.int(G);
      const b = a + 1 + r.int(G - a);
      for (const [x, y] of [[0, G], [a, a + 1], [a, b]] as const) {
        const got = readPacked(file, layout, { rows: start, bytes: packed.bytes }, [x, y]);
        cols.forEach((c, i) => assert.deepEqual(got[i], c.subarray(start[x], start[y]), `seed ${seed}, groups [${x}, ${y}), column ${i}`));
      }
    }
  });

  it("a torn file, or byte starts that are not the groups', is damaged", () => {
    for (let seed = 0; seed < 100; seed++) {
      const layout = LAYOUTS[seed % LAYOUTS.length]!;
      const { cols, start } = draw(seed, layout);
      const packed = packRows(cols, layout, start);
      const total = packed.bytes.at(-1)!;
      if (total === 0) continue;
      writeFileSync(file, packed.buf);
      truncateSync(file, rng(seed).int(total));
      assert.throws(() => readPacked(file, layout, { rows: start, bytes: packed.bytes }, [0, start.length - 1]), DamagedFileError, `seed ${seed}`);
      writeFileSync(file, packed.buf);
      // A group boundary moved by one byte: the groups either side no longer decode to their rows.
      const g = packed.bytes.findIndex((b, i) => i > 0 && i < packed.bytes.length - 1 && b > packed.bytes[i - 1]!);
      if (g < 0) continue;
      const moved = packed.bytes.map((b, i) => (i === g ? b - 1 : b));
      assert.throws(() => readPacked(file, layout, { rows: start, bytes: moved }, [g - 1, g + 1]), DamagedFileError, `seed ${seed}`);
    }
  });

  it("mergeByDoc: several readers' sorted shares merge into the rows sorted by (document, unit index), every column along (drawn shares)", () => {
    for (let seed = 0; seed < 200; seed++) {
      const r = rng(seed);
      const width = 2 + r.int(3);
      // Each (document, unit) is in one share (a unit is in one partition); each share is sorted.
      const all: number[][] = [];
      const parts: number[][][] = Array.from({ length: 1 + r.int(6) }, () => []);
      for (let d = 0, n = r.int(40); d < n; d++) {
        const doc = d * 3 + r.int(3);
        for (let k = 0, m = 1 + r.int(6); k < m; k++) {
          const row = [doc, k * 2 + r.int(2), ...Array.from({ length: width - 2 }, () => r.int(1 << 30))];
          all.push(row);
          parts[r.int(parts.length)]!.push(row);
        }
      }
      const cols = (rows: number[][]): Uint32Array[] => Array.from({ length: width }, (_, c) => Uint32Array.from(rows, (x) => x[c]!));
      const got = mergeByDoc(parts.map(cols), width);
      assert.deepEqual(got.map((c) => [...c]), cols(all).map((c) => [...c]), `seed ${seed}`);
    }
  });

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});
