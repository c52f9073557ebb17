/**
 * Issue #32, item 3: the page's other states, in real headless Chromium against `neardup serve` on
 * the 400 ads of examples/ads.tsv. States the index cannot be put in on demand (a list of top-k
 * matches that is empty, clusters still being counted, a server that stopped answering) are made
 * by answering the page's requests in the browser (Playwright routes); the rest is the real server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import fc from 'fast-check';
import { repoRoot, tmpDir } from '../cliUtil.js';
import { artifact } from '../helpers/browser.js';
import { serveAdsPage, type AdsPage } from '../helpers/adsPage.js';
import { needsBrowser } from '../helpers/needs.js';

const ADS = path.join(repoRoot, 'examples/ads.tsv');
const rows = readFileSync(ADS, 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));
const adText = (i: number): string => `${rows[i]![0]} ${rows[i]![1]}`;
const dir = tmpDir();
let ads: AdsPage | undefined;
let base = '';

const openPage = (watch = true): Promise<Page> => ads!.openPage(watch);

async function search(page: Page, text: string, opts: { threshold?: string; topK?: boolean } = {}): Promise<void> {
  await page.locator('#doc-text').fill(text);
  if (opts.threshold !== undefined) await page.locator('#threshold').fill(opts.threshold);
  if (opts.topK) await page.locator('#topk').check();
  await page.locator('#find-btn').click();
  await page.waitForFunction(`/match|No near|No similar|does not answer/.test(document.getElementById('status').textContent)`);
}

const statsText = (page: Page): Promise<string> => page.locator('#stats-list').innerText();

before(async () => {
  if (needsBrowser().skip) return;
  // A store path as long as a real one (/home/…/projects/…): the statistics show it.
  ads = await serveAdsPage(path.join(dir, 'home-of-someone-with-a-long-name', 'projects-and-experiments', 'rental-ads-index.db'));
  base = ads.base;
});

after(async () => {
  await ads?.close();
});

test('"10 most similar" with nothing found: no heading over an empty list, and the status says why', needsBrowser(), async () => {
  const page = await openPage();
  await page.route('**/v1/query', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ matches: [] }) }));
  await search(page, 'qwz xkcd vbnm', { topK: true });
  assert.equal(await page.locator('#results-h').isVisible(), false);
  assert.equal(await page.locator('#results li').count(), 0);
  assert.match(await page.locator('#status').innerText(), /^No similar documents: none shares a band or a key prefix with your text/);
  await page.close();
});

test('"10 most similar" counts distinct texts: the exact copies of ad1 take one place, listed under it', needsBrowser(), async () => {
  const page = await openPage();
  await search(page, adText(1), { topK: true });
  const items = page.locator('#results li');
  assert.equal(await items.count(), 10);
  assert.match(await items.first().locator('.match-id').innerText(), /\+ \d+ identical/);
  assert.match(await page.locator('#results-h').innerText(), /^The 10 most similar texts: \d+ documents with 10 distinct texts$/);
  await page.close();
});

test(
  "a query threshold below the index's says, next to the threshold box, that recall is lost, with the chance at that threshold (the server's recall warning)",
  needsBrowser(),
  async () => {
    const page = await openPage();
    // Not an exact copy of ad 5 (that would add its own warning).
    await search(page, adText(5) + ' Nuovo.', { threshold: '0.5' });
    const w = await page.locator('#threshold-warning').innerText();
    // 16 bands × 6 rows: P(0.5) = 1 − (1 − 0.5⁶)¹⁶ = 22%.
    assert.match(
      w,
      /The threshold 0\.5 is below the index’s 0\.8: .* found only in part \(a pair at 0\.5 is found with probability 22%, pairs nearer 0\.8 more often\)\. “Show the 10 most similar texts” looks further\./,
    );
    assert.equal(await page.locator('#warning').isVisible(), false);
    await search(page, adText(5) + ' Nuovo.', { threshold: '0.9' });
    assert.equal(await page.locator('#threshold-warning').isVisible(), false);
    await page.close();
  },
);

