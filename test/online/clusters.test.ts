/**
 * Clusters of the online index (index.clusterOf, index.clusters), tested against recomputation
 * from scratch: random sequences of adds, replaces, batches, deletes and bulk deletes (fast-check,
 * removeMany with repeated and unknown ids) on every store
 * (memory, SQLite, Redis log and sets layouts, Redis without scripts as on Cluster, PostgreSQL); after
 * each step the clusters must equal the connected components of the pairs ≥ t among the live
 * documents. Then two processes on one Redis (one SQLite file, one PostgreSQL schema) must see the
 * same, right clusters.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fc from 'fast-check';
import { NearDupIndex } from '../../src/index.js';
import { CLUSTER_OPTS, canonical, expectedClusters, windowText } from '../helpers/clusterModel.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { startPostgres, type PostgresChild } from '../helpers/postgres.js';
import { needsPostgres, needsRedis, postgresMissing, redisMissing, REQUIRE_ALL } from '../helpers/needs.js';
import { tmpDir } from '../cliUtil.js';

let redis: RedisChild | undefined;
let postgres: PostgresChild | undefined;
before(async () => {
  // Without redis-server (PostgreSQL) those cases skip (needsRedis, needsPostgres); under
  // NEARDUP_REQUIRE_ALL they fail.
  if (!redisMissing() || REQUIRE_ALL) redis = await startRedis();
  if (!postgresMissing() || REQUIRE_ALL) postgres = await startPostgres();
});
after(async () => {
  await redis?.stop();
  await postgres?.stop();
});

/** `test()` options for a store named `name` here. */
function needs(name: string) {
  return name.startsWith('redis') || name === 'Redis' ? needsRedis() : name.startsWith('postgres') || name.startsWith('one PostgreSQL') ? needsPostgres() : {};
}

/** A fresh schema on the test's PostgreSQL server. */
function pgSpec(): string {
  return `${postgres!.url}?schema=m${Math.random().toString(36).slice(2)}`;
}

type Cmd =
  | { op: 'add'; id: string; b: number; w: number; edit: number }
  | { op: 'batch'; docs: { id: string; b: number; w: number; edit: number }[] }
  | { op: 'remove'; id: string }
  | { op: 'removeMany'; ids: string[] };

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j');
const docArb = fc.record({ id: idArb, b: fc.integer({ min: 0, max: 1 }), w: fc.integer({ min: 0, max: 5 }), edit: fc.constantFrom(0, 0, 3, 17) });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: docArb.map((d) => ({ op: 'add' as const, ...d })) },
  { weight: 1, arbitrary: fc.uniqueArray(docArb, { minLength: 2, maxLength: 4, selector: (d) => d.id }).map((docs) => ({ op: 'batch' as const, docs })) },
  { weight: 3, arbitrary: idArb.map((id) => ({ op: 'remove' as const, id })) },
  { weight: 2, arbitrary: fc.array(fc.oneof(idArb, fc.constant('nope')), { minLength: 1, maxLength: 6 }).map((ids) => ({ op: 'removeMany' as const, ids })) },
);

/** What removeMany must answer for `ids`: indexed, at its first place only; and removes them from `live`. */
function removedFrom(live: Map<string, string>, ids: string[]): boolean[] {
  return ids.map((id) => live.delete(id));
}

/** Every cluster the index lists, and each live document's clusterOf, against the model. */
async function checkAgainstModel(index: NearDupIndex, live: Map<string, string>, where: string): Promise<void> {
  const want = expectedClusters(live);
  const page = await index.clusters({ limit: 100, members: 100 });
  assert.deepEqual(canonical(page.clusters.map((c) => c.members)), want, `${where}: clusters`);
  assert.equal(page.total, want.length, `${where}: total`);
  for (const c of page.clusters) {
    assert.equal(c.size, c.members.length);
    assert.equal(c.id, [...c.members].sort()[0], 'a cluster is named by its smallest member');
  }
  for (const id of live.keys()) {
    const c = await index.clusterOf(id);
    const mine = want.find((g) => g.includes(id)) ?? [id];
    assert.deepEqual(c && [...c.members].sort(), mine, `${where}: clusterOf(${id})`);
  }
  assert.equal(await index.clusterOf('nope'), null);
}

