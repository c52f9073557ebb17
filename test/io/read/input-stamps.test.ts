/**
 * src/io/read/inputStamps.ts: a run whose input changes while it reads it puts no output in place.
 * Enumerated over the commands that read record files and write outputs (`dedup` on each of its
 * routes, `spans` with each kind of unit) × each output option each defines (found in its own
 * option definitions) × inputs of each layout (one JSONL file, a TSV file, a directory of shards).
 * The input is touched (a second added to its modification time, as an edit would) when the run
 * first checks its inputs, which is before its first output is put in place: every case exits 1
 * naming the file, no output exists (a directory of output shards may, empty) and no temp file is left; the same case untouched exits 0 and
 * writes its outputs (so the refusal is not for another reason). The library's `dedupFile` and
 * `dedupSpansFile` are refused the same way, and a file changed between two runs of one process
 * is not the second run's problem. Touched cases alternate between the run the CLI binary makes (the process's
 * one run, `oneRunPerProcess`) and the one per call of a process that may run several.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { tmpDir } from '../../cliUtil.js';
import { createProgram, runProgram } from '../../../src/cli/program.js';
import { dedupCommand } from '../../../src/cli/dedup/command.js';
import { spansCommand } from '../../../src/cli/spans/command.js';
import { installFaultHooks } from '../../../src/common/faults.js';
import { oneRunPerProcess } from '../../../src/io/read/inputStamps.js';
import { dedupFile, dedupSpansFile, InputChangedError } from '../../../src/index.js';

const READ_OPTIONS = new Set(['--against', '--work-dir']);

/** The output options of a command, from its definitions. */
function outputOptions(cmd: Command): string[] {
  return cmd.options.filter((o) => /<(file|dir)>/.test(o.flags) && !READ_OPTIONS.has(o.long!)).map((o) => o.long!);
}

/** `wholeProcess`: the run as the CLI binary makes it, the process's one run, without AsyncLocalStorage. */
async function cli(args: string[], wholeProcess = false): Promise<{ code: number; stderr: string }> {
  const program = createProgram().addCommand(dedupCommand()).addCommand(spansCommand());
  if (wholeProcess) oneRunPerProcess();
  let stderr = '';
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const code = await runProgram(program, ['node', 'neardup', ...args], sink);
  return { code, stderr };
}

const line = 'We use cookies to improve your experience.';
function text(i: number): string {
  return `${line}\nthe quick brown fox number ${i % 5} jumps over the lazy dog and runs far away into the hills ${i % 5}\nunique line ${i}`;
}

/** Every file below `dir` (temp files included: none may be left). */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

