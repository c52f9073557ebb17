/**
 * Test helper: the web page the browser tests open, served by a real `neardup serve` over the 400
 * ads of examples/ads.tsv indexed into SQLite (`index add --id-prefix ad`, as the screenshots'
 * index), with a headless browser; every page opened through it is watched, and closing asserts
 * that none logged an error or asked for anything outside the server.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { neardup, repoRoot } from '../cliUtil.js';
import { launchBrowser, watchPage, type PageProblems, type TestBrowser } from './browser.js';
import { startServe, type ServeChild } from './procs.js';

/** The served page and its browser. */
export interface AdsPage {
  /** The server's base URL. */
  base: string;
  browser: TestBrowser;
  /** Opens the page and waits until it is ready; `watch` false leaves its problems unrecorded (a test that breaks the server on purpose). */
  openPage(watch?: boolean): Promise<Page>;
  /** Records the problems of a page opened by the test itself. */
  watch(page: Page): Promise<void>;
  /** Closes the browser and the server, then asserts that no watched page had a problem. */
  close(): Promise<void>;
}

/** Indexes the ads into the SQLite store `db`, serves it and launches the browser. */
export async function serveAdsPage(db: string): Promise<AdsPage> {
  mkdirSync(path.dirname(db), { recursive: true });
  const r = neardup([
    'index',
    'add',
    path.join(repoRoot, 'examples/ads.tsv'),
    '--text',
    'Title,Short Description',
    '--id-prefix',
    'ad',
    '--store',
    `sqlite:${db}`,
    '-q',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const server: ServeChild = await startServe(['--host', '127.0.0.1', '--store', `sqlite:${db}`]);
  const browser = await launchBrowser({ width: 1100, height: 1000 });
  const base = server.url;
  const problems: PageProblems[] = [];
  const watch = async (page: Page): Promise<void> => {
    problems.push(await watchPage(page, [base + '/']));
  };
  return {
    base,
    browser,
    watch,
    async openPage(watched = true) {
      const page = await browser.context.newPage();
      if (watched) await watch(page);
      await page.goto(base + '/');
      await page.waitForSelector('html[data-ready="true"]');
      return page;
    },
    async close() {
      await browser.close();
      await server.stop();
      for (const p of problems) {
        assert.deepEqual(p.errors, []);
        assert.deepEqual(p.blocked, []);
      }
    },
  };
}