const stores: [string, () => string][] = [
  ['memory', () => 'memory'],
  ['sqlite', () => `sqlite:${path.join(tmpDir(), 'c.db')}`],
  ['redis log', () => `${redis!.url}?prefix=m${Math.random().toString(36).slice(2)}&layout=log`],
  ['redis sets', () => `${redis!.url}?prefix=m${Math.random().toString(36).slice(2)}&layout=sets`],
  ['redis sets, no scripts (the Cluster code path)', () => `${redis!.url}?prefix=m${Math.random().toString(36).slice(2)}&layout=sets&scripts=0`],
  ['postgres', pgSpec],
];

for (const [name, spec] of stores) {
  test(`clusters: random adds, replaces, batches and deletes equal recomputation from scratch (${name})`, needs(name), async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmdArb, { minLength: 1, maxLength: 25 }), async (cmds) => {
        const index = await NearDupIndex.open({ ...CLUSTER_OPTS, store: spec() });
        const live = new Map<string, string>();
        try {
          for (const [i, c] of cmds.entries()) {
            if (c.op === 'add') {
              const text = windowText(c.b, c.w, c.edit);
              await index.add(c.id, text);
              live.set(c.id, text);
            } else if (c.op === 'batch') {
              const docs = c.docs.map((d) => ({ id: d.id, text: windowText(d.b, d.w, d.edit) }));
              await index.addMany(docs);
              for (const d of docs) live.set(d.id, d.text);
            } else if (c.op === 'removeMany') {
              assert.deepEqual(await index.removeMany(c.ids), removedFrom(live, c.ids));
            } else {
              assert.equal(await index.remove(c.id), live.delete(c.id));
            }
            await checkAgainstModel(index, live, `step ${i} ${JSON.stringify(c)}`);
          }
        } finally {
          await index.close();
        }
      }),
      { numRuns: name === 'memory' ? 60 : 25 },
    );
  });
}

test('clusters: deleting the bridge splits a cluster; replacing it with other text too', async () => {
  const index = await NearDupIndex.open(CLUSTER_OPTS);
  await index.add('a', windowText(0, 0));
  await index.add('b', windowText(0, 1));
  await index.add('c', windowText(0, 2));
  assert.deepEqual((await index.clusterOf('a'))?.members, ['a', 'b', 'c']);
  await index.add('b', windowText(1, 4)); // replaced: no longer the bridge
  assert.deepEqual((await index.clusterOf('a'))?.members, ['a']);
  assert.equal((await index.clusters()).total, 0);
  await index.add('b', windowText(0, 1));
  assert.equal((await index.cluster('a'))?.size, 3);
  assert.equal(await index.remove('b'), true);
  assert.deepEqual((await index.clusters()).clusters, []);
  // Paging: largest first, ties by id.
  await index.add('x1', windowText(1, 0));
  await index.add('x2', windowText(1, 1));
  await index.add('b', windowText(0, 1));
  const p1 = await index.clusters({ limit: 1 });
  const p2 = await index.clusters({ limit: 1, offset: 1 });
  assert.deepEqual([p1.total, p1.clusters.map((c) => c.id), p2.clusters.map((c) => c.id)], [2, ['a'], ['x1']]);
  // Cluster upkeep stays out of the user's counters.
  const before = (await index.stats()).counters;
  await index.remove('b');
  const after = (await index.stats()).counters;
  assert.equal(after.queries, before.queries);
  await index.close();
});

