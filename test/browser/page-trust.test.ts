/**
 * Issue #18, item by item, in real headless Chromium against real `neardup serve` processes on a
 * SQLite store filled by `neardup index add` (the README's way), and a real report file:
 *  1. data loaded with `index add` shows its text and titles (what changed, not "text not stored");
 *  2. a document is never saved under an earlier file's id;
 *  3. a document over 16 K characters can be added (its text is sent once);
 *  4. adding under an existing id asks before replacing;
 *  5. no old results stay on screen after new input or an error; 413 says the limit and the flag;
 *  6. passage numbers never split a token, and what changed is shown word by word;
 *  7. exact copies are grouped, long result lists are paged;
 *  8. clusters update by themselves, and building them stays out of the user's statistics;
 *  9. dir="auto", Latin-1 upload warning, a refused token is said, aligned bars with a threshold
 *     tick, readable statistics labels;
 * 10. the report: summary without scripts, readable log ticks, every legend entry drawn, this run's
 *     banding on the sweep, borderline pairs side by side, cluster sizes, every stage timed,
 *     a formatted timestamp, stable legend order and colours.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { mainJs, neardup, repoRoot, tmpDir } from '../cliUtil.js';
import { artifact, launchBrowser, watchPage, type PageProblems, type TestBrowser } from '../helpers/browser.js';

const ADS = path.join(repoRoot, 'examples/ads.tsv');
const rows = readFileSync(ADS, 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));
const adText = (i: number): string => `${rows[i]![0]} ${rows[i]![1]}`;
const dir = tmpDir();
const servers: ChildProcess[] = [];
let browser: TestBrowser | undefined;
let base = '';
const problems: PageProblems[] = [];

/** Starts `neardup serve` with `args` and resolves to its base URL. */
function serve(args: string[]): Promise<string> {
  const p = spawn(process.execPath, [mainJs, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  servers.push(p);
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15000);
    p.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    p.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

async function api(b: string, method: string, url: string, body?: unknown, token?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(b + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, json: await r.json().catch(() => null) };
}

async function openPage(b: string): Promise<Page> {
  const page = await browser!.context.newPage();
  problems.push(await watchPage(page, [b + '/']));
  await page.goto(b + '/');
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

async function search(page: Page, text: string): Promise<void> {
  await page.locator('#doc-text').fill(text);
  await page.locator('#doc-text').press('Control+Enter');
  await page.waitForFunction(`/match|No near/.test(document.getElementById('status').textContent)`);
}

/** Loads a file of `dir` through the file input and waits until the page has read it. */
async function load(page: Page, name: string): Promise<void> {
  await page.locator('#doc-file').setInputFiles(path.join(dir, name));
  await page.waitForFunction(`document.getElementById('status').textContent.startsWith('Loaded ${name}')`);
}

/** Shows more clusters until the one holding `id` is listed; returns its list item. */
async function showCluster(page: Page, id: string) {
  const li = page.locator(`#cluster-list li[data-members~="${id}"]`);
  for (let i = 0; i < 20 && (await li.count()) === 0; i++) {
    // The list refreshes by itself (and after each click): the button can be hidden between the
    // check and the click, when the last page of clusters arrives. Then there is nothing to click.
    if (await page.locator('#more-clusters').isVisible()) await page.locator('#more-clusters').click({ timeout: 2000 }).catch(() => undefined);
    await page.waitForTimeout(300);
  }
  await li.waitFor({ timeout: 5000 });
  return li;
}

/** The first ad with a number inside its text (at least 3 digits) and some length. */
const numbered = rows.findIndex((r) => /\b\d{3,}\b/.test(`${r[0]} ${r[1]}`) && `${r[0]} ${r[1]}`.length > 250);

before(async () => {
  // The README's way of loading data: index add into a SQLite file, then serve it.
  const r = neardup(['index', 'add', ADS, '--text', 'Title,Short Description', '--id-prefix', 'ad', '--store', `sqlite:${path.join(dir, 'ads.db')}`, '-q']);
  assert.equal(r.code, 0, r.stderr);
  base = await serve(['--store', `sqlite:${path.join(dir, 'ads.db')}`]);
  browser = await launchBrowser({ width: 1100, height: 1000 });
});

after(async () => {
  await browser?.close();
  for (const s of servers) {
    if (s.exitCode !== null) continue;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGTERM');
    await exited;
  }
  for (const p of problems) {
    assert.deepEqual(p.errors.filter((e) => !/status of 40[0-9]|status of 413/.test(e)), []);
    assert.deepEqual(p.blocked, []);
  }
});

test('1. data loaded with index add shows texts and titles: what changed, not "text not stored"', async () => {
  const db = `sqlite:${path.join(dir, 'titled.db')}`;
  const r = neardup(['index', 'add', ADS, '--text', 'Title,Short Description', '--title', 'Title', '--id-prefix', 'ad', '--store', db, '-q']);
  assert.equal(r.code, 0, r.stderr);
  const b = await serve(['--store', db]);
  const page = await openPage(b);
  const edited = adText(numbered).replace(/\b(\d{3,})\b/, (d) => String(Number(d) + 50)) + ' Chiamare dopo le 18.';
  await search(page, edited);
  const first = page.locator('#results li').first();
  const title = (await first.locator('.match-id').textContent()) ?? '';
  assert.ok(title.includes(rows[numbered]![0]!.trim().slice(0, 20)) && title.includes(`#ad${numbered})`), `title shown: ${title}`);
  assert.equal(await page.getByText('not stored').count(), 0);
  assert.ok((await first.locator('ins').count()) >= 1, 'inserted words are marked');
  assert.ok((await first.locator('del').count()) >= 1, 'deleted words are marked');
  await page.close();
});

test("2. a document is never saved under an earlier file's id", async () => {
  const page = await openPage(base);
  const files = { A: '', B: 'primo documento di prova numero due', C: 'terzo documento completamente diverso, unico nel suo genere' };
  for (const [n, t] of Object.entries(files)) writeFileSync(path.join(dir, `${n}.txt`), t);
  await page.locator('#doc-file').setInputFiles(path.join(dir, 'A.txt'));
  await page.locator('#add-btn').click();
  await page.waitForFunction(`document.getElementById('status').classList.contains('error')`);
  await load(page, 'B.txt');
  await load(page, 'C.txt');
  assert.equal(await page.locator('#doc-id').inputValue(), 'C.txt');
  await page.locator('#add-btn').click();
  await page.waitForFunction(`/Added/.test(document.getElementById('status').textContent)`);
  assert.match((await page.locator('#status').textContent()) ?? '', /Added #C\.txt\./);
  assert.equal((await api(base, 'GET', '/v1/documents/A.txt')).status, 404);
  assert.equal((await api(base, 'GET', '/v1/documents/C.txt?fields=text')).json.text, files.C);
  // Editing the text of a loaded file: the file's name no longer names it.
  await load(page, 'B.txt');
  assert.equal(await page.locator('#doc-id').inputValue(), 'B.txt');
  await page.locator('#doc-text').press('End');
  await page.locator('#doc-text').type(' modificato');
  assert.equal(await page.locator('#doc-id').inputValue(), '');
  await page.close();
});

test('3. a document over 16 K characters can be added: its text is sent once', async () => {
  let big = '';
  for (let i = 0; big.length < 36000; i++) big += adText(i % rows.length) + '\n';
  const page = await openPage(base);
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/v1/documents')) sent.push(r.postData() ?? '');
  });
  await page.locator('#doc-text').fill(big);
  await page.locator('#doc-id').fill('big-doc');
  await page.locator('#add-btn').click();
  await page.waitForFunction(`/Added|Replaced|larger|error/i.test(document.getElementById('status').textContent)`);
  assert.match((await page.locator('#status').textContent()) ?? '', /Added #big-doc\./);
  assert.equal(sent.length, 1);
  assert.ok(sent[0]!.length < big.length * 1.2, `request of ${sent[0]!.length} characters for a ${big.length}-character text`);
  assert.equal((await api(base, 'GET', '/v1/documents/big-doc?fields=text')).json.text, big);
  await page.close();
});

test('4. adding under an existing id asks before replacing it', async () => {
  const page = await openPage(base);
  const before = (await api(base, 'GET', '/v1/documents/ad5')).json;
  await page.locator('#doc-text').fill('un testo nuovo che sostituirebbe un annuncio esistente');
  await page.locator('#doc-id').fill('ad5');
  await page.locator('#add-btn').click();
  await page.locator('#confirm-box').waitFor();
  assert.match((await page.locator('#confirm-text').textContent()) ?? '', /#ad5 is already in the index/);
  await page.locator('#confirm-no').click();
  await page.waitForFunction(`/Not added/.test(document.getElementById('status').textContent)`);
  assert.deepEqual((await api(base, 'GET', '/v1/documents/ad5')).json, before);
  await page.locator('#add-btn').click();
  await page.locator('#confirm-yes').click();
  await page.waitForFunction(`/Replaced #ad5/.test(document.getElementById('status').textContent)`);
  assert.equal((await api(base, 'GET', '/v1/documents/ad5?fields=text')).json.text, 'un testo nuovo che sostituirebbe un annuncio esistente');
  await page.close();
});

test('5. no old results after new input or an error; the 413 message gives the limit and the flag', async () => {
  const page = await openPage(base);
  await search(page, adText(numbered));
  assert.ok((await page.locator('#results li').count()) >= 1);
  await page.locator('#doc-text').fill('');
  assert.equal(await page.locator('#results li').count(), 0, 'new input clears the results');
  await search(page, adText(numbered));
  assert.ok((await page.locator('#results li').count()) >= 1);
  await page.locator('#doc-text').evaluate((e: any, n: number) => {
    e.value = 'x'.repeat(n);
  }, 1_100_000);
  await page.locator('#find-btn').click();
  await page.waitForFunction(`document.getElementById('status').classList.contains('error')`);
  const msg = (await page.locator('#status').textContent()) ?? '';
  assert.match(msg, /1048576 bytes/);
  assert.match(msg, /--body-limit/);
  assert.equal(await page.locator('#results li').count(), 0, 'an error clears the results');
  assert.equal(await page.locator('#results-h').isVisible(), false);
  await page.close();
});

test('6. passage numbers never split a token; what changed is shown word by word', async () => {
  const page = await openPage(base);
  const original = adText(numbered);
  const m = /\b(\d{3,})\b/.exec(original)!;
  const changed = m[1]!.slice(0, -1) + String((Number(m[1]!.slice(-1)) + 1) % 10); // one digit differs
  await search(page, original.replace(m[1]!, changed));
  const first = page.locator('#results li').first();
  const insTexts = (await first.locator('ins').allTextContents()).join(' ');
  assert.ok(insTexts.includes(changed), `the changed number is marked as inserted: ${insTexts} / ${await first.textContent()}`);
  assert.match((await first.locator('p.changes').textContent()) ?? '', new RegExp(`${m[1]}.*→.*${changed}`));
  // No mark starts or ends inside a token (letters, digits, or a joiner between them).
  const splits = await page.evaluate(`(() => {
    const bad = [];
    const W = /[\\p{L}\\p{N}]/u;
    for (const doc of document.querySelectorAll('#results .doc')) {
      const text = doc.textContent;
      let at = 0;
      const walk = (n) => {
        if (n.nodeType === 3) { at += n.data.length; return; }
        const isMark = n.nodeName === 'MARK';
        const start = at;
        for (const c of n.childNodes) walk(c);
        if (isMark && n.dataset.passage) {
          const a = text[start - 1], b = text[start];
          if (a && W.test(a) && W.test(b)) bad.push(text.slice(start - 8, start) + '|' + text.slice(start, start + 8));
        }
      };
      for (const c of doc.childNodes) walk(c);
    }
    return bad;
  })()`);
  assert.deepEqual(splits, []);
  // A differing digit is not "100%".
  assert.doesNotMatch((await first.locator('.note').allTextContents()).join(' '), /covering 100%/);
  await page.close();
});

test('7. exact copies are grouped; long result lists are paged', async () => {
  const copy = 'Bilocale arredato in zona Monti, luminoso, terzo piano con ascensore, 950 euro al mese, spese incluse, libero da subito.';
  for (const id of ['cp1', 'cp2', 'cp3']) assert.equal((await api(base, 'POST', '/v1/documents', { id, text: copy })).status, 200);
  const page = await openPage(base);
  await search(page, copy.replace('950', '1.100'));
  const items = page.locator('#results li');
  assert.equal(await items.count(), 1);
  assert.match((await items.first().locator('.match-id').textContent()) ?? '', /#cp1\).*\+ 2 identical|#cp1 ?\+ 2 identical/);
  // 14 distinct near copies: 10 shown, then "show more".
  const long =
    'Appartamento di quattro locali in via Appia Nuova, doppi servizi, cucina abitabile, balcone verandato, cantina, posto auto condominiale, vicino alla metro A, ';
  const variants = Array.from({ length: 14 }, (_, i) => ({ id: `var${i}`, text: long + `riferimento interno numero ${1000 + i} per le visite` }));
  assert.equal((await api(base, 'POST', '/v1/documents:batch', { documents: variants })).status, 200);
  await search(page, long + 'riferimento interno numero 999 per le visite');
  assert.equal(await items.count(), 10);
  await page.locator('#more-results').click();
  assert.equal(await items.count(), 14);
  assert.equal(await page.locator('#more-results').isVisible(), false);
  // The copies' cluster says so when opened.
  const cl = await showCluster(page, 'cp1');
  await cl.locator('summary').click();
  await cl.locator('p.note').first().waitFor();
  assert.match((await cl.locator('p.note').first().textContent()) ?? '', /1 distinct text.*\+ 2 identical/);
  await page.close();
});

test("8. clusters update by themselves; building them stays out of the user's statistics", async () => {
  const q0 = (await api(base, 'GET', '/v1/stats')).json.counters.queries;
  const page = await openPage(base);
  await page.waitForFunction(`/cluster/.test(document.getElementById('clusters-status').textContent)`);
  assert.doesNotMatch((await page.locator('#clusters-status').textContent()) ?? '', /No clusters/);
  await page.waitForTimeout(500);
  assert.equal((await api(base, 'GET', '/v1/stats')).json.counters.queries, q0, "showing the clusters ran no queries of the user's");
  const total0 = (await api(base, 'GET', '/v1/clusters')).json.total;
  // Another client adds a pair of near duplicates: the open page shows their cluster, untouched.
  const t = 'Stanza singola in appartamento condiviso a Trastevere, riscaldamento autonomo, internet veloce, ';
  await api(base, 'POST', '/v1/documents:batch', { documents: [{ id: 'zz-a', text: t + 'solo studentesse' }, { id: 'zz-b', text: t + 'solo studenti' }] });
  await page.waitForFunction(`document.getElementById('clusters-status').textContent.startsWith('${total0 + 1} clusters')`, undefined, { timeout: 10000 });
  await showCluster(page, 'zz-a');
  await api(base, 'DELETE', '/v1/documents/zz-b');
  await page.waitForFunction(`document.getElementById('clusters-status').textContent.startsWith('${total0} clusters')`, undefined, { timeout: 10000 });
  assert.equal(await page.locator('#cluster-list li[data-members~="zz-a"]').count(), 0);
  await page.close();
});

test('9. dir="auto", a Latin-1 upload warning, a refused token, aligned bars with a threshold tick, readable statistics', async () => {
  const page = await openPage(base);
  assert.equal(await page.locator('#doc-text').getAttribute('dir'), 'auto');
  await page.locator('#doc-text').fill('شقة للإيجار في وسط روما، غرفتان ومطبخ');
  assert.equal(await page.locator('#doc-text').evaluate((e) => e.matches(':dir(rtl)')), true);
  // Latin-1 bytes: decoded, with a warning.
  writeFileSync(path.join(dir, 'latin1.txt'), Buffer.from('Citt\xe0 di Roma, appartamento in affitto', 'latin1'));
  await load(page, 'latin1.txt');
  assert.match(await page.locator('#doc-text').inputValue(), /^Città di Roma/);
  assert.match((await page.locator('#status').textContent()) ?? '', /not valid UTF-8.*Latin-1/);
  // Bars start at the same x (titles of different lengths), each with a tick at the threshold.
  const long = 'Attico con terrazzo panoramico a Prati, tre camere, due bagni, cucina abitabile, portiere, cantina e posto auto, ';
  const docs = Array.from(
    { length: 4 },
    (_, i) => ({ id: `attico${i}`, text: long + `codice annuncio ${500 + i}`, meta: { title: 'Attico'.padEnd(6 + 9 * i, ' lungo') } }),
  );
  assert.equal((await api(base, 'POST', '/v1/documents:batch', { documents: docs })).status, 200);
  await search(page, long + 'codice annuncio 499');
  const bars = page.locator('#results .bar');
  const boxes = await Promise.all(Array.from({ length: await bars.count() }, (_, i) => bars.nth(i).boundingBox()));
  assert.ok(boxes.length >= 2, `${boxes.length} bars`);
  for (const b of boxes) assert.equal(Math.round(b!.x), Math.round(boxes[0]!.x));
  const tick = await bars.first().locator('.tick').boundingBox();
  const bar0 = boxes[0]!;
  assert.ok(tick && Math.abs(tick.x + tick.width / 2 - (bar0.x + 0.8 * bar0.width)) < 3, 'tick at the threshold 0.8');
  assert.equal(await page.locator('#results .doc[dir="auto"]').count() > 0 || (await page.locator('#results details[open]').count()) === 0, true);
  // Statistics: words, not raw keys.
  const labels = await page.locator('#stats-list dt').allTextContents();
  assert.ok(labels.includes('File bytes'), labels.join(', '));
  for (const l of labels) assert.doesNotMatch(l, /^[a-z]+[A-Z]/, `raw key "${l}"`);
  assert.match((await page.locator('#stats-list').textContent()) ?? '', /File bytes[\d.]+ (KiB|MiB)/);
  await page.close();
  // A refused token is said.
  const tb = await serve(['--token', 's3cret']);
  const tp = await browser!.context.newPage();
  problems.push(await watchPage(tp, [tb + '/']));
  await tp.goto(tb + '/');
  await tp.locator('#token-box').waitFor();
  await tp.locator('#token').fill('wrong');
  await tp.locator('#token-btn').click();
  await tp.waitForFunction(`/refused/.test(document.getElementById('status').textContent)`);
  await tp.locator('#token').fill('s3cret');
  await tp.locator('#token-btn').click();
  await tp.waitForFunction(`/Documents0/.test(document.getElementById('stats-list').textContent)`);
  await tp.screenshot({ path: artifact('trust-token.png') });
  await tp.close();
});

test('10. the report: static summary, readable scales, every legend entry drawn, this run on the sweep, borderline pairs, cluster sizes, every stage timed', async () => {
  const out = path.join(dir, 'report.html');
  const dataOut = path.join(dir, 'report.json');
  const r = neardup(['report', ADS, '--text', 'Title,Short Description', '-k', '10', '--normalize', 'seed000', '--out', out, '--data', dataOut, '-q']);
  assert.equal(r.code, 0, r.stderr);
  const data = JSON.parse(readFileSync(dataOut, 'utf8'));
  // Without JavaScript: the summary is there.
  const noJs = await browser!.context.browser()?.newContext({ javaScriptEnabled: false });
  const ctx = noJs ?? (await (async () => browser!.context)());
  const np = await ctx.newPage();
  await np.goto(pathToFileURL(out).href);
  const summary = (await np.locator('dl.summary').textContent()) ?? '';
  assert.match(summary, /Documents400/);
  assert.match(summary, /Near-duplicate pairs/);
  await np.close();
  const page = await browser!.context.newPage();
  const pr = await watchPage(page, ['file:', 'data:', 'about:']);
  problems.push(pr);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('html[data-rendered="true"]');
  // Formatted timestamp; every stage in the time row.
  const sub = (await page.locator('header .sub').textContent()) ?? '';
  assert.doesNotMatch(sub, /\d{4}-\d{2}-\d{2}T/);
  assert.match(sub, /\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC/);
  const time = (await page.locator('dl.summary dd').last().textContent()) ?? '';
  for (const stage of ['read', 'shingle', 'sign', 'LSH', 'verify', 'cluster', 'report data'])
    assert.ok(time.includes(stage), `time row lacks ${stage}: ${time}`);
  // The histogram's log axis has readable ticks between the powers of ten.
  const ticks = await page.locator('figure[data-chart="histogram"] svg g[aria-label="y-axis tick label"] text').allTextContents();
  assert.ok(ticks.includes('2') && ticks.includes('5'), `ticks ${ticks.join(',')}`);
  // Every legend entry of the sweep is drawn; this run's banding is on it.
  const legend = await page.locator('figure[data-chart="bands"] div[class*="-swatches"] span[class$="-swatch"]').allTextContents();
  const fills = new Set(
    await page.locator('figure[data-chart="bands"] svg g[aria-label="bar"] rect').evaluateAll((rs) => rs.map((r) => r.getAttribute('fill'))),
  );
  assert.equal(legend.length, fills.size, `legend ${legend.join(', ')} vs ${fills.size} colours drawn`);
  const xs = await page.locator('figure[data-chart="bands"] svg g[aria-label="x-axis tick label"] text').allTextContents();
  assert.ok(xs.some((x) => /this run/.test(x)), `sweep labels ${xs.join(', ')}`);
  // Stable legend order and colours of the shingle-size chart: by percentile.
  const kLegend = await page.locator('figure[data-chart="shingle-size"] div[class*="-swatches"] span[class$="-swatch"]').allTextContents();
  const pcts = kLegend.map((l) => Number(/(\d+)th pct/.exec(l)?.[1]));
  assert.deepEqual(pcts, [...pcts].sort((a, b) => a - b));
  // Borderline pairs side by side, with what changed; the cluster-size distribution.
  assert.ok(data.borderline.length >= 1);
  assert.equal(await page.locator('#borderline article .pair').count(), data.borderline.length);
  assert.ok((await page.locator('#borderline ins, #borderline del').count()) >= 1);
  // Bars on a linear size axis (#32): rectY marks, not barY over size categories.
  assert.equal(await page.locator('figure[data-chart="cluster-sizes"] svg g[aria-label="rect"] rect').count(), data.clusterSizes.length);
  await page.locator('#borderline').screenshot({ path: artifact('trust-report-borderline.png') });
  await page.close();
  await noJs?.close();
});
