/**
 * Expiry in the online index (#35 item 1), on every store (memory, SQLite, Redis log and sets
 * layouts, Redis without scripts as on Cluster, PostgreSQL), with a fake clock:
 * - a property test: random adds and batches with random expiries (none, ttl, a date, a past date),
 *   random clock advances, removals, purges, queries, gets and duplicate checks, compared after every
 *   step with a brute-force model of the live set (exact Jaccard over the live documents); clusters
 *   equal the connected components of the live documents;
 * - the store gives the space back after a purge (memory record bytes, SQLite pages after the
 *   incremental vacuum, Redis `INFO memory` and key count, after compaction for the log layout);
 * - stores written before expiry existed are migrated (SQLite schema 1, PostgreSQL schema 1).
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { NearDupIndex, createShingler, jaccard } from '../../src/index.js';
import { openDatabase } from '../../src/store/sqlite/driver.js';
import { openStore } from '../../src/store/open/open.js';
import { CLUSTER_OPTS, expectedClusters, windowText } from '../helpers/clusterModel.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { startPostgres, type PostgresChild } from '../helpers/postgres.js';
import { needsPostgres, needsRedis, postgresMissing, redisMissing, REQUIRE_ALL } from '../helpers/needs.js';
import fs from 'node:fs';
import { neardup, tmpDir } from '../cliUtil.js';

let redis: RedisChild | undefined;
let postgres: PostgresChild | undefined;
before(async () => {
  if (!redisMissing() || REQUIRE_ALL) redis = await startRedis();
  if (!postgresMissing() || REQUIRE_ALL) postgres = await startPostgres();
});
after(async () => {
  await redis?.stop();
  await postgres?.stop();
});

const rand = () => Math.random().toString(36).slice(2);
const stores: [string, () => string, object][] = [
  ['memory', () => 'memory', {}],
  ['sqlite', () => `sqlite:${path.join(tmpDir(), 'x.db')}`, {}],
  ['file', () => `file:${path.join(tmpDir(), 'x')}`, {}],
  ['redis log', () => `${redis!.url}?prefix=x${rand()}&layout=log`, needsRedis()],
  ['redis log, no multi-key commands (the Cluster code path)', () => `${redis!.url}?prefix=x${rand()}&layout=log&scripts=0`, needsRedis()],
  ['redis sets', () => `${redis!.url}?prefix=x${rand()}&layout=sets`, needsRedis()],
  ['redis sets, no scripts (the Cluster code path)', () => `${redis!.url}?prefix=x${rand()}&layout=sets&scripts=0`, needsRedis()],
  ['postgres', () => `${postgres!.url}?schema=x${rand()}`, needsPostgres()],
];

const shingler = createShingler({ k: 5 });
const T0 = 1_800_000_000_000;
/**
 * The index's candidate limit in the property test: the live documents (ids a…h) never exceed it,
 * a burst of expired copies does (issue #48: expired, unpurged copies filled the limit and hid a
 * live exact duplicate on SQLite, Redis sets and PostgreSQL).
 */
const MAX_CANDIDATES = 8;

/** How a document's expiry is given: none, a ttl, a date, or a date already past. */
type Exp = { kind: 'none' } | { kind: 'ttl'; ms: number } | { kind: 'at'; in: number };
type Doc = { id: string; b: number; w: number; edit: number; exp: Exp };
type Cmd =
  | { op: 'add'; doc: Doc }
  | { op: 'batch'; docs: Doc[] }
  | { op: 'advance'; ms: number }
  | { op: 'remove'; ids: string[] }
  | { op: 'purge' }
  | { op: 'query'; b: number; w: number }
  | { op: 'clusters' }
  | { op: 'burst'; b: number; w: number; n: number; ttl: boolean };

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const expArb: fc.Arbitrary<Exp> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.integer({ min: 1, max: 50 }).map((ms) => ({ kind: 'ttl' as const, ms })),
  fc.integer({ min: -5, max: 50 }).map((n) => ({ kind: 'at' as const, in: n })),
);
const docArb = fc.record({ id: idArb, b: fc.integer({ min: 0, max: 1 }), w: fc.integer({ min: 0, max: 4 }), edit: fc.constantFrom(0, 0, 3, 17), exp: expArb });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: docArb.map((doc) => ({ op: 'add' as const, doc })) },
  { weight: 1, arbitrary: fc.uniqueArray(docArb, { minLength: 2, maxLength: 4, selector: (d) => d.id }).map((docs) => ({ op: 'batch' as const, docs })) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 30 }).map((ms) => ({ op: 'advance' as const, ms })) },
  { weight: 1, arbitrary: fc.array(fc.oneof(idArb, fc.constant('nope')), { minLength: 1, maxLength: 4 }).map((ids) => ({ op: 'remove' as const, ids })) },
  { weight: 1, arbitrary: fc.constant({ op: 'purge' as const }) },
  { weight: 3, arbitrary: fc.record({ b: fc.integer({ min: 0, max: 1 }), w: fc.integer({ min: 0, max: 4 }) }).map((q) => ({ op: 'query' as const, ...q })) },
  { weight: 1, arbitrary: fc.constant({ op: 'clusters' as const }) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        b: fc.integer({ min: 0, max: 1 }),
        w: fc.integer({ min: 0, max: 4 }),
        n: fc.integer({ min: MAX_CANDIDATES + 1, max: 2 * MAX_CANDIDATES }),
        ttl: fc.boolean(),
      })
      .map((x) => ({ op: 'burst' as const, ...x })),
  },
);

