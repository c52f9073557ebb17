/**
 * Candidate screens in the file store (src/similarity/setScreen.ts, src/online/search/screen.ts):
 * an index on a file store, which rejects hopeless candidates by their screens before reading their
 * records, answers exactly as one on the memory store, which screens nothing: the same matches and
 * the same candidate and verified counters, for single adds and batches (prepared in this thread
 * and on a prepare worker), sets kept in the records or recomputed from stored texts, threshold
 * queries above and below the index's, metadata filters, topK, a small candidate limit (the
 * screen applies after it), replacements and removals. The screens survive a reopen from the
 * checkpoint, a compaction and a snapshot's load; and they do reject. The log carries none: after
 * a fold of the whole log the lookups make them from the records they read, and the checkpoint at
 * close keeps them.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, type NearDupIndexOptions } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file/store.js';
import { StoreFullError } from '../../../src/store/errors.js';
import { installFaultHooks } from '../../../src/common/faults.js';
import { decodeFrameAt } from '../../../src/store/file/frames.js';
import { screenIn } from '../../../src/store/file/replay.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-screens-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Texts from a skewed vocabulary (shared common words make false candidates), and copies edited 0 to 45 %. */
function corpus(n: number, seed: number): string[] {
  let x = seed;
  const rand = () => ((x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5), ((x ^ (x >>> 13)) >>> 0) / 2 ** 32);
  const word = () => `w${Math.floor(rand() ** 3 * 400)}`;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 10 && rand() < 0.4) {
      const words = out[Math.floor(rand() * out.length)]!.split(' ');
      const edit = rand() * 0.45;
      out.push(words.map((w) => (rand() < edit ? word() : w)).join(' '));
    } else out.push(Array.from({ length: 20 + Math.floor(rand() * 60) }, word).join(' '));
  }
  return out;
}

const texts = corpus(700, 7);
const BASE: NearDupIndexOptions = { shingle: { kind: 'word', k: 2 }, numPerm: 64, bands: 32, rows: 2, threshold: 0.7 };

/** Everything an index answers to one sequence of calls, its counters included. */
async function answers(idx: NearDupIndex, storeText: boolean): Promise<unknown[]> {
  const meta = (i: number, text: string) => (storeText ? { text, i } : { i, tag: i % 3 ? 'x' : 'y' });
  const log: unknown[] = [];
  for (let i = 0; i < 150; i++) log.push(await idx.add(`d${i}`, texts[i]!, meta(i, texts[i]!)));
  log.push(await idx.addMany(texts.slice(150, 450).map((text, i) => ({ id: `d${150 + i}`, text, meta: meta(150 + i, text) }))));
  // Replacements, and removals.
  log.push(await idx.addMany(texts.slice(450, 520).map((text, i) => ({ id: `d${i * 3}`, text, meta: meta(i, text) }))));
  log.push(await idx.removeMany(Array.from({ length: 30 }, (_, i) => `d${i * 11}`)));
  for (let i = 520; i < 600; i++) log.push(await idx.add(`q${i}`, texts[i]!, meta(i, texts[i]!), i % 4 ? {} : { filter: { tag: 'x' } }));
  for (let i = 600; i < 700; i++)
    log.push(
      await idx.query(texts[i]!),
      await idx.query(texts[i]!, { threshold: 0.5 }),
      await idx.query(texts[i]!, { threshold: 0.9, limit: 1 }),
      await idx.query(texts[i]!, { filter: { tag: 'y' } }),
    );
  for (let i = 600; i < 620; i++) log.push(await idx.topK(texts[i]!, 4));
  for (const id of ['d1', 'd5', 'd300']) log.push(await idx.duplicatesOf(id));
  log.push((await idx.stats()).counters);
  return log;
}

const variants: [string, Partial<NearDupIndexOptions>, boolean][] = [
  ['sets in the records, no workers', {}, false],
  ['stored texts, a prepare worker', { setSource: 'text', workers: 1 }, true],
  ['a candidate limit of 3', { maxCandidates: 3 }, false],
];
for (const [name, extra, storeText] of variants) {
  test(`screens: the file store answers as the memory store (${name}), and its screens reject candidates`, async () => {
    const opts = { ...BASE, ...extra };
    const mem = await NearDupIndex.open({ ...opts, store: 'memory' });
    const want = await answers(mem, storeText);
    await mem.close();
    const d = path.join(dir, name.replace(/\W+/g, '-'));
    const file = await NearDupIndex.open({ ...opts, store: `file:${d}` });
    assert.deepEqual(await answers(file, storeText), want);
    const screened = (await file.stats()).storeStats.candidatesScreenedOut as number;
    const candidates = (want.at(-1) as { candidates: number }).candidates;
    assert.ok(screened > candidates / 10, `${screened} of ${candidates} candidates screened out`);
    await file.close();
  });
}

