/**
 * Docs that cannot drift: every code block of README.md and docs/*.md marked `<!-- doc-test -->`
 * (on the line before its fence) shows commands (`$ …`, `\` continues a line) each followed by the
 * output it prints. This test runs them on the repository's data (data/ and examples/, also linked
 * by file name, in a temp directory; `neardup` is the built CLI) and compares the numbers of each
 * output line (stdout, then stderr) with the doc's, line by line (a line without numbers, such as a chart row, by its text;
 * a doc line `…` stands for any lines up to the next one shown). Lines of timings (`time …`) and numbers with a time
 * unit are not compared, they vary from run to run; nothing else is left out. A block shows the
 * whole output of its commands (pipe through `head` to show less).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { mainJs, repoRoot, tmpDir } from '../cliUtil.js';
import { JOB_VERSION } from '../../src/shard/files/job.js';

/** One marked block: where it is, and its commands with the output each prints. */
interface DocBlock {
  file: string;
  line: number;
  steps: { command: string; output: string[] }[];
}

/** The marked blocks of a Markdown file. */
export function docBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^<!--\s*doc-test\s*-->\s*$/.test(lines[i]!)) continue;
    const fence = lines[i + 1] ?? '';
    assert.match(fence, /^```/, `${file}:${i + 1}: <!-- doc-test --> must be followed by a code block`);
    const steps: DocBlock['steps'] = [];
    let j = i + 2;
    for (; j < lines.length && !/^```\s*$/.test(lines[j]!); j++) {
      const l = lines[j]!;
      if (l.startsWith('$ ')) {
        let command = l.slice(2);
        while (command.endsWith('\\') && j + 1 < lines.length) command = command.slice(0, -1) + lines[++j]!.trim();
        steps.push({ command, output: [] });
      } else {
        assert.ok(steps.length > 0, `${file}:${j + 1}: output before the first $ command`);
        steps[steps.length - 1]!.output.push(l);
      }
    }
    blocks.push({ file, line: i + 1, steps });
    i = j;
  }
  return blocks;
}

const TIME_UNIT = String.raw`(?:ms|s|µs|min|h|MB/s|docs/s|/s)\b`;

/** The numbers of an output line (thousands separators dropped), without timings; null for a line that is not compared. */
export function numbersOf(line: string): string[] | null {
  if (/^\s*(time|timings)\b/.test(line)) return null;
  const out: string[] = [];
  const re = new RegExp(String.raw`(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?(?!\w)(\s*${TIME_UNIT})?`, 'g');
  for (const m of line.matchAll(re)) {
    if (m[1]) continue;
    out.push(m[0].replace(/,(?=\d{3}\b)/g, ''));
  }
  return out;
}

/** The lines of `text` that are compared, each with its numbers. */
function compared(lines: string[]): { line: string; numbers: string[] }[] {
  const out: { line: string; numbers: string[] }[] = [];
  for (const line of lines) {
    const numbers = numbersOf(line);
    if (numbers) out.push({ line, numbers });
  }
  while (out.length && out[out.length - 1]!.line.trim() === '') out.pop();
  return out;
}

/** Two lines agree: the same numbers, and for a line without numbers (a chart row, a header) the same text. */
const same = (a: { line: string; numbers: string[] }, b: { line: string; numbers: string[] }): boolean =>
  a.numbers.length === b.numbers.length && a.numbers.every((n, i) => n === b.numbers[i]) && (a.numbers.length > 0 || a.line.trim() === b.line.trim());

/**
 * How the run's lines differ from the doc's, or undefined when they agree: the same lines with the
 * same numbers, where a doc line `…` stands for any lines up to the one matching the next doc line.
 */