/** The brute-force model: every document added and not removed, with its text and expiry. */
class Model {
  readonly docs = new Map<string, { text: string; at: number | undefined }>();
  constructor(private readonly clock: () => number) {}
  live(): Map<string, string> {
    const t = this.clock();
    const out = new Map<string, string>();
    for (const [id, d] of this.docs) if (d.at === undefined || d.at > t) out.set(id, d.text);
    return out;
  }
  /** Ids of live documents with Jaccard ≥ 0.5 to `text` (the index threshold), sorted, except `skip`. */
  matches(text: string, skip?: string): string[] {
    const q = shingler.set(text);
    return [...this.live()].filter(([id, t]) => id !== skip && jaccard(q, shingler.set(t)) >= CLUSTER_OPTS.threshold!).map(([id]) => id).sort();
  }
}

/** The expiry options of a document added at `now`, and the expiry the model expects. */
function expiry(e: Exp, now: number): { opts: { ttl?: number; expiresAt?: number }; at: number | undefined } {
  if (e.kind === 'ttl') return { opts: { ttl: e.ms }, at: now + e.ms };
  if (e.kind === 'at') return { opts: { expiresAt: now + e.in }, at: now + e.in };
  return { opts: {}, at: undefined };
}

const ids = (ms: { id: string }[]) => ms.map((m) => m.id).sort();

