/**
 * Checkpoint format 5 reads the documents' keys from the log (src/store/file/keysFromLog.ts):
 * random tables (puts of 0 to K keys, replacements with other key counts, removals, puts again,
 * ids of every kind the log keeps) written and read back against their log are the table written,
 * record for record; and after random churn, a store whose log or checkpoint was then damaged
 * (torn, cut, a byte flipped, garbage appended, a record length or a header field changed) opens
 * from its checkpoint exactly as it opens with the whole log folded: the same answers, or the same
 * refusal. A checkpoint that does not fit its log never yields keys.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { FileStore } from '../../../src/store/file/store.js';
import type { StoreManifest } from '../../../src/store/types.js';
import '../../helpers/fuzz.js';
import { LoggedTable, readWithLog } from './loggedTable.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-keyslog-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const K = 5;
const manifest = { keysPerDoc: K } as StoreManifest;
const keys = (seed: number, n = K) => Float64Array.from({ length: n }, (_, j) => ((seed * 7919 + j * 104729) % 89) * 2 ** 21 + j + seed * 2 ** 40);
// Ids the log keeps as they are: ASCII, other UTF-8, a surrogate pair (kept as UTF-16 in the id index).
const idOf = (i: number) => (i % 13 === 12 ? `😀${i}` : i % 11 === 10 ? `é${i}` : `d${i}`);

const op = fc.oneof(
  { weight: 5, arbitrary: fc.record({ put: fc.integer({ min: 0, max: 40 }), seed: fc.nat(1000), n: fc.integer({ min: 0, max: K }) }) },
  { weight: 2, arbitrary: fc.record({ remove: fc.integer({ min: 0, max: 40 }) }) },
);
type Op = { put: number; seed: number; n: number } | { remove: number };

/** A batch's puts (each id once, the last wins) and removes (of ids not put in it). */
function split(batch: Op[]): { puts: Map<string, { seed: number; n: number }>; removes: string[] } {
  const puts = new Map<string, { seed: number; n: number }>();
  for (const o of batch) if ('put' in o) puts.set(idOf(o.put), o);
  const removes = [...new Set(batch.flatMap((o) => ('remove' in o && !puts.has(idOf(o.remove)) ? [idOf(o.remove)] : [])))];
  return { puts, removes };
}

const batches = fc.array(fc.array(op, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 8 });

test('keysFromLog: a random table written and read back against its log is the table written', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(batches, async (bs) => {
      const t = await LoggedTable.create(manifest);
      for (const b of bs) {
        const { puts, removes } = split(b);
        if (puts.size) await t.put([...puts].map(([id, o]) => ({ id, keys: keys(o.seed, o.n), recordBytes: o.seed + 1 })));
        if (removes.length) await t.remove(removes);
      }
      const d = path.join(dir, `rt${run++}`);
      mkdirSync(d);
      await t.write(d);
      const got = await readWithLog(d, manifest);
      assert.ok(got, 'a checkpoint that fits its log is read');
      const ids = Array.from({ length: 41 }, (_, i) => idOf(i));
      const recs = (x: (Uint8Array | null)[]) => x.map((r) => (r ? Buffer.from(r).toString('hex') : null));
      assert.deepEqual(recs(await got.table.get(ids)), recs(await t.table.get(ids)));
      const qs = Array.from({ length: 60 }, (_, i) => keys(i * 17));
      assert.deepEqual(await got.table.lookup(qs, 100), await t.table.lookup(qs, 100));
      assert.equal(await got.table.size(), await t.table.size());
      rmSync(d, { recursive: true, force: true });
    }),
    { numRuns: 60 },
  );
});

/** A store's answers, or the refusal to open. */
async function opened(d: string): Promise<unknown> {
  const s = new FileStore(d);
  try {
    await s.open(manifest);
  } catch (e) {
    return { refused: (e as Error).message.replace(d, 'DIR') };
  }
  try {
    const ids = Array.from({ length: 41 }, (_, i) => idOf(i));
    const recs = (await s.get(ids)).map((r) => (r ? Buffer.from(r).toString('hex') : null));
    const found = (await s.lookup(Array.from({ length: 60 }, (_, i) => keys(i * 17)), 1000)).map((l) => l.map((x) => x.id).sort());
    return { size: await s.size(), recs, found };
  } finally {
    // No checkpoint written at close: the other copy must see the same files.
    (s as unknown as { broken: Error }).broken = new Error('test: no checkpoint at close');
    await s.close();
  }
}

