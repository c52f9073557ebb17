/**
 * Small helpers the bench scripts share.
 * @module
 */
import { createServer } from 'node:net';
import { HUGE_PAGES_TUNABLE } from '../src/cli/hugePages.js';

/** The value after `--name` on the command line, or `def`. */
export function opt(name: string, def: string, argv: readonly string[] = process.argv.slice(2)): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
}

/** A TCP port free on 127.0.0.1 now (for a server a bench starts). */
export function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

/**
 * What a first touch of fresh memory costs here: µs per 4 KiB page over 256 MiB, and whether large
 * allocations may get 2 MiB pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`). Printed by the store
 * benches beside their figures: on this machine's VM a first touch has cost ~12 µs a page with 4 KiB
 * pages, and a 10M-document store faults in ~7 GB at open (docs/operations.md, "Fresh memory on
 * Linux"), so a figure means little without it.
 */
export function pageFaultProbe(): string {
  const bytes = 256 << 20;
  const t = performance.now();
  const a = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4096) a[i] = 1;
  const us = ((performance.now() - t) * 1000) / (bytes / 4096);
  const huge = (process.env.GLIBC_TUNABLES ?? '').split(':').includes(HUGE_PAGES_TUNABLE) ? 'on' : 'off';
  return `first touch ${us.toFixed(2)} µs per 4 KiB page, glibc.malloc.hugetlb ${huge}`;
}
