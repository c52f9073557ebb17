import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { EXPECTED_ID_PAIRS, EXPECTED_PAIRS, fixtures, kijiji, lines, neardup, tmpDir } from '../../cliUtil.js';
import { plantedDocs } from '../../helpers/shards.js';

test('default: pairs as a⇥b⇥similarity lines on stdout, summary on stderr', () => {
  const r = neardup(['dedup', 'docs.tsv', '--text', 'body']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, EXPECTED_PAIRS.join('\n') + '\n');
  for (
    const re of [
      /docs +7 from docs\.tsv \[tsv\]: 1 empty/,
      /lsh +16 bands × 6 rows \(96 of 128 hashes\): P\(0\.8\) = 0\.9923/,
      /candidates +4\n/,
      /pairs +4 \(exact Jaccard ≥ 0\.8\)/,
      /clusters +2, holding 5 docs/,
      /time +read .* · shingle .* · sign .* · lsh .* · verify .* · cluster .* · write .* · total /,
    ]
  ) {
    assert.match(r.stderr, re);
  }
  assert.doesNotMatch(r.stderr, /\r|ETA/, 'no progress bar when stderr is not a TTY');
});

test('every input format finds the same pairs', () => {
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'docs.csv.gz'), gzipSync(fs.readFileSync(path.join(fixtures, 'docs.csv'))));
  const byRow: string[][] = [
    ['dedup', 'docs.tsv', '--text', 'body'],
    ['dedup', 'docs.csv', '--text', 'body'],
    ['dedup', path.join(dir, 'docs.csv.gz'), '--text', 'body'],
    ['dedup', 'docs.jsonl', '--text-field', 'body.text'],
    ['dedup', 'docs.txt'],
  ];
  for (const args of byRow) {
    const r = neardup(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.deepEqual(lines(r.stdout), EXPECTED_PAIRS, args.join(' '));
  }
  const byId: string[][] = [
    ['dedup', 'docs.tsv', '--text', 'body', '--id', 'id'],
    ['dedup', 'docs.csv', '--text', 'body', '--id', 'id'],
    ['dedup', 'docs.jsonl', '--text-field', 'body.text', '--id-field', 'meta.id'],
    ['dedup', 'rcv1-style.txt', '--format', 'idtext'],
  ];
  for (const args of byId) {
    const r = neardup(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.deepEqual(lines(r.stdout), EXPECTED_ID_PAIRS, args.join(' '));
  }
  const d = neardup(['dedup', 'corpus']);
  assert.equal(d.code, 0, d.stderr);
  assert.deepEqual(lines(d.stdout), ['a1.txt\tsub/a2.html\t0.882353']);
});

test('standard input (-), sniffed or with --format', () => {
  const jsonl = fs.readFileSync(path.join(fixtures, 'docs.jsonl'));
  let r = neardup(['dedup', '-', '--text-field', 'body.text'], { input: jsonl });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout), EXPECTED_PAIRS);
  assert.match(r.stderr, /from <stdin> \[jsonl\]/);
  r = neardup(['dedup', '-', '--format', 'csv', '--text', 'body', '--output', 'dedup'], { input: fs.readFileSync(path.join(fixtures, 'docs.csv')) });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout).length, 1 + 4 + 1, 'header + 4 rows kept, one of them on 2 lines');
});

test('--output pairs in CSV and JSONL (from the --out extension or --output-format)', () => {
  const dir = tmpDir();
  let r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--id', 'id', '--out', path.join(dir, 'p.csv')]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.deepEqual(parse(fs.readFileSync(path.join(dir, 'p.csv')), { columns: true })[1], { a: 'a1', b: 'a3', similarity: '1' });
  r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--output-format', 'jsonl']);
  assert.deepEqual(JSON.parse(lines(r.stdout)[2]!), { a: 1, b: 4, similarity: 0.84375 });
  r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--verify', 'estimate', '--output-format', 'csv']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout)[0], 'a,b,similarity');
  assert.match(r.stderr, /estimate Jaccard ≥ 0\.8/);
});

