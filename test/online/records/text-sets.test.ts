/**
 * `setSource: 'text'` (#51 item 1): records whose metadata holds exactly the added text keep no
 * fingerprint set, and the index recomputes it from `meta.text`. Differential tests at fixed seeds
 * against the same index with the sets in the records (the `exact` path as it was): every answer
 * equal, for metadata that holds the text, another text, no object, or nothing; plus the format's
 * refusals, workers, snapshots, `index check` and the file store's compaction. The five stores run
 * the parity scenario's stored-text variant in test/store/parity.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { NearDupIndex, checkIndex, createShingler, format, type NearDupIndexOptions } from '../../../src/index.js';
import { FormatError } from '../../../src/sketch/format.js';
import { MemoryStore } from '../../../src/store/memory/store.js';
import { recordSketchBytes } from '../../../src/online/records/record.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import '../../helpers/fuzz.js';

const { REC_SET, REC_TEXT, encodeRecord, decodeRecord, readRecordSketch } = format;
const corpus = kijijiTexts().slice(0, 120);
const OPTS: NearDupIndexOptions = { shingle: { k: 5 }, threshold: 0.7 };
const shingler = createShingler({ k: 5 });

/** A text of the corpus, or an edit of one (a word dropped): near duplicates to find. */
const textArb = fc.record({ base: fc.integer({ min: 0, max: 29 }), cut: fc.integer({ min: -1, max: 40 }) }).map(({ base, cut }) => {
  const words = corpus[base]!.split(' ');
  if (cut >= 0 && cut < words.length) words.splice(cut, 1);
  return words.join(' ');
});
/** The metadata kinds: the text kept (with other fields), another text, not an object, none. */
const metaKind = fc.constantFrom('text', 'text', 'text+', 'other', 'string', 'array', 'none', 'null');
function metaOf(kind: string, text: string): unknown {
  switch (kind) {
    case 'text':
      return { text };
    case 'text+':
      return { title: 't', text, n: 1 };
    case 'other':
      return { text: `${text} and more` };
    case 'string':
      return text;
    case 'array':
      return [text];
    case 'null':
      return null;
    default:
      return undefined;
  }
}

const opArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('add' as const), id: fc.integer({ min: 0, max: 25 }), text: textArb, meta: metaKind }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('batch' as const),
      ids: fc.uniqueArray(fc.integer({ min: 0, max: 25 }), { minLength: 1, maxLength: 6 }),
      text: textArb,
      meta: metaKind,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 25 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('query' as const), text: textArb, t: fc.constantFrom(0.5, 0.7, 0.9, 1) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('topK' as const), text: textArb, k: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('contain' as const), text: textArb, t: fc.constantFrom(0.5, 0.8) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('of' as const), id: fc.integer({ min: 0, max: 25 }) }) },
);

type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

/** Runs `ops` on an index and returns every answer. */
async function run(idx: NearDupIndex, ops: Op[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const o of ops) {
    if (o.op === 'add') out.push(await idx.add(`d${o.id}`, o.text, metaOf(o.meta, o.text)));
    else if (o.op === 'batch')
      out.push(
        await idx.addMany(o.ids.map((id, i) => ({ id: `d${id}`, text: `${o.text} ${'x'.repeat(i)}`, meta: metaOf(o.meta, `${o.text} ${'x'.repeat(i)}`) }))),
      );
    else if (o.op === 'remove') out.push(await idx.remove(`d${o.id}`));
    else if (o.op === 'query') out.push(await idx.query(o.text, { threshold: o.t }));
    else if (o.op === 'topK') out.push(await idx.topK(o.text, o.k));
    else if (o.op === 'contain') out.push(await idx.query(o.text, { threshold: o.t, measure: 'containment' }));
    else out.push(await idx.duplicatesOf(`d${o.id}`), await idx.get(`d${o.id}`), await idx.clusterOf(`d${o.id}`));
  }
  out.push(await idx.size(), (await idx.clusters({ limit: 100, members: 100 })).clusters);
  return out;
}

test('setSource text answers as the sets kept in the records: adds, batches, removals, queries, topK, containment, duplicatesOf, get, clusters (property, fixed seed)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
      const a = await NearDupIndex.open({ ...OPTS, setSource: 'text' });
      const b = await NearDupIndex.open(OPTS);
      try {
        assert.deepEqual(await run(a, ops), await run(b, ops));
        // Each record keeps its set unless its metadata holds exactly its text.
        for await (const d of a.store.scan()) {
          const [ref] = await b.store.get([d.id]);
          const flags = d.record[1]!;
          const meta = format.readRecordMeta(d.record) as { text?: unknown } | undefined;
          const rec = decodeRecord(ref!);
          const holds = meta !== null && typeof meta === 'object' && !Array.isArray(meta) && typeof meta.text === 'string'
            && shingler.set(meta.text).join() === rec.set!.join();
          if (flags & REC_TEXT) assert.ok(holds, `${d.id}: a text record whose text gives its set`);
          else assert.ok(flags & REC_SET, `${d.id}: keeps its set`);
        }
      } finally {
        await a.close();
        await b.close();
      }
    }),
    { numRuns: 40 },
  );
});

