/**
 * The web page of `neardup serve`, in real headless Chromium: a real server process with Kijiji ads
 * indexed through the API, every non-local request blocked. The page must load without console
 * errors; a pasted near duplicate must be found with its shared passages highlighted in both texts;
 * adding it must show up in the clusters and the statistics; everything works from the keyboard.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mainJs } from '../cliUtil.js';
import { kijijiTexts } from '../helpers/kijiji.js';
import { artifact, launchBrowser, watchPage, type TestBrowser } from '../helpers/browser.js';
import { needsBrowser } from '../helpers/needs.js';

let server: ChildProcess | undefined;
let browser: TestBrowser | undefined;
after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
});

/** Starts `neardup serve --port 0` and resolves to its base URL. */
async function startServer(): Promise<string> {
  server = spawn(process.execPath, [mainJs, 'serve', '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15000);
    server!.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    server!.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

async function post(base: string, url: string, body: unknown): Promise<unknown> {
  const r = await fetch(base + url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, await r.clone().text());
  return r.json();
}

test('page: loads clean, finds and highlights a pasted near duplicate, adds it, lists clusters', needsBrowser(), async () => {
  const base = await startServer();
  // 300 ads, with their text in meta so the page can align passages.
  const texts = kijijiTexts().slice(0, 300);
  await post(base, '/v1/documents:batch', { documents: texts.map((text, i) => ({ id: `ad${i}`, text, meta: { text, title: text.slice(0, 60) } })) });
  // A near duplicate of a long ad: a changed number and an added sentence.
  const src = texts.findIndex((t) => t.length > 400 && /\d/.test(t));
  assert.ok(src >= 0);
  const original = texts[src]!;
  const edited = original.replace(/\d+/, (d) => String(Number(d) + 7)) + ' Contattare solo se interessati.';

  browser = await launchBrowser({ width: 1100, height: 1000 });
  const page = await browser.context.newPage();
  const problems = await watchPage(page, [base + '/']);
  await page.goto(base + '/');
  await page.waitForSelector('html[data-ready="true"]');
  await page.waitForSelector('#stats-list dd');
  assert.match((await page.locator('#stats-list').textContent()) ?? '', /Documents300/);
  // Every form control has a label.
  const unlabeled = await page.evaluate(`[...document.querySelectorAll('input, textarea, select')].filter((e) => e.labels.length === 0).map((e) => e.id)`);
  assert.deepEqual(unlabeled, []);

  // Paste, then search from the keyboard (Ctrl+Enter in the text area).
  await page.locator('#doc-text').fill(edited);
  await page.locator('#doc-text').press('Control+Enter');
  await page.waitForSelector('#results li');
  const ids = await page.locator('#results .match-id').allTextContents();
  assert.ok(ids.some((t) => t.includes(`#ad${src})`)), `results ${ids.join(', ')} should include ad${src}`);
  const first = page.locator('#results li').first();
  assert.equal(await first.locator('.bar[role="img"]').count(), 1);
  const sim = parseFloat((await first.locator('.bar').getAttribute('aria-label'))!.replace('similarity ', ''));
  assert.ok(sim >= 0.8 && sim < 1, `similarity ${sim}`);
  const cols = first.locator('.pair .col');
  const left = await cols.nth(0).locator('mark[data-passage]').count();
  const right = await cols.nth(1).locator('mark[data-passage]').count();
  assert.ok(left >= 1 && left === right, `${left} vs ${right} highlighted passages`);
  // The longest passage is long: most of the ad is shared (a passage may be cut by changed words).
  const segs = await cols.nth(0).locator('mark').evaluateAll((ms) =>
    ms.map((m) => [m.getAttribute('data-p') ?? '', (m.textContent ?? '').length] as [string, number])
  );
  const byPassage = new Map<string, number>();
  for (const [p, n] of segs) byPassage.set(p, (byPassage.get(p) ?? 0) + n);
  const longest = Math.max(...byPassage.values());
  assert.ok(longest > 200, `longest highlighted passage ${longest}`);
  // Focus moved to the results heading (announced to screen readers).
  assert.equal(await page.evaluate('document.activeElement.id'), 'results-h');
  await page.screenshot({ path: artifact('page-results.png'), fullPage: false });

  // Add it (the button, reached with Tab from the id field, pressed with Enter).
  await page.locator('#doc-id').fill('pasted-1');
  await page.locator('#doc-id').press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate('document.activeElement.id'), 'find-btn');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate('document.activeElement.id'), 'add-btn');
  await page.keyboard.press('Enter');
  await page.waitForFunction(`/Added #pasted-1/.test(document.getElementById('status').textContent)`);
  await page.waitForFunction(`/Documents301/.test(document.getElementById('stats-list').textContent)`);

  // Clusters: the new document is in a cluster with its original; opening it aligns the members.
  // (The list updates by itself; the new cluster may be further down: show more until it is listed.)
  const cluster = page.locator('#cluster-list li[data-members~="pasted-1"]');
  for (let i = 0; i < 30 && (await cluster.count()) === 0; i++) {
    if (await page.locator('#more-clusters').isVisible()) await page.locator('#more-clusters').click();
    await page.waitForTimeout(300);
  }
  await cluster.waitFor();
  await cluster.locator('summary').click();
  await cluster.locator('.pair').first().waitFor();
  assert.ok((await cluster.locator('.pair mark').count()) >= 2);

  // The statistics chart is drawn by the locally served Plot.
  assert.ok((await page.locator('#stats-plot svg g[aria-label="line"] path').count()) >= 1);
  // The page asks whether an id exists before adding (GET → 404 for a new id); Chromium logs that 404.
  assert.deepEqual(problems.errors.filter((e) => !/status of 404/.test(e)), []);
  assert.deepEqual(problems.blocked, []);
  await page.screenshot({ path: artifact('page-full.png'), fullPage: true });
});