describe('an input changed while the run reads it: no output is put in place', () => {
  let root: string;
  const inputs: Record<string, { arg: string; read: string[]; extra: string[] }> = {};
  let touch = false;
  let touched = 0;
  let n = 0;

  before(() => {
    root = fs.realpathSync(tmpDir());
    fs.mkdirSync(path.join(root, 'out'));
    const jsonl = path.join(root, 'in.jsonl');
    fs.writeFileSync(jsonl, Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `d${i}`, text: text(i) }) + '\n').join(''));
    const tsv = path.join(root, 'in.tsv');
    fs.writeFileSync(tsv, 'id\ttext\n' + Array.from({ length: 40 }, (_, i) => `t${i}\t${text(i).replace(/\n/g, ' ')}\n`).join(''));
    const shards = path.join(root, 'shards');
    fs.mkdirSync(shards);
    const parts = [0, 1, 2].map((s) => path.join(shards, `part-000${s}.jsonl`));
    parts.forEach((f, s) => fs.writeFileSync(f, Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `s${s}-${i}`, text: text(i + s) }) + '\n').join('')));
    inputs.jsonl = { arg: jsonl, read: [jsonl], extra: ['--id-field', 'id'] };
    inputs.tsv = { arg: tsv, read: [tsv], extra: ['--id', 'id', '--text', 'text'] };
    inputs.shards = { arg: shards, read: parts, extra: ['--id-field', 'id'] };
    installFaultHooks({
      beforeInputCheck: (files) => {
        if (!touch || touched > 0) return;
        touched++;
        const st = fs.statSync(files[0]!);
        fs.utimesSync(files[0]!, st.atime, new Date(st.mtimeMs + 1000));
      },
    });
  });
  after(() => installFaultHooks({ beforeInputCheck: undefined }));

  const fresh = (ext: string): string => path.join(root, 'out', `o${n++}${ext}`);

  /** The output arguments of `option` for `cmd` (with the mode it needs), and the paths they name. */
  function outputArgs(cmd: 'dedup' | 'spans', option: string, layout: string): { args: string[]; paths: string[] } {
    const dir = layout === 'shards';
    const main = dir ? fresh('') : fresh(layout === 'tsv' ? '.tsv' : '.jsonl');
    const target = dir && cmd === 'dedup' ? ['--out-dir', main] : ['--out', main];
    if (cmd === 'dedup') {
      if (option === '--out')
        return dir
          ? { args: ['--output', 'pairs', '--out', main + '.tsv'], paths: [main + '.tsv'] }
          : { args: ['--output', 'pairs', '--out', main], paths: [main] };
      if (option === '--out-dir') return dir ? { args: ['--output', 'dedup', ...target], paths: [main] } : { args: [], paths: [] };
      if (option === '--removed') {
        const audit = fresh('.tsv');
        return { args: ['--output', 'dedup', ...target, '--removed', audit], paths: [main, audit] };
      }
    } else {
      if (option === '--out') return { args: target, paths: [main] };
      if (option === '--removed') {
        const audit = fresh('.tsv');
        return { args: [...target, '--removed', audit], paths: [main, audit] };
      }
    }
    throw new Error(`${cmd}: an output option this test does not know: ${option} (add it to outputArgs)`);
  }

  const routes: { cmd: 'dedup' | 'spans'; route: string[] }[] = [
    { cmd: 'dedup', route: [] },
    { cmd: 'dedup', route: ['--stream'] },
    { cmd: 'dedup', route: ['--no-stream'] },
    { cmd: 'dedup', route: ['--exact'] },
    { cmd: 'spans', route: ['--unit', 'line'] },
    { cmd: 'spans', route: ['--unit', 'paragraph'] },
    { cmd: 'spans', route: ['--unit', 'substring', '--min-length', '8'] },
    { cmd: 'spans', route: ['--unit', 'substring', '--length-unit', 'bytes', '--min-length', '30'] },
  ];

  it('the commands define the output options this test enumerates', () => {
    assert.deepEqual(outputOptions(dedupCommand()).sort(), ['--out', '--out-dir', '--removed']);
    assert.deepEqual(outputOptions(spansCommand()).sort(), ['--out', '--removed']);
  });

  for (const { cmd, route } of routes) {
    for (const layout of ['jsonl', 'tsv', 'shards']) {
      it(`${cmd} ${route.join(' ')} (${layout}): touched while read, exit 1 naming it and nothing in place; untouched, the outputs`, async () => {
        const input = inputs[layout]!;
        const command = cmd === 'dedup' ? dedupCommand() : spansCommand();
        let cases = 0;
        for (const option of outputOptions(command)) {
          for (const touchIt of [false, true]) {
            const out = outputArgs(cmd, option, layout);
            if (out.args.length === 0) continue;
            const before = filesUnder(path.join(root, 'out')).length;
            touch = touchIt;
            touched = 0;
            // Touched cases alternate between the two ways a run keeps its stamps.
            const r = await cli([cmd, input.arg, ...input.extra, ...route, ...out.args, '-q'], touchIt && cases % 2 === 1);
            touch = false;
            const what = `${cmd} ${route.join(' ')} ${layout} ${option} ${touchIt ? 'touched' : 'untouched'}`;
            if (!touchIt) {
              assert.equal(r.code, 0, `${what}: ${r.stderr}`);
              for (const p of out.paths) assert.ok(fs.existsSync(p), `${what}: ${p} written`);
              continue;
            }
            assert.equal(touched, 1, `${what}: the run checked its inputs`);
            assert.equal(r.code, 1, `${what}: ${r.stderr}`);
            assert.match(r.stderr, /changed while it was being read/, what);
            assert.ok(input.read.some((f) => r.stderr.includes(f)), `${what}: names the file: ${r.stderr}`);
            assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
            // A directory of output shards may stay, empty: no shard and no _SUCCESS in it.
            for (const p of out.paths)
              assert.ok(!fs.existsSync(p) || (fs.statSync(p).isDirectory() && filesUnder(p).length === 0), `${what}: ${p} is not in place`);
            assert.equal(filesUnder(path.join(root, 'out')).length, before, `${what}: no file left behind`);
            cases++;
          }
        }
        assert.ok(cases >= 2, `${cases} cases`);
      });
    }
  }

  it('dedupFile and dedupSpansFile reject with InputChangedError and write nothing', async () => {
    for (
      const run of [
        (out: string) => dedupFile(inputs.jsonl!.arg, out, { read: { fields: { id: 'id' } } }),
        (out: string) => dedupSpansFile(inputs.jsonl!.arg, { out, read: { fields: { id: 'id' } } }),
      ]
    ) {
      const out = fresh('.jsonl');
      touch = true;
      touched = 0;
      await assert.rejects(run(out), (e: unknown) => e instanceof InputChangedError && e.file === inputs.jsonl!.arg);
      touch = false;
      assert.ok(!fs.existsSync(out));
      await run(out);
      assert.ok(fs.existsSync(out));
    }
  });

  it('a file changed between two runs of one process is not the second run’s problem', async () => {
    const input = inputs.jsonl!;
    for (let i = 0; i < 4; i++) {
      const r = await cli(['spans', input.arg, ...input.extra, '--out', fresh('.jsonl'), '-q'], i >= 2);
      assert.equal(r.code, 0, r.stderr);
      const st = fs.statSync(input.arg);
      fs.utimesSync(input.arg, st.atime, new Date(st.mtimeMs + 1000));
    }
  });
});
