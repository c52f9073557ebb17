/**
 * Issue 16 item 2: several writer processes on one store take turns instead of failing, and nothing
 * acknowledged or reported is lost. For every store that several processes can write (SQLite, Redis
 * log and sets layouts, PostgreSQL), two real processes add at once; then every document of both is in the
 * store, each process exits 0 (or every request got 200), and each cross-process pair of copies is
 * reported exactly once: by whichever of the two was added second, as if the adds had been serial.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { NearDupIndex } from '../../src/index.js';
import { tmpDir as newTmpDir } from '../cliUtil.js';
import { neardupChild, startServe, type ServeChild } from '../helpers/procs.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { startPostgres } from '../helpers/postgres.js';
import { needsPostgres, needsRedis } from '../helpers/needs.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

function tmpDir(): string {
  const d = newTmpDir();
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Deterministic pseudo-words, so distinct documents share almost no 5-character shingles. */
function makeTexts(n: number, seed: number): string[] {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const syll = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'su', 'ga', 'do', 'fi', 'hu', 'ja', 'be'];
  const word = () => Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => syll[Math.floor(rnd() * syll.length)]).join('');
  return Array.from({ length: n }, () => Array.from({ length: 40 }, word).join(' '));
}

const N = 1200;
/** Documents a_i and b_i are identical for i < SHARED: each such pair must be reported exactly once. */
const SHARED = 300;

interface Corpus {
  a: { id: string; text: string }[];
  b: { id: string; text: string }[];
}

function corpus(): Corpus {
  const ta = makeTexts(N, 1);
  const tb = makeTexts(N, 2);
  for (let i = 0; i < SHARED; i++) tb[i] = ta[i]!;
  return { a: ta.map((text, i) => ({ id: `a${i}`, text })), b: tb.map((text, i) => ({ id: `b${i}`, text })) };
}

function writeTsv(file: string, docs: { id: string; text: string }[]): void {
  writeFileSync(file, 'id\ttext\n' + docs.map((d) => `${d.id}\t${d.text}`).join('\n') + '\n');
}

/** Matches as "x y" strings from `index add` TSV output (id⇥match⇥similarity⇥estimate). */
function pairsOfOutput(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t').slice(0, 2).join(' '));
}

/** Checks the store and the reported matches. `reported` holds "added match" strings from every writer. */
async function checkOutcome(store: string, c: Corpus, reported: string[]): Promise<void> {
  const index = await NearDupIndex.open({ store });
  try {
    assert.equal(await index.size(), 2 * N, 'every document of both writers is in the store');
    const missing: string[] = [];
    for (const d of [...c.a, ...c.b]) if (!(await index.get(d.id))) missing.push(d.id);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} documents missing`);
  } finally {
    await index.close();
  }
  const count = new Map<string, number>();
  for (const r of reported) {
    const [x, y] = r.split(' ') as [string, string];
    // Only cross-writer pairs: a_i with b_i.
    if (x[0] === y[0]) continue;
    const key = x[0] === 'a' ? `${x} ${y}` : `${y} ${x}`;
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  const wrong: string[] = [];
  for (let i = 0; i < SHARED; i++) {
    const n = count.get(`a${i} b${i}`) ?? 0;
    if (n !== 1) wrong.push(`a${i}/b${i} reported ${n} times`);
  }
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} of ${SHARED} copied pairs not reported exactly once`);
  assert.equal(count.size, SHARED, 'no other cross-writer matches');
}

/** Two `neardup index add` processes at once on `store`; both must exit 0. */
async function twoAdders(store: string): Promise<void> {
  const dir = tmpDir();
  const c = corpus();
  writeTsv(path.join(dir, 'a.tsv'), c.a);
  writeTsv(path.join(dir, 'b.tsv'), c.b);
  const args = (
    f: string,
  ) => ['index', 'add', path.join(dir, `${f}.tsv`), '--id', 'id', '--store', store, '--batch', '25', '-o', path.join(dir, `${f}.out.tsv`), '--quiet'];
  const [ra, rb] = await Promise.all([neardupChild(args('a')).done, neardupChild(args('b')).done]);
  assert.equal(ra.code, 0, `first index add: ${ra.stderr}`);
  assert.equal(rb.code, 0, `second index add: ${rb.stderr}`);
  await checkOutcome(store, c, [...pairsOfOutput(path.join(dir, 'a.out.tsv')), ...pairsOfOutput(path.join(dir, 'b.out.tsv'))]);
}

