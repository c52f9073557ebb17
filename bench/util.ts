/**
 * Small helpers the bench scripts share.
 * @module
 */
import { createServer } from 'node:net';

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