test('--output clusters: JSONL {cluster, size, representative, members}', () => {
  const r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--id', 'id', '--output', 'clusters']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout).map((l) => JSON.parse(l)), [
    { cluster: 0, size: 3, representative: 'a1', members: ['a1', 'a2', 'a3'], duplicate_of: [null, 'a1', 'a1'], similarity: [null, 0.8823529411764706, 1] },
    { cluster: 1, size: 2, representative: 'b1', members: ['b1', 'b2'], duplicate_of: [null, 'b1'], similarity: [null, 0.84375] },
  ]);
  // The cluster rule writes the lines as before: no per-member verdicts.
  const c = neardup(['dedup', 'docs.tsv', '--text', 'body', '--id', 'id', '--output', 'clusters', '--removal', 'cluster']);
  assert.deepEqual(lines(c.stdout).map((l) => JSON.parse(l)), [
    { cluster: 0, size: 3, representative: 'a1', members: ['a1', 'a2', 'a3'] },
    { cluster: 1, size: 2, representative: 'b1', members: ['b1', 'b2'] },
  ]);
});

test('--output dedup: the input rows minus all but one per cluster, same format; a second run finds nothing', () => {
  const dir = tmpDir();
  const cases: [string, string[], number][] = [
    ['docs.tsv', ['--text', 'body'], 5],
    ['docs.csv', ['--text', 'body'], 6],
    ['docs.jsonl', ['--text-field', 'body.text'], 4],
    ['docs.txt', [], 4],
    ['rcv1-style.txt', ['--format', 'idtext'], 4],
  ];
  for (const [file, opts, keptLines] of cases) {
    const out = path.join(dir, `dedup-${file}`);
    const r = neardup(['dedup', file, ...opts, '--output', 'dedup', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const original = fs.readFileSync(path.join(fixtures, file), 'utf8').replace(/\r\n/g, '\n').split('\n');
    const kept = fs.readFileSync(out, 'utf8').split('\n');
    kept.pop();
    assert.equal(kept.length, keptLines, file);
    for (const l of kept) assert.ok(original.includes(l) || file === 'docs.csv', `${file}: "${l}" comes from the input`);
    const again = neardup(['dedup', out, ...opts, ...(file.endsWith('.txt') && !opts.length ? ['--format', 'text'] : [])]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '', `${file}: no near duplicates left`);
  }
  const csvOut = path.join(dir, 'dedup-docs.csv');
  const rows = parse(fs.readFileSync(csvOut), { columns: true, relax_quotes: true }) as Record<string, string>[];
  assert.deepEqual(
    rows.map((x) => x.id),
    ['a1', 'b1', 'c1', 'e1'],
  );
  assert.match(rows[2]!.body!, /with a "quoted" line break/);
});

test('--output annotate: the input plus cluster, cluster_size, duplicate_of, similarity and kept columns', () => {
  let r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--id', 'id', '--output', 'annotate']);
  assert.equal(r.code, 0, r.stderr);
  const rows = parse(r.stdout, { delimiter: '\t', columns: true, relax_quotes: true }) as Record<string, string>[];
  assert.deepEqual(
    rows.map((x) => [x.id, x.cluster, x.cluster_size, x.duplicate_of, x.similarity, x.kept]),
    [
      ['a1', '0', '3', '', '', 'true'],
      ['b1', '1', '2', '', '', 'true'],
      ['c1', '', '', '', '', 'true'],
      ['a2', '0', '3', 'a1', '0.882353', 'false'],
      ['b2', '1', '2', 'b1', '0.84375', 'false'],
      ['a3', '0', '3', 'a1', '1', 'false'],
      ['e1', '', '', '', '', 'true'],
    ],
  );
  assert.equal(rows[2]!.body, 'Completely different words about compilers, parsers and type systems in general, with a "quote" inside');
  r = neardup(['dedup', 'docs.jsonl', '--text-field', 'body.text', '--output', 'annotate']);
  const objs = lines(r.stdout).map((l) => JSON.parse(l) as { meta: { id: string }; cluster: number | null; duplicate_of: string | null });
  assert.deepEqual(
    objs.map((o) => [o.meta.id, o.cluster, o.duplicate_of]),
    [
      ['a1', 0, null],
      ['b1', 1, null],
      ['c1', null, null],
      ['a2', 0, '0'],
      ['b2', 1, '1'],
      ['a3', 0, '0'],
      ['e1', null, null],
    ],
  );
  r = neardup(['dedup', 'docs.txt', '--output', 'annotate']);
  assert.equal(lines(r.stdout)[3], '0\t3\t0\t0.882353\tfalse\tThe quick brown fox jumps over the lazy dog near the river bank tonight');
  r = neardup(['dedup', 'corpus', '--output', 'annotate']);
  assert.equal(
    r.stdout,
    'path\tcluster\tcluster_size\tduplicate_of\tsimilarity\tkept\na1.txt\t0\t2\t\t\ttrue\nb1.md\t\t\t\t\ttrue\nc1.txt\t\t\t\t\ttrue\nsub/a2.html\t0\t2\ta1.txt\t0.882353\tfalse\n',
  );
});

test('--json: a machine-readable summary on stdout (and it needs --out)', () => {
  const dir = tmpDir();
  const out = path.join(dir, 'pairs.tsv');
  const r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--json', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as Record<string, any>;
  assert.equal(s.input.docs, 7);
  assert.equal(s.input.emptyDocs, 1);
  assert.equal(s.pairs, 4);
  assert.equal(s.clusters, 2);
  assert.equal(s.lsh.bands, 16);
  assert.equal(s.output.records, 4);
  assert.ok(s.timings.total > 0);
  assert.equal(fs.readFileSync(out, 'utf8'), EXPECTED_PAIRS.join('\n') + '\n');
  const bad = neardup(['dedup', 'docs.tsv', '--text', 'body', '--json']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--json .* needs --out/);
});

test('outputs are atomic: a failed run leaves neither a partial file nor a temp file', () => {
  const dir = tmpDir();
  const out = path.join(dir, 'pairs.tsv');
  fs.writeFileSync(out, 'previous\n');
  const r = neardup(['dedup', 'bad/ragged.tsv', '--text', 'body', '--out', out]);
  assert.equal(r.code, 2);
  assert.equal(fs.readFileSync(out, 'utf8'), 'previous\n');
  assert.deepEqual(fs.readdirSync(dir), ['pairs.tsv']);
  const r2 = neardup(['dedup', 'docs.tsv', '--text', 'body', '--out', path.join(dir, 'missing/x.tsv')]);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /directory .*missing does not exist/);
});

test('errors: file:line messages, exit code 2, never a stack trace', () => {
  const cases: [string[], RegExp][] = [
    [['dedup', 'nope.tsv'], /^neardup: nope\.tsv: no such file or directory\n$/],
    [['dedup', 'docs.tsv', '--text', 'Body,Price'], /^neardup: docs\.tsv:1: unknown column "Price"; available columns: "id", "title", "body"\n$/],
    [['dedup', 'docs.tsv'], /^neardup: docs\.tsv:1: no text column given; available columns: "id", "title", "body" \(use --text\)\n$/],
    [
      ['dedup', 'bad/ragged.tsv', '--text', 'body'],
      /^neardup: bad\/ragged\.tsv:3: ragged row: 5 fields, the header has 3 \(TSV has no quoting: a tab inside a field splits it\)\n$/,
    ],
    [['dedup', 'bad/badutf8.tsv', '--text', 'body'], /^neardup: bad\/badutf8\.tsv:3: invalid UTF-8\n$/],
    [['dedup', 'bad/badjson.jsonl'], /^neardup: bad\/badjson\.jsonl:2: invalid JSON \(.*\)\n$/],
    [['dedup', 'docs.tsv', '--text', 'body', '--threshold', '1.5'], /threshold must be a number in \(0, 1\], got "1\.5"/],
    [['dedup', 'docs.tsv', '--text', 'body', '--shingle', 'bytes'], /argument 'bytes' is invalid/],
    [['dedup', 'docs.tsv', '--text', 'body', '--bands', '100', '--rows', '100'], /bands·rows ≤ numPerm \(128\)/],
    [['dedup', 'docs.tsv', '--text', 'body', '--output-format', 'csv', '--output', 'clusters'], /--output-format applies to --output pairs only/],
    [['dedup'], /missing required argument 'input'/],
    [['dedupe', 'x'], /unknown command 'dedupe'/],
  ];
  for (const [args, re] of cases) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('--skip-invalid continues and reports how many records it skipped', () => {
  const r = neardup(['dedup', 'bad/ragged.tsv', '--text', 'body', '--skip-invalid']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /skipped 1 invalid record; first: bad\/ragged\.tsv:3: ragged row/);
  assert.match(r.stderr, /docs +2 from .*: 0 empty, 1 invalid skipped/);
  const j = neardup(['dedup', 'bad/badjson.jsonl', '--skip-invalid', '--output', 'annotate']);
  assert.equal(j.code, 0, j.stderr);
  assert.equal(lines(j.stdout).length, 2);
});

test('progress bars only on a TTY (forced here with NEARDUP_PROGRESS=always), never with --quiet; --verbose prints stage timings', () => {
  const forced = neardup(['dedup', 'docs.tsv', '--text', 'body'], { env: { NEARDUP_PROGRESS: 'always' } });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stderr, /read .*MB\/s · .* docs\/s/);
  const quiet = neardup(['dedup', 'docs.tsv', '--text', 'body', '--quiet'], { env: { NEARDUP_PROGRESS: 'always' } });
  assert.equal(quiet.stderr, '');
  assert.equal(quiet.stdout, EXPECTED_PAIRS.join('\n') + '\n');
  const v = neardup(['dedup', 'docs.tsv', '--text', 'body', '--verbose']);
  assert.match(v.stderr, /\[ +\d+\.\d\d s\] read 7 docs from docs\.tsv \[tsv\]/);
  assert.match(v.stderr, /\[ +\d+\.\d\d s\] stages: shingle .*, sign .*, lsh .*, verify .*, cluster /);
  assert.match(v.stderr, /\[ +\d+\.\d\d s\] write: /);
  assert.match(v.stderr, /buckets +\d+ shared/);
});

test('help: neardup --help and every command --help show examples', () => {
  const top = neardup(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /Examples:[\s\S]*neardup dedup/);
  for (const cmd of ['dedup', 'params', 'compare', 'bench']) {
    const r = neardup([cmd, '--help']);
    assert.equal(r.code, 0, cmd);
    assert.match(r.stdout, new RegExp(`Usage: neardup ${cmd}`));
    assert.match(r.stdout, new RegExp(`Examples:[\\s\\S]*\\$ neardup ${cmd}`));
  }
});

test('Kijiji: char 10-shingles, seed000 normalization, threshold 0.8 give the 10,360 brute-force pairs', () => {
  const r = neardup(['dedup', kijiji, '--text', 'Title,Short Description', '-k', '10', '--normalize', 'seed000', '--threshold', '0.8']);
  assert.equal(r.code, 0, r.stderr);
  const got = lines(r.stdout);
  assert.equal(got.length, 10360);
  assert.match(r.stderr, /docs +2,627 from/);
  assert.match(r.stderr, /pairs +10,360 /);
});

test('the example (npm run example) prints pairs and a summary', () => {
  const r = neardup(['dedup', 'examples/ads.tsv', '--text', 'Title,Short Description'], { cwd: path.resolve(fixtures, '../../..') });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(lines(r.stdout).length > 100);
  for (const l of lines(r.stdout)) assert.match(l, /^\d+\t\d+\t[01](\.\d+)?$/);
  assert.match(r.stderr, /docs +400 from examples\/ads\.tsv \[tsv\]/);
});

test('--workers N gives the same output as in-thread, for every output mode', () => {
  for (const output of ['pairs', 'clusters', 'annotate']) {
    const base = neardup(['dedup', 'docs.tsv', '--text', 'body', '--output', output, '--workers', '0']);
    assert.equal(base.code, 0, base.stderr);
    for (const w of ['1', '2']) {
      const r = neardup(['dedup', 'docs.tsv', '--text', 'body', '--output', output, '--workers', w]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, base.stdout, `${output} with ${w} workers`);
    }
  }
  const bad = neardup(['dedup', 'docs.tsv', '--text', 'body', '--workers', 'many']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /workers must be an integer from 0/);
});

test('a group of 3,000 copies and 2,000 near copies: clusters and dedup work in every mode; pairs past --max-pairs stop with advice and no output', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'copies.txt');
  const body = 'one boilerplate page that a crawler fetched again and again with the same words in it every time';
  const rows = [
    ...Array.from({ length: 3000 }, () => body),
    ...Array.from({ length: 2000 }, (_, i) => `a template advert for a flat in rome with two rooms and a balcony, reference number ${i}`),
    'something unrelated',
  ];
  fs.writeFileSync(file, rows.join('\n') + '\n');
  for (const w of ['0', '2']) {
    // Past --max-pairs only the cluster rule can cluster bucket by bucket; the verified rule needs every pair.
    const v = neardup(['dedup', file, '--output', 'dedup', '--max-pairs', '100000', '--workers', w]);
    assert.equal(v.code, 2, v.stderr);
    assert.match(v.stderr, /--removal cluster/);
    const r = neardup(['dedup', file, '--output', 'clusters', '--max-pairs', '100000', '--workers', w, '--removal', 'cluster']);
    assert.equal(r.code, 0, r.stderr);
    const clusters = lines(r.stdout).map((l) => JSON.parse(l) as { size: number; representative: number });
    assert.deepEqual(clusters.map((c) => [c.representative, c.size]), [[0, 3000], [3000, 2000]], `workers ${w}`);
    // The near copies are more candidate pairs than --max-pairs: clustered bucket by bucket.
    assert.match(r.stderr, /candidates +\d[\d,]* verified \(more than --max-pairs/);
    const d = neardup(['dedup', file, '--output', 'dedup', '--max-pairs', '100000', '--workers', w, '--removal', 'cluster']);
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual(lines(d.stdout), [body, rows[3000], 'something unrelated']);
  }
  // Streamed, the texts are not in memory to cluster bucket by bucket: a clear refusal that says so.
  // Streamed, the 3,000 copies are folded (as in memory); the 2,000 near copies are still too many pairs.
  const sv = neardup(['dedup', file, '--output', 'clusters', '--max-pairs', '100000', '--stream']);
  assert.equal(sv.code, 2, sv.stderr);
  assert.match(sv.stderr, /the largest bucket holds 1,\d{3} documents \(identical texts counted once\)/);
  const st = neardup(['dedup', file, '--output', 'clusters', '--max-pairs', '100000', '--stream', '--removal', 'cluster']);
  assert.equal(st.code, 2, st.stderr);
  assert.match(st.stderr, /LSH candidate pairs \(--max-pairs\).*With --no-stream the clusters are built bucket by bucket/);
  // Pairs: 3,000 copies alone are 4,498,500 pairs.
  const out = path.join(dir, 'pairs.tsv');
  const p = neardup(['dedup', file, '--max-pairs', '1000000', '--out', out]);
  assert.equal(p.code, 2, p.stderr);
  assert.match(p.stderr, /more than --max-pairs|LSH candidate pairs \(--max-pairs\)/);
  assert.match(p.stderr, /--output clusters, dedup or annotate|raise --max-pairs/i);
  assert.doesNotMatch(p.stderr, /\n\s+at /, 'no stack trace');
  assert.deepEqual(fs.readdirSync(dir), ['copies.txt'], 'no output file, no temp file');
  const copiesOnly = path.join(dir, 'only.txt');
  fs.writeFileSync(copiesOnly, Array.from({ length: 3000 }, () => body).join('\n') + '\n');
  const q = neardup(['dedup', copiesOnly, '--max-pairs', '1000000', '--out', out]);
  assert.equal(q.code, 2);
  assert.match(
    q.stderr,
    /4,498,500 near-duplicate pairs, more than --max-pairs \(1,000,000\); the largest group of identical documents has 3,000\. --output clusters, dedup or annotate/,
  );
  const ok = neardup(['dedup', copiesOnly, '--out', out]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(fs.readFileSync(out, 'utf8').split('\n').length - 1, 4_498_500);
  assert.match(ok.stderr, /candidates +4,498,500\n/);
});

test('--stream (texts stay on disk, read again per pass) gives the same output as in memory, for every input kind and output mode', () => {
  const inputs: string[][] = [
    ['docs.tsv', '--text', 'body'],
    ['docs.jsonl', '--text-field', 'body.text'],
    ['docs.txt'],
    ['rcv1-style.txt', '--format', 'idtext'],
    ['corpus'],
  ];
  for (const input of inputs) {
    for (const output of ['pairs', 'clusters', 'dedup', 'annotate']) {
      const mem = neardup(['dedup', ...input, '--output', output, '--no-stream']);
      assert.equal(mem.code, 0, mem.stderr);
      for (const w of ['0', '2']) {
        const st = neardup(['dedup', ...input, '--output', output, '--stream', '--workers', w]);
        assert.equal(st.code, 0, st.stderr);
        assert.equal(st.stdout, mem.stdout, `${input.join(' ')} --output ${output} --workers ${w}`);
        assert.match(st.stderr, /stream +2 passes over the input; in memory: index/);
      }
    }
  }
  // Standard input is spooled to a temp file first; --skip-invalid skips the same records in every pass.
  const tsv = fs.readFileSync(path.join(fixtures, 'docs.tsv'));
  const viaStdin = neardup(['dedup', '-', '--format', 'tsv', '--text', 'body', '--stream'], { input: tsv });
  assert.equal(viaStdin.code, 0, viaStdin.stderr);
  assert.equal(viaStdin.stdout, EXPECTED_PAIRS.join('\n') + '\n');
  const skipMem = neardup(['dedup', 'bad/ragged.tsv', '--text', 'body', '--skip-invalid', '--output', 'annotate', '--no-stream']);
  const skipStream = neardup(['dedup', 'bad/ragged.tsv', '--text', 'body', '--skip-invalid', '--output', 'annotate', '--stream']);
  assert.equal(skipStream.code, 0, skipStream.stderr);
  assert.equal(skipStream.stdout, skipMem.stdout);
  assert.match(skipStream.stderr, /skipped 1 invalid record/);
  const bad = neardup(['dedup', 'bad/ragged.tsv', '--text', 'body', '--stream']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^neardup: bad\/ragged\.tsv:3: ragged row/m);
});

test('inputs over a quarter of the heap limit are streamed by default', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'big.txt');
  // ~24 MB of lines against a heap limit of ~84 MB (--max-old-space-size=32): over a quarter.
  let x = 7;
  const word = () => `w${(x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 30000}`;
  const out: string[] = [];
  for (let i = 0; i < 120_000; i++) out.push(i % 1000 === 1 ? out[i - 1]! : Array.from({ length: 35 }, word).join(' '));
  fs.writeFileSync(file, out.join('\n') + '\n');
  assert.ok(fs.statSync(file).size > 21e6);
  const r = neardup(['dedup', file, '--output', 'clusters', '--workers', '0'], { env: { NODE_OPTIONS: '--max-old-space-size=32' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /stream +2 passes over the input/);
  assert.equal(lines(r.stdout).length, 120, 'one planted copy per 1,000 lines');
});

test('--candidates auto gives one answer whatever the route: streamed, it runs LSH only where the in-memory run would too, else refuses naming --no-stream', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'docs.jsonl');
  fs.writeFileSync(file, plantedDocs(300, 0.4, 4848).map((d) => JSON.stringify(d) + '\n').join(''));
  let refused = 0;
  for (const kind of [['--shingle', 'word', '-k', '1'], ['--shingle', 'word', '-k', '3'], ['--shingle', 'spot'], ['--shingle', 'char']]) {
    const args = ['dedup', file, '--id-field', 'id', ...kind, '--threshold', '0.6'];
    const mem = neardup([...args, '--no-stream']);
    assert.equal(mem.code, 0, mem.stderr);
    const st = neardup([...args, '--stream']);
    if (st.code === 2) {
      assert.match(st.stderr, /chooses the exact join.*add --no-stream, or --candidates lsh/, kind.join(' '));
      refused++;
    } else {
      assert.equal(st.code, 0, st.stderr);
      assert.equal(st.stdout, mem.stdout, `${kind.join(' ')}: streamed and in-memory pairs differ`);
    }
  }
  assert.ok(refused > 0, 'word shingles of short documents: auto chooses the join, which a streamed run refuses');
});

