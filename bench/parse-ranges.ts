/**
 * Reading throughput of the ranged route on one core: a file cut into 4 MiB ranges at line ends, each
 * parsed by `parseLineBlock` (what a signing worker does before it signs), for JSONL, text,
 * id⇥text and TSV. The four files hold the same documents: `--text` is one document per line
 * (bench/data/d100k.txt, see RESULTS.md "Corpora"); the JSONL is given by `--jsonl`; the id⇥text
 * and TSV files are written next to the text file on first use. File reading is not timed.
 *
 * Usage: node dist/bench/parse-ranges.js [--text bench/data/d100k.txt] [--jsonl bench/data/d100k.jsonl] [--rounds 3]
 * @module
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseLineBlock, type LineParseSpec } from '../src/io/ranges/lineRanges.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const textFile = opt('text', 'bench/data/d100k.txt');
const jsonlFile = opt('jsonl', 'bench/data/d100k.jsonl');
const rounds = Number(opt('rounds', '3'));
const RANGE = 4 << 20;

const idtextFile = textFile.replace(/\.txt$/, '') + '.idtext';
const tsvFile = textFile.replace(/\.txt$/, '') + '.tsv';
if (!existsSync(idtextFile) || !existsSync(tsvFile)) {
  const lines = readFileSync(textFile, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const idtext = lines.map((l, i) => `d${i}\t${l.replace(/\t/g, ' ')}\n`).join('');
  writeFileSync(idtextFile, idtext);
  writeFileSync(tsvFile, 'id\ttext\n' + idtext);
}

/** The file cut into ranges of about RANGE bytes, each ending after a line break. */
function ranges(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let s = 0; s < buf.length;) {
    const nl = buf.indexOf(10, Math.min(buf.length, s + RANGE) - 1);
    const e = nl === -1 ? buf.length : nl + 1;
    out.push(buf.subarray(s, e));
    s = e;
  }
  return out;
}

console.log(`load average ${loadavg()[0]!.toFixed(2)}`);
const cases: [string, string, Omit<LineParseSpec, 'path' | 'name'>][] = [
  ['jsonl', jsonlFile, { format: 'jsonl', skipInvalid: false }],
  ['text', textFile, { format: 'text', skipInvalid: false }],
  ['id⇥text', idtextFile, { format: 'idtext', skipInvalid: false }],
  ['tsv', tsvFile, { format: 'tsv', header: 'id\ttext', columns: { id: 'id', text: ['text'] }, skipInvalid: false }],
];
for (const [label, file, spec] of cases) {
  const buf = readFileSync(file);
  const parts = ranges(buf);
  const full: LineParseSpec = { path: file, name: file, ...spec };
  const times: number[] = [];
  let docs = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    docs = 0;
    // Ranges after the first read the TSV header first, as the workers do.
    for (let i = 0; i < parts.length; i++) docs += (await parseLineBlock(Buffer.from(parts[i]!), full, 1, i === 0)).records.length;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const best = Math.min(...times);
  console.log(
    `${label.padEnd(8)} ${(buf.length / 1e6).toFixed(1)} MB, ${docs} docs: ${times.map((t) => (buf.length / t / 1e3).toFixed(0)).join(' / ')} MB/s (best ${
      (buf.length / best / 1e3).toFixed(0)
    })`,
  );
}
