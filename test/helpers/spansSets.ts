/**
 * Test helper: the drawn sets of the spans job tests (test/e2e/job-spans.test.ts and
 * test/e2e/spans-collisions.test.ts): corpora with planted repeats written as shards, the options
 * of `neardup spans` drawn for them, the CLI run in this process, and the comparison of a job's
 * outputs with the one-process bytes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { createProgram, runProgram } from '../../src/cli/program.js';
import { jobCommand } from '../../src/cli/job/command.js';
import { stageCommand } from '../../src/cli/job/stage.js';
import { spansCommand } from '../../src/cli/spans/command.js';

/** Runs `neardup ...args` in this process: exit code, stdout (the --json summary) and stderr. */
export async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = createProgram();
  program.addCommand(spansCommand()).addCommand(jobCommand()).addCommand(stageCommand());
  let stderr = '';
  let stdout = '';
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const write = process.stdout.write.bind(process.stdout);
  // The summary is written as a string; the test runner's own reports (buffers) pass through.
  process.stdout.write =
    ((s: string | Uint8Array, ...rest: never[]) => (typeof s === 'string' ? ((stdout += s), true) : write(s, ...rest))) as typeof process.stdout.write;
  try {
    const code = await runProgram(program, ['node', 'neardup', ...args], sink);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = write;
  }
}

/** A small seeded generator (mulberry32), so a failing set is drawn again by its seed. */
export function rng(seed: number): { int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]!, chance: (p) => next() < p };
}

/** Pieces that repeat: case and spacing variants (equal once normalized), CJK, astral, blank, and a long passage whose sentences also occur alone (nested). */
const POOL = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Subscribe to our newsletter!',
  '我喜欢猫。他喜欢狗！',
  'Emoji 😀 here. And 𝒜stral.',
  '   ',
  '',
  'Ünïcödé — ok? Yes.',
  'Copyright 2024 Example Inc. All rights reserved.',
  'The cat sat on the mat. The dog ran home. Accept all cookies.',
  'the cat sat on the mat and the dog ran home',
  // Longer than the walker's first key buffer (256 code units).
  `Long terms: ${'the service is provided as is, '.repeat(12)}end.`,
];
const SEPS = ['\n', '\r\n', '\n\n', '\r\n\r\n', '\n \n', ' '];

/** A corpus of `n` documents: pieces of the pool, unique filler words, repeats inside a document, empty documents and one made only of repeats. */
export function corpus(r: ReturnType<typeof rng>, n: number): string[] {
  const docs: string[] = [];
  for (let d = 0; d < n; d++) {
    if (r.chance(0.05)) {
      docs.push('');
      continue;
    }
    const parts: string[] = [];
    const m = 1 + r.int(6);
    for (let i = 0; i < m; i++) {
      const p = r.chance(0.3) ? `unique ${d} word${i} w${r.int(1000)}` : r.pick(POOL);
      parts.push(p);
      // Adjacent and in-document repeats.
      if (r.chance(0.15)) parts.push(p);
    }
    const last = r.chance(0.5);
    docs.push(parts.map((p, i) => p + (i + 1 < parts.length || last ? r.pick(SEPS) : '')).join(''));
  }
  docs[r.int(n)] = 'Accept all cookies.\r\nSubscribe to our newsletter!\r\nAccept all cookies.\r\n';
  return docs;
}

/** How a set's shards are written: JSONL, CSV (comma or semicolon), TSV with RFC 4180 quotes (`--tsv-quotes`) or Parquet. */
export type Layout = { ids: boolean; invalid: boolean; format: 'jsonl' | 'csv' | 'csv;' | 'tsvq' | 'parquet' };

