/**
 * The report's data (from the library), its HTML (self-contained, script-safe), the `report`
 * command's errors, and the web page's cluster tracker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { buildReportData, renderReportHtml, dedup, jaccard, fingerprintSet, candidateProbability } from '../../src/index.js';
import { splitmix32 } from '../../src/hash/mix.js';
import { neardup, repoRoot, tmpDir } from '../cliUtil.js';
import fc from 'fast-check';
import { roundDown } from '../../src/report/charts.js';

const WORDS =
  'casa stanza affitto metro zona luminoso arredato cucina bagno balcone piano ascensore centro studenti spese incluse contratto mese euro posto auto giardino'
    .split(' ');

/** 30 base ads, each with 0–3 variants (a word changed, a sentence added), at a fixed seed. */
function corpus(): string[] {
  const rnd = splitmix32(42);
  const pick = () => WORDS[rnd() % WORDS.length]!;
  const out: string[] = [];
  for (let d = 0; d < 30; d++) {
    const base = Array.from({ length: 40 + (rnd() % 40) }, pick).join(' ');
    out.push(base);
    const variants = rnd() % 4;
    for (let v = 0; v < variants; v++) {
      const w = base.split(' ');
      w[rnd() % w.length] = 'cambiato';
      out.push(w.join(' ') + (v === 2 ? ' telefonare ore pasti' : ''));
    }
    if (d % 7 === 0) out.push(base); // exact copies too
  }
  return out;
}

const options = { threshold: 0.7, shingle: { kind: 'char' as const, k: 5 } };

test('report data: consistent with dedup, the S-curve, the sweep and exact Jaccard', () => {
  const texts = corpus();
  const result = dedup(texts, options);
  const data = buildReportData(texts, { dedup: options, seed: 3, now: () => new Date(0) });
  assert.equal(data.generatedAt, '1970-01-01T00:00:00.000Z');
  assert.equal(data.summary.docs, texts.length);
  assert.equal(data.summary.pairs, result.pairs.length);
  assert.ok(result.pairs.length > 20);
  assert.equal(data.summary.clusters, result.clusters.length);
  // Histogram: every verified pair in exactly one bin.
  assert.equal(data.similarityHistogram.bins.reduce((a, b) => a + b.count, 0), result.pairs.length);
  // S-curve at the threshold is the recall the banding promises.
  const at = data.sCurve.points.find((p) => p.s === 0.7)!;
  assert.ok(Math.abs(at.p - data.sCurve.recallAtThreshold) < 1e-4);
  assert.ok(Math.abs(at.p - candidateProbability(0.7, data.sCurve.bands, data.sCurve.rows)) < 1e-4);
  // Sweep: seed 001's band counts at 100 hashes; more bands never give fewer candidates here.
  // The last row is this run's own banding, with the dedup's own counts.
  assert.deepEqual(data.bandsSweep.rows.map((r) => [r.bands, r.rows]), [[2, 50], [5, 20], [10, 10], [20, 5], [result.bands.bands, result.bands.rows]]);
  const run = data.bandsSweep.rows[4]!;
  assert.deepEqual([run.run, run.candidates, run.atOrAbove, run.numPerm], [true, result.stats.candidates, result.pairs.length, 128]);
  // Cluster sizes add up; borderline pairs are the lowest similarities at or above the threshold.
  assert.equal(data.clusterSizes.reduce((a, c) => a + c.count, 0), result.clusters.length);
  assert.equal(data.clusterSizes.reduce((a, c) => a + c.count * c.size, 0), data.summary.docsInClusters);
  assert.ok(data.borderline.length >= 2);
  const lowest = Math.min(...result.pairs.filter((p) => texts[p.a] !== texts[p.b]).map((p) => p.similarity));
  assert.ok(Math.abs(data.borderline[0]!.similarity - lowest) < 1e-4);
  for (const b of data.borderline) assert.ok(b.similarity >= 0.7 && b.aText !== b.bText);
  for (const r of data.bandsSweep.rows) assert.equal(r.atOrAbove! + r.below!, r.candidates);
  for (let i = 1; i < 4; i++) assert.ok(data.bandsSweep.rows[i]!.candidates >= data.bandsSweep.rows[i - 1]!.candidates);
  // Estimated against exact: the exact values are exact, the estimates are close.
  const sets = texts.map((t) => fingerprintSet(t, options.shingle));
  assert.ok(data.estimateVsExact.pairs.length > 20);
  for (const p of data.estimateVsExact.pairs) {
    assert.ok(Math.abs(p.exact - jaccard(sets[Number(p.a)]!, sets[Number(p.b)]!)) < 1e-4);
  }
  assert.ok(data.estimateVsExact.rmse > 0 && data.estimateVsExact.rmse < 0.08, `rmse ${data.estimateVsExact.rmse}`);
  // Similarity against k: longer shingles, lower similarity (for these one-word edits).
  assert.ok(data.jaccardVsK.pairs.length >= 2);
  for (const p of data.jaccardVsK.pairs) {
    const j = p.points.map((q) => q.jaccard);
    assert.ok(j[2]! >= j[j.length - 1]!, `${p.label}: ${j.join(' ')}`);
  }
  // Clusters: passages line up in both shown texts; exact-copy clusters are only listed.
  assert.ok(data.clusters.shown.length > 0, 'clusters are shown');
  for (const c of data.clusters.shown) {
    assert.ok(c.distinctTexts >= 2);
    for (const cmp of c.comparisons) {
      const a = c.members[0]!.text;
      const b = c.members[cmp.member]!.text;
      for (const p of cmp.passages) assert.equal(a.slice(p.aStart, p.aEnd).toLowerCase(), b.slice(p.bStart, p.bEnd).toLowerCase());
      assert.ok(cmp.passages.length >= 1);
    }
  }
  // Deterministic for a fixed seed.
  const again = buildReportData(texts, { dedup: options, seed: 3, now: () => new Date(0) });
  assert.deepEqual({ ...again, summary: { ...again.summary, timings: {} } }, { ...data, summary: { ...data.summary, timings: {} } });
});

