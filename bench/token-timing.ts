/**
 * Bearer-token timing (issue 7): median time of 401 answers for wrong tokens that share no prefix
 * with the real one vs. all but its last character, vs. a different length, in process (app.inject).
 * A short-circuiting comparison would answer the long-prefix guesses measurably later.
 *
 *   node dist/bench/token-timing.js [rounds=20000]
 */
import { NearDupIndex } from '../src/index.js';
import { buildApp } from '../src/server/app.js';

const rounds = Number(process.argv[2] ?? 20000);
const token = 'k'.repeat(63) + 'Z';
const app = buildApp(await NearDupIndex.open({}), { token });
const guesses: Record<string, string> = {
  'no common prefix': 'a'.repeat(64),
  'all but the last char': 'k'.repeat(63) + 'Y',
  'different length (8)': 'kkkkkkkk',
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(guesses).map((k) => [k, []]));
for (let i = 0; i < rounds; i++) {
  for (const [name, g] of Object.entries(guesses)) {
    const t0 = process.hrtime.bigint();
    const r = await app.inject({ method: 'GET', url: '/v1/stats', headers: { authorization: `Bearer ${g}` } });
    const dt = Number(process.hrtime.bigint() - t0);
    if (r.statusCode !== 401) throw new Error('expected 401');
    if (i >= rounds / 10) times[name]!.push(dt); // skip warm-up
  }
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
console.log(`# token comparison timing, ${rounds} rounds interleaved (node ${process.version}, ${new Date().toISOString()})`);
for (const [name, xs] of Object.entries(times)) console.log(`| ${name} | median ${(median(xs) / 1000).toFixed(2)} µs per 401 |`);
await app.close();
