/**
 * Issue #32, items 1 and 2, in real headless Chromium on the 400 Kijiji ads of examples/ads.tsv
 * (the screenshots' index: `index add --id-prefix ad` into SQLite, then `serve`), and on a report:
 *  1. every pair the cluster view shows carries its similarity; a pair below the threshold says
 *     which member links it (ad128 and ad129, Jaccard 0.735, share a cluster through ad61:
 *     0.820 and 0.801), in the page and in the report;
 *  2. a passage's number is a badge set apart from the text, never glued to the token before it;
 *     a number with separators (1.100,00; 1,100.00; 17.000) is one token of the change summary,
 *     which lists numbers first, then the longest changes, and pairs no number with a word.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { neardup, repoRoot, tmpDir } from '../cliUtil.js';
import { artifact, watchPage } from '../helpers/browser.js';
import { serveAdsPage, type AdsPage } from '../helpers/adsPage.js';
import { needsBrowser } from '../helpers/needs.js';

const ADS = path.join(repoRoot, 'examples/ads.tsv');
const lines = readFileSync(ADS, 'utf8').split('\n');
const rows = lines.slice(1).filter(Boolean).map((l) => l.split('\t'));
const adText = (i: number): string => `${rows[i]![0]} ${rows[i]![1]}`;
const dir = tmpDir();
let ads: AdsPage | undefined;

const openPage = (): Promise<Page> => ads!.openPage();

before(async () => {
  if (needsBrowser().skip) return;
  ads = await serveAdsPage(path.join(dir, 'ads.db'));
});

after(async () => {
  await ads?.close();
});

test('page: every cluster pair carries its similarity; ad128 and ad129 are linked through #ad61', needsBrowser(), async () => {
  const page = await openPage();
  const li = page.locator('#cluster-list li[data-members~="ad129"]');
  for (let i = 0; i < 20 && (await li.count()) === 0; i++) {
    if (await page.locator('#more-clusters').isVisible()) await page.locator('#more-clusters').click({ timeout: 2000 }).catch(() => undefined);
    await page.waitForTimeout(300);
  }
  await li.locator('summary').click();
  await li.locator('p.cmp').first().waitFor();
  await page.waitForFunction(
    `document.querySelectorAll('#cluster-list li[data-members~="ad129"] p.cmp').length === document.querySelectorAll('#cluster-list li[data-members~="ad129"] .compare').length`,
  );
  const labels = await li.locator('p.cmp').allTextContents();
  assert.ok(labels.length >= 2, labels.join('\n'));
  for (const l of labels) assert.match(l, /: Jaccard \d\.\d{3}|similarity not found/);
  const pair = labels.find((l) => l.includes('#ad129'));
  assert.ok(pair, labels.join('\n'));
  assert.match(pair, /#ad128 and #ad129: Jaccard 0\.735, below the threshold 0\.8: not a near-duplicate pair, linked through #ad61 \(0\.820, 0\.801\)/);
  await li.screenshot({ path: artifact('page-cluster-linked.png') });
  await page.close();
});

test('report: a compared pair below the threshold names the member that links it', needsBrowser(), async () => {
  // ads 128, 61 and 129 of examples/ads.tsv: one cluster, 128 first.
  const tsv = path.join(dir, 'three.tsv');
  writeFileSync(tsv, [lines[0], lines[129], lines[62], lines[130]].join('\n') + '\n');
  const out = path.join(dir, 'three.html');
  const r = neardup(['report', tsv, '--text', 'Title,Short Description', '--out', out, '-q']);
  assert.equal(r.code, 0, r.stderr);
  const page = await ads!.browser.context.newPage();
  const watched = await watchPage(page, ['file:', 'data:', 'about:']);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('html[data-rendered="true"]');
  const labels = await page.locator('article.cluster p.cmp').allTextContents();
  const below = labels.filter((l) => /below the threshold/.test(l));
  assert.equal(below.length, 1, labels.join('\n'));
  assert.match(below[0]!, /Jaccard 0\.735, below the threshold 0\.8: not a near-duplicate pair, linked through #1 \(0\.820, 0\.801\)/);
  assert.deepEqual(watched.errors, []);
  await page.close();
});

test('diff view: numbers with separators are one token; numbers first in the summary; no number paired with a word', needsBrowser(), async () => {
  const page = await openPage();
  const got = (await page.evaluate(`(() => {
    const d = window.neardupDiff;
    const sum = (a, b) => d.changeSummary(d.wordDiff(a, b).changes);
    return {
      tokens: d.tokenize('1.100,00 euro, 1,100.00 USD, 17.000 €, 355mq, bus 87 625'),
      price: sum('Ufficio mq 355 a 1.100,00 euro al mese', 'Ufficio mq 355 a 1.000,00 euro al mese'),
      unpaired: sum('Disponibile da subito', 'Disponibile 16 subito'),
      order: sum(
        'Grande appartamento luminoso con terrazzo, cucina abitabile, doppi servizi, cantina e box auto: 3.300 euro',
        'Piccolo monolocale buio senza balcone, angolo cottura, un bagno, soffitta e posto moto: 17.000 euro',
      ),
    };
  })()`)) as { tokens: string[]; price: string; unpaired: string; order: string };
  for (const n of ['1.100,00', '1,100.00', '17.000', '355mq', '87', '625'])
    assert.ok(got.tokens.includes(n), `${n} is one token: ${JSON.stringify(got.tokens)}`);
  assert.equal(got.price, '“1.100,00” → “1.000,00”');
  assert.equal(got.unpaired, '+ “16” · − “da”');
  // The price change comes first, however many word changes precede it in the text.
  assert.match(got.order, /^“3\.300” → “17\.000”/);
  assert.match(got.order, / · and \d+ more$/);
  await page.close();
});

test('diff view: a passage number is a badge set apart from the tokens around it', needsBrowser(), async () => {
  const page = await openPage();
  // A re-posted ad with its price changed: passages start right after numbers.
  const i = rows.findIndex((r) => /\b\d{3,}\b/.test(`${r[0]} ${r[1]}`) && `${r[0]} ${r[1]}`.length > 250);
  const original = adText(i);
  const m = /\b(\d{3,})\b/.exec(original)!;
  await page.locator('#doc-text').fill(original.replace(m[1]!, m[1]! + '0'));
  await page.locator('#doc-text').press('Control+Enter');
  await page.waitForFunction(`/match|No near/.test(document.getElementById('status').textContent)`);
  await page.locator('#results mark[data-passage]').first().waitFor();
  const checks = (await page.evaluate(`(() => {
    const out = [];
    for (const mark of document.querySelectorAll('#results mark[data-passage]')) {
      const st = getComputedStyle(mark, '::before');
      // The last character before the mark and the mark's first character, on one line.
      const first = mark.firstChild && mark.firstChild.nodeType === 3 ? mark.firstChild : mark.querySelector('*') && mark.querySelector('*').firstChild;
      let prev = mark.previousSibling;
      while (prev && prev.nodeType !== 3) prev = prev.lastChild;
      if (!first || !prev || !prev.data) continue;
      const pr = document.createRange();
      pr.setStart(prev, prev.data.length - 1);
      pr.setEnd(prev, prev.data.length);
      const fr = document.createRange();
      fr.setStart(first, 0);
      fr.setEnd(first, 1);
      const a = pr.getBoundingClientRect();
      const b = fr.getBoundingClientRect();
      if (Math.abs(a.top - b.top) > 2) continue; // the mark starts a new line
      out.push({ style: st.verticalAlign + ' ' + st.marginLeft + ' ' + st.marginRight, gap: b.left - a.right, before: prev.data.slice(-8) });
    }
    return out;
  })()`)) as { style: string; gap: number; before: string }[];
  assert.ok(checks.length > 0, 'some passage starts mid-line');
  for (const c of checks) {
    const [align, left, right] = c.style.split(' ');
    assert.notEqual(align, 'super');
    assert.ok(parseFloat(left!) >= 3 && parseFloat(right!) >= 3, `margins on both sides: ${c.style}`);
    // The badge and its margins sit between the two tokens: at least ~1 em apart.
    assert.ok(c.gap >= 12, `"${c.before}|…": ${c.gap.toFixed(1)} px between the token and the passage`);
  }
  await page.locator('#results li').first().screenshot({ path: artifact('page-passage-badges.png') });
  await page.close();
});

test('report charts: cluster sizes on a linear axis with no count over the axis label; the shingle-size chart spans its data', needsBrowser(), async () => {
  const out = path.join(dir, 'kijiji.html');
  const r = neardup([
    'report',
    path.join(repoRoot, 'data/dataset_rent_rome_kijiji.tsv'),
    '--text',
    'Title,Short Description',
    '-k',
    '10',
    '--normalize',
    'lowercase-collapse',
    '--out',
    out,
    '-q',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const page = await ads!.browser.context.newPage();
  const watched = await watchPage(page, ['file:', 'data:', 'about:']);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('html[data-rendered="true"]');
  const got = (await page.evaluate(`(() => {
    const svg = document.querySelector('figure[data-chart="cluster-sizes"] svg');
    const box = (e) => e.getBoundingClientRect();
    const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const labels = [...svg.querySelectorAll('g[aria-label="text"] text')];
    const axisLabel = svg.querySelector('g[aria-label="y-axis label"] text');
    const bars = [...svg.querySelectorAll('g[aria-label="rect"] rect')].map((e) => ({ x: box(e).left + box(e).width / 2, title: e.querySelector('title') ? e.querySelector('title').textContent : '' }));
    const k = document.querySelector('figure[data-chart="shingle-size"] svg');
    const ticks = [...k.querySelectorAll('g[aria-label="y-axis tick label"] text')].map((e) => Number(e.textContent));
    const crowded = labels.filter((l, i) => i > 0 && meets(box(l), box(labels[i - 1]))).map((l) => l.textContent);
    return { overlaps: labels.filter((l) => meets(box(l), box(axisLabel))).map((l) => l.textContent), crowded, bars, ticks };
  })()`)) as { overlaps: string[]; crowded: string[]; bars: { x: number; title: string }[]; ticks: number[] };
  assert.deepEqual(got.overlaps, [], 'a count label overlaps the y-axis label');
  assert.deepEqual(got.crowded, [], 'count labels overlap each other');
  // A linear size axis, not categories: the gap from 9 to 38 members is 29 times that from 2 to 3.
  const at = (size: number) => got.bars.find((b) => new RegExp(` of ${size}$`).test(b.title))!.x;
  const sizes = got.bars.map((b) => Number(/ of (\d+)$/.exec(b.title)![1]));
  assert.ok(sizes.includes(9) && sizes.includes(38), sizes.join(','));
  for (let i = 1; i < got.bars.length; i++) assert.ok(got.bars[i]!.x > got.bars[i - 1]!.x);
  const ratio = (at(38) - at(9)) / (at(3) - at(2));
  assert.ok(Math.abs(ratio - 29) < 0.5, `gap 9→38 / gap 2→3 = ${ratio.toFixed(2)}: a linear size axis`);
  assert.ok(Math.min(...got.ticks) > 0.3, `the shingle-size chart starts near its data: ticks ${got.ticks.join(', ')}`);
  assert.deepEqual(watched.errors, []);
  await page.locator('figure[data-chart="cluster-sizes"]').screenshot({ path: artifact('report-cluster-sizes.png') });
  await page.locator('figure[data-chart="shingle-size"]').screenshot({ path: artifact('report-shingle-size.png') });
  await page.close();
});
