/**
 * The file store's checkpoint (src/store/file/checkpoint.ts, format 7: the table's arrays, which
 * hold no document's keys; the key table packed, no forward links): the exact bytes of a small
 * table's sections; a table after adds, replacements (some with no keys) and removals, written and
 * read back against its log, is the table written and goes on working; after random churn a store
 * opened from its checkpoint answers as one that folds the whole log; a store whose checkpoint is
 * format 3 or 4 (written by earlier versions, kept in test/fixtures/file-store-table3 and -table4)
 * folds its log instead, answers alike and writes format 7 at its close; one of format 6 (no
 * screens) is read as it is; a torn checkpoint, one of another format (older or newer), byte order, generation, record layout, or one whose log is not
 * the log it was written after is ignored and the log is folded; one that covers more log than there
 * is fails the open (acknowledged writes are missing).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { LogReplica } from '../../../src/store/log/replica.js';
import { LOCATOR_BYTES, locator } from '../../../src/store/file/replay.js';
import { readCheckpoint } from '../../../src/store/file/checkpoint.js';
import { FileStore } from '../../../src/store/file/store.js';
import type { StoreManifest } from '../../../src/store/types.js';
import type { MemoryTableImage } from '../../../src/store/memory/image.js';
import '../../helpers/fuzz.js';
import { repoRoot } from '../../helpers.js';
import { LoggedTable, readWithLog } from './loggedTable.js';
import { installFaultHooks, type FaultHooks } from '../../../src/common/faults.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-filecp-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const K = 4;
const manifest = { keysPerDoc: K } as StoreManifest;
// Keys drawn from a small range, so that chains are shared and long.
const keys = (seed: number) => Float64Array.from({ length: K }, (_, j) => ((seed * 7919 + j * 104729) % 97) * 2 ** 21 + j);

/** The ids of an image's slots (null: free), decoded from its id bytes. */
function idsOf(img: MemoryTableImage): (string | null)[] {
  let o = 0;
  return Array.from(img.ids.len.subarray(0, img.slots), (l) => {
    if (l === -1) return null;
    const b = Buffer.from(img.ids.bytes.subarray(o, o += l));
    return b[0] === 0xff ? b.subarray(1).toString('utf16le') : b.toString('utf8');
  });
}

/** A checkpoint file's header and its sections' bytes, by name. */
function sectionsOf(file: string): { header: Record<string, unknown>; parts: Buffer[] } {
  const b = readFileSync(file);
  const n = b.readUInt32LE(0);
  const header = JSON.parse(b.subarray(4, 4 + n).toString()) as { sections: number[] };
  let o = 4 + n;
  return { header, parts: header.sections.map((len) => b.subarray(o, o += len)) };
}