for (const setSource of ['record', 'text'] as const) {
  test(`screens: kept through a reopen from the checkpoint, a fold of the whole log, a compaction and a snapshot load (sets from the ${setSource})`, async () => {
    const d = path.join(dir, `kept-${setSource}`);
    const idx = await NearDupIndex.open({ ...BASE, setSource, store: `file:${d}`, workers: 1 });
    await idx.addMany(texts.slice(0, 500).map((text, i) => ({ id: `d${i}`, text, ...(setSource === 'text' ? { meta: { text } } : {}) })));
    await idx.save(path.join(dir, `kept-${setSource}.ndix`));
    await idx.close();
    const queries = async (i: NearDupIndex) => {
      const out: unknown[] = [];
      for (let q = 500; q < 700; q++) out.push(await i.query(texts[q]!));
      return { out, screened: (await i.stats()).storeStats.candidatesScreenedOut as number, candidates: (await i.stats()).counters.candidates };
    };
    const mem = await NearDupIndex.load(path.join(dir, `kept-${setSource}.ndix`), { store: 'memory' });
    const want = await queries(mem);
    await mem.close();
    const check = async (what: string, open: () => Promise<NearDupIndex>) => {
      const i = await open();
      const got = await queries(i);
      await i.close();
      assert.deepEqual([got.out, got.candidates], [want.out, want.candidates], what);
      assert.ok(got.screened > want.candidates / 10, `${what}: ${got.screened} of ${want.candidates} screened out`);
    };
    /**
     * A store whose log is folded whole, then closed at once: its checkpoint has no screens. Reopened,
     * it answers the same, its lookups make the screens, byte for byte those its puts made, and the
     * checkpoint at close keeps them (with no log written since the last).
     */
    const folded = async (what: string) => {
      const before = await tableScreens(d);
      rmSync(path.join(d, 'table'));
      await (await NearDupIndex.open({ store: `file:${d}` })).close();
      assert.equal((await tableScreens(d)).size, 0, `${what}: screens after the fold`);
      const i = await NearDupIndex.open({ store: `file:${d}` });
      const got = await queries(i);
      const made = (await i.stats()).storeStats.screensMadeByLookups as number;
      await i.close();
      assert.deepEqual([got.out, got.candidates], [want.out, want.candidates], what);
      const after = await tableScreens(d);
      assert.ok(made > 100 && after.size === made, `${what}: ${made} screens made, ${after.size} kept`);
      for (const [id, screen] of after) assert.equal(screen, before.get(id), `${what}: the screen made for ${id}`);
      await check(`${what}, reopened`, () => NearDupIndex.open({ store: `file:${d}` }));
    };
    // The log carries no screens: the table and its checkpoint do.
    const log = readFileSync(path.join(d, 'log'));
    let frames = 0;
    for (let o = 0; o < log.length; frames++) {
      const f = decodeFrameAt(log, o, 'log');
      assert.ok(typeof f === 'object', `frame at ${o}: ${String(f)}`);
      assert.ok(f.frame.screens.every((x) => x === undefined), `frame at ${o} carries screens`);
      o = f.end;
    }
    assert.ok(frames > 0);
    await check('from the checkpoint', () => NearDupIndex.open({ store: `file:${d}` }));
    await folded('the log folded');
    const c = await NearDupIndex.open({ store: `file:${d}` });
    await c.store.compact!();
    await c.close();
    await check('compacted', () => NearDupIndex.open({ store: `file:${d}` }));
    await folded('compacted, the log folded');
    await check(
      'a snapshot loaded into a file store',
      () => NearDupIndex.load(path.join(dir, `kept-${setSource}.ndix`), { store: `file:${path.join(dir, `loaded-${setSource}`)}` }),
    );
  });
}

/** The screens a file store's table keeps, by document id (hex). */
async function tableScreens(d: string): Promise<Map<string, string>> {
  const s = new FileStore(d);
  await s.open({ keysPerDoc: 1 });
  try {
    const out = new Map<string, string>();
    for (const doc of s['table'].table.live()) {
      const screen = screenIn(doc.record);
      if (screen.length > 0) out.set(doc.id, Buffer.from(screen).toString('hex'));
    }
    return out;
  } finally {
    await s.close();
  }
}

test('screens: a screen longer than the store keeps is refused whole, and the store stays usable', async () => {
  const s = new FileStore(path.join(dir, 'long-screen'));
  await s.open({ keysPerDoc: 1 });
  const keys = Float64Array.of(7);
  const most = 255;
  await assert.rejects(
    s.put([{ id: 'a', keys, record: Uint8Array.of(1), screen: new Uint8Array(most + 1) }]),
    new RegExp(`screen of document a has ${most + 1} bytes`),
  );
  await s.put([{ id: 'b', keys, record: Uint8Array.of(2), screen: new Uint8Array(most) }]);
  assert.deepEqual([await s.size(), (await s.get(['a', 'b'])).map((r) => r && Array.from(r))], [1, [null, [2]]]);
  await s.close();
});

test('screens: the screens lookups made take their room in the table before a batch is checked for room, so a full table refuses the batch and the store goes on', async () => {
  const s = new FileStore(path.join(dir, 'heal-room'));
  await s.open({ keysPerDoc: 1 });
  const n = 6000;
  // Documents with no screen, as if folded from the log; one key each, so one lookup finds them all.
  await s.put(Array.from({ length: n }, (_, i) => ({ id: `d${i}`, keys: Float64Array.of(1), record: Uint8Array.of(i & 255) })));
  const made = new Uint8Array(72).fill(3);
  await s.lookup([Float64Array.of(1)], n, undefined, { admits: () => true, screenOf: () => made });
  assert.equal((await s.stats()).screensMadeByLookups, n);
  // Room for the batch below (84 bytes in the table), not for the screens too, which leave less than that.
  installFaultHooks({ tableArenaMax: () => n * 12 + 2000 });
  try {
    const r = await s.put([{ id: 'new', keys: Float64Array.of(2), record: Uint8Array.of(9), screen: made }]).then(
      () => 'added',
      (e: Error) => e,
    );
    assert.ok(r === 'added' || r instanceof StoreFullError, String(r));
    await s.removeMany([{ id: 'd0', keys: Float64Array.of(1) }]);
  } finally {
    installFaultHooks({ tableArenaMax: undefined });
  }
  assert.deepEqual((await s.checkStore()).errors, []);
  await s.close();
});
