/**
 * `neardup index query --top-k` (distinct texts, each hit's copies in rows that name it) and
 * `--filter` on `index query` and `index add`: the same answers as the library, and bad filters are
 * usage errors (exit 2) naming the flag.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { lines, neardup, tmpDir } from '../../cliUtil.js';
import { NearDupIndex } from '../../../src/index.js';

const BASE = 'two-room flat near the station with a kitchen, a bathroom and a small balcony, available from September';
const docs = [
  ...['c3', 'c1', 'c2'].map((id, i) => ({ id, text: BASE, meta: { site: i % 2 ? 'b' : 'a' } })),
  { id: 'v1', text: BASE.replace('September', 'October'), meta: { site: 'a' } },
  { id: 'v2', text: BASE.replace('small', 'large'), meta: { site: 'b', lang: 'en' } },
  { id: 'v3', text: BASE.replace('kitchen', 'big kitchen'), meta: { site: 'c' } },
  { id: 'far', text: 'a red bicycle for sale, two wheels, a bell and a basket, cheap', meta: { site: 'a' } },
];
const queries = [BASE, BASE.replace('station', 'park'), 'a red bicycle for sale with a bell'];

async function makeStore(dir: string): Promise<{ store: string; input: string }> {
  const store = `sqlite:${path.join(dir, 'idx.db')}`;
  const idx = await NearDupIndex.open({ store, threshold: 0.5 });
  await idx.addMany(docs);
  await idx.close();
  const input = path.join(dir, 'q.jsonl');
  fs.writeFileSync(input, queries.map((text, i) => JSON.stringify({ id: `q${i}`, text })).join('\n') + '\n');
  return { store, input };
}

test("index query --top-k: one row per distinct text, then a row per copy naming its hit; the library's answer, filtered or not", async () => {
  const dir = tmpDir();
  const { store, input } = await makeStore(dir);
  const idx = await NearDupIndex.open({ store });
  for (const filter of [undefined, { site: 'a' }, { site: ['b', 'c'] }]) {
    const args = [
      'index',
      'query',
      input,
      '--id-field',
      'id',
      '--store',
      store,
      '--top-k',
      '2',
      '--output-format',
      'jsonl',
      '-q',
      ...(filter ? ['--filter', JSON.stringify(filter)] : []),
    ];
    const r = neardup(args);
    assert.equal(r.code, 0, r.stderr);
    const want: object[] = [];
    for (const [i, text] of queries.entries()) {
      for (const m of await idx.topK(text, 2, { filter })) {
        want.push({ a: `q${i}`, b: m.id, similarity: m.similarity, copy_of: null });
        for (const c of m.copies) want.push({ a: `q${i}`, b: c.id, similarity: c.similarity, copy_of: m.id });
      }
    }
    const got = lines(r.stdout).map((l) => {
      const { a, b, similarity, copy_of } = JSON.parse(l);
      return { a, b, similarity, copy_of };
    });
    assert.deepEqual(
      got.map((x) => ({ ...x, similarity: Number(x.similarity.toFixed(6)) })),
      want.map((x) => ({ ...x, similarity: Number((x as { similarity: number }).similarity.toFixed(6)) })),
      JSON.stringify(filter),
    );
  }
  // TSV and CSV: a fifth column, empty for a hit.
  const tsv = neardup(['index', 'query', input, '--id-field', 'id', '--store', store, '--top-k', '1', '-q']);
  assert.equal(tsv.code, 0, tsv.stderr);
  assert.deepEqual(lines(tsv.stdout).filter((l) => l.startsWith('q0\t')).map((l) => [l.split('\t')[1], l.split('\t')[4]]), [['c1', ''], ['c2', 'c1'], [
    'c3',
    'c1',
  ]]);
  const out = path.join(dir, 'top.csv');
  assert.equal(neardup(['index', 'query', input, '--id-field', 'id', '--store', store, '--top-k', '1', '-q', '--out', out]).code, 0);
  assert.equal(fs.readFileSync(out, 'utf8').split('\n')[0], 'a,b,similarity,estimate,copy_of');
  // Threshold queries with a filter: the library's.
  const q = neardup(['index', 'query', input, '--id-field', 'id', '--store', store, '--filter', '{"site":"b"}', '--output-format', 'jsonl', '-q']);
  assert.equal(q.code, 0, q.stderr);
  const lib = (await Promise.all(queries.map((t) => idx.query(t, { filter: { site: 'b' } })))).flatMap((ms, i) => ms.map((m) => `q${i} ${m.id}`));
  assert.deepEqual(lines(q.stdout).map((l) => `${JSON.parse(l).a} ${JSON.parse(l).b}`), lib);
  assert.ok(lib.length > 0);
  await idx.close();
});

test('index add --filter: only indexed documents whose metadata matches are reported; every document is indexed', async () => {
  const dir = tmpDir();
  const { store, input } = await makeStore(dir);
  const idx = await NearDupIndex.open({ store });
  const want = (await Promise.all(queries.map((t) => idx.query(t, { filter: { site: ['a', 'c'] } })))).flatMap((ms, i) => ms.map((m) => `q${i}\t${m.id}`));
  await idx.close();
  const r = neardup(['index', 'add', input, '--id-field', 'id', '--store', store, '--filter', '{"site":["a","c"]}', '-q']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout).map((l) => l.split('\t').slice(0, 2).join('\t')), want);
  assert.ok(want.length > 0);
  const again = await NearDupIndex.open({ store });
  assert.equal(await again.size(), docs.length + queries.length);
  await again.close();
});

test('--filter and --top-k: bad values are usage errors (exit 2) naming the flag', async () => {
  const dir = tmpDir();
  const { store, input } = await makeStore(dir);
  for (
    const [args, message] of [
      [['--filter', 'site=a'], /--filter must be a JSON object/],
      [['--filter', '{"site":{"a":1}}'], /--filter\.site: values must be strings, finite numbers, booleans or null/],
      [['--filter', '{"site":[]}'], /--filter\.site: an empty list matches nothing/],
      [['--filter', '["site"]'], /--filter must be an object/],
      [['--top-k', '0'], /top-k/],
      [['--top-k', '3', '--limit', '2'], /--top-k .*drop --limit and --match-threshold/],
    ] as const
  ) {
    const r = neardup(['index', 'query', input, '--id-field', 'id', '--store', store, ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const add = neardup(['index', 'add', input, '--id-field', 'id', '--store', store, '--filter', '{"n":[null,{}]}']);
  assert.equal(add.code, 2, add.stderr);
  assert.match(add.stderr, /--filter\.n: values must be/);
});