test('checkpoint: format 7 bytes of a two-document table', async () => {
  const m = { keysPerDoc: 2 } as StoreManifest;
  const t = await LoggedTable.create(m);
  // Homes (key / 2^21, of a 1,024-entry table) 5, 9, and 9 again (it goes to 10).
  const [k1, k2, k3] = [5 * 2 ** 21, 9 * 2 ** 21, 9 * 2 ** 21 + 1];
  await t.put([{ id: 'a', keys: Float64Array.of(k1, k2), recordBytes: 3 }]);
  await t.put([{ id: 'b', keys: Float64Array.of(k1, k3), recordBytes: 4 }]);
  const d = path.join(dir, 'bytes');
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d);
  await t.write(d);
  const { header, parts } = sectionsOf(path.join(d, 'table'));
  assert.equal(header.format, 'neardup-file-table 7');
  assert.deepEqual([header.slots, header.used, header.tableSize, header.keyOffset, header.keyCoding], [2, 3, 1024, LOCATOR_BYTES, 'f64']);
  const [meta, recLen, arena, prev, tBits, tDist, tKeys, tHeads, idBytes, idLen] = parts;
  const f64 = (...x: number[]) => Buffer.from(Float64Array.from(x).buffer);
  const i32 = (...x: number[]) => Buffer.from(Int32Array.from(x).buffer);
  assert.equal(meta!.toString(), '{"free":[],"expiry":[]}');
  assert.deepEqual(recLen, i32(12, 12));
  // The records: the locators only (the table keeps no keys).
  assert.deepEqual(arena, Buffer.concat([locator(0, 3), locator(3, 4)]));
  // Postings 0, 1 (a's keys), 2, 3 (b's): b's k1 comes before a's in k1's chain; each chain's head
  // holds its key table entry (5, 9, 10) as -2 − entry.
  assert.deepEqual(prev, i32(2, -11, -7, -12));
  const bits = Buffer.alloc(128);
  bits[0] = 1 << 5;
  bits[1] = (1 << 1) | (1 << 2);
  assert.deepEqual(tBits, bits);
  // A table of fewer than 2^21 entries keeps its keys as they are: no distances.
  assert.equal(tDist!.length, 0);
  assert.deepEqual(tKeys, f64(k1, k2, k3));
  assert.deepEqual(tHeads, i32(2, 1, 3));
  assert.deepEqual([idBytes!.toString(), idLen], ['ab', i32(1, 1)]);
  const got = (await readWithLog(d, m))!;
  // Forward links, made again: b's k1 is followed by a's, every other posting ends its chain.
  assert.deepEqual(Array.from(got.table.image().next.subarray(0, 4)), [-1, -1, 0, -1]);
  assert.deepEqual(Buffer.from(got.table.image().arena), Buffer.concat([locator(0, 3), locator(3, 4)]));
  assert.deepEqual([got.table.keysOf('a'), got.table.keysOf('b')], [Float64Array.of(k1, k2), Float64Array.of(k1, k3)]);
  assert.deepEqual((await got.table.lookup([Float64Array.of(k1)], 10))[0]!.map((x) => x.id), ['b', 'a']);
});

for (const [format, size] of [[3, 38], [4, 39]] as const) {
  test(`checkpoint: a store whose checkpoint is format ${format} folds its log instead, and writes format 7 at its close`, async () => {
    const fixture = path.join(repoRoot, `test/fixtures/file-store-table${format}`);
    const d = path.join(dir, `format${format}`);
    cpSync(fixture, d, { recursive: true });
    assert.equal(sectionsOf(path.join(d, 'table')).header.format, `neardup-file-table ${format}`);
    const ids = [...Array.from({ length: 42 }, (_, i) => `d${i}`), 'é😀'];
    const s = new FileStore(d);
    await s.open(manifest);
    const st = await s.stats();
    assert.deepEqual([st.framesFoldedAtOpen, st.checkpointLogBytes], [st.logEntries, 0]);
    const want = await answersOf(s, ids);
    assert.equal((want as { size: number }).size, size);
    assert.deepEqual(await s.expiredIds(4102444800036 + 1, 10), ['d36']);
    // The fixture with its log folded instead answers alike.
    const folded0 = path.join(dir, `format${format}-folded`);
    cpSync(fixture, folded0, { recursive: true });
    rmSync(path.join(folded0, 'table'));
    const fold0 = new FileStore(folded0);
    await fold0.open(manifest);
    assert.deepEqual(await answersOf(fold0, ids), want);
    await fold0.close();
    // Its manifest (format 1, its frames of version 1) is rewritten as format 4 before the first frame of version 3.
    const formatOf = () => (JSON.parse(readFileSync(path.join(d, 'manifest.json'), 'utf8')) as { format: string }).format;
    assert.equal(formatOf(), 'neardup-file-store 1');
    await s.put([{ id: 'n', keys: keys(1), record: Buffer.from('n') }]);
    assert.equal(formatOf(), 'neardup-file-store 4');
    await s.close();
    // The next checkpoint is format 7.
    assert.equal(sectionsOf(path.join(d, 'table')).header.format, 'neardup-file-table 7');
    await fromCheckpointAsFolded(d, ids);
  });
}

/** The key table's occupied entries: [key, head]. */
const occupied = (img: MemoryTableImage) => Array.from(img.tHead).flatMap((h, i) => (h === -1 ? [] : [[img.tKey[i], h]]));

test('checkpoint: the table read back is the table written, and goes on working', () => readBack());

test('checkpoint: written through a buffer of 64 bytes (its halves filled while the other is written, records longer than a half), read back the same', async () => {
  installFaultHooks({ fileStoreCheckpointChunk: () => 64 });
  try {
    await readBack();
  } finally {
    installFaultHooks({ fileStoreCheckpointChunk: undefined });
  }
});

