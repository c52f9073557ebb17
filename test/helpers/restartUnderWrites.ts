/**
 * The drill that test/e2e/crash.test.ts (PostgreSQL) and test/e2e/redis-outage.test.ts (Redis) run
 * against a store's server: two `neardup serve` processes on one store write documents over HTTP
 * without pause while the server goes down and comes back, once per signal. Each round waits until
 * both processes are writing, takes the server down, waits until both have answered 503, brings it
 * back and waits until both write again. Then it checks what both tests require of the processes:
 * alive, nothing but 200 or 503, no stack trace on stderr.
 */
import assert from 'node:assert/strict';
import type { ServeChild } from './procs.js';

export interface RestartDrill {
  /** The two (or more) serve processes, all on the store whose server restarts. */
  serves: ServeChild[];
  /** Document texts, taken in turn. */
  texts: readonly string[];
  /** One round per signal: `down(signal)` takes the server down, `up()` starts it again. */
  signals: readonly NodeJS.Signals[];
  down(signal: NodeJS.Signals): Promise<void>;
  up(): Promise<void>;
}

export interface RestartDrillResult {
  /** Per serve process: how many writes got each status code (or `no answer: …`). */
  codes: Map<string, number>[];
  /** The ids of the documents a process acknowledged with 200. */
  acked: string[];
}

export async function restartUnderWrites(drill: RestartDrill): Promise<RestartDrillResult> {
  const { serves, texts } = drill;
  const codes = serves.map(() => new Map<string, number>());
  const count = (i: number, c: string): number => codes[i]!.get(c) ?? 0;
  const acked: string[] = [];
  let stop = false;
  let n = 0;
  const writers = serves.map(async (s, i) => {
    while (!stop) {
      const k = n++;
      const id = `w${i}-${k}`;
      let c: string;
      try {
        const r = await fetch(`${s.url}/v1/documents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id, text: texts[k % texts.length] }),
        });
        await r.arrayBuffer();
        c = String(r.status);
        if (r.status === 200) acked.push(id);
      } catch (e) {
        c = `no answer: ${(e as Error).message}`;
      }
      codes[i]!.set(c, count(i, c) + 1);
      if (c !== '200') await new Promise((r) => setTimeout(r, 20));
    }
  });
  const until = async (what: string, done: () => boolean): Promise<void> => {
    for (let k = 0; !done(); k++) {
      if (k >= 1200)
        throw new Error(`gave up waiting until ${what}: ${JSON.stringify(codes.map((m) => [...m]))}; stderr: ${serves.map((s) => s.stderr()).join('\n')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  try {
    for (const signal of drill.signals) {
      const ok = serves.map((_, i) => count(i, '200'));
      await until('both serve processes are writing', () => serves.every((_, i) => count(i, '200') > ok[i]! + 10));
      const down = serves.map((_, i) => count(i, '503'));
      await drill.down(signal);
      await until(`both met the outage (${signal})`, () => serves.every((_, i) => count(i, '503') > down[i]!));
      await drill.up();
      const back = serves.map((_, i) => count(i, '200'));
      await until(`both recovered after ${signal}`, () => serves.every((_, i) => count(i, '200') > back[i]! + 10));
    }
  } finally {
    stop = true;
    await Promise.all(writers);
  }
  for (const [i, s] of serves.entries()) {
    assert.equal(s.child.exitCode, null, `serve ${i} is alive: ${s.stderr()}`);
    assert.deepEqual([...codes[i]!.keys()].filter((c) => c !== '200' && c !== '503'), [], `serve ${i}: only 200 or 503`);
    assert.doesNotMatch(s.stderr(), /Unhandled 'error' event|^\s+at /m, `serve ${i}: no stack trace`);
  }
  return { codes, acked };
}
