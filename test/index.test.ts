/**
 * The library behaves as its docs say (issue #32, item 6): containment picks its candidates as the
 * CLI does, `dedup()` takes `{ id, text }` records and refuses a bare string, `dedupFile` writes what
 * `--output dedup` writes, `NearDupIndex<Meta>` types its metadata, `save()` returns the documents
 * written, library errors name no CLI flag or HTTP field, docs/api.md lists every export, and
 * `dedup --json` reports the banding only when LSH ran.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as api from '../src/index.js';
import { dedup, dedupFile, NearDupIndex } from '../src/index.js';
import { neardup, repoRoot, tmpDir } from './cliUtil.js';

const base = 'Fermata bus 87 e 625 10 metri, fronte Villa Lazzaroni. Luminoso, finemente ristrutturato';
const texts = [
  base,
  `Affitto studio a professionisti. ${base}, con cantina e posto auto coperto nel cortile condominiale`,
  'Negozio 169 mq al piano terra, ristrutturato, quattro serrande elettriche e citofono esterno',
  'Un testo del tutto diverso sulle vacanze al mare in agosto con la famiglia',
];

test("dedup: measure 'containment' without candidates runs the exact join, as the CLI does (docs/duplicate-kinds.md)", () => {
  const r = dedup(texts, { measure: 'containment', threshold: 0.9 });
  assert.equal(r.stats.candidateMethod, 'exact');
  assert.deepEqual(
    r.pairs.map((p) => [p.a, p.b]),
    [[0, 1]],
  );
  assert.deepEqual(r.pairs, dedup(texts, { measure: 'containment', threshold: 0.9, candidates: 'exact' }).pairs);
  assert.throws(() => dedup(texts, { measure: 'containment', candidates: 'lsh' }), /containment needs exact candidates/);
});

test('dedup: { id, text } records give the same result with ids on the pairs and clusters', () => {
  const ids = ['ad-a', 'ad-b', 'ad-c', 'ad-d'];
  const plain = dedup([texts[0]!, texts[0]! + '!', texts[2]!, texts[2]!], { threshold: 0.5 });
  const r = dedup(
    ids.map((id, i) => ({ id, text: [texts[0]!, texts[0]! + '!', texts[2]!, texts[2]!][i]! })),
    { threshold: 0.5 },
  );
  assert.deepEqual(r.ids, ids);
  assert.deepEqual(
    r.pairs.map((p) => [p.idA, p.idB]),
    [
      ['ad-a', 'ad-b'],
      ['ad-c', 'ad-d'],
    ],
  );
  assert.deepEqual(
    r.pairs.map((p) => [p.a, p.b, p.similarity]),
    plain.pairs.map((p) => [p.a, p.b, p.similarity]),
  );
  assert.deepEqual(
    r.clusters.map((c) => [c.memberIds, c.representativeId]),
    [
      [['ad-a', 'ad-b'], 'ad-a'],
      [['ad-c', 'ad-d'], 'ad-c'],
    ],
  );
  // Numeric ids are reported as strings; the kinds path (exact join) carries ids too.
  const n = dedup([{ id: 7, text: texts[0]! }, { id: 9, text: texts[0]! }], { candidates: 'exact' });
  assert.deepEqual(n.pairs.map((p) => [p.idA, p.idB]), [['7', '9']]);
  assert.throws(
    () => dedup([{ id: 'x', text: 'a' }, { id: 'x', text: 'b' }]),
    (e: Error) => e instanceof RangeError && /id "x" of document 1 is also the id of document 0/.test(e.message),
  );
});

test('dedup: a bare string, a mix of texts and records, or another element type is a TypeError', () => {
  assert.throws(
    () => dedup('the cat sat on the mat' as unknown as string[]),
    (e: Error) => e instanceof TypeError && /not a string/.test(e.message) && /\[text\]/.test(e.message),
  );
  assert.throws(
    () => dedup(['a text', { id: 'x', text: 'b' }] as unknown as string[]),
    (e: Error) => e instanceof TypeError && /document 1 is an object/.test(e.message),
  );
  assert.throws(
    () => dedup([{ id: 'x', text: 'b' }, 'a text'] as unknown as { id: string; text: string }[]),
    (e: Error) => e instanceof TypeError && /document 1 is a string/.test(e.message),
  );
  assert.throws(() => dedup([{ id: 'x', body: 'b' }] as unknown as { id: string; text: string }[]), TypeError);
  // A generator of texts still streams, checked element by element.
  function* gen(): Generator<unknown> {
    yield 'the cat sat on the mat';
    yield 42;
  }
  assert.throws(() => dedup(gen() as Iterable<string>), (e: Error) => e instanceof TypeError && /document 1 is a number/.test(e.message));
  const g = dedup((function* () {
    yield texts[0]!;
    yield texts[0]!;
  })());
  assert.equal(g.pairs.length, 1);
});

test('dedupFile writes the same bytes as neardup dedup --output dedup, with the ids of the input', async () => {
  const dir = tmpDir();
  const input = path.join(repoRoot, 'examples/ads.tsv');
  const cli = neardup(['dedup', input, '--text', 'Title,Short Description', '--output', 'dedup', '--out', path.join(dir, 'cli.tsv'), '--quiet']);
  assert.equal(cli.code, 0, cli.stderr);
  const lib = await dedupFile(input, path.join(dir, 'lib.tsv'), { read: { columns: { text: ['Title', 'Short Description'] } } });
  const want = fs.readFileSync(path.join(dir, 'cli.tsv'));
  assert.ok(want.length > 1000);
  assert.ok(fs.readFileSync(path.join(dir, 'lib.tsv')).equals(want), 'same bytes as the CLI');
  const lines = want.toString('utf8').split('\n').filter((l) => l !== '').length;
  assert.equal(lib.written + 1, lines, 'records written + header');
  assert.ok(lib.result.clusters.length > 0);
  assert.equal(lib.result.ids.length, 400);
  assert.equal(lib.result.ids[0], '0', 'without an id column the ids are the row numbers (from 0, as the CLI prints them)');
  // annotate keeps every record.
  const ann = await dedupFile(input, path.join(dir, 'ann.tsv'), { read: { columns: { text: ['Title', 'Short Description'] } }, mode: 'annotate' });
  assert.equal(ann.written, 400);
  await assert.rejects(dedupFile(input, input), /the output .* the input/);
  await assert.rejects(dedupFile(input, '-'), TypeError);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('NearDupIndex<Meta> types the metadata; save() resolves to the number of documents written', async () => {
  const index = await NearDupIndex.open<{ url: string }>({ threshold: 0.5 });
  await index.add('a', texts[0]!, { url: 'https://example.org/a' });
  await index.addMany([{ id: 'b', text: texts[0]! + '!', meta: { url: 'https://example.org/b' } }]);
  const matches = await index.query(texts[0]!);
  // Compile-time: `meta` is { url: string } | undefined, so `.url` needs no cast.
  const urls: (string | undefined)[] = matches.map((m) => m.meta?.url);
  assert.deepEqual(urls.sort(), ['https://example.org/a', 'https://example.org/b']);
  const got = await index.get('b');
  assert.equal(got?.meta?.url, 'https://example.org/b');
  const dir = tmpDir();
  assert.equal(await index.save(path.join(dir, 'snap')), 2);
  await index.close();
  const loaded = await NearDupIndex.load<{ url: string }>(path.join(dir, 'snap'));
  assert.equal((await loaded.get('a'))?.meta?.url, 'https://example.org/a');
  await loaded.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a library error names no CLI flag or HTTP field: reopening a store with another threshold', async () => {
  const dir = tmpDir();
  const index = await NearDupIndex.open({ threshold: 0.8 });
  await index.add('a', texts[0]!);
  await index.save(path.join(dir, 'snap'));
  await index.close();
  const store = new api.MemoryStore();
  const first = await NearDupIndex.open({ store, threshold: 0.8 });
  await first.add('a', texts[0]!);
  await assert.rejects(NearDupIndex.open({ store, threshold: 0.5 }), (e: Error) => {
    assert.match(e.message, /created with threshold 0\.8/);
    assert.doesNotMatch(e.message, /--[a-z]|\/v1\//);
    return true;
  });
  await first.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('docs/api.md names every value export of src/index.ts, and nothing that is not one', () => {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs/api.md'), 'utf8');
  const table = doc.slice(doc.indexOf('| what | names |'), doc.indexOf('\n\n', doc.indexOf('| what | names |')));
  const named = new Set<string>();
  for (const m of table.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)/g)) named.add(m[1]!);
  const exported = Object.keys(api).sort();
  assert.ok(exported.length > 50);
  const missing = exported.filter((n) => !named.has(n));
  assert.deepEqual(missing, [], `exports missing from docs/api.md's table: ${missing.join(', ')}`);
});

test('dedup --json: the banding and its recall only when LSH found the candidates', () => {
  const dir = tmpDir();
  const input = path.join(repoRoot, 'examples/ads.tsv');
  const run = (extra: string[]): { options: { candidates: string }; lsh: { recallAtThreshold: number } | null } => {
    const r = neardup(['dedup', input, '--text', 'Title,Short Description', '--json', '--out', path.join(dir, 'p.tsv'), ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const exact = run(['--candidates', 'exact']);
  assert.equal(exact.options.candidates, 'exact');
  assert.equal(exact.lsh, null);
  assert.equal(run(['--measure', 'containment']).lsh, null);
  const lsh = run([]);
  assert.equal(lsh.options.candidates, 'lsh');
  assert.ok(lsh.lsh && lsh.lsh.recallAtThreshold > 0.9);
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A value as a doc comment shows it (`{ id: 'ad-1', similarity: 0.971… }`, `[0, 1]`), checked against
 * the real value: every field shown, in order; a number ending in `…` is a prefix of the real one.
 * A list shows every element.
 */