for (const [name, spec, needs] of stores) {
  test(`expiry: random adds with expiries, clock advances, removals and purges never return an expired document (${name})`, needs, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmdArb, { minLength: 1, maxLength: 20 }), async (cmds) => {
        let t = T0;
        const index = await NearDupIndex.open({ ...CLUSTER_OPTS, maxCandidates: MAX_CANDIDATES, store: spec(), now: () => t });
        const model = new Model(() => t);
        let bursts = 0;
        try {
          for (const [i, c] of cmds.entries()) {
            const where = `step ${i} ${JSON.stringify(c)}`;
            if (c.op === 'add') {
              const text = windowText(c.doc.b, c.doc.w, c.doc.edit);
              const e = expiry(c.doc.exp, t);
              const want = model.matches(text, c.doc.id);
              assert.deepEqual(ids(await index.add(c.doc.id, text, undefined, e.opts)), want, `${where}: add's duplicates`);
              model.docs.set(c.doc.id, { text, at: e.at });
            } else if (c.op === 'batch') {
              const docs = c.docs.map((d) => ({ id: d.id, text: windowText(d.b, d.w, d.edit), ...expiry(d.exp, t) }));
              const got = await index.addMany(docs.map((d) => ({ id: d.id, text: d.text, ...d.opts })));
              docs.forEach((d, j) => {
                // Each sees the index plus the earlier documents of the batch that are not expired.
                assert.deepEqual(ids(got[j]!), model.matches(d.text, d.id), `${where}: batch item ${j}`);
                model.docs.set(d.id, { text: d.text, at: d.at });
              });
            } else if (c.op === 'burst') {
              // n exact copies of a window that are expired when the next step runs: added with
              // a 1 ms ttl and the clock moved past it, or with an expiry already reached.
              const text = windowText(c.b, c.w);
              const docs = Array.from({ length: c.n }, (_, j) => ({ id: `z${bursts}_${j}`, text, ...(c.ttl ? { ttl: 1 } : { expiresAt: t }) }));
              bursts++;
              await index.addMany(docs);
              for (const d of docs) model.docs.set(d.id, { text, at: t + (c.ttl ? 1 : 0) });
              if (c.ttl) t += 1;
            } else if (c.op === 'advance') {
              t += c.ms;
            } else if (c.op === 'remove') {
              const live = model.live();
              const want = c.ids.map((id, j) => live.has(id) && c.ids.indexOf(id) === j);
              assert.deepEqual(await index.removeMany(c.ids), want, `${where}: removeMany`);
              for (const id of c.ids) model.docs.delete(id);
            } else if (c.op === 'purge') {
              const live = model.live();
              const expired = [...model.docs.keys()].filter((id) => !live.has(id)).sort();
              assert.deepEqual((await index.purgeExpired()).sort(), expired, `${where}: purged`);
              for (const id of expired) model.docs.delete(id);
              assert.equal(await index.store.size(), live.size, `${where}: stored after the purge`);
              assert.equal(await index.store.countExpired(t), 0);
            } else if (c.op === 'query') {
              const text = windowText(c.b, c.w);
              assert.deepEqual(ids(await index.query(text)), model.matches(text), `${where}: query`);
            } else {
              assert.deepEqual(
                (await index.clusters({ limit: 100, members: 100 })).clusters.map((g) => [...g.members].sort()).sort(),
                expectedClusters(model.live()),
                `${where}: clusters`,
              );
              // A cluster read purges what has expired first.
              const live = model.live();
              for (const id of [...model.docs.keys()]) if (!live.has(id)) model.docs.delete(id);
              assert.equal(await index.store.countExpired(t), 0, `${where}: purged by the cluster read`);
            }
            // After every step: gets, counts and duplicate checks see exactly the live set.
            const live = model.live();
            assert.equal(await index.size(), live.size, `${where}: size`);
            for (const id of model.docs.keys()) {
              const doc = await index.get(id);
              assert.equal(doc !== null, live.has(id), `${where}: get(${id})`);
              const dups = await index.duplicatesOf(id);
              if (!live.has(id)) assert.equal(dups, null, `${where}: duplicatesOf(${id})`);
              else assert.deepEqual(ids(dups!), model.matches(live.get(id)!, id), `${where}: duplicatesOf(${id})`);
            }
          }
        } finally {
          await index.close();
        }
      }),
      { numRuns: name === 'memory' ? 60 : 15 },
    );
  });
}

/** 400 documents: 300 expiring at T0 + 1000, 100 kept. */
const corpus = Array.from(
  { length: 400 },
  (_, i) => ({ id: `p${i}`, text: `${windowText(i % 2, i % 5, 1 + (i % 37))} ${'filler '.repeat(i % 7)}${i}`, ...(i % 4 ? { expiresAt: T0 + 1000 } : {}) }),
);

test('expiry: the memory store gives the record bytes back after a purge', async () => {
  let t = T0;
  const index = await NearDupIndex.open({ ...CLUSTER_OPTS, now: () => t });
  await index.addMany(corpus.filter((d) => !d.expiresAt));
  const base = (await index.stats()).storeStats.recordBytes as number;
  await index.addMany(corpus.filter((d) => d.expiresAt));
  assert.ok((await index.stats()).storeStats.recordBytes as number > 3 * base);
  t += 1000;
  assert.equal((await index.purgeExpired()).length, 300);
  assert.equal((await index.stats()).storeStats.recordBytes, base);
  await index.close();
});