/** Writes a checkpoint of a churned table, reads it back: the same table, which answers as the original after the same writes. */
async function readBack(): Promise<void> {
  const t = await LoggedTable.create(manifest);
  const rep = t.rep;
  const put = (id: string, seed: number, noKeys = false) => t.put([{ id, keys: noKeys ? new Float64Array(0) : keys(seed), recordBytes: seed + 1 }]);
  for (let i = 0; i < 300; i++) await put(`d${i}`, i);
  // Ids that are not ASCII (the table keeps one with a surrogate pair as UTF-16, the log as UTF-8), or empty.
  for (const id of ['é', '😀', 'a😀é', '']) await put(id, 7);
  for (let i = 0; i < 300; i += 3) await put(`d${i}`, i + 1000);
  for (let i = 1; i < 300; i += 7) await put(`d${i}`, i, true);
  for (let i = 2; i < 300; i += 5) await t.remove([`d${i}`]);
  // Removed and put again, with other keys.
  await t.put([{ id: 'd7', keys: keys(4321) }, { id: 'd12', keys: keys(999) }]);
  const d = mkdtempSync(path.join(dir, 'readback-'));
  const at = await t.write(d);
  const got = (await readWithLog(d, manifest))!;
  assert.deepEqual(got.at, at);
  const [a, b] = [rep.table.image(), got.table.image()];
  assert.deepEqual([idsOf(b), b.free, b.used, b.slots], [idsOf(a), a.free, a.used, a.slots]);
  assert.deepEqual([b.tHead, occupied(b), b.next.subarray(0, b.slots * K)], [a.tHead, occupied(a), a.next]);
  // The forward links, rebuilt from the backward ones: those of every posting as written.
  assert.deepEqual(b.prev.subarray(0, b.slots * K), a.prev);
  assert.ok(b.arena.length < a.arena.length, 'dead arena bytes are not written');
  const all = [...Array.from({ length: 300 }, (_, i) => `d${i}`), 'a😀é', 'é', '😀', '', 'x'];
  assert.deepEqual(await got.table.get(all), await rep.table.get(all));
  // Both tables take the same writes and answer alike.
  const restored = LogReplica.restored(got.table, LOCATOR_BYTES, 30);
  for (const r of [rep, restored]) {
    await r.apply({ op: 'remove', docs: [{ id: 'd0' }, { id: 'd4' }, { id: '😀' }] });
    await r.apply({ op: 'put', docs: [{ id: 'd3', keys: keys(5), extra: locator(1, 1) }, { id: 'n', keys: keys(9), extra: locator(2, 2) }] });
    for (let i = 0; i < 2000; i++) await r.apply({ op: 'put', docs: [{ id: `g${i}`, keys: keys(i), extra: locator(i, 1) }] });
  }
  const qs = Array.from({ length: 120 }, (_, i) => keys(i));
  assert.deepEqual(await restored.table.lookup(qs, 1000), await rep.table.lookup(qs, 1000));
  assert.deepEqual(await restored.table.get(all), await rep.table.get(all));
  // Another generation: not read.
  const log = await open(path.join(d, 'log'), 'r');
  try {
    const fit = { manifest, logSize: at.logEnd, generation: 0, keyOffset: LOCATOR_BYTES, log };
    assert.equal(await readCheckpoint(d, { ...fit, generation: 1 }), null);
    // A log shorter than the checkpoint covers lost acknowledged writes: refused, not folded.
    await assert.rejects(readCheckpoint(d, { ...fit, logSize: at.logEnd - 1 }), /is damaged: its log has \d+ bytes, but its checkpoint covers/);
  } finally {
    await log.close();
  }
}

/** A store's answers: size, every id's record, lookups, scan. */
async function answersOf(s: FileStore, ids: string[]): Promise<unknown> {
  const scanned: string[] = [];
  for await (const d of s.scan()) scanned.push(`${d.id}=${Buffer.from(d.record).toString('hex')}`);
  const recs = (await s.get(ids)).map((r) => (r ? Buffer.from(r).toString('hex') : null));
  const found = (await s.lookup(Array.from({ length: 97 }, (_, i) => keys(i)), 1000)).map((l) => l.map((d) => d.id).sort());
  return { size: await s.size(), recs, found, scanned: scanned.sort() };
}