test('clusters: one bulk delete across two clusters splits both and keeps what still holds together', async () => {
  const index = await NearDupIndex.open(CLUSTER_OPTS);
  for (let w = 0; w < 4; w++) {
    await index.add(`a${w}`, windowText(0, w));
    await index.add(`x${w}`, windowText(1, w));
  }
  assert.deepEqual((await index.clusters({ members: 10 })).clusters.map((c) => c.members), [['a0', 'a1', 'a2', 'a3'], ['x0', 'x1', 'x2', 'x3']]);
  assert.deepEqual(await index.removeMany(['a0', 'x1', 'x1', 'nope']), [true, true, false, false]);
  assert.deepEqual((await index.clusters({ members: 10 })).clusters.map((c) => c.members), [['a1', 'a2', 'a3'], ['x2', 'x3']]);
  assert.deepEqual(await index.removeMany([]), []);
  assert.equal(await index.size(), 6);
  assert.equal((await index.stats()).counters.removes, 2);
  await index.close();
});

test('clusters: a store filled from a snapshot (or before clusters were kept) is built on first request', async () => {
  const dir = tmpDir();
  const index = await NearDupIndex.open(CLUSTER_OPTS);
  const live = new Map<string, string>();
  for (let w = 0; w < 6; w++) for (const b of [0, 1]) if ((w + b) % 4 !== 3) live.set(`${b}-${w}`, windowText(b, w));
  for (const [id, text] of live) await index.add(id, text);
  await index.save(path.join(dir, 's.ndix'));
  await index.close();
  const loaded = await NearDupIndex.load(path.join(dir, 's.ndix'), { store: `sqlite:${path.join(dir, 'l.db')}` });
  const page = await loaded.clusters({ wait: false });
  assert.ok(page.building, 'the first answer says the clusters are being built');
  await checkAgainstModel(loaded, live, 'after load');
  const q = (await loaded.stats()).counters.queries;
  assert.equal(q, 0, "building the clusters is not counted as the user's queries");
  await loaded.close();
  // Reopened: kept in the file, no rebuild.
  const again = await NearDupIndex.open({ store: `sqlite:${path.join(dir, 'l.db')}` });
  assert.equal((await again.clusters({ wait: false })).building, undefined);
  await checkAgainstModel(again, live, 'reopened');
  await again.close();
});

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), '../helpers/clusterWorker.js');

/** A second process on the same store, driven one JSON line at a time. */
function otherProcess(store: string): { call(c: object): Promise<unknown>; close(): Promise<void> } {
  const child = spawn(process.execPath, [worker, store], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    async call(c) {
      child.stdin!.write(JSON.stringify(c) + '\n');
      const r = await lines.next();
      if (r.done) throw new Error('worker exited');
      return JSON.parse(r.value);
    },
    async close() {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

for (
  const [name, spec] of [
    ['Redis', () => `${redis!.url}?prefix=two${Math.random().toString(36).slice(2)}`],
    ['one SQLite file', () => `sqlite:${path.join(tmpDir(), 'two.db')}`],
    ['one PostgreSQL schema', pgSpec],
  ] as [string, () => string][]
) {
  test(`clusters: two processes on ${name} see the same, right clusters`, needs(name), async () => {
    const store = spec();
    const mine = await NearDupIndex.open({ ...CLUSTER_OPTS, store });
    const other = otherProcess(store);
    const live = new Map<string, string>();
    const r = fc.sample(fc.array(cmdArb.filter((c) => c.op !== 'batch' && c.op !== 'removeMany'), { minLength: 60, maxLength: 60 }), {
      numRuns: 1,
      seed: 42,
    })[0]!;
    try {
      for (const [i, c] of r.entries()) {
        const here = i % 2 === 0;
        if (c.op === 'add') {
          const text = windowText(c.b, c.w, c.edit);
          if (here) await mine.add(c.id, text);
          else await other.call({ op: 'add', id: c.id, text });
          live.set(c.id, text);
        } else if (c.op === 'remove') {
          const removed = here ? await mine.remove(c.id) : await other.call({ op: 'remove', id: c.id });
          assert.equal(removed, live.delete(c.id));
        }
        await checkAgainstModel(mine, live, `step ${i} (${here ? 'this' : 'other'} process) ${JSON.stringify(c)}`);
        assert.deepEqual(canonical((await other.call({ op: 'clusters' })) as string[][]), expectedClusters(live), `step ${i}: the other process`);
      }
    } finally {
      await other.close();
      await mine.close();
    }
  });
}