test('expiry: a new SQLite file has incremental auto-vacuum and shrinks after a purge; a schema-1 file is migrated and keeps its size', async () => {
  const file = path.join(tmpDir(), 'vac.db');
  let t = T0;
  const index = await NearDupIndex.open({ ...CLUSTER_OPTS, store: `sqlite:${file}`, now: () => t });
  await index.addMany(corpus.filter((d) => !d.expiresAt));
  const base = (await index.stats()).storeStats.fileBytes as number;
  await index.addMany(corpus.filter((d) => d.expiresAt));
  const full = (await index.stats()).storeStats.fileBytes as number;
  assert.ok(full > 2 * base, `${full} > 2 × ${base}`);
  t += 1000;
  assert.equal((await index.purgeExpired()).length, 300);
  const after = (await index.stats()).storeStats;
  assert.equal(after.expiring, 0);
  assert.equal(after.freeBytes, 0, 'the incremental vacuum returned every free page');
  assert.ok(
    (after.fileBytes as number) < base + (full - base) / 4,
    `pages after the purge: ${after.fileBytes as number} bytes, before the expiring documents ${base}, with them ${full}`,
  );
  await index.close();

  // A file as an earlier version wrote it: schema 1, no expiry table, auto_vacuum NONE.
  const old = path.join(tmpDir(), 'old.db');
  const v1 = await NearDupIndex.open({ ...CLUSTER_OPTS, store: `sqlite:${old}` });
  await v1.addMany(corpus.slice(0, 40).map(({ id, text }) => ({ id, text })));
  await v1.close();
  const db = openDatabase(old);
  db.exec("DROP TABLE expiry; UPDATE meta SET value = '1' WHERE name = 'schema'");
  db.pragma('auto_vacuum = NONE');
  db.exec('VACUUM');
  db.close();
  t = T0;
  const migrated = await NearDupIndex.open({ store: `sqlite:${old}`, now: () => t });
  assert.equal(await migrated.size(), 40);
  await migrated.addMany(corpus.slice(40).map(({ id, text }) => ({ id, text, expiresAt: T0 + 1 })));
  assert.equal(await migrated.size(), 400);
  t += 1;
  assert.equal(await migrated.size(), 40);
  assert.equal((await migrated.purgeExpired()).length, 360);
  const st = (await migrated.stats()).storeStats;
  // Without auto-vacuum the freed pages stay in the file (reused by later writes).
  assert.ok((st.freeBytes as number) > 0);
  await migrated.close();
  const check = openDatabase(old);
  assert.equal(check.prepare("SELECT value FROM meta WHERE name = 'schema'").pluck().get(), '2');
  check.close();
});

test('expiry: Redis memory and key count go back down after a purge (log and sets layouts)', needsRedis(), async () => {
  for (const layout of ['log', 'sets']) {
    const prefix = `mem${layout}`;
    const admin = new Redis(redis!.port, '127.0.0.1');
    const used = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    let t = T0;
    const index = await NearDupIndex.open({ ...CLUSTER_OPTS, store: `${redis!.url}?prefix=${prefix}&layout=${layout}`, now: () => t });
    await index.addMany(corpus.filter((d) => !d.expiresAt));
    const keys0 = (await admin.keys(`${prefix}:*`)).length;
    const mem0 = await used();
    await index.addMany(corpus.filter((d) => d.expiresAt));
    const mem1 = await used();
    assert.ok((await admin.keys(`${prefix}:*`)).length > keys0 + 300);
    t += 1000;
    assert.equal((await index.purgeExpired()).length, 300);
    // The log layout keeps the posting log's entries until it is compacted (docs/stores.md).
    if (layout === 'log') await index.store.compact!();
    const keys2 = (await admin.keys(`${prefix}:*`)).length;
    const mem2 = await used();
    // P:expiry is gone once empty.
    // (Compaction adds one key, P:compacted.)
    assert.ok(keys2 <= keys0 + (layout === 'log' ? 1 : 0), `${layout}: keys ${keys0} → ${keys2}`);
    assert.ok(mem2 - mem0 < (mem1 - mem0) / 4, `${layout}: used_memory ${mem0} → ${mem1} → ${mem2}`);
    assert.equal(await admin.exists(`${prefix}:expiry`), 0);
    await index.close();
    admin.disconnect();
  }
});