export function mismatch(expected: { line: string; numbers: string[] }[], actual: { line: string; numbers: string[] }[]): string | undefined {
  let a = 0;
  for (let e = 0; e < expected.length; e++) {
    const want = expected[e]!;
    if (want.line.trim() === '…') {
      const next = expected[e + 1];
      if (!next) return undefined;
      while (a < actual.length && !same(actual[a]!, next)) a++;
      if (a >= actual.length) return `no line after … has the numbers of "${next.line}"`;
      continue;
    }
    if (a >= actual.length) return `the run printed fewer lines: nothing for "${want.line}"`;
    if (!same(actual[a]!, want)) return `line ${e + 1} differs: doc "${want.line}", run "${actual[a]!.line}"`;
    a++;
  }
  return a < actual.length ? `the run printed more lines, from "${actual[a]!.line}"` : undefined;
}

function workDir(): { dir: string; bin: string } {
  const dir = tmpDir();
  for (const sub of ['data', 'examples']) {
    fs.symlinkSync(path.join(repoRoot, sub), path.join(dir, sub));
    for (const f of fs.readdirSync(path.join(repoRoot, sub))) {
      if (!fs.existsSync(path.join(dir, f))) fs.symlinkSync(path.join(repoRoot, sub, f), path.join(dir, f));
    }
  }
  const bin = path.join(dir, '.bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'neardup'), `#!/bin/sh\nexec "${process.execPath}" "${mainJs}" "$@"\n`, { mode: 0o755 });
  return { dir, bin };
}

const files = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const blocks = files.flatMap((f) => docBlocks(f, fs.readFileSync(path.join(repoRoot, f), 'utf8')));

test('the doc-test blocks are found (README.md and docs/)', () => {
  assert.ok(blocks.length >= 10, `${blocks.length} marked blocks`);
  for (const b of blocks)
    assert.ok(b.steps.length > 0 && b.steps.some((s) => s.output.length > 0), `${b.file}:${b.line}: a marked block shows a command and its output`);
});

test("docs/distributed.md's title names the job format the code writes", () => {
  const title = fs.readFileSync(path.join(repoRoot, 'docs/distributed.md'), 'utf8').split('\n')[0]!;
  assert.match(title, new RegExp(`\\(job format version ${JOB_VERSION}\\)$`), title);
});

test('numbersOf: separators and timings', () => {
  assert.deepEqual(numbersOf('candidates  11,018 of 2,627 docs, P(0.8) = 0.9923'), ['11018', '2627', '0.8', '0.9923']);
  assert.deepEqual(numbersOf('read 75 ms · shingle 1.2 s · 10,360 pairs'), ['10360']);
  assert.equal(numbersOf('time        read 75 ms'), null);
  const lines = (xs: string[]) => xs.map((line) => ({ line, numbers: numbersOf(line)! }));
  assert.equal(mismatch(lines(['a 1', '…', 'b 3']), lines(['a 1', 'x 2', 'y', 'b 3'])), undefined);
  assert.match(mismatch(lines(['a 1', 'b 3']), lines(['a 1', 'b 4']))!, /line 2 differs/);
  assert.match(mismatch(lines(['a 1']), lines(['a 1', 'b 4']))!, /more lines/);
});

for (const block of blocks) {
  test(`${block.file}:${block.line}: the commands print the numbers the doc shows`, () => {
    const { dir, bin } = workDir();
    try {
      for (const step of block.steps) {
        // The doc shows stdout, then stderr (the summary comes last): in a terminal they interleave
        // in whatever order the pipes flush.
        const r = spawnSync('bash', ['-c', step.command], {
          cwd: dir,
          env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, NEARDUP_PROGRESS: 'never', NEARDUP_DEBUG: '', COLUMNS: '100' },
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        });
        const actual = compared((r.stdout + r.stderr).split('\n'));
        const expected = compared(step.output);
        const show = `${block.file}:${block.line}: $ ${step.command}\n--- doc\n${expected.map((e) => e.line).join('\n')}\n--- run\n${
          actual.map((a) => a.line).join('\n')
        }`;
        const problem = mismatch(expected, actual);
        assert.equal(problem, undefined, `${problem}\n${show}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
