/**
 * `neardup report` on the Kijiji ads, opened in real headless Chromium from a file: URL with every
 * other request blocked. The page must render without console errors, and each chart's SVG must
 * hold data marks (paths, rects, circles), matching the data embedded in the file.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { neardup, tmpDir, kijiji } from '../cliUtil.js';
import { artifact, launchBrowser, watchPage, type TestBrowser } from '../helpers/browser.js';
import { needsBrowser } from '../helpers/needs.js';

let browser: TestBrowser | undefined;
after(async () => {
  await browser?.close();
});

test('report: Kijiji report renders offline with data marks in every chart', needsBrowser(), async () => {
  const dir = tmpDir();
  const out = path.join(dir, 'report.html');
  const dataOut = path.join(dir, 'report.json');
  const r = neardup(['report', kijiji, '--text', 'Title,Short Description', '-k', '10', '--normalize', 'seed000', '--out', out, '--data', dataOut, '-q']);
  assert.equal(r.code, 0, r.stderr);
  const html = readFileSync(out, 'utf8');
  const data = JSON.parse(readFileSync(dataOut, 'utf8'));
  // Self-contained: no external scripts, styles or images, and a reasonable size.
  assert.doesNotMatch(html, /<(script|img|link)[^>]+(src|href)=["']?https?:/i);
  assert.ok(statSync(out).size < 3e6, `report is ${statSync(out).size} bytes`);
  assert.equal(data.summary.pairs, 10360);

  browser = await launchBrowser({ width: 1100, height: 1000 });
  const page = await browser.context.newPage();
  const problems = await watchPage(page, ['file:', 'data:', 'about:']);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('html[data-rendered="true"]', { timeout: 15000 });
  assert.deepEqual(problems.errors, []);
  assert.deepEqual(problems.blocked, []);

  const count = (sel: string) => page.locator(sel).count();
  const fig = (name: string) => `figure[data-chart="${name}"] svg`;
  // S-curve: the curve, both areas, the threshold rule, the recall dot.
  assert.ok((await count(`${fig('s-curve')} g[aria-label="line"] path`)) >= 1);
  assert.equal(await count(`${fig('s-curve')} g[aria-label="dot"] circle`), 1);
  const label = await page.locator(`${fig('s-curve')} g[aria-label="text"]`).first().textContent();
  assert.match(label ?? '', /expected recall P = 0\.99/);
  // Several bandings: one line and one rule-of-thumb dot per curve (src/report/curves.ts).
  assert.equal(await count(`${fig('s-curves')} g[aria-label="line"] path`), data.sCurves.curves.length);
  assert.equal(await count(`${fig('s-curves')} g[aria-label="dot"] circle`), data.sCurves.curves.length);
  // Histogram: one rect per bin.
  assert.equal(await count(`${fig('histogram')} g[aria-label="rect"] rect`), data.similarityHistogram.bins.length);
  // Estimated against exact: one dot per sampled pair.
  assert.equal(await count(`${fig('estimates')} g[aria-label="dot"] circle`), data.estimateVsExact.pairs.length);
  assert.ok(data.estimateVsExact.pairs.length >= 500);
  // Bands sweep: two stacked bars per band count.
  assert.equal(await count(`${fig('bands')} g[aria-label="bar"] rect`), 2 * data.bandsSweep.rows.length);
  // Similarity against shingle size: one line per sample pair.
  assert.equal(await count(`${fig('shingle-size')} g[aria-label="line"] path`), data.jaccardVsK.pairs.length);
  assert.ok(data.jaccardVsK.pairs.length >= 2);
  // Clusters: each comparison highlights the same passages on both sides.
  const pairs = page.locator('article.cluster .pair');
  assert.ok((await pairs.count()) >= 3);
  for (let i = 0; i < 3; i++) {
    const cols = pairs.nth(i).locator('.col');
    const left = await cols.nth(0).locator('mark').count();
    const right = await cols.nth(1).locator('mark').count();
    assert.ok(left >= 1 && left === right, `comparison ${i}: ${left} vs ${right} marks`);
  }
  // The S-curve's bounding box is drawn at a real size (not a collapsed SVG).
  const box = await page.locator(fig('s-curve')).boundingBox();
  assert.ok(box && box.width > 400 && box.height > 200);

  await page.screenshot({ path: artifact('report-full.png'), fullPage: true });
  await page.locator('figure[data-chart="s-curve"]').screenshot({ path: artifact('report-s-curve.png') });
  await page.locator('figure[data-chart="s-curves"]').screenshot({ path: artifact('report-s-curves.png') });
  await page.locator('article.cluster').first().screenshot({ path: artifact('report-cluster.png') });
});
