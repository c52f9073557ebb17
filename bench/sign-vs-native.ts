/**
 * Signing speed against a native reference binary, side by side on the same file: our fused signer
 * (`createTextSigner().signInto`, default options: char 5-shingles, default normalization, OPH 128)
 * over every line of a one-document-per-line file held in memory, and the native program given by
 * `--native` (it prints `MB/s=…`), alternating, `--rounds` times each. File reading is excluded on
 * both sides. MB = 10^6 bytes of the file.
 *
 * Usage: node dist/bench/sign-vs-native.js --file bench/data/d100k.txt --native /tmp/oph_floor [--rounds 3]
 * @module
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { createTextSigner } from '../src/sketch/textSigner.js';

const argv = process.argv.slice(2);
const opt = (name: string, def?: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : def;
};
const file = opt('file', 'bench/data/d100k.txt')!;
const native = opt('native');
const rounds = Number(opt('rounds', '3'));
const buf = readFileSync(file);
const lines = buf.toString('utf8').split('\n');
if (lines.at(-1) === '') lines.pop();
const signer = createTextSigner();
const out = new Uint32Array(signer.numPerm);
for (const l of lines) signer.signInto(l, out); // warm-up (JIT, symbol tables)
console.log(`${file}: ${lines.length} docs, ${(buf.length / 1e6).toFixed(1)} MB; load average ${loadavg()[0]!.toFixed(2)}`);
for (let r = 0; r < rounds; r++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const l of lines) signer.signInto(l, out);
  const wall = buf.length / 1e6 / ((performance.now() - t0) / 1000);
  const used = process.cpuUsage(c0);
  const cpu = buf.length / 1e6 / ((used.user + used.system) / 1e6);
  let nat = '';
  if (native) {
    const res = spawnSync('/usr/bin/time', ['-f', '%U %S', native, file], { encoding: 'utf8' });
    const m = /MB\/s=([\d.]+)/.exec(res.stdout);
    // CPU seconds of the whole native process (its file read included: a slight advantage to us).
    const [u, s] = res.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
    const natCpu = buf.length / 1e6 / (u + s);
    nat = m
      ? ` | native ${m[1]} MB/s wall, ${natCpu.toFixed(1)} per CPU-second → ratio ${(wall / Number(m[1])).toFixed(2)} wall, ${(cpu / natCpu).toFixed(2)} CPU`
      : ` | native failed: ${res.stderr.trim()}`;
  }
  console.log(`round ${r + 1}: ours ${wall.toFixed(1)} MB/s wall, ${cpu.toFixed(1)} MB/s per CPU-second${nat}`);
}
console.log(`load average at end ${loadavg()[0]!.toFixed(2)}`);