test('setSource text: only a plain object holding exactly the added text leaves out the set', async () => {
  const idx = await NearDupIndex.open({ ...OPTS, setSource: 'text' });
  const t = corpus[0]!;
  class Meta {
    text = t;
  }
  const getter = Object.defineProperty({}, 'text', { get: () => t, enumerable: true });
  const cases: [string, unknown, boolean][] = [
    ['object with the text', { text: t, site: 'a' }, true],
    ['null prototype', Object.assign(Object.create(null) as object, { text: t }), true],
    ['another text', { text: t.slice(1) }, false],
    ['a string', t, false],
    ['an array', [t], false],
    ['a class instance', new Meta(), false],
    ['toJSON', { text: t, toJSON: () => ({ text: 'other' }) }, false],
    ['a getter', getter, false],
    ['no metadata', undefined, false],
  ];
  for (const [name, meta] of cases) await idx.add(name, t, meta);
  for (const [name, , fromText] of cases) {
    const [r] = await idx.store.get([name]);
    assert.equal((r![1]! & REC_TEXT) !== 0, fromText, name);
    assert.equal((r![1]! & REC_SET) !== 0, !fromText, name);
  }
  // Every one is a copy of the others: the same set, however it is kept.
  const [hit] = await idx.topK(t, 1);
  assert.equal(hit!.copies.length, cases.length - 1);
  assert.ok((await idx.query(t)).every((m) => m.similarity === 1));
  await idx.close();
});

test('setSource text: prepare workers write the same records as the main thread', async () => {
  const docs = corpus.slice(0, 100).map((text, i) => ({ id: `w${i}`, text, meta: metaOf(['text', 'other', 'string', 'none'][i % 4]!, text) }));
  const w = await NearDupIndex.open({ ...OPTS, setSource: 'text', workers: 1 });
  const m = await NearDupIndex.open({ ...OPTS, setSource: 'text' });
  const r = await NearDupIndex.open(OPTS);
  try {
    const answers = await Promise.all([w, m, r].map((idx) => idx.addMany(docs)));
    assert.deepEqual(answers[0], answers[2]);
    assert.deepEqual(answers[1], answers[2]);
    // Edited copies, verified against the first batch (and each other): the workers send no set for
    // documents that keep their text, so it is computed on the main thread only when needed.
    const edits = docs.map((d, i) => {
      const text = d.text.split(' ').filter((_, j) => j !== 3).join(' ');
      return { id: `v${i}`, text, meta: metaOf(['text', 'string', 'other', 'text'][i % 4]!, text) };
    });
    const again = await Promise.all([w, m, r].map((idx) => idx.addMany([...edits, ...edits.map((e) => ({ ...e, id: `${e.id}b` }))])));
    assert.ok(again[2]!.filter((x) => x.length).length > 50);
    assert.deepEqual(again[0], again[2]);
    assert.deepEqual(again[1], again[2]);
    const ids = docs.map((d) => d.id);
    assert.deepEqual(await w.store.get(ids), await m.store.get(ids));
    assert.equal((await w.store.get(ids)).filter((x) => x![1]! & REC_TEXT).length, 25);
  } finally {
    await Promise.all([w, m, r].map((idx) => idx.close()));
  }
});

test('setSource text with the containment keys (ensemble): containment queries as with the sets in the records', async () => {
  const a = await NearDupIndex.open({ ...OPTS, ensemble: true, setSource: 'text' });
  const b = await NearDupIndex.open({ ...OPTS, ensemble: true });
  for (const idx of [a, b]) await idx.addMany(corpus.slice(0, 60).map((text, i) => ({ id: `e${i}`, text, meta: { text } })));
  for (let i = 0; i < 60; i += 5) {
    const excerpt = corpus[i]!.slice(0, Math.max(40, corpus[i]!.length >> 2));
    assert.deepEqual(await a.query(excerpt, { measure: 'containment', threshold: 0.6 }), await b.query(excerpt, { measure: 'containment', threshold: 0.6 }));
  }
  await a.close();
  await b.close();
});