/**
 * Opens the store in `d` from its checkpoint (nothing folded; `hooks` installed for that open
 * only), then again with the checkpoint deleted (the whole log folded): both answer alike.
 */
async function fromCheckpointAsFolded(d: string, ids: string[], hooks: FaultHooks = {}): Promise<void> {
  const fromCheckpoint = new FileStore(d);
  installFaultHooks(hooks);
  try {
    await fromCheckpoint.open(manifest);
  } finally {
    installFaultHooks(Object.fromEntries(Object.keys(hooks).map((k) => [k, undefined])));
  }
  assert.equal((await fromCheckpoint.stats()).framesFoldedAtOpen, 0);
  const want = await answersOf(fromCheckpoint, ids);
  await fromCheckpoint.close();
  rmSync(path.join(d, 'table'));
  const folded = new FileStore(d);
  await folded.open(manifest);
  assert.ok(((await folded.stats()).framesFoldedAtOpen as number) > 0);
  assert.deepEqual(await answersOf(folded, ids), want);
  await folded.close();
}

const op = fc.oneof(
  { weight: 5, arbitrary: fc.record({ put: fc.integer({ min: 0, max: 60 }), seed: fc.nat(500), empty: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ remove: fc.integer({ min: 0, max: 60 }) }) },
);
// Ids of every kind the id index keeps apart: ASCII, other UTF-8, with a surrogate pair (the log keeps ids as UTF-8, so no lone surrogate here).
const idOf = (i: number) => (i % 13 === 12 ? `😀${i}` : i % 11 === 10 ? `é${i}` : `d${i}`);

test('checkpoint: after random churn, a store opened from its checkpoint answers as the log folded', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 }), async (batches) => {
      const d = path.join(dir, `churn${run++}`);
      const s = new FileStore(d);
      await s.open(manifest);
      // At least one put: a store with an empty log writes no checkpoint.
      batches[0]!.unshift({ put: 0, seed: 1, empty: false });
      for (const batch of batches) {
        const puts = new Map<string, { seed: number; empty: boolean }>();
        const removes = new Set<string>();
        for (const o of batch) if ('put' in o) puts.set(idOf(o.put), o);
        for (const o of batch) if ('remove' in o && !puts.has(idOf(o.remove))) removes.add(idOf(o.remove));
        const entries = [...puts].map(([id, o]) => ({ id, keys: o.empty ? new Float64Array(0) : keys(o.seed), record: Buffer.from(`${id}:${o.seed}`) }));
        await s.put(entries);
        if (removes.size) await s.removeMany([...removes].map((id) => ({ id, keys: new Float64Array(0) })));
      }
      await s.close();
      const ids = Array.from({ length: 62 }, (_, i) => idOf(i));
      // Two runs in three rebuild the table in worker threads, as stores of 2^18 documents and more
      // do; in one of those the worker's script does not load, and the rebuild runs in this thread.
      await fromCheckpointAsFolded(d, ids, {
        fileStoreWorkersFrom: run % 3 ? () => 0 : undefined,
        fileStoreRebuildScript: run % 3 === 2 ? () => new URL('./no-such-worker.js', import.meta.url) : undefined,
      });
      rmSync(d, { recursive: true, force: true });
    }),
    { numRuns: 12 },
  );
});

/** A store in `d` of 200 documents in 20 puts, closed with its checkpoint; their ids. */
async function twoHundred(d: string): Promise<string[]> {
  const s = new FileStore(d);
  await s.open(manifest);
  for (let b = 0; b < 20; b++)
    await s.put(Array.from({ length: 10 }, (_, i) => ({ id: `d${b * 10 + i}`, keys: keys(b * 10 + i), record: Buffer.from(`r${b}.${i}`) })));
  await s.close();
  return Array.from({ length: 200 }, (_, i) => `d${i}`);
}

