/**
 * Line-format files read by the workers in byte ranges (dedup/rangedSource.ts) give exactly what a
 * sequential read gives: the same texts, rows, lines, ids, skipped records and errors, and the same
 * dedup result, wherever the ranges are cut (line endings, blank lines, byte-order marks, long lines,
 * invalid records, any range size) and for any worker count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, readFileSync, utimesSync, mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { dedupStream } from '../../src/dedup/streamDedup.js';
import type { ShingleOptions } from '../../src/text/shingler.js';
import type { RangedSource } from '../../src/dedup/rangedSource.js';
import { openInput } from '../../src/io/read/read.js';
import { parseLineBlock, planLineRanges, rangeableFormat, type LineFormat } from '../../src/io/ranges/lineRanges.js';
import { closeRangeFiles, textsAt } from '../../src/parallel/rangeJobs.js';
import { neardup, tmpDir } from '../cliUtil.js';
import { CorpusGenerator } from '../../bench/gen.js';

const WORDS = ['\ufeffmark', 'lorem', 'ipsum', 'dolor', 'sit', 'amet', 'Ünïcödé', 'ΣΊΣΥΦΟΣ', 'e\u0301', '😀', 'ﬁ', 'tab\there', '"q"', 'back\\slash'];

/** TSV columns of the generated files. */
const COLUMNS = { id: 'id', text: ['text'] };

/** A document: words from a small vocabulary, so near duplicates are common. */
const docArb = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 14 }).map((w) => w.join(' '));

interface Line {
  /** The line's text as written. */
  raw: string;
  eol: '\n' | '\r\n';
}

/** Renders one document as a line of `format` (undefined: an invalid record of that format). */
function lineOf(format: LineFormat, doc: string, i: number, invalid: boolean): string {
  if (format === 'jsonl') return invalid ? `{"id": ${i}, "text": ` : JSON.stringify({ id: `d${i}`, text: doc, n: i });
  if (format === 'idtext') return invalid ? `no-tab-${i}` : `d${i}\t${doc}`;
  if (format === 'tsv') return invalid ? `d${i}\tone\ttoo many` : `d${i}\t${doc.replace(/\t/g, ' ')}`;
  return doc.replace(/\t/g, ' ');
}

const caseArb = fc.record({
  format: fc.constantFrom<LineFormat>('jsonl', 'text', 'idtext', 'tsv'),
  docs: fc.array(fc.record({ doc: docArb, crlf: fc.boolean(), blank: fc.boolean(), invalid: fc.integer({ min: 0, max: 19 }) }), {
    minLength: 1,
    maxLength: 40,
  }),
  bom: fc.boolean(),
  finalEol: fc.boolean(),
  chunkBytes: fc.integer({ min: 1, max: 400 }),
  skipInvalid: fc.boolean(),
  threshold: fc.constantFrom(0.3, 0.5, 0.8),
});

interface Case {
  format: LineFormat;
  docs: { doc: string; crlf: boolean; blank: boolean; invalid: number }[];
  bom: boolean;
  finalEol: boolean;
  skipInvalid: boolean;
}

function writeCase(dir: string, c: Case): string {
  const lines: Line[] = [];
  // TSV: blank lines may come before the header, which is the first non-empty line.
  if (c.format === 'tsv') {
    if (c.docs[0]!.blank) lines.push({ raw: '', eol: '\n' });
    lines.push({ raw: 'id\ttext', eol: c.docs[0]!.crlf ? '\r\n' : '\n' });
  }
  c.docs.forEach((d, i) => {
    // Blank lines are records of their own in text; in JSONL and id⇥text they are ignored.
    if (d.blank) lines.push({ raw: '', eol: d.crlf ? '\r\n' : '\n' });
    const invalid = c.skipInvalid && c.format !== 'text' && d.invalid === 0;
    let raw = lineOf(c.format, d.doc, i, invalid);
    // A line with a byte that is not UTF-8 (BEL here, 0xFF in the file): skipped as invalid UTF-8.
    if (c.skipInvalid && d.invalid === 1) raw = raw.replace(/(text":"|\t|^)/, '$1\u0007');
    lines.push({ raw, eol: d.crlf ? '\r\n' : '\n' });
  });
  let body = lines.map((l, i) => l.raw + (i < lines.length - 1 || c.finalEol ? l.eol : '')).join('');
  if (c.bom) body = '\ufeff' + body;
  const file = join(dir, `docs.${c.format === 'text' ? 'txt' : c.format}`);
  writeFileSync(file, Buffer.from(body, 'utf8').map((b) => (b === 7 ? 0xff : b)));
  return file;
}