/** The damage done to a closed store's files. */
const damage = fc.oneof(
  fc.record({ cutLog: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ flipLog: fc.double({ min: 0, max: 1, noNaN: true }), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ garbage: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
  fc.record({ cutTable: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ recLen: fc.nat(), by: fc.constantFrom(-8, 8, 1) }),
  fc.record({ header: fc.constantFrom('applied', 'logEnd', 'logTail', 'recordsEnd'), by: fc.integer({ min: -3, max: 3 }) }),
);

/** Whether the checkpoint in `d` (its header readable) covers more log than the log holds. */
function shortLog(d: string): boolean {
  try {
    const b = readFileSync(path.join(d, 'table'));
    const h = JSON.parse(b.subarray(4, 4 + b.readUInt32LE(0)).toString()) as { logEnd: number; generation: number };
    return h.generation === 0 && h.logEnd > readFileSync(path.join(d, 'log')).length;
  } catch {
    return false;
  }
}

/** Applies `dmg` to the store in `d`. */
function spoil(d: string, dmg: Record<string, unknown>): void {
  const log = path.join(d, 'log');
  const table = path.join(d, 'table');
  const size = readFileSync(log).length;
  if ('cutLog' in dmg) truncateSync(log, Math.floor(size * (dmg.cutLog as number)));
  else if ('flipLog' in dmg) {
    const b = readFileSync(log);
    b[Math.min(size - 1, Math.floor(size * (dmg.flipLog as number)))]! ^= 1 << (dmg.bit as number);
    writeFileSync(log, b);
  } else if ('garbage' in dmg) appendFileSync(log, dmg.garbage as Uint8Array);
  else if ('cutTable' in dmg) truncateSync(table, Math.floor(readFileSync(table).length * (dmg.cutTable as number)));
  else {
    const b = readFileSync(table);
    const n = b.readUInt32LE(0);
    const h = JSON.parse(b.subarray(4, 4 + n).toString()) as { sections: number[]; slots: number } & Record<string, number>;
    if ('header' in dmg) {
      h[dmg.header as string] = h[dmg.header as string]! + (dmg.by as number);
      const hb = Buffer.from(JSON.stringify(h));
      const len = Buffer.alloc(4);
      len.writeUInt32LE(hb.length);
      writeFileSync(table, Buffer.concat([len, hb, b.subarray(4 + n)]));
    } else if (h.slots > 0) {
      // recLen is the second section.
      const at = 4 + n + h.sections[0]! + 4 * ((dmg.recLen as number) % h.slots);
      b.writeUInt32LE((b.readUInt32LE(at) + (dmg.by as number)) >>> 0, at);
      writeFileSync(table, b);
    }
  }
}

test('keysFromLog: a damaged log or checkpoint opens from the checkpoint exactly as with the log folded', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(batches, damage, async (bs, dmg) => {
      const d = path.join(dir, `dmg${run++}`);
      const s = new FileStore(d);
      await s.open(manifest);
      bs[0]!.unshift({ put: 0, seed: 1, n: K });
      for (const b of bs) {
        const { puts, removes } = split(b);
        if (puts.size) await s.put([...puts].map(([id, o]) => ({ id, keys: keys(o.seed, o.n), record: Buffer.from(`${id}:${o.seed}`) })));
        if (removes.length) await s.removeMany(removes.map((id) => ({ id, keys: new Float64Array(0) })));
      }
      await s.close();
      spoil(d, dmg);
      const folded = `${d}-folded`;
      cpSync(d, folded, { recursive: true });
      rmSync(path.join(folded, 'table'), { force: true });
      const got = await opened(d);
      if (shortLog(d)) {
        // A log shorter than the checkpoint covers lost acknowledged writes: the open fails, naming the way out.
        assert.match(String((got as { refused?: string }).refused), /is damaged: its log has \d+ bytes, but its checkpoint covers \d+ bytes/);
      } else assert.deepEqual(got, await opened(folded));
      rmSync(d, { recursive: true, force: true });
      rmSync(folded, { recursive: true, force: true });
    }),
    { numRuns: 80 },
  );
});