test('expiry: a PostgreSQL schema of version 1 is migrated (expires_at and its index added)', needsPostgres(), async () => {
  const url = `${postgres!.url}?schema=oldpg`;
  const v1 = await NearDupIndex.open({ ...CLUSTER_OPTS, store: url });
  await v1.addMany(corpus.slice(0, 20).map(({ id, text }) => ({ id, text })));
  await v1.close();
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: postgres!.url });
  await client.connect();
  await client.query("DROP INDEX oldpg.docs_expires; ALTER TABLE oldpg.docs DROP COLUMN expires_at; UPDATE oldpg.meta SET value = '1' WHERE name = 'schema'");
  let t = T0;
  const index = await NearDupIndex.open({ store: url, now: () => t });
  await index.add('late', corpus[30]!.text, undefined, { ttl: '1s' });
  assert.equal(await index.size(), 21);
  t += 1000;
  assert.equal(await index.size(), 20);
  assert.deepEqual(await index.purgeExpired(), ['late']);
  assert.deepEqual(await index.store.checkStore!(), { errors: [], warnings: [] });
  await index.close();
  assert.equal((await client.query("SELECT value FROM oldpg.meta WHERE name = 'schema'")).rows[0].value, '2');
  // A schema written by a later version is refused, naming both versions.
  await client.query("UPDATE oldpg.meta SET value = '9' WHERE name = 'schema'");
  await client.end();
  const store = await openStore(url);
  await assert.rejects(store.open({ keysPerDoc: 1 }), /neardup schema version 9, this version reads 2/);
  await store.close();
  // Issue #48 item 5: a schema of another version, or holding tables that are not neardup's, is a
  // usage error (exit 2, no stack trace), for every command that opens it.
  const c2 = new pg.default.Client({ connectionString: postgres!.url });
  await c2.connect();
  await c2.query('CREATE SCHEMA foreign_t; CREATE TABLE foreign_t.docs (id int); CREATE TABLE foreign_t.meta (name text, value text)');
  await c2.end();
  const input = path.join(tmpDir(), 'in.tsv');
  fs.writeFileSync(input, 'id\ttext\na\tthe same classified ad for a red bicycle with a bell\n');
  for (
    const [schema, re] of [['oldpg', /neardup schema version 9, this version reads 2/], [
      'foreign_t',
      /schema foreign_t holds tables that are not a neardup index \(column "keys" does not exist\)/,
    ]] as const
  ) {
    for (const args of [['index', 'add', input, '--id', 'id'], ['index', 'query', input, '--id', 'id'], ['serve', '--port', '0']]) {
      const r = neardup([...args, '--store', `${postgres!.url}?schema=${schema}`]);
      assert.equal(r.code, 2, `${schema} ${args[0]} ${args[1]}: ${r.stderr}`);
      // index query reads existing indexes only: a schema without a manifest is "no index at".
      if (schema === 'foreign_t' && args[1] === 'query') assert.match(r.stderr, /no index at postgres:.*schema=foreign_t/);
      else assert.match(r.stderr, re);
      assert.doesNotMatch(r.stderr, /^\s+at /m);
    }
  }
});

test('expiry: a SQLite file of another schema version is a usage error (exit 2)', () => {
  const file = path.join(tmpDir(), 'v9.db');
  const input = path.join(tmpDir(), 'in.tsv');
  fs.writeFileSync(input, 'id\ttext\na\tthe same classified ad for a red bicycle with a bell\n');
  assert.equal(neardup(['index', 'add', input, '--id', 'id', '--store', `sqlite:${file}`, '-q']).code, 0);
  const db = openDatabase(file);
  db.exec("UPDATE meta SET value = '9' WHERE name = 'schema'");
  db.close();
  for (const args of [['index', 'add', input, '--id', 'id'], ['index', 'query', input, '--id', 'id'], ['serve', '--port', '0']]) {
    const r = neardup([...args, '--store', `sqlite:${file}`]);
    assert.equal(r.code, 2, `${args[0]} ${args[1]}: ${r.stderr}`);
    assert.match(r.stderr, /SQLite schema version 9, this version reads 2/);
  }
});

test('expiry: bad expiries are RangeErrors', async () => {
  const index = await NearDupIndex.open({ ...CLUSTER_OPTS });
  await assert.rejects(index.add('a', 'some text here', undefined, { ttl: '3 fortnights' }), /ttl must be a duration such as 30d/);
  await assert.rejects(index.add('a', 'some text here', undefined, { ttl: -5 }), /ttl must be a positive duration/);
  await assert.rejects(index.add('a', 'some text here', undefined, { expiresAt: Number.NaN }), /expiresAt must be a date or a finite number/);
  await assert.rejects(index.add('a', 'some text here', undefined, { expiresAt: 5, ttl: 5 }), /expiresAt or ttl, not both/);
  await assert.rejects(NearDupIndex.open({ ttl: '30 days' }), /ttl must be a duration/);
  for (const ttl of ['100000000000w', 8.64e15, '3650001d'])
    await assert.rejects(index.add('a', 'some text here', undefined, { ttl }), /ttl must be at most 3650000d/);
  assert.equal(await index.size(), 0);
  await index.close();
});
