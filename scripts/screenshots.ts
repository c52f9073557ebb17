/**
 * Writes the README screenshots: docs/img/page.png (the web page after pasting a near duplicate of a
 * Kijiji ad), docs/img/page-cluster.png (an open cluster of the page), and docs/img/report.png,
 * report-cluster.png, report-borderline.png (the Kijiji report). Run once after
 * a visible change: `npm run screenshots` (needs /usr/bin/chromium ).
 */
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NearDupIndex, buildReportData, renderReportHtml, dedup } from '../src/index.js';
import { buildApp } from '../src/server/app.js';
import { kijijiTexts, repoRoot } from '../test/helpers/kijiji.js';
import { launchBrowser, watchPage } from '../test/helpers/browser.js';

const out = path.join(repoRoot, 'docs/img');
mkdirSync(out, { recursive: true });
const t0 = performance.now();
const texts = kijijiTexts();
const readMs = performance.now() - t0;
const browser = await launchBrowser({ width: 1100, height: 1000 });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'neardup-shots-'));
try {
  // The report.
  const options = { threshold: 0.8, shingle: { kind: 'char' as const, k: 10, normalize: { preset: 'seed000' as const } } };
  const data = buildReportData(texts, {
    dedup: options,
    result: dedup(texts, options),
    source: { name: 'dataset_rent_rome_kijiji.tsv', format: 'tsv' },
    timings: { read: readMs },
  });
  const file = path.join(tmp, 'report.html');
  writeFileSync(file, renderReportHtml(data));
  const rp = await browser.context.newPage();
  await rp.setViewportSize({ width: 1500, height: 1000 });
  const rProblems = await watchPage(rp, ['file:', 'data:', 'about:']);
  await rp.goto(pathToFileURL(file).href);
  await rp.waitForSelector('html[data-rendered="true"]');
  await rp.screenshot({ path: path.join(out, 'report.png'), fullPage: true, clip: { x: 0, y: 0, width: 1500, height: 1520 } });
  await rp.locator('article.cluster').nth(1).locator('.compare').first().screenshot({ path: path.join(out, 'report-cluster.png') });
  await rp.locator('#borderline').screenshot({ path: path.join(out, 'report-borderline.png') });
  if (rProblems.errors.length || rProblems.blocked.length) throw new Error(`report: ${[...rProblems.errors, ...rProblems.blocked].join('; ')}`);

  // The page, served by the real app.
  const index = await NearDupIndex.open({});
  const app = buildApp(index);
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const docs = texts.slice(0, 400).map((text, i) => ({ id: `ad${i}`, text, meta: { title: text.slice(0, 50).trim() } }));
  await app.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs } });
  const src = texts.findIndex((t, i) => i < 400 && t.length > 350 && t.length < 600 && /\d/.test(t));
  const edited = texts[src]!.replace(/\d+/, (d) => String(Number(d) + 50)).replace(/\s+\S+\s*$/, '') + ' Chiamare dopo le 18.';
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1100, height: 1400 });
  const pProblems = await watchPage(page, [base + '/']);
  await page.goto(base + '/');
  await page.waitForSelector('html[data-ready="true"]');
  await page.locator('#doc-text').fill(edited);
  await page.locator('#doc-text').press('Control+Enter');
  await page.waitForSelector('#results li .pair');
  await page.waitForSelector('#cluster-list li .snippet:not(:empty)');
  await page.evaluate('document.activeElement.blur(); window.scrollTo(0, 0)');
  await page.screenshot({ path: path.join(out, 'page.png'), fullPage: true, clip: { x: 0, y: 0, width: 1100, height: 1400 } });
  if (pProblems.errors.length || pProblems.blocked.length) throw new Error(`page: ${[...pProblems.errors, ...pProblems.blocked].join('; ')}`);
  // An open cluster of the page: its distinct texts, what changed between them.
  // The largest cluster with two distinct texts (the largest ones hold exact copies only).
  const items = page.locator('#cluster-list li');
  for (let i = 0; i < (await items.count()); i++) {
    const cl = items.nth(i);
    await cl.locator('summary').click();
    await cl.locator('p.note').first().waitFor();
    if ((await cl.locator('.compare').count()) > 0) {
      await cl.screenshot({ path: path.join(out, 'page-cluster.png') });
      break;
    }
    await cl.locator('summary').click();
  }
  await app.close();
  await index.close();
  process.stdout.write(
    `wrote ${['page.png', 'page-cluster.png', 'report.png', 'report-cluster.png', 'report-borderline.png'].map((f) => path.join('docs/img', f)).join(', ')}\n`,
  );
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