/** A Parquet shard of `texts` (id, text and a number column), in row groups of 1 to 4 rows; with `invalid`, maybe a text of invalid UTF-8 among them. */
function parquetShard(r: ReturnType<typeof rng>, file: string, docs: { texts: string[]; ids: string[] | undefined; invalid: boolean }): void {
  const { ids } = docs;
  const texts: (string | Uint8Array)[] = [...docs.texts];
  // A record --skip-invalid skips, counted and still a row of the row-number ids.
  if (docs.invalid && r.chance(0.5)) {
    const at = r.int(texts.length + 1);
    texts.splice(at, 0, new Uint8Array([0x41, 0xff, 0x0a, 0x42]));
    ids?.splice(at, 0, `bad${at}`);
  }
  const columnData = [
    ...(ids ? [{ name: 'id', data: ids }] : []),
    { name: 'text', data: texts, type: 'STRING' },
    { name: 'n', data: texts.map((_, i) => i), type: 'INT32' },
  ];
  const codec = r.pick(['UNCOMPRESSED', 'SNAPPY'] as const);
  fs.writeFileSync(file, Buffer.from(parquetWriteBuffer({ columnData: columnData as never, codec, rowGroupSize: 1 + r.int(4) })));
}

/** A delimited record: the text quoted (it may hold line breaks), the id and a number as they are. */
function delimited(d: string, text: string, id: string | undefined, n: number): string {
  const q = `"${text.replace(/"/g, '""')}"`;
  return id !== undefined ? [id, q, n].join(d) : [q, n].join(d);
}

/** Writes the corpus as `shards` shards (a share gzipped) under `dir`, with ids or without, and an extra field whose bytes must stay. */
export function writeCorpus(r: ReturnType<typeof rng>, dir: string, docs: string[], shards: number, o: Layout): void {
  fs.mkdirSync(dir, { recursive: true });
  const per = Math.ceil(docs.length / shards);
  const d = o.format === 'csv' ? ',' : o.format === 'csv;' ? ';' : '\t';
  for (let s = 0; s < shards; s++) {
    if (o.format === 'parquet') {
      const texts = docs.slice(s * per, (s + 1) * per);
      const ids = o.ids ? texts.map((_, i) => `d${s}-${i}`) : undefined;
      parquetShard(r, path.join(dir, `part-${String(s).padStart(2, '0')}.parquet`), { texts, ids, invalid: o.invalid });
      continue;
    }
    const lines = docs.slice(s * per, (s + 1) * per).map((text, i) => {
      if (o.format !== 'jsonl') return delimited(d, text, o.ids ? `d${s}-${i}` : undefined, i);
      return o.ids ? `{"id":"d${s}-${i}", "meta":{"k":[1, 2]},"text":${JSON.stringify(text)}}` : `{"text":${JSON.stringify(text)},"n":${i}}`;
    });
    // A broken record (with --skip-invalid): skipped, counted, and still a row of the row-number ids.
    if (o.invalid && o.format === 'jsonl' && r.chance(0.5)) lines.splice(r.int(lines.length + 1), 0, '{"text": broken');
    if (o.format !== 'jsonl') lines.unshift((o.ids ? ['id', 'text', 'n'] : ['text', 'n']).join(d));
    const body = lines.map((l) => l + (r.chance(0.2) ? '\r\n' : '\n')).join('');
    const name = `part-${String(s).padStart(2, '0')}.${o.format === 'jsonl' ? 'jsonl' : o.format === 'tsvq' ? 'tsv' : 'csv'}`;
    if (r.chance(0.25)) fs.writeFileSync(path.join(dir, `${name}.gz`), zlib.gzipSync(body));
    else fs.writeFileSync(path.join(dir, name), body);
  }
}

/** One drawn option set of `neardup spans` (argv words), and what it writes. */
export interface Drawn {
  args: string[];
  output: 'dedup' | 'annotate' | 'dry';
  removed?: 'tsv' | 'jsonl';
}

