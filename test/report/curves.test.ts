/**
 * The report's several (b, r) S-curves (src/report/curves.ts, `sCurves` in the report data): the
 * run's banding and its neighbours on the same hashes, each point equal to 1 − (1 − s^r)^b and each
 * rule of thumb equal to (1/b)^(1/r); and the HTML carries them and the script that draws them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildReportData, renderReportHtml } from '../../src/index.js';
import { reportCurves } from '../../src/report/curves.js';
import { kijijiDocs } from '../helpers.js';

/** Checks one `sCurves` section against the formula; returns the labels. */
function checkCurves(
  sc: { threshold: number; curves: { bands: number; rows: number; label: string; chosen: boolean; ruleOfThumb: number; points: { s: number; p: number }[] }[] },
  numPerm: number,
): string[] {
  assert.ok(sc.curves.length >= 3, `${sc.curves.length} curves`);
  assert.equal(sc.curves.filter((c) => c.chosen).length, 1);
  for (const c of sc.curves) {
    assert.ok(c.bands * c.rows <= numPerm, `${c.label} fits in ${numPerm} hashes`);
    assert.equal(c.label, `${c.bands}×${c.rows}`);
    assert.ok(Math.abs(c.ruleOfThumb - Math.pow(1 / c.bands, 1 / c.rows)) < 1e-6);
    assert.equal(c.points.length, 101);
    for (const { s, p } of c.points) assert.ok(Math.abs(p - (1 - Math.pow(1 - Math.pow(s, c.rows), c.bands))) <= 5.1e-6, `${c.label} at ${s}`);
    // The rule of thumb sits on the steep part: P there is between the curve's 20% and 80% points.
    const at = 1 - Math.pow(1 - Math.pow(c.ruleOfThumb, c.rows), c.bands);
    assert.ok(at > 0.5 && at < 0.75, `${c.label}: P(rule of thumb) = ${at}`);
  }
  return sc.curves.map((c) => c.label);
}

test('reportCurves: the chosen banding first, neighbours of r ± 1, 2 rows on the same hashes', () => {
  const sc = reportCurves(16, 6, 128, 0.8);
  assert.deepEqual(checkCurves(sc, 128), ['16×6', '32×4', '25×5', '18×7', '16×8']);
  assert.equal(sc.threshold, 0.8);
  assert.deepEqual(checkCurves(reportCurves(128, 1, 128, 0.1), 128), ['128×1', '64×2', '42×3']);
});

test('report data and HTML: sCurves of the run, drawn by the page script', () => {
  const texts = kijijiDocs().slice(0, 300);
  const data = buildReportData(texts, { dedup: { threshold: 0.8 }, seed: 1, now: () => new Date(0) });
  assert.ok(data.sCurves, 'sCurves present');
  checkCurves(data.sCurves, data.options.minhash.numPerm);
  const chosen = data.sCurves.curves.find((c) => c.chosen)!;
  assert.deepEqual([chosen.bands, chosen.rows], [data.sCurve.bands, data.sCurve.rows]);
  assert.equal(data.sCurves.threshold, 0.8);
  const html = renderReportHtml(data);
  assert.match(html, /"sCurves":\{"threshold":0\.8,"curves":\[\{"bands":/);
  assert.match(html, /data\.sCurves/);
  assert.match(html, /chart\(sec, 's-curves'/);
});