// #48: the warning is a sentence or two; in the threshold's column (the narrowest of the row) it
// was squeezed into a tall strip of a few words a line. It spans the row, below it, at any width.
test('the threshold warning spans the form row below the inputs, not the threshold column, at drawn thresholds and widths', needsBrowser(), async () => {
  const page = await openPage();
  const cases = fc.sample(fc.tuple(fc.integer({ min: 6, max: 15 }).map((n) => (n / 20).toFixed(2)), fc.integer({ min: 720, max: 1600 })), {
    numRuns: 4,
    seed: 48,
  });
  for (const [threshold, width] of cases) {
    await page.setViewportSize({ width, height: 900 });
    await search(page, adText(5) + ' Nuovo.', { threshold });
    const w = page.locator('#threshold-warning');
    assert.ok(await w.isVisible(), `${threshold} at ${width}px: a warning`);
    const box = (await w.boundingBox())!;
    const row = (await page.locator('form .row').first().boundingBox())!;
    const column = (await page.locator('#threshold').boundingBox())!;
    assert.ok(Math.abs(box.width - row.width) <= 1, `${threshold} at ${width}px: the warning is ${box.width}px wide, the row ${row.width}px`);
    assert.ok(box.y >= row.y + row.height - 1, `${threshold} at ${width}px: the warning is below the row`);
    assert.ok(box.width > 2 * column.width, `${threshold} at ${width}px: wider than the threshold box`);
  }
  await page.screenshot({ path: artifact('page-threshold-warning.png') });
  await page.close();
});

test('statistics follow the searches without "Refresh statistics"; "matches returned" counts matches, not candidates', needsBrowser(), async () => {
  const page = await openPage();
  await page.locator('#stats-list dt').first().waitFor();
  const before = Number(/(\d+) queries/.exec(await statsText(page))![1]);
  await search(page, adText(7));
  await page.waitForFunction(`new RegExp('\\\\b${before + 1} queries').test(document.getElementById('stats-list').innerText)`, undefined, { timeout: 5000 });
  // The counters: a top-10 query returns 10 matches out of more candidates.
  const stats = async () => ((await (await fetch(base + '/v1/stats')).json()) as { counters: { candidates: number; verified: number } }).counters;
  const s0 = await stats();
  const q = (await (await fetch(base + '/v1/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: adText(7), topK: 10 }),
  })).json()) as { matches: { copies: unknown[] }[] };
  const s1 = await stats();
  assert.equal(q.matches.length, 10);
  // Ten distinct texts; their copies are returned too, and counted.
  const returned = q.matches.reduce((n, m) => n + 1 + m.copies.length, 0);
  assert.ok(s1.candidates - s0.candidates > returned, `${s1.candidates - s0.candidates} candidates scored`);
  assert.equal(s1.verified - s0.verified, returned, 'matches returned');
  assert.match(await statsText(page), /matches returned/);
  await page.close();
});

test('clusters of a restored index being counted: no "0 of 0 read"', needsBrowser(), async () => {
  const page = await ads!.browser.context.newPage();
  await ads!.watch(page);
  await page.route(
    '**/v1/clusters?*',
    (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ building: { done: 0, total: 0 } }) }),
  );
  await page.goto(base + '/');
  await page.waitForSelector('html[data-ready="true"]');
  await page.waitForFunction(`/Building/.test(document.getElementById('clusters-status').textContent)`);
  const s = await page.locator('#clusters-status').innerText();
  assert.doesNotMatch(s, /0 of 0/);
  assert.match(s, /counting them/);
  await page.close();
});

test('the server stops answering: the page says so in words, and the cluster list no longer claims to update', needsBrowser(), async () => {
  const page = await openPage(false);
  await page.waitForFunction(`/clusters?, largest first/.test(document.getElementById('clusters-status').textContent)`);
  await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
  await search(page, adText(3));
  const s = await page.locator('#status').innerText();
  assert.match(s, /The neardup server does not answer: is it still running\?/);
  assert.doesNotMatch(s, /Failed to fetch/);
  await page.waitForFunction(`/does not answer/.test(document.getElementById('clusters-status').textContent)`, undefined, { timeout: 15000 });
  assert.doesNotMatch(await page.locator('#clusters-status').innerText(), /updates by itself/);
  await page.unroute('**/v1/**');
  await page.waitForFunction(`/updates by itself/.test(document.getElementById('clusters-status').textContent)`, undefined, { timeout: 15000 });
  await page.close();
});

test('at 390 px the page does not scroll sideways (results, a diff, an open cluster)', needsBrowser(), async () => {
  const page = await openPage();
  await page.setViewportSize({ width: 390, height: 900 });
  const i = rows.findIndex((r) => `${r[0]} ${r[1]}`.length > 250);
  await search(page, adText(i).replace(/\d+/, '9999'));
  const li = page.locator('#cluster-list li[data-members~="ad129"]');
  await li.waitFor();
  await li.locator('summary').click();
  await li.locator('.compare').first().waitFor({ timeout: 10000 }).catch(() => undefined);
  const widths = (await page.evaluate(`(() => {
    const w = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1).slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
    return { scroll: document.documentElement.scrollWidth, client: w, wide };
  })()`)) as { scroll: number; client: number; wide: string[] };
  await page.screenshot({ path: artifact('page-390px.png'), fullPage: false });
  assert.ok(widths.scroll <= widths.client, `scrollWidth ${widths.scroll} > ${widths.client}: ${widths.wide.join(', ')}`);
  await page.close();
});
