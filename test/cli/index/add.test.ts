/** `neardup index add|query|remove`: the online index from the command line, through the built binary. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, lines, neardup, tmpDir } from '../../cliUtil.js';

const ads = path.resolve(fixtures, '../../../examples/ads.tsv');
const adsArgs = ['--text', 'Title,Short Description'];

test('index add: every document is indexed and reports the near duplicates already indexed — the pairs dedup finds, each once', () => {
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'ads.db')}`;
  const add = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '--batch', '64']);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /added +400 documents from .*ads\.tsv \[tsv\]/);
  assert.match(add.stderr, /index +400 documents in sqlite:/);
  const got = lines(add.stdout).map((l) => {
    const [a, b, sim, est] = l.split('\t');
    assert.ok(Number(est) > 0);
    return `${b!.slice(1)}\t${a!.slice(1)}\t${sim}`;
  });
  const dedup = neardup(['dedup', ads, ...adsArgs, '-q']);
  assert.equal(dedup.code, 0, dedup.stderr);
  // dedup writes earlier⇥later⇥similarity; add wrote later⇥earlier (the one already indexed).
  assert.deepEqual(got.sort(), lines(dedup.stdout).sort());
  assert.equal(got.length, 369);

  // query: matches without indexing; --limit and --match-threshold; CSV by --out extension.
  const out = path.join(dir, 'q.csv');
  const q = neardup(['index', 'query', ads, ...adsArgs, '--store', store, '--limit', '1', '--match-threshold', '0.99', '--out', out]);
  assert.equal(q.code, 0, q.stderr);
  const rows = fs.readFileSync(out, 'utf8').trim().split('\n');
  assert.equal(rows[0], 'a,b,similarity,estimate');
  assert.equal(rows.length - 1, 400, 'every ad finds itself (similarity 1), one match each');
  assert.ok(rows.slice(1).every((r) => Number(r.split(',')[2]) >= 0.99));
  assert.match(q.stderr, /index +400 documents/);

  // A second file with other ids adds; the same ids replace (the index stays at 400 + 400).
  const again = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 's', '--store', store, '-q', '--json', '--out', path.join(dir, 'm.jsonl')]);
  assert.equal(again.code, 0, again.stderr);
  const summary = JSON.parse(again.stdout) as { docs?: number; input: { docs: number }; indexSize: number; docsWithMatches: number };
  assert.equal(summary.input.docs, 400);
  assert.equal(summary.indexSize, 800);
  assert.equal(summary.docsWithMatches, 400, 'each ad matches its earlier copy');
  const replace = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 's', '--store', store, '-q']);
  assert.equal(replace.code, 0, replace.stderr);
  const check = neardup(['index', 'check', '--store', store]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /documents 800 /);
});

test('index add: a repeated id inside one file replaces the earlier document, as sequential adds do', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'docs.txt');
  const text = 'a flat in rome near the metro with two rooms and a balcony, newly furnished';
  fs.writeFileSync(file, [`x\t${text}`, `y\tsomething else entirely about cars and boats`, `x\t${text} and a garden`].join('\n') + '\n');
  const store = `sqlite:${path.join(dir, 'i.db')}`;
  const r = neardup(['index', 'add', file, '--format', 'idtext', '--store', store]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /index +2 documents/);
  const q = neardup(['index', 'query', file, '--format', 'idtext', '--store', store, '-q']);
  assert.equal(q.code, 0, q.stderr);
  assert.ok(lines(q.stdout).some((l) => l.startsWith('x\tx\t1\t')), q.stdout);
});

test('index add: inputs without ids, --store memory, and bad stores are clear errors that create nothing', () => {
  const dir = tmpDir();
  const db = path.join(dir, 'new.db');
  const noIds = neardup(['index', 'add', ads, ...adsArgs, '--store', `sqlite:${db}`]);
  assert.equal(noIds.code, 2);
  assert.match(noIds.stderr, /^neardup: .*ads\.tsv has no ids: give --id COLUMN \(TSV\/CSV\), --id-field PATH \(JSONL\), or --id-prefix PREFIX/);
  assert.equal(fs.existsSync(db), false, 'no store was created');
  const mem = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r']);
  assert.equal(mem.code, 2);
  assert.match(mem.stderr, /--store memory keeps nothing/);
  // An empty spec is the memory store too (one spec parser): refused the same way.
  const empty = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', '']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /--store memory keeps nothing/);
  const missing = neardup(['index', 'query', path.join(dir, 'nope.tsv'), '--store', `sqlite:${db}`]);
  assert.equal(missing.code, 2);
  assert.doesNotMatch(missing.stderr, /\n\s+at /);
  // Parameters that contradict an existing store are refused, naming both.
  const store = `sqlite:${path.join(dir, 'k5.db')}`;
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-q']).code, 0);
  const k10 = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-k', '10']);
  assert.notEqual(k10.code, 0);
  assert.match(k10.stderr, /neardup: .*k/);
  assert.doesNotMatch(k10.stderr, /\n\s+at /);
});

test('index add: texts are kept by default (meta.text), titles from --title, --no-store-text keeps none; clusters are kept', async () => {
  const { NearDupIndex } = await import('../../../src/index.js');
  const dir = tmpDir();
  const jl = path.join(dir, 'docs.jsonl');
  fs.writeFileSync(
    jl,
    [
      '{"id":"a","t":"Casa al mare","body":"casa al mare con giardino e vista, libera da giugno"}',
      '{"id":"b","body":"casa al mare con giardino e vista, libera da luglio"}',
    ].join('\n') + '\n',
  );
  const kept = `sqlite:${path.join(dir, 'kept.db')}`;
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--title', 'Title', '--id-prefix', 'r', '--store', kept, '-q']).code, 0);
  assert.equal(
    neardup([
      'index',
      'add',
      jl,
      '--text-field',
      'body',
      '--id-field',
      'id',
      '--title',
      't',
      '--store',
      `sqlite:${path.join(dir, 'j.db')}`,
      '--threshold',
      '0.5',
      '-q',
    ]).code,
    0,
  );
  const bare = `sqlite:${path.join(dir, 'bare.db')}`;
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--no-store-text', '--id-prefix', 'r', '--store', bare, '-q']).code, 0);
  const bad = neardup(['index', 'add', ads, ...adsArgs, '--title', 'Nope', '--id-prefix', 'r', '--store', `sqlite:${path.join(dir, 'bad.db')}`]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown title column "Nope"; available columns: "Title"/);
  const rows = fs.readFileSync(ads, 'utf8').split('\n')[1]!.split('\t');
  const k = await NearDupIndex.open({ store: kept });
  assert.deepEqual((await k.get('r0'))!.meta, { title: rows[0], text: `${rows[0]} ${rows[1]}` });
  assert.ok((await k.clusters()).total > 50);
  await k.close();
  const j = await NearDupIndex.open({ store: `sqlite:${path.join(dir, 'j.db')}` });
  assert.deepEqual((await j.get('a'))!.meta, { title: 'Casa al mare', text: 'casa al mare con giardino e vista, libera da giugno' });
  assert.deepEqual((await j.get('b'))!.meta, { text: 'casa al mare con giardino e vista, libera da luglio' });
  assert.deepEqual((await j.clusterOf('b'))!.members, ['a', 'b']);
  await j.close();
  const b = await NearDupIndex.open({ store: bare });
  assert.equal((await b.get('r0'))!.meta, undefined);
  // #51 item 1: with the texts kept, a new index recomputes the sets from them (setSource text, no
  // set in a record whose meta.text is its text); without them the records keep their sets.
  assert.equal(b.manifest.setSource, undefined);
  assert.ok((await b.store.get(['r0']))[0]![1]! & 1);
  await b.close();
  const kt = await NearDupIndex.open({ store: kept });
  assert.equal(kt.manifest.setSource, 'text');
  const [rec] = await kt.store.get(['r0']);
  assert.equal(rec![1]! & 33, 32, 'REC_TEXT, no REC_SET');
  await kt.close();
});

test('index add --title on Parquet: the title column is kept; an unknown one is named', async () => {
  const { writeParquet } = await import('../../helpers/formats.js');
  const { NearDupIndex } = await import('../../../src/index.js');
  const dir = tmpDir();
  const file = path.join(dir, 'ads.parquet');
  await writeParquet(file, [
    { name: 'id', type: 'STRING', data: ['p1', 'p2'] },
    { name: 'title', type: 'STRING', data: ['Casa al mare', 'Villa'] },
    { name: 'text', type: 'STRING', data: ['casa al mare con giardino e vista, libera da giugno', 'casa al mare con giardino e vista, libera da luglio'] },
  ]);
  const store = `sqlite:${path.join(dir, 'p.db')}`;
  const r = neardup(['index', 'add', file, '--id', 'id', '--title', 'title', '--store', store, '--threshold', '0.5', '-q']);
  assert.equal(r.code, 0, r.stderr);
  const bad = neardup(['index', 'add', file, '--id', 'id', '--title', 'nope', '--store', `sqlite:${path.join(dir, 'q.db')}`]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /nope/);
  const idx = await NearDupIndex.open({ store });
  assert.deepEqual((await idx.get('p2'))!.meta, { title: 'Villa', text: 'casa al mare con giardino e vista, libera da luglio' });
  await idx.close();
});

test('index add --ensemble: the store keeps containment keys, and a short excerpt of an ad is found inside it', async () => {
  const { NearDupIndex } = await import('../../../src/index.js');
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'ens.db')}`;
  const add = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '--ensemble', '-q']);
  assert.equal(add.code, 0, add.stderr);
  const index = await NearDupIndex.open({ store });
  try {
    const { manifest } = await index.stats();
    assert.ok(manifest.ensemble, 'the manifest records the ensemble keys');
    // A sixth of the longest ad's description: far below the Jaccard threshold, but inside the ad.
    const rows = fs.readFileSync(ads, 'utf8').split('\n').slice(1).map((l) => l.split('\t')[1] ?? '');
    const longest = rows.reduce((a, b) => (b.length > a.length ? b : a));
    const excerpt = longest.slice(longest.length / 3, longest.length / 3 + longest.length / 6);
    const hits = await index.query(excerpt, { measure: 'containment', threshold: 0.9 });
    assert.ok(hits.some((h) => h.contained === 'query'), `the excerpt is found inside an ad: ${JSON.stringify(hits.slice(0, 2))}`);
    assert.deepEqual(await index.query(excerpt), [], 'Jaccard alone does not find it');
    const plain = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', `sqlite:${path.join(dir, 'plain.db')}`, '-q']);
    assert.equal(plain.code, 0, plain.stderr);
    // Reopening the same store with contradicting parameters is a usage error, as for every index option.
    const clash = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', `sqlite:${path.join(dir, 'plain.db')}`, '--ensemble', '-q']);
    assert.equal(clash.code, 2, clash.stderr);
    assert.match(clash.stderr, /ensemble/);
  } finally {
    await index.close();
  }
});

test('index remove: ids one per line or from a column, in batches; unknown and repeated ids counted; clear errors, nothing created', () => {
  const dir = tmpDir();
  const db = path.join(dir, 'ads.db');
  const store = `sqlite:${db}`;
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-q']).code, 0);
  fs.writeFileSync(path.join(dir, 'ids.txt'), 'r1\r\nr2\n\nnope\nr2\n');
  let r = neardup(['index', 'remove', path.join(dir, 'ids.txt'), '--store', store, '--batch', '2']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '2 documents removed, 2 of 4 ids not indexed\n');
  fs.writeFileSync(path.join(dir, 'sold.tsv'), 'price\tad\n10\tr3\n20\tr4\n');
  r = neardup(['index', 'remove', path.join(dir, 'sold.tsv'), '--column', 'ad', '--store', store]);
  assert.equal(r.stdout, '2 documents removed, 0 of 2 ids not indexed\n');
  r = neardup(['index', 'remove', path.join(dir, 'sold.tsv'), '--column', 'nope', '--store', store]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown column "nope"/);
  const check = neardup(['index', 'check', '--store', store]);
  assert.match(check.stdout, /^documents 396 \(store size 396\)/);
  r = neardup(['index', 'remove', path.join(dir, 'none.txt'), '--store', store]);
  assert.deepEqual([r.code, r.stderr], [2, `neardup: ${path.join(dir, 'none.txt')}: no such file\n`]);
  r = neardup(['index', 'remove', path.join(dir, 'ids.txt'), '--store', `sqlite:${path.join(dir, 'other.db')}`]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no SQLite index at/);
  assert.equal(fs.existsSync(path.join(dir, 'other.db')), false);
});

// Issue #48 item 5: a UTF-8 byte order mark was kept as part of the first id, so that id was
// "not indexed". From a file and from stdin, with LF and CRLF line ends.
test('index remove: a UTF-8 byte order mark before the first id is not part of it', () => {
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'ads.db')}`;
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-q']).code, 0);
  let n = 1;
  for (const eol of ['\n', '\r\n']) {
    for (const stdin of [false, true]) {
      const text = `\uFEFFr${n}${eol}r${n + 1}${eol}`;
      n += 2;
      const file = path.join(dir, `bom${n}.txt`);
      fs.writeFileSync(file, text);
      const r = stdin ? neardup(['index', 'remove', '-', '--store', store], { input: text }) : neardup(['index', 'remove', file, '--store', store]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '2 documents removed, 0 of 2 ids not indexed\n', JSON.stringify({ eol, stdin }));
    }
  }
});

// Issue #48 item 5: an absurd --ttl passed the flag's check and failed in the add (exit 1, "now + ttl
// must be a date"); every flag taking a duration says what it takes, exit 2.
test('index add / serve: a --ttl or --purge-interval too long for a date is a usage error (exit 2)', () => {
  const dir = tmpDir();
  const store = `sqlite:${path.join(dir, 'ads.db')}`;
  for (const ttl of ['100000000000w', '3650001d', '999999999999999ms', '1e3w']) {
    const r = neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-q', '--ttl', ttl]);
    assert.equal(r.code, 2, `${ttl}: ${r.stderr}`);
    assert.match(r.stderr, /--ttl must be (at most 3650000d \(about 10,000 years\)|a duration such as)/, ttl);
    assert.doesNotMatch(r.stderr, /^\s+at /m);
  }
  assert.equal(neardup(['index', 'add', ads, ...adsArgs, '--id-prefix', 'r', '--store', store, '-q', '--ttl', '3650000d']).code, 0, 'the longest ttl is taken');
  const s = neardup(['serve', '--store', store, '--purge-interval', '100000000000w']);
  assert.equal(s.code, 2, s.stderr);
  assert.match(s.stderr, /--purge-interval must be at most 3650000d/);
});