/** What a sequential read gives. */
async function sequential(file: string, format: LineFormat, skipInvalid: boolean) {
  const input = await openInput(file, { format, skipInvalid, columns: COLUMNS });
  const texts: string[] = [];
  const rows: number[] = [];
  const lines: number[] = [];
  const ids: (string | undefined)[] = [];
  for await (const r of input.records) {
    texts.push(r.text);
    rows.push(r.row);
    lines.push(r.line);
    ids.push(r.id);
  }
  return { texts, rows, lines, ids, skipped: input.skips.count, examples: input.skips.examples.map((e) => e.message), bom: input.bom ?? false };
}

/** Runs dedupStream over the file as a ranged source and collects what it reports per record. */
async function ranged(file: string, format: LineFormat, skipInvalid: boolean, chunkBytes: number, threshold: number, workers: number) {
  const rows: number[] = [];
  const lines: number[] = [];
  const ids: (string | undefined)[] = [];
  let skipped = 0;
  const examples: string[] = [];
  let bom = false;
  let ended: boolean | undefined;
  const source: RangedSource = {
    kind: 'ranges',
    spec: { path: file, name: file, format, skipInvalid, columns: COLUMNS },
    chunkBytes,
    onRecords: (r) => {
      for (let i = 0; i < r.count; i++) {
        rows.push(r.rows[i]!);
        lines.push(r.lines[i]!);
        ids.push(r.ids?.[i]);
      }
      skipped += r.skipped;
      examples.push(...r.examples.map((e) => e.message));
      bom ||= r.bom;
    },
    onEnd: (ok) => (ended = ok),
  };
  const result = await dedupStream(source, { threshold, workers, batchSize: 7 });
  return { result, rows, lines, ids, skipped, examples: examples.slice(0, 5), bom, ended };
}