function assertShown(actual: unknown, shown: string, where: string): void {
  const objects = [...shown.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!);
  const list = shown.trimStart().startsWith('[') ? (actual as unknown[]) : [actual];
  assert.equal(list.length, objects.length, `${where}: ${objects.length} shown, ${list.length} returned`);
  objects.forEach((fields, i) => {
    const real = list[i] as Record<string, unknown>;
    for (const [, name, value] of fields.matchAll(/(\w+): ('[^']*'|\[[^\]]*\]|-?[\d.]+…?)/g)) {
      const got = real[name!];
      if (value!.endsWith('…')) assert.ok(String(got).startsWith(value!.slice(0, -1)), `${where}: ${name} is ${String(got)}, shown ${value}`);
      else assert.deepEqual(got, JSON.parse(value!.replaceAll("'", '"')), `${where}: ${name}`);
    }
  });
}

/** The literal arguments of a call in a doc's example (the docs' own strings and options). */
const literalArgs = (source: string): unknown[] => new Function(`return [${source}];`)() as unknown[];

test("the library examples of docs/api.md and README.md return what their comments show (api.md's similarity, README's topK)", async () => {
  const api = fs.readFileSync(path.join(repoRoot, 'docs/api.md'), 'utf8');
  const call = /const \{ pairs, clusters \} = dedup\((.*)\);/.exec(api)!;
  const r = dedup(literalArgs(call[1]!)[0] as { id: string; text: string }[]);
  assertShown(r.pairs[0], /^pairs\[0\]; +\/\/ (\{.*?\})/m.exec(api)![1]!, 'api.md pairs[0]');
  assertShown(r.clusters[0], /^clusters\[0\]; +\/\/ (\{.*\})/m.exec(api)![1]!, 'api.md clusters[0]');
  assert.throws(() => dedup('one long text' as never), /not a string: a string would be read as one document per character \(pass \[text\]\)/);

  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const block = readme.slice(readme.indexOf('## Online: add one document'));
  const lines = block.slice(block.indexOf('```ts'), block.indexOf('```\n', block.indexOf('```ts') + 5)).split('\n');
  const index = await NearDupIndex.open({ threshold: 0.8, store: 'memory' });
  let checked = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = /^await index\.(add|query|topK)\((.*)\);/.exec(lines[i]!);
    if (!m) continue;
    const got = await (index[m[1] as 'add'] as (...a: unknown[]) => Promise<unknown>).apply(index, literalArgs(m[2]!));
    const shown = /^\/\/ → (\[.*\])/.exec(lines[i + 1] ?? '');
    if (shown) {
      assertShown(got, shown[1]!, `README ${m[1]}(${m[2]})`);
      checked++;
    }
  }
  assert.equal(checked, 3, 'add, query and topK show their results');
  await index.close();
});
