/**
 * The duplicate kinds through the CLI: --exact, --measure containment (direction in the output),
 * --candidates (the summary names the method), --cluster-mode / --representative, --limit on every
 * corpus reader, --fingerprint-bits, params' rule of thumb and --curves, and the usage errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { kijiji, lines, neardup, tmpDir } from '../cliUtil.js';
import { ruleOfThumb, sCurveChart } from '../../src/cli/commands/params.js';
import { chooseBands } from '../../src/lsh/params.js';

const TEXT = ['--text', 'Title,Short Description'];
const LONG = 'the quick brown fox jumps over the lazy dog near the river bank at dawn while birds sing in the tall old trees';
const corpus = [
  `id\ttext`,
  `a\tHello   World, this is one line`,
  `b\thello world, this is ONE line`,
  `c\tsomething else entirely different here`,
  `d\t${LONG}`,
  `e\tquick brown fox jumps over the lazy dog near the river`,
  `f\thello world, this is one line`,
].join('\n');

test('dedup --exact: identical documents after normalization, every output shape, a method line in the summary', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'c.tsv');
  fs.writeFileSync(file, corpus + '\n');
  let r = neardup(['dedup', file, '--id', 'id', '--exact']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout), ['a\tb\t1', 'a\tf\t1', 'b\tf\t1']);
  assert.match(r.stderr, /method +exact duplicates/);
  r = neardup(['dedup', file, '--id', 'id', '--exact', '--output', 'clusters']);
  assert.deepEqual(JSON.parse(lines(r.stdout)[0]!), { cluster: 0, size: 3, representative: 'a', members: ['a', 'b', 'f'] });
  r = neardup(['dedup', file, '--id', 'id', '--exact', '--output', 'dedup', '--normalize', 'none']);
  assert.equal(lines(r.stdout).length, 1 + 6, 'without normalization no two texts are equal');
  r = neardup(['dedup', file, '--id', 'id', '--exact', '--output', 'annotate']);
  // Copies after normalization: similarity 1 to the kept copy.
  assert.match(r.stdout, /\nf\thello world, this is one line\t0\t3\ta\t1\tfalse\n/);
  r = neardup(['dedup', '-', '--format', 'tsv', '--id', 'id', '--exact', '--output', 'dedup'], { input: corpus });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout).length, 1 + 4);
  r = neardup(['dedup', file, '--exact', '--measure', 'containment']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--exact finds identical documents/);
  // Kijiji: the exact clusters hold only documents whose normalized texts are equal.
  const k = neardup(['dedup', kijiji, ...TEXT, '--exact', '--json', '--out', path.join(dir, 'k.tsv')]);
  assert.equal(k.code, 0, k.stderr);
  const j = JSON.parse(k.stdout) as { pairs: number; clusters: number; options: { exact: boolean } };
  assert.ok(j.options.exact && j.clusters > 100 && j.pairs > 1000);
});

test('dedup --measure containment: the smaller document first, its containment in the larger; Jaccard misses it', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'c.tsv');
  fs.writeFileSync(file, corpus + '\n');
  let r = neardup(['dedup', file, '--id', 'id', '--measure', 'containment', '--threshold', '0.9']);
  assert.equal(r.code, 0, r.stderr);
  const rows = lines(r.stdout).map((l) => l.split('\t'));
  const de = rows.find((x) => x.includes('d') && x.includes('e'));
  assert.ok(de, r.stdout);
  assert.deepEqual(de.slice(0, 2), ['e', 'd'], 'e is inside d');
  assert.ok(Number(de[2]) >= 0.9);
  assert.match(r.stderr, /method +exact prefix-filtering join: every pair with containment ≥ 0\.9/);
  assert.match(
    neardup(['dedup', file, '--id', 'id', '--candidates', 'auto', '--shingle', 'word', '-k', '2']).stderr,
    /method +exact prefix-filtering join \(chosen by --candidates auto\)/,
    'short documents, word shingles',
  );
  assert.match(
    neardup(['dedup', file, '--id', 'id', '--candidates', 'auto']).stderr,
    /^auto +lsh \(chosen by --candidates auto\): char shingles/m,
    'char shingles keep LSH, and the summary says why',
  );
  const auto = JSON.parse(
    neardup(['dedup', file, '--id', 'id', '--candidates', 'auto', '--shingle', 'word', '-k', '2', '--json', '-o', path.join(dir, 'auto.tsv')]).stdout,
  );
  assert.equal(auto.options.candidates, 'exact');
  assert.match(auto.options.candidatesReason, /word shingles per document/);
  r = neardup(['dedup', file, '--id', 'id', '--threshold', '0.9']);
  assert.ok(!lines(r.stdout).some((l) => l.startsWith('d\te') || l.startsWith('e\td')));
  assert.match(neardup(['dedup', file, '--id', 'id']).stderr, /^lsh +16 bands/m, 'Jaccard defaults to LSH');
  r = neardup(['dedup', file, '--measure', 'containment', '--candidates', 'lsh']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /containment needs --candidates exact/);
  r = neardup(['dedup', file, '--measure', 'containment', '--stream']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--no-stream/);
});

test('dedup --candidates exact|sketch|lsh on Kijiji: same pairs at t = 0.8 here, the summary says which ran', () => {
  const out: Record<string, string> = {};
  for (
    const [m, extra] of [
      ['lsh', []],
      ['exact', []],
      ['sketch', ['--buckets', '8']],
    ] as const
  ) {
    const r = neardup(['dedup', kijiji, ...TEXT, '--candidates', m, ...extra]);
    assert.equal(r.code, 0, r.stderr);
    out[m] = r.stdout;
    assert.match(
      r.stderr,
      m === 'lsh' ? /^lsh +\d+ bands/m : m === 'exact' ? /^method +exact prefix-filtering join: every pair/m : /^method +bucket sketch: 8 buckets/m,
    );
  }
  assert.equal(out.exact, out.sketch);
  assert.equal(lines(out.exact!).length, 10537);
  assert.equal(neardup(['dedup', kijiji, ...TEXT, '--buckets', '8']).code, 2, '--buckets without sketch');
  assert.equal(neardup(['dedup', kijiji, ...TEXT, '--candidates', 'exact', '--verify', 'estimate']).code, 2);
  const w = neardup(['dedup', kijiji, ...TEXT, '--candidates', 'exact', '--fingerprint-bits', '64', '--threshold', '0.8']);
  assert.equal(w.code, 0, w.stderr);
  assert.equal(w.stdout, out.exact);
  assert.match(w.stderr, /64-bit fingerprints/);
  assert.equal(neardup(['dedup', kijiji, ...TEXT, '--fingerprint-bits', '64', '--candidates', 'lsh']).code, 2);
});

test('dedup --cluster-mode centre --representative: dedup keeps the chosen member', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'chain.tsv');
  // A chain: w0 ~ w1 ~ w2 (each one word changed), w0 and w2 further apart.
  const base = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau'.split(' ');
  const w1 = [...base];
  w1[9] = 'kapa';
  const w2 = [...w1];
  w2[3] = 'dlta';
  w2[15] = 'pippo';
  // Word sets: J(w0, w1) = 18/20, J(w1, w2) = 17/21 ≈ 0.81, J(w0, w2) = 16/22 ≈ 0.73; w2 is the longest text.
  fs.writeFileSync(file, ['id\ttext', `w0\t${base.join(' ')}`, `w1\t${w1.join(' ')}`, `w2\t${w2.join(' ')}`].join('\n') + '\n');
  const args = ['dedup', file, '--id', 'id', '--shingle', 'word', '-k', '1', '--threshold', '0.8', '--candidates', 'exact'];
  const pairs = lines(neardup(args).stdout).map((l) => l.split('\t').slice(0, 2).join(' '));
  assert.deepEqual(pairs, ['w0 w1', 'w1 w2'], 'a chain: w0 and w2 are not near duplicates');
  let r = neardup([...args, '--output', 'clusters', '--cluster-mode', 'centre', '--representative', 'central', '--removal', 'cluster']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(lines(r.stdout)[0]!), { cluster: 0, size: 3, representative: 'w1', members: ['w0', 'w1', 'w2'] });
  r = neardup([...args, '--output', 'dedup', '--representative', 'longest', '--removal', 'cluster']);
  assert.deepEqual(lines(r.stdout).map((l) => l.split('\t')[0]), ['id', 'w2']);
  r = neardup([...args, '--output', 'annotate', '--representative', 'longest', '--removal', 'cluster']);
  // The cluster rule: w0 points to the kept w2, which it was never verified with: its similarity is below the threshold.
  const m = /\nw0\t[^\n]*\t0\t3\tw2\t(0\.\d+)\tfalse\n/.exec(r.stdout);
  assert.ok(m && Number(m[1]) < 0.8, r.stdout);
  r = neardup([...args, '--output', 'dedup', '--removal', 'cluster']);
  assert.deepEqual(lines(r.stdout).map((l) => l.split('\t')[0]), ['id', 'w0'], 'cluster rule: the first');
  // The verified rule (default): w2 (longest) kept, w1 dropped for it, w0 kept (nothing kept is its near duplicate).
  r = neardup([...args, '--output', 'dedup', '--representative', 'longest']);
  assert.deepEqual(lines(r.stdout).map((l) => l.split('\t')[0]), ['id', 'w0', 'w2']);
  r = neardup([...args, '--output', 'annotate', '--representative', 'longest']);
  const v = /\nw1\t[^\n]*\t0\t3\tw2\t(0\.\d+)\tfalse\n/.exec(r.stdout);
  assert.ok(v && Number(v[1]) >= 0.8, r.stdout);
  r = neardup([...args, '--output', 'dedup']);
  assert.deepEqual(lines(r.stdout).map((l) => l.split('\t')[0]), ['id', 'w0', 'w2'], 'default: w0 kept, w1 dropped for it, w2 kept');
  assert.equal(neardup([...args, '--cluster-mode', 'centre', '--output', 'dedup']).code, 2, 'centre clusters need --removal cluster');
  assert.equal(neardup([...args, '--cluster-mode', 'stars']).code, 2);
});

test('--limit N reads the first N documents in dedup, report, bench, index add', () => {
  const dir = tmpDir();
  let r = neardup(['dedup', kijiji, ...TEXT, '--limit', '500', '--json', '--out', path.join(dir, 'p.tsv')]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { input: { docs: number } }).input.docs, 500);
  const ids = fs.readFileSync(path.join(dir, 'p.tsv'), 'utf8').split('\n').filter(Boolean).flatMap((l) => l.split('\t').slice(0, 2).map(Number));
  assert.ok(ids.every((i) => i < 500));
  r = neardup(['dedup', kijiji, ...TEXT, '--limit', '500', '--output', 'dedup', '--out', path.join(dir, 'd.tsv')]);
  assert.equal(r.code, 0, r.stderr);
  const kept = fs.readFileSync(path.join(dir, 'd.tsv'), 'utf8').split('\n').filter(Boolean).length - 1;
  assert.ok(kept < 500 && kept > 100);
  r = neardup(['dedup', kijiji, ...TEXT, '--limit', '40', '--exact', '--json', '--out', path.join(dir, 'e.tsv')]);
  assert.equal((JSON.parse(r.stdout) as { input: { docs: number } }).input.docs, 40);
  r = neardup(['report', kijiji, ...TEXT, '--limit', '300', '--out', path.join(dir, 'r.html')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /300/);
  r = neardup(['index', 'add', kijiji, ...TEXT, '--id-prefix', 'k', '--limit', '25', '--store', `sqlite:${path.join(dir, 'i.db')}`]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\b25\b/);
  assert.equal(neardup(['dedup', kijiji, '--limit', '0']).code, 2);
  assert.equal(neardup(['dedup', kijiji, '--limit', 'x']).code, 2);
});

test('params: the rule of thumb next to the banding, several S-curves in one chart', () => {
  const b = chooseBands(0.8, 128);
  let r = neardup(['params', '--threshold', '0.8']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(`rule of thumb t ≈ \\(1/b\\)\\^\\(1/r\\) = \\(1/${b.bands}\\)\\^\\(1/${b.rows}\\) = ${ruleOfThumb(b.bands, b.rows).toFixed(3)}`),
  );
  r = neardup(['params', '--threshold', '0.8', '--curves', '20x5,10x10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /● b=16 × r=6 \(chosen\): \(1\/b\)\^\(1\/r\) = 0\.630/);
  assert.match(r.stdout, /○ b=20 × r=5: \(1\/b\)\^\(1\/r\) = 0\.549, P\(0\.8\) = 0\.9996/);
  assert.match(r.stdout, /\+ b=10 × r=10: \(1\/b\)\^\(1\/r\) = 0\.794/);
  const chart = lines(r.stdout).filter((l) => /^ {0,4}\S* ┤/.test(l) || /^ {4,5}┤/.test(l));
  assert.equal(chart.length, 21);
  assert.ok(chart.some((l) => l.includes('○')) && chart.some((l) => l.includes('+')));
  const j = JSON.parse(neardup(['params', '--threshold', '0.8', '--curves', '20x5', '--json']).stdout) as {
    ruleOfThumb: number;
    curves: { bands: number; rows: number; ruleOfThumb: number }[];
  };
  assert.equal(j.ruleOfThumb, ruleOfThumb(b.bands, b.rows));
  assert.equal(j.curves[0]!.ruleOfThumb, ruleOfThumb(20, 5));
  assert.equal(neardup(['params', '--curves', '20by5']).code, 2);
});

test('params --curves: every S-curve is drawn without holes, however steep (at 0.5 too)', () => {
  for (const curves of [[{ bands: 20, rows: 5 }, { bands: 10, rows: 10 }], [{ bands: 2, rows: 60 }], [{ bands: 64, rows: 2 }, { bands: 1, rows: 1 }]]) {
    const grid = sCurveChart(curves, 0.8).slice(1, 22).map((l) => [...l.slice(6)]);
    ['●', '○', '+'].slice(0, curves.length).forEach((mark) => {
      let prev: number[] | undefined;
      for (let x = 0; x < grid[0]!.length; x++) {
        const rows = grid.flatMap((r, y) => (r[x] === mark ? [y] : []));
        // A later curve may cover a cell of an earlier one; where both are drawn, consecutive columns touch.
        if (rows.length === 0 || !prev || prev.length === 0) {
          prev = rows;
          continue;
        }
        assert.ok(Math.min(...prev) - Math.max(...rows) <= 1, `${JSON.stringify(curves)} ${mark}: a hole between columns ${x - 1} and ${x}`);
        prev = rows;
      }
    });
  }
});

test('--help lists the new options', () => {
  const h = neardup(['dedup', '--help']).stdout;
  for (const o of ['--exact', '--measure', '--candidates', '--buckets', '--cluster-mode', '--representative', '--fingerprint-bits', '--limit'])
    assert.ok(h.includes(o), o);
  assert.ok(neardup(['params', '--help']).stdout.includes('--curves'));
});

test('dedup without --candidates: word shingles of short documents take the exact join (said in the summary), everything else stays on LSH', () => {
  const dir = tmpDir();
  const out = (n: string): string => path.join(dir, n);
  const word = neardup(['dedup', kijiji, ...TEXT, '--shingle', 'word', '-k', '3', '--json', '--out', out('w.tsv')]);
  assert.equal(word.code, 0, word.stderr);
  const wj = JSON.parse(word.stdout);
  assert.equal(wj.options.candidates, 'exact');
  assert.match(wj.options.candidatesReason, /word shingles per document/);
  const human = neardup(['dedup', kijiji, ...TEXT, '--shingle', 'word', '-k', '3', '--out', out('h.tsv')]);
  assert.match(human.stderr, /auto +exact join \(chosen by default for word\/spot shingles; --candidates lsh forces LSH\)/);
  // The join is exact: every pair LSH finds is in its output.
  const lsh = neardup(['dedup', kijiji, ...TEXT, '--shingle', 'word', '-k', '3', '--candidates', 'lsh', '-q', '--out', out('l.tsv')]);
  assert.equal(lsh.code, 0, lsh.stderr);
  const joined = new Set(lines(fs.readFileSync(out('w.tsv'), 'utf8')));
  for (const p of lines(fs.readFileSync(out('l.tsv'), 'utf8'))) assert.ok(joined.has(p), p);
  // Char shingles (the default), estimate verification and streaming keep LSH, with no auto line.
  for (const extra of [[], ['--shingle', 'word', '-k', '3', '--verify', 'estimate'], ['--shingle', 'word', '-k', '3', '--stream', '--candidates', 'lsh']]) {
    const r = neardup(['dedup', kijiji, ...TEXT, ...extra, '--out', out('x.tsv')]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /^auto /m, extra.join(' '));
    assert.match(r.stderr, /^lsh +\d+ bands/m, extra.join(' '));
  }
  // Streamed, the join cannot run: where auto would choose it, the run is refused (never LSH's answer under auto's name).
  const st = neardup(['dedup', kijiji, ...TEXT, '--shingle', 'word', '-k', '3', '--stream', '--out', out('s.tsv')]);
  assert.equal(st.code, 2, st.stderr);
  assert.match(st.stderr, /chooses the exact join .*add --no-stream, or --candidates lsh/);
});