test('setSource: needs verify exact; an unknown stored value is refused, naming it; an existing index keeps its own', async () => {
  await assert.rejects(NearDupIndex.open({ verify: 'estimate', setSource: 'text' }), /setSource "text" needs verify "exact"/);
  await assert.rejects(NearDupIndex.open({ setSource: 'set' as 'text' }), /setSource must be "record" or "text"/);
  const plain = await NearDupIndex.open(OPTS);
  const manifest = { ...plain.manifest, setSource: 'zzz' };
  const other = new MemoryStore();
  await other.open(manifest as never);
  await assert.rejects(NearDupIndex.open({ store: other }), /keep their fingerprint sets as "zzz"/);
  await plain.close();
  // A store created without the field opens as it was, whatever setSource is given: records keep their sets.
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-textsets-'));
  try {
    const spec = `file:${path.join(dir, 'old')}`;
    const old = await NearDupIndex.open({ ...OPTS, store: spec });
    await old.add('a', corpus[0]!, { text: corpus[0]! });
    await old.close();
    const again = await NearDupIndex.open({ store: spec, setSource: 'text' });
    assert.equal(again.manifest.setSource, undefined);
    await again.add('b', corpus[1]!, { text: corpus[1]! });
    const recs = await again.store.get(['a', 'b']);
    assert.ok(recs.every((r) => r![1]! & REC_SET && !(r![1]! & REC_TEXT)));
    await again.close();
    // And an index created with it keeps it when reopened without it.
    const spec2 = `file:${path.join(dir, 'new')}`;
    await (await NearDupIndex.open({ ...OPTS, store: spec2, setSource: 'text' })).close();
    const reopened = await NearDupIndex.open({ store: spec2 });
    assert.equal(reopened.manifest.setSource, 'text');
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('setSource text: snapshots, index check, compaction and expiry keep the answers', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-textsets-'));
  let t = 1_700_000_000_000;
  const now = () => t;
  try {
    const spec = `file:${path.join(dir, 'f')}`;
    const a = await NearDupIndex.open({ ...OPTS, setSource: 'text', store: spec, now });
    const b = await NearDupIndex.open({ ...OPTS, now });
    for (const idx of [a, b]) {
      await idx.addMany(
        corpus.slice(0, 80).map((text, i) => ({ id: `s${i}`, text, meta: metaOf(i % 3 ? 'text' : 'other', text), ...(i % 4 === 0 ? { ttl: '1s' } : {}) })),
      );
      await idx.addMany(corpus.slice(0, 40).map((text, i) => ({ id: `s${i}`, text: `${text} again`, meta: { text: `${text} again` } })));
      await idx.removeMany(['s3', 's50']);
    }
    const answers = async (idx: NearDupIndex) => Promise.all(corpus.slice(0, 80).map(async (x) => [await idx.query(x), await idx.topK(x, 2)]));
    assert.deepEqual(await answers(a), await answers(b));
    t += 2000;
    assert.deepEqual(await a.purgeExpired(), await b.purgeExpired());
    const report = await checkIndex(a);
    assert.deepEqual(report.errors, []);
    await a.store.compact!();
    assert.deepEqual(await answers(a), await answers(b));
    const snap = path.join(dir, 'a.ndix');
    await a.save(snap);
    await a.close();
    const loaded = await NearDupIndex.load(snap, { now });
    assert.equal(loaded.manifest.setSource, 'text');
    assert.deepEqual(await answers(loaded), await answers(b));
    await loaded.close();
    // A record that says its set is its text, with no text: index check names it.
    const c = await NearDupIndex.open({ store: spec, now });
    const bad = encodeRecord({ meta: { text: 'x' }, setFromText: true });
    const noText = new Uint8Array([...bad.subarray(0, 2), ...encodeRecord({ meta: { title: 'x' } }).subarray(2)]);
    await c.store.put([{ id: 'bad', record: noText, keys: new Float64Array(c.manifest.keysPerDoc) }]);
    const r2 = await checkIndex(c);
    assert.ok(r2.errors.some((e) => /"bad".*metadata holds no text/.test(e)), r2.errors.join('\n'));
    await c.close();
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('REC_TEXT records: golden bytes, and the combinations the format refuses', () => {
  const rec = encodeRecord({ meta: { text: 'ab' }, setFromText: true });
  assert.equal(Buffer.from(rec).toString('hex'), '01240d7b2274657874223a226162227d');
  const set = shingler.set('ab');
  const setOfText = (x: string) => shingler.set(x);
  assert.deepEqual(decodeRecord(rec, 'r', setOfText), { meta: { text: 'ab' }, setFromText: true, set });
  assert.deepEqual(readRecordSketch(rec, undefined, setOfText), { set });
  // Its copy key equals that of the record keeping the same set.
  assert.deepEqual(recordSketchBytes(rec, 'r', setOfText), recordSketchBytes(encodeRecord({ set, meta: 1 })));
  assert.throws(() => readRecordSketch(rec, undefined), (e: Error) => e instanceof FormatError && /no shingler/.test(e.message));
  assert.throws(() => encodeRecord({ meta: 'ab', setFromText: true }), /needs metadata with a text/);
  const flagged = (bytes: Uint8Array, flags: number) => new Uint8Array([bytes[0]!, flags, ...bytes.subarray(2)]);
  // TEXT with SET, TEXT without META, TEXT whose META has no string text.
  assert.throws(() => decodeRecord(flagged(encodeRecord({ set, meta: { text: 'ab' } }), REC_SET | REC_TEXT | 4)), /needs metadata and no set/);
  assert.throws(() => decodeRecord(flagged(encodeRecord({}), REC_TEXT)), /needs metadata and no set/);
  assert.throws(() => decodeRecord(flagged(encodeRecord({ meta: { text: 1 } }), REC_TEXT | 4)), /metadata holds no text/);
  assert.throws(() => decodeRecord(flagged(encodeRecord({ meta: 'ab' }), 64 | 4)), /unknown record flags 0x44/);
});