test('report html: one self-contained file; document text cannot break out of the data script', () => {
  const evil = '</script><script>window.pwned = 1</script> <!-- & \u2028';
  const texts = [`${evil} casa in affitto vicino metro`, `${evil} casa in affitto vicino metro!`, 'altro testo del tutto diverso'];
  const data = buildReportData(texts, { dedup: { threshold: 0.5 } });
  const html = renderReportHtml(data, { title: 'T <b>' });
  assert.ok(!html.includes('<script>window.pwned'));
  assert.ok(html.includes('<title>T &lt;b&gt;</title>'));
  const m = /<script type="application\/json" id="neardup-data">([\s\S]*?)<\/script>/.exec(html)!;
  assert.deepEqual(JSON.parse(m[1]!), data);
  // The chart library is inlined; nothing is loaded from elsewhere.
  assert.ok(html.includes('Plot') && html.length > 400_000);
  assert.doesNotMatch(html, /<(script|link|img)[^>]+(src|href)=/i);
});

test('report command: needs --out; bad input names the file', () => {
  const dir = tmpDir();
  const r = neardup(['report', 'docs.tsv', '--text', 'text']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--out/);
  const bad = neardup(['report', 'bad/ragged.tsv', '--out', path.join(dir, 'r.html')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /ragged\.tsv:\d+/);
  assert.ok(!existsSync(path.join(dir, 'r.html')));
  const ok = neardup(['report', 'docs.tsv', '--text', 'title,body', '--id', 'id', '--threshold', '0.5', '--out', path.join(dir, 'r.html'), '--json']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).command, 'report');
  assert.match(readFileSync(path.join(dir, 'r.html'), 'utf8'), /^<!doctype html>/);
});

// #48: coverage is rounded down (docs/report.md), in the data (4 decimals) and on the page (whole
// percent): a text that differs in one character is never "100%", and an exact share such as 0.57
// is not shown a step lower by floating point. The page's function is read from the shipped script.
test('report coverage rounds down, in the data and in the rendered percentage', () => {
  const src = readFileSync(path.join(repoRoot, 'src/web/report.js'), 'utf8');
  const m = /const percentDown = (\(x\) => \{[\s\S]*?\n {2}\});/.exec(src);
  assert.ok(m, 'report.js defines percentDown');
  const percentDown = new Function(`return ${m[1]}`)() as (x: number) => number;
  fc.assert(
    // Half the cases one short of the whole (a text with one character outside every passage).
    fc.property(fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 0, max: 2_000_000 }), fc.boolean(), (b, a0, oneShort) => {
      const a = oneShort ? b - 1 : a0 % (b + 1);
      const x = a / b;
      const d = roundDown(x);
      assert.ok(d <= x && x - d < 1e-4 + 1e-12, `${a}/${b}: ${d}`);
      assert.equal(d === 1, a === b, `${a}/${b}: ${d}`);
      const p = percentDown(d);
      assert.ok(Number.isInteger(p) && p <= d * 100 + 1e-9 && d * 100 - p < 1, `${a}/${b}: ${p}%`);
      assert.equal(p === 100, a === b, `${a}/${b}: ${p}%`);
    }),
    { numRuns: 3000 },
  );
  for (let k = 0; k <= 100; k++) {
    assert.equal(percentDown(k / 100), k);
    assert.equal(roundDown(k / 100), k / 100);
  }
});