export function drawOptions(r: ReturnType<typeof rng>, o: Layout): Drawn {
  const unit = r.pick(['line', 'paragraph', 'sentence', 'substring'] as const);
  const args = ['--unit', unit];
  if (unit === 'sentence' && r.chance(0.7)) args.push('--window', String(1 + r.int(3)));
  const bytes = unit === 'substring' && r.chance(0.4);
  if (unit === 'substring') args.push('--min-length', String(bytes ? 1 + r.int(40) : 1 + r.int(5)));
  if (bytes) args.push('--length-unit', 'bytes');
  if (r.chance(0.4)) args.push('--min-docs', String(1 + r.int(3)));
  if (!bytes && r.chance(0.4)) args.push('--min-unit-words', String(r.int(3)));
  if (r.chance(0.5)) args.push('--min-doc-words', String(r.int(3)));
  if (r.chance(0.3)) args.push('--top', String(r.int(6)));
  if (r.chance(0.2)) args.push('--normalize', r.pick(['none', 'lowercase-collapse']));
  if (o.format === 'jsonl' && o.ids) args.push('--id-field', 'id');
  if (o.format !== 'jsonl') args.push('--text', 'text', ...(o.ids ? ['--id', 'id'] : []));
  if (o.format === 'csv;') args.push('--delimiter', ';');
  if (o.format === 'tsvq') args.push('--tsv-quotes');
  if (o.format === 'csv' && r.chance(0.5)) args.push('--format', r.pick(['csv', 'auto']));
  if (o.invalid) args.push('--skip-invalid');
  const output = r.pick(['dedup', 'dedup', 'annotate', 'dry'] as const);
  if (output === 'annotate') args.push('--output', 'annotate');
  if (output === 'dry') args.push('--dry-run');
  const removed = r.pick([undefined, 'tsv', 'jsonl'] as const);
  return { args, output, removed };
}

/** Every file under `dir` (relative name → bytes). */
export function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.set(path.relative(dir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name)));
  }
  return out;
}

/** The --json summary without its time. */
export function summary(stdout: string): Record<string, unknown> {
  const { seconds: _s, ...rest } = JSON.parse(stdout) as Record<string, unknown>;
  return rest;
}

/** One set: the corpus in `dir`/in, the one-process answer in `dir`/one*. */
export interface Case {
  dir: string;
  drawn: Drawn;
  want: { out: Map<string, Buffer>; audit?: Buffer; summary: Record<string, unknown> };
}

/** Runs `neardup spans` on a drawn set and keeps its answer. */
export async function oneProcess(dir: string, drawn: Drawn): Promise<Case> {
  const audit = drawn.removed ? path.join(dir, `one.${drawn.removed}`) : undefined;
  const r = await cli([
    'spans',
    path.join(dir, 'in'),
    ...drawn.args,
    ...(drawn.output === 'dry' ? [] : ['--out', path.join(dir, 'one')]),
    ...(audit ? ['--removed', audit] : []),
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return { dir, drawn, want: { out: files(path.join(dir, 'one')), audit: audit ? fs.readFileSync(audit) : undefined, summary: summary(r.stdout) } };
}

/** Asserts that a job's outputs (under `tag`) are the one-process bytes. */
export function assertSame(c: Case, tag: string, stdout: string, what: string): void {
  assert.deepEqual([...files(path.join(c.dir, `${tag}-out`)).keys()].sort(), [...c.want.out.keys()].sort(), `${what}: the output files`);
  for (const [name, bytes] of files(path.join(c.dir, `${tag}-out`)))
    assert.ok(bytes.equals(c.want.out.get(name)!), `${what}: ${name} differs\n${bytes.toString()}\n---\n${c.want.out.get(name)!.toString()}`);
  if (c.drawn.removed) assert.equal(fs.readFileSync(path.join(c.dir, `${tag}.${c.drawn.removed}`), 'utf8'), c.want.audit!.toString(), `${what}: the audit`);
  assert.deepEqual(summary(stdout), c.want.summary, `${what}: the summary`);
}

/** The job's own arguments for a set, writing under `tag`. */
export function jobArgs(c: Case, tag: string): string[] {
  return [
    ...c.drawn.args,
    ...(c.drawn.output === 'dry' ? [] : ['--out-dir', path.join(c.dir, `${tag}-out`)]),
    ...(c.drawn.removed ? ['--removed', path.join(c.dir, `${tag}.${c.drawn.removed}`)] : []),
    '--work-dir',
    path.join(c.dir, `${tag}-work`),
    '--json',
  ];
}