// Issue 16 item 3, the CLI's share: dedup and index add on the issue's file.
const ISSUE_TSV =
  'id\ttext\nr1\t"Bright flat near the station with garden\nr2\tsecond ad, a studio in Trastevere\nr3\tthird ad, office in EUR "B"\nr4\tfourth ad about a villa in Ostia\n';

test("item 3: dedup and index add read every row of the issue's TSV (no quote swallows the next lines)", () => {
  const dir = tmpDir();
  const q = path.join(dir, 'q.tsv');
  fs.writeFileSync(q, ISSUE_TSV);
  const r = neardup(['dedup', q, '--id', 'id', '--output', 'annotate']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /docs {8}4 from/);
  assert.equal(r.stdout.split('\n').filter(Boolean).length, 5);
  const add = neardup(['index', 'add', q, '--id', 'id', '--store', `sqlite:${path.join(dir, 'q.db')}`]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /added {7}4 documents/);
  // The opt-in quote-aware reading reports the bad quote with its line, exit 2.
  const quoted = neardup(['dedup', q, '--id', 'id', '--tsv-quotes']);
  assert.equal(quoted.code, 2);
  assert.match(quoted.stderr, /q\.tsv:2: a quoted field opened here is not closed properly/);
});

// Issue 16 item 6: duplicate ids.
test('item 6: duplicate ids are an input error naming both lines (dedup, every output, streamed too); index add warns', () => {
  const dir = tmpDir();
  const f = path.join(dir, 'dup.tsv');
  fs.writeFileSync(f, 'id\ttext\nA\tthe quick brown fox\nB\tsomething else entirely\nA\tthe quick brown fox\n');
  for (const extra of [[], ['--output', 'clusters'], ['--stream'], ['--output', 'annotate', '--stream']]) {
    const r = neardup(['dedup', f, '--id', 'id', ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /dup\.tsv:4: duplicate id "A" \(first on line 2\)/);
    assert.equal(r.stdout, '');
  }
  const j = path.join(dir, 'dup.jsonl');
  fs.writeFileSync(j, '{"id":1,"text":"a b c d e f"}\n{"id":"1","text":"a b c d e f"}\n');
  const rj = neardup(['dedup', j, '--id-field', 'id']);
  assert.equal(rj.code, 2);
  assert.match(rj.stderr, /dup\.jsonl:2: duplicate id "1" \(first on line 1\)/);
  const add = neardup(['index', 'add', f, '--id', 'id', '--store', `sqlite:${path.join(dir, 'd.db')}`]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /1 record repeats an id of earlier records .*id "A" on lines 2 and 4.*replaced the earlier document/);
});