test("property: a ranged read gives the sequential read's records and the same dedup result, for any cut", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const file = writeCase(dir, c);
        const want = await sequential(file, c.format, c.skipInvalid);
        // Every eighth case on two worker threads, the rest on this thread (same code, cheaper).
        const workers = run++ % 8 === 0 ? 2 : 0;
        const got = await ranged(file, c.format, c.skipInvalid, c.chunkBytes, c.threshold, workers);
        assert.deepEqual(got.rows, want.rows, 'rows');
        assert.deepEqual(got.lines, want.lines, 'lines');
        assert.deepEqual(got.ids, want.ids, 'ids');
        assert.equal(got.skipped, want.skipped, 'skipped');
        assert.deepEqual(got.examples, want.examples, 'skip messages');
        assert.equal(got.bom, want.bom, 'byte-order mark');
        assert.equal(got.ended, true);
        const ref = await dedupStream(() => [want.texts], { threshold: c.threshold, workers: 0 });
        assert.equal(got.result.stats.docs, want.texts.length);
        assert.deepEqual(got.result.pairs, ref.pairs, 'pairs');
        assert.deepEqual(got.result.clusters, ref.clusters, 'clusters');
      }),
      { numRuns: 160, seed: 20261124 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an invalid record in a later range fails with the sequential read's message and line", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    for (
      const [format, bad] of [
        ['tsv', 'a\tb\tc'],
        ['jsonl', '{"text": "x"'],
        ['jsonl', '{"title": "no text field"}'],
        ['idtext', 'no tab on this line'],
      ] as const
    ) {
      const good = (i: number) => (format === 'jsonl' ? JSON.stringify({ text: `document number ${i} about lorem ipsum` }) : `id${i}\tdocument number ${i}`);
      const lines = Array.from({ length: 300 }, (_, i) => (i === 211 ? bad : i === 0 && format === 'tsv' ? 'id\ttext' : good(i)));
      const file = join(dir, `bad.${format}`);
      writeFileSync(file, lines.join('\n') + '\n');
      const want = await sequential(file, format, false).then(
        () => assert.fail('the sequential read accepted the bad line'),
        (e: Error) => e.message,
      );
      assert.match(want, /:212: /);
      for (const workers of [0, 2]) {
        await assert.rejects(ranged(file, format, false, 512, 0.5, workers), (e: Error) => {
          assert.equal(e.message, want);
          assert.equal(e.name, 'InputError');
          return true;
        });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verification refuses a file that changed after the first pass', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    const file = join(dir, 'docs.txt');
    const doc = 'the same words in every line of this small file';
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => `${doc} ${i % 3}`).join('\n') + '\n');
    for (const workers of [0, 2]) {
      const source: RangedSource = {
        kind: 'ranges',
        spec: { path: file, name: file, format: 'text', skipInvalid: false },
        chunkBytes: 300,
        // Pass 1 is over: change the file under the pipeline before it verifies.
        onEnd: () => {
          writeFileSync(file, readFileSync(file, 'utf8').replace('same', 'SAME'));
          utimesSync(file, new Date(), new Date(Date.now() + 5000));
        },
      };
      await assert.rejects(dedupStream(source, { threshold: 0.5, workers }), /changed while it was being read/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('planLineRanges: ranges tile the file and end after a newline, lines longer than the read window included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    const file = join(dir, 'long.txt');
    const long = 'x'.repeat(150_000);
    const body = ['short', long, 'a', '', long + 'y', 'tail without newline'].join('\n');
    writeFileSync(file, body);
    const bytes = readFileSync(file);
    for (const chunk of [1, 2, 1000, 70_000, 1 << 20]) {
      const { ranges, stamp } = planLineRanges(file, chunk);
      assert.equal(stamp.size, bytes.length);
      assert.equal(ranges[0]!.start, 0);
      assert.equal(ranges.at(-1)!.end, bytes.length);
      for (let i = 0; i < ranges.length; i++) {
        const r = ranges[i]!;
        assert.ok(r.end > r.start, `range ${i} is empty`);
        if (i > 0) assert.equal(r.start, ranges[i - 1]!.end);
        if (i < ranges.length - 1) assert.equal(bytes[r.end - 1], 10, `range ${i} (chunk ${chunk}) does not end after a newline`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rangeableFormat: only plain, uncompressed line-format files (TSV without quotes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    const w = (name: string, body: string | Buffer) => {
      writeFileSync(join(dir, name), body);
      return join(dir, name);
    };
    assert.equal(rangeableFormat(w('a.jsonl', '{"text":"x"}\n'), 'auto'), 'jsonl');
    assert.equal(rangeableFormat(w('a.txt', 'x\n'), 'auto'), 'text');
    assert.equal(rangeableFormat(w('a.data', '\ufeff{"text":"x"}\n'), 'auto'), 'jsonl', 'sniffed after the byte-order mark');
    assert.equal(rangeableFormat(w('b.data', 'a\tb\n'), 'auto'), 'tsv', 'sniffed as TSV');
    assert.equal(rangeableFormat(join(dir, 'b.data'), 'auto', true), undefined, 'TSV read with quotes spans lines');
    assert.equal(rangeableFormat(w('c.data', 'plain words\n'), 'auto'), 'text');
    assert.equal(rangeableFormat(w('d.data', 'plain words\n'), 'idtext'), 'idtext');
    assert.equal(rangeableFormat(w('a.tsv', 'text\nx\n'), 'auto'), 'tsv');
    assert.equal(rangeableFormat(join(dir, 'a.tsv'), 'auto', true), undefined);
    assert.equal(rangeableFormat(w('a.csv', 'text\nx\n'), 'auto'), undefined);
    assert.equal(rangeableFormat(w('a.jsonl.gz', gzipSync('{"text":"x"}\n')), 'auto'), undefined);
    assert.equal(rangeableFormat(w('gz-named-plain.jsonl', gzipSync('{"text":"x"}\n')), 'auto'), undefined, 'gzip by its bytes');
    assert.equal(rangeableFormat(w('z.jsonl', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0])), 'auto'), undefined, 'zstd by its bytes');
    assert.equal(rangeableFormat('-', 'jsonl'), undefined);
    mkdirSync(join(dir, 'sub'));
    assert.equal(rangeableFormat(join(dir, 'sub'), 'auto'), undefined);
    assert.equal(rangeableFormat(join(dir, 'missing.jsonl'), 'auto'), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: --stream over JSONL/text/TSV gives the --no-stream output, warnings and id errors', () => {
  const dir = tmpDir();
  try {
    const docs = Array.from({ length: 400 }, (_, i) => `listing ${i % 40} bright flat near the station with ${i % 7} rooms and a balcony`);
    const files = {
      jsonl: join(dir, 'd.jsonl'),
      txt: join(dir, 'd.txt'),
      tsv: join(dir, 'd.tsv'),
    };
    writeFileSync(files.tsv, '\n' + ['key\tbody', ...docs.map((t, i) => (i === 201 ? `k${i}\tragged\trow` : `k${i}\t${t}`))].join('\r\n') + '\r\n');
    writeFileSync(files.jsonl, docs.map((t, i) => (i === 77 ? '{"id": "x77", "text": 5}' : JSON.stringify({ id: `x${i}`, text: t }))).join('\r\n') + '\r\n');
    writeFileSync(files.txt, docs.join('\n'));
    for (
      const [file, extra] of [
        [files.jsonl, ['--id-field', 'id', '--skip-invalid']],
        [files.txt, []],
        [files.tsv, ['--text', 'body', '--id', 'key', '--skip-invalid']],
      ] as const
    ) {
      for (const output of ['pairs', 'clusters']) {
        const a = neardup(['dedup', file, ...extra, '--output', output, '--stream', '-k', '4', '--threshold', '0.6', '-v'], { cwd: dir });
        const b = neardup(['dedup', file, ...extra, '--output', output, '--no-stream', '-k', '4', '--threshold', '0.6'], { cwd: dir });
        assert.equal(a.code, 0, a.stderr);
        assert.equal(b.code, 0, b.stderr);
        assert.match(a.stderr, /in byte ranges/);
        assert.equal(a.stdout, b.stdout);
        const warn = (s: string) => s.split('\n').filter((l) => /invalid/.test(l));
        assert.deepEqual(warn(a.stderr), warn(b.stderr));
      }
    }
    // A duplicate id far into the file: the same message, with both lines, either way.
    const dup = join(dir, 'dup.jsonl');
    writeFileSync(dup, docs.map((t, i) => JSON.stringify({ id: i === 350 ? 'x12' : `x${i}`, text: t })).join('\n') + '\n');
    const s = neardup(['dedup', dup, '--id-field', 'id', '--stream'], { cwd: dir });
    const m = neardup(['dedup', dup, '--id-field', 'id', '--no-stream'], { cwd: dir });
    assert.equal(s.code, 2);
    assert.equal(m.code, 2);
    assert.match(s.stderr, /dup\.jsonl:351: duplicate id "x12" \(first on line 13\)/);
    assert.equal(s.stderr.split('\n').find((l) => /duplicate id/.test(l)), m.stderr.split('\n').find((l) => /duplicate id/.test(l)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: plain line files from 16 MB take the ranged route by default, with the in-memory output; too many pairs fall back to memory', async () => {
  const dir = tmpDir();
  try {
    const gen = new CorpusGenerator(11);
    const lines: string[] = [];
    let bytes = 0;
    // ~17 MB of ~1.5 KB documents, every fifth an edited copy of the one before.
    for (let i = 0; bytes < 17e6; i++) {
      const copy = i % 5 === 4;
      const words = copy ? gen.edit(gen.original(i - 1), 0.03, i) : gen.original(i);
      const line = JSON.stringify({ id: `doc-${i}`, text: gen.render(words, copy ? i - 1 : i) });
      lines.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
    const file = join(dir, 'big.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const base = ['dedup', file, '--id-field', 'id', '-k', '5', '--threshold', '0.8'];
    const mem = neardup([...base, '--output', 'clusters', '--no-stream', '-v'], { cwd: dir });
    assert.equal(mem.code, 0, mem.stderr);
    assert.doesNotMatch(mem.stderr, /byte ranges/);
    const def = neardup([...base, '--output', 'clusters', '-v'], { cwd: dir });
    assert.equal(def.code, 0, def.stderr);
    assert.match(def.stderr, /read .*big\.jsonl themselves, in byte ranges/);
    assert.ok(def.stdout.length > 0 && def.stdout === mem.stdout, 'the ranged route changed the clusters');
    // Fewer allowed pairs than there are candidates: the streamed route cannot cluster bucket by
    // bucket, so the run reads the texts into memory and gives --no-stream's clusters.
    // (The cluster removal rule only: the default verified rule needs every pair, and says so.)
    const verified = neardup([...base, '--output', 'clusters', '--max-pairs', '50'], { cwd: dir });
    assert.equal(verified.code, 2, verified.stderr);
    assert.match(verified.stderr, /--removal cluster/);
    const capped = neardup([...base, '--output', 'clusters', '--max-pairs', '50', '-v', '--removal', 'cluster'], { cwd: dir });
    const cappedMem = neardup([...base, '--output', 'clusters', '--max-pairs', '50', '--no-stream', '--removal', 'cluster'], { cwd: dir });
    assert.equal(capped.code, 0, capped.stderr);
    assert.match(capped.stderr, /reading the texts into memory instead/);
    assert.equal(capped.stdout, cappedMem.stdout);
    // No workers: this thread reads the ranges, same clusters. --limit: in memory.
    const one = neardup([...base, '--workers', '0', '-v', '--output', 'clusters'], { cwd: dir });
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stderr, /this thread reads .*big\.jsonl in byte ranges/);
    assert.equal(one.stdout, mem.stdout);
    const limited = neardup([...base, '--limit', '2000', '-v', '--output', 'clusters'], { cwd: dir });
    assert.equal(limited.code, 0, limited.stderr);
    assert.doesNotMatch(limited.stderr, /byte ranges/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a pipeline that fails while its workers are busy closes its pool and settles, every time', async () => {
  // Terminating busy workers sometimes left terminate() pending with nothing keeping the event
  // loop alive (the test runner then cancels the test): WorkerPool.close lets running jobs finish.
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    const file = join(dir, 'bad.jsonl');
    const lines = Array.from({ length: 300 }, (_, i) => (i === 211 ? '{"text": "x"' : JSON.stringify({ text: `document number ${i} about lorem ipsum` })));
    writeFileSync(file, lines.join('\n') + '\n');
    for (let round = 0; round < 25; round++) {
      const source: RangedSource = { kind: 'ranges', spec: { path: file, name: file, format: 'jsonl', skipInvalid: false }, chunkBytes: 512 };
      await assert.rejects(dedupStream(source, { threshold: 0.5, workers: 2, batchSize: 7 }), /:212: invalid JSON/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: a streamed run that meets bad input while its workers are busy exits 2 with the message, every time', async () => {
  // Before WorkerPool.close waited for running jobs, such runs sometimes ended with exit 13 (an
  // unsettled await, no message) or a stack trace from the pool.
  const { gzipSync } = await import('node:zlib');
  const dir = tmpDir();
  try {
    const gen = new CorpusGenerator(5);
    const lines = Array.from({ length: 6000 }, (_, i) => JSON.stringify({ text: gen.render(gen.original(i), i) }));
    lines.splice(5000, 0, '{"text": "x"');
    const body = lines.join('\n') + '\n';
    writeFileSync(join(dir, 'bad.jsonl'), body);
    writeFileSync(join(dir, 'bad.jsonl.gz'), gzipSync(body));
    for (const name of ['bad.jsonl', 'bad.jsonl.gz']) {
      for (let round = 0; round < 6; round++) {
        const r = neardup(['dedup', name, '--stream', '--workers', '2', '-q', '--out', 'pairs.tsv'], { cwd: dir });
        assert.equal(r.code, 2, `${name}, round ${round}: exit ${r.code}, stderr: ${r.stderr}`);
        assert.match(r.stderr, /bad\.jsonl(\.gz)?:5001: invalid JSON/);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'a stack trace');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI --memory-budget and --batch-size: the same pairs in more passes over the input; out-of-range values are usage errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-budget-'));
  try {
    const gen = new CorpusGenerator(9);
    const words: Int32Array[] = [];
    const lines: string[] = [];
    for (let i = 0; i < 1500; i++) {
      // Copies 750 documents back: hundreds of sets are held at once.
      words.push(i >= 750 && i % 2 === 0 ? gen.edit(words[i - 750]!, 0.05, i) : gen.original(i));
      lines.push(JSON.stringify({ text: gen.render(words[i]!, 0) }));
    }
    writeFileSync(join(dir, 'docs.jsonl'), lines.join('\n') + '\n');
    const summary = (args: string[]): { pairs: number; passes: number; out: string } => {
      const r = neardup(['dedup', 'docs.jsonl', '--stream', '--out', 'pairs.tsv', '--json', ...args], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout) as { pairs: number; stream: { passes: number } };
      return { pairs: s.pairs, passes: s.stream.passes, out: readFileSync(join(dir, 'pairs.tsv'), 'utf8') };
    };
    const base = summary(['--workers', '0']);
    assert.ok(base.pairs > 100, `${base.pairs} pairs`);
    assert.equal(base.passes, 2);
    for (const workers of ['0', '2']) {
      const small = summary(['--workers', workers, '--memory-budget', '1', '--batch-size', '7']);
      assert.equal(small.out, base.out, `workers ${workers}`);
      assert.ok(small.passes > 2, `workers ${workers}: ${small.passes} passes with a 1 MB budget`);
    }
    for (
      const bad of [
        ['--memory-budget', '0'],
        ['--memory-budget', '1.5'],
        ['--batch-size', '0'],
        ['--batch-size', '-3'],
      ]
    ) {
      const r = neardup(['dedup', 'docs.jsonl', '--stream', ...bad], { cwd: dir });
      assert.equal(r.code, 2, `${bad.join(' ')}: exit ${r.code}`);
      assert.match(r.stderr, new RegExp(`${bad[0]} must be an integer`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('both passes read text, id⇥text, JSONL and TSV lines as bytes exactly as the line readers read them: CR before LF, byte-order mark, every preset, any worker count', async () => {
  // With the `none` preset a CR left at a line's end would be a character of its own: the byte
  // route must drop it as the line reader does. Copies differ by one word, so pairs have
  // similarities below 1 that any changed set would move.
  const dir = mkdtempSync(join(tmpdir(), 'neardup-ranged-'));
  try {
    const gen = new CorpusGenerator(9);
    const base = Array.from({ length: 12 }, (_, i) => gen.render(gen.original(i).subarray(0, 30), 0));
    // A tab inside a text, except in TSV (where it would split the field).
    const textsOf = (tabs: boolean): string[] => base.flatMap((t, i) => [t, `${t} extra${i}`, tabs ? `${t}\t ` : `${t} \u00a0`, `Ünï ${t} ΣΊΣ`]);
    // TSV twice: the text column last (a CR before the LF would end it), and between others.
    const variants = [['text'], ['idtext'], ['jsonl'], ['tsv', 'id\ttext'], ['tsv', 'id\ttext\tmore']] as const;
    for (const [format, header] of variants) {
      const texts = textsOf(format !== 'tsv');
      const lines = texts.map((t, i) =>
        format === 'text'
          ? t
          : format === 'idtext'
          ? `d${i}\t${t}`
          : format === 'jsonl'
          ? JSON.stringify({ text: t })
          : header === 'id\ttext'
          ? `d${i}\t${t}`
          : `d${i}\t${t}\tx`
      );
      if (header) lines.unshift(header);
      const file = join(dir, `docs${lines[0]!.length}.${format === 'text' ? 'txt' : format}`);
      writeFileSync(file, '\ufeff' + lines.join('\r\n') + '\r\n');
      // Word shingles have no arena writer: their byte spans are decoded to strings here.
      const shingles: ShingleOptions[] = [
        ...(['none', 'default', 'lowercase-collapse'] as const).map((preset) => ({ k: 4, normalize: { preset } })),
        { kind: 'word', k: 2, normalize: { preset: 'none' } },
      ];
      for (const shingle of shingles) {
        const preset = `${shingle.kind ?? 'char'} ${shingle.normalize?.preset}`;
        const ref = await dedupStream(() => [texts], { threshold: 0.5, workers: 0, shingle });
        assert.ok(ref.pairs.length > 20, 'the corpus has pairs');
        for (const workers of [0, 2]) {
          const source: RangedSource = { kind: 'ranges', spec: { path: file, name: file, format, skipInvalid: false }, chunkBytes: 512 };
          // A small budget: several passes, so sets are made again and again from the bytes.
          const got = await dedupStream(source, { threshold: 0.5, workers, shingle, batchSize: 5, memoryBudget: 20_000 });
          assert.deepEqual(got.pairs, ref.pairs, `${format} ${header ?? ''}, ${preset}, ${workers} workers`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("textsAt: the texts of any subset of records, read in one span or line by line, are the reader's, for every line format and route", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-texts-'));
  try {
    const gen = new CorpusGenerator(3);
    const docs = Array.from({ length: 60 }, (_, i) => gen.render(gen.original(i).subarray(0, 8 + (i % 5)), 0) + (i % 7 === 0 ? ' Ünï 中文' : ''));
    const files: [LineFormat, string, string | undefined][] = [
      ['text', docs.join('\r\n') + '\n', undefined],
      ['idtext', docs.map((t, i) => `d${i}\t${t}`).join('\n'), undefined],
      // Some JSONL texts with escapes (parsed), some without (bytes), and a repeated name (parsed).
      [
        'jsonl',
        docs.map((t, i) => (i % 4 === 1
          ? JSON.stringify({ text: `${t}\n"q"` })
          : i % 9 === 2
          ? `{"text":"x","text":${JSON.stringify(t)}}`
          : JSON.stringify({ id: i, text: t }))
        ).join('\r\n'),
        undefined,
      ],
      ['tsv', 'id\ttext\tmore\n' + docs.map((t, i) => `d${i}\t${t}\t${i}`).join('\r\n') + '\r\n', 'id\ttext\tmore'],
      ['tsv', 'a\ttext\tb\n' + docs.map((t, i) => `d${i}\t${t}\t${i}`).join('\n') + '\n', 'a\ttext\tb'],
    ];
    for (const [format, body, header] of files) {
      const file = join(dir, `f${files.findIndex((f) => f[1] === body)}.${format}`);
      writeFileSync(file, body);
      const spec = { path: file, name: file, format, skipInvalid: false, header, columns: header === 'a\ttext\tb' ? { text: ['text', 'b'] } : undefined };
      const buf = readFileSync(file);
      const block = await parseLineBlock(buf, spec, 1, true);
      assert.equal(block.records.length, docs.length);
      // Every record (one span), every other one (one span), every 7th (line by line), one record.
      for (const step of [1, 2, 7, 100]) {
        const pick = block.records.map((_, i) => i).filter((i) => i % step === 0);
        const starts = Float64Array.from(pick, (i) => block.starts[i]!);
        const lengths = Int32Array.from(pick, (i) => block.lengths[i]!);
        const got = await textsAt({ spec, starts, lengths, firstLine: 1 });
        const utf8 = new TextDecoder();
        const texts = got.texts.map((t, j) => t ?? utf8.decode(got.bytes!.subarray(got.spans![2 * j]!, got.spans![2 * j + 1]!)));
        assert.deepEqual(texts, pick.map((i) => block.records[i]!.text), `${format} ${header ?? ''}, every ${step}`);
      }
    }
  } finally {
    closeRangeFiles();
    rmSync(dir, { recursive: true, force: true });
  }
});
