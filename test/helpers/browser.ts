/**
 * Test helper: real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, with
 * every request outside the allowed origins blocked and recorded, and console errors collected.
 */
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './kijiji.js';
import { browserChoice } from './needs.js';

/** Where tests save screenshots (gitignored). */
export const ARTIFACTS = path.resolve(repoRoot, 'test-artifacts');

/** The launch flags: no GPU, no sandbox (root in CI), and no background traffic of its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser context in a fresh profile directory. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Chromium (see browserChoice: NEARDUP_CHROMIUM, /usr/bin/chromium or the bundled one);
 * fails with a clear message when there is none.
 */
export async function launchBrowser(viewport = { width: 1100, height: 900 }): Promise<TestBrowser> {
  const c = browserChoice();
  if ('missing' in c) {
    throw new Error(
      `no Chromium for the browser tests: ${c.missing}. Install it with "apt-get install -y chromium" or run npm ci (bundled @sparticuz/chromium).`,
    );
  }
  const profile = mkdtempSync(path.join(os.tmpdir(), 'neardup-chromium-'));
  const env = { ...process.env, ...c.env } as Record<string, string>;
  const context = await chromium.launchPersistentContext(profile, { executablePath: c.executablePath, env, headless: true, args: CHROMIUM_ARGS, viewport });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a watched page did wrong: console errors, uncaught exceptions, blocked or failed requests. */
export interface PageProblems {
  errors: string[];
  blocked: string[];
}

/**
 * Watches a page: collects console errors and page errors, and aborts (and records) every request
 * whose URL does not start with one of `allowed` (so a CDN reference would fail the test).
 */
export async function watchPage(page: Page, allowed: string[]): Promise<PageProblems> {
  const problems: PageProblems = { errors: [], blocked: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') problems.errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!problems.blocked.includes(r.url())) problems.errors.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed.some((a) => url.startsWith(a))) return route.continue();
    problems.blocked.push(url);
    return route.abort();
  });
  return problems;
}

/** The path of a screenshot artifact (creating the directory). */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