test('checkpoint: a rebuild worker that says it worked but wrote nothing: the spot check sees it, the log is folded, the answers are right', async () => {
  // Node once sent a worker a 4 GiB key array as an empty one: it wrote nothing and answered true.
  const liar = new URL(
    `data:text/javascript,${
      encodeURIComponent("import { parentPort } from 'node:worker_threads'; parentPort.postMessage('started'); parentPort.postMessage(true);")
    }`,
  );
  const d = path.join(dir, 'liar');
  const ids = await twoHundred(d);
  const t = new FileStore(d);
  await t.open(manifest);
  const want = await answersOf(t, ids);
  await t.close();
  for (const job of ['both', 'one'] as const) {
    let started = 0;
    installFaultHooks({
      fileStoreWorkersFrom: () => 0,
      fileStoreRebuildScript: () => (job === 'both' || started++ === 1 ? liar : new URL('../../../src/store/file/rebuildWorker.js', import.meta.url)),
    });
    const u = new FileStore(d);
    try {
      await u.open(manifest);
    } finally {
      installFaultHooks({ fileStoreWorkersFrom: undefined, fileStoreRebuildScript: undefined });
    }
    assert.ok(((await u.stats()).framesFoldedAtOpen as number) > 0, `${job}: the log folded`);
    assert.deepEqual(await answersOf(u, ids), want);
    await u.close();
  }
});

test('checkpoint: torn, of another format or byte order, or past the log: ignored, the log is folded', async () => {
  const d = path.join(dir, 'bad');
  const ids = await twoHundred(d);
  const table = path.join(d, 'table');
  const good = readFileSync(table);
  const open = async () => {
    const t = new FileStore(d);
    await t.open(manifest);
    const got = { folded: (await t.stats()).framesFoldedAtOpen, answers: await answersOf(t, ids) };
    await t.close();
    return got;
  };
  const want = await open();
  assert.equal(want.folded, 0);
  const header = JSON.parse(good.subarray(4, 4 + good.readUInt32LE(0)).toString()) as Record<string, unknown>;
  /** The checkpoint with its header changed (same length of file otherwise). */
  const withHeader = (change: Record<string, unknown>) => {
    const h = Buffer.from(JSON.stringify({ ...header, ...change }));
    const n = Buffer.alloc(4);
    n.writeUInt32LE(h.length);
    return Buffer.concat([n, h, good.subarray(4 + good.readUInt32LE(0))]);
  };
  const cases: [string, () => void][] = [
    ['torn', () => truncateSync(table, good.length - 100)],
    ['format 2', () => writeFileSync(table, withHeader({ format: 'neardup-file-table 2' }))],
    ['format 5', () => writeFileSync(table, withHeader({ format: 'neardup-file-table 5' }))],
    ['a newer format', () => writeFileSync(table, withHeader({ format: 'neardup-file-table 8' }))],
    // A log that is not the one the checkpoint was written after: its last bytes differ.
    ['another log tail', () => writeFileSync(table, withHeader({ logTail: ((header.logTail as number) + 1) >>> 0 }))],
    ['a log end inside a frame', () => writeFileSync(table, withHeader({ logEnd: (header.logEnd as number) - 3 }))],
    ['another record layout', () => writeFileSync(table, withHeader({ keyOffset: 20 }))],
    ['another byte order', () => writeFileSync(table, withHeader({ byteOrder: 'BE' }))],
    ['counts not matching the sections', () => writeFileSync(table, withHeader({ slots: (header.slots as number) + 1 }))],
    ['garbage header', () => writeFileSync(table, Buffer.from([255, 255, 255, 255, 1, 2]))],
  ];
  // A checkpoint past the log's end: the open fails (acknowledged writes are missing), saying so.
  writeFileSync(table, withHeader({ logEnd: 1e12 }));
  await assert.rejects(open(), /is damaged: .*deleting its table file opens the log as it was copied/);
  writeFileSync(table, good);
  // Format 6 (no screens: every table record is a locator) is read as it is, not folded.
  writeFileSync(table, withHeader({ format: 'neardup-file-table 6' }));
  assert.deepEqual(await open(), want);
  for (const [name, spoil] of cases) {
    spoil();
    const got = await open();
    assert.ok((got.folded as number) > 0, `${name}: the log is folded`);
    assert.deepEqual(got.answers, want.answers, name);
    // Close wrote a good checkpoint again.
    assert.equal((await open()).folded, 0, `${name}: a new checkpoint at close`);
  }
});