/** POSTs `docs` to a server in batches (singles every third request); returns "added match" strings. */
async function postAll(s: ServeChild, docs: { id: string; text: string }[]): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < docs.length;) {
    if ((i / 10) % 3 === 0) {
      const d = docs[i++]!;
      const r = await fetch(`${s.url}/v1/documents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...d, limit: 10000 }),
      });
      assert.equal(r.status, 200, `POST /v1/documents ${d.id}: ${await r.clone().text()}; server: ${s.stderr()}`);
      for (const m of ((await r.json()) as { duplicates: { id: string }[] }).duplicates) out.push(`${d.id} ${m.id}`);
    } else {
      const batch = docs.slice(i, i + 10);
      i += batch.length;
      const r = await fetch(`${s.url}/v1/documents:batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ documents: batch, limit: 10000 }),
      });
      assert.equal(r.status, 200, `POST /v1/documents:batch: ${await r.clone().text()}; server: ${s.stderr()}`);
      const results = ((await r.json()) as { results: { id: string; duplicates: { id: string }[] }[] }).results;
      for (const res of results) for (const m of res.duplicates) out.push(`${res.id} ${m.id}`);
    }
  }
  return out;
}

test('sqlite: two `index add` processes on one file both finish, nothing lost, each copy reported once', async () => {
  const dir = tmpDir();
  await twoAdders(`sqlite:${path.join(dir, 'two.db')}`);
});

test('sqlite: `index add` while `serve` writes the same file', async () => {
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'mixed.db')}`;
  const c = corpus();
  writeTsv(path.join(dir, 'a.tsv'), c.a);
  // The store exists before either writer starts (serve creates it).
  const s = await startServe(['--store', store]);
  cleanup.push(() => s.stop());
  const adder = neardupChild([
    'index',
    'add',
    path.join(dir, 'a.tsv'),
    '--id',
    'id',
    '--store',
    store,
    '--batch',
    '25',
    '-o',
    path.join(dir, 'a.out.tsv'),
    '--quiet',
  ]);
  const [fromHttp, ra] = await Promise.all([postAll(s, c.b), adder.done]);
  assert.equal(ra.code, 0, `index add: ${ra.stderr}`);
  assert.equal(await s.stop(), 0);
  assert.doesNotMatch(s.stderr(), /SQLITE_BUSY|database is locked|500/);
  await checkOutcome(store, c, [...fromHttp, ...pairsOfOutput(path.join(dir, 'a.out.tsv'))]);
});

/** Two `serve` processes on one store, each posting half of the corpus: every write answered 200, nothing lost. */
async function twoServers(store: string): Promise<void> {
  const c = corpus();
  const s1 = await startServe(['--store', store]);
  cleanup.push(() => s1.stop());
  const s2 = await startServe(['--store', store]);
  cleanup.push(() => s2.stop());
  const [r1, r2] = await Promise.all([postAll(s1, c.a), postAll(s2, c.b)]);
  assert.deepEqual(await Promise.all([s1.stop(), s2.stop()]), [0, 0]);
  await checkOutcome(store, c, [...r1, ...r2]);
}

test('sqlite: two `serve` processes on one file answer every write with 200', async () => {
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'served.db')}`;
  await twoServers(store);
});

for (const layout of ['log', 'sets'] as const) {
  test(`redis (${layout} layout): two \`index add\` processes at once, nothing lost, each copy reported once`, needsRedis(), async () => {
    const redis: RedisChild = await startRedis();
    cleanup.push(() => redis.stop());
    await twoAdders(`${redis.url}?prefix=two${layout}&layout=${layout}`);
  });
}

test('redis: two `serve` processes on one prefix, each copy reported once', needsRedis(), async () => {
  const redis: RedisChild = await startRedis();
  cleanup.push(() => redis.stop());
  const store = `${redis.url}?prefix=served`;
  await twoServers(store);
});

test(
  'postgres: two `index add` processes at once, then two `serve` processes on one schema: nothing lost, each copy reported once',
  needsPostgres(),
  async () => {
    const pg = await startPostgres();
    cleanup.push(() => pg.stop());
    await twoAdders(`${pg.url}?schema=adders`);
    await twoServers(`${pg.url}?schema=served`);
  },
);
