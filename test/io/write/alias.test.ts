/**
 * src/io/write/alias.ts, the one check that no output overwrites a file the command reads: enumerated over
 * every command that writes files (`dedup`, `job plan`, `job dedup`, `job report`) × every output
 * option each defines (found in its own option definitions: any `<file>`/`<dir>` option that is not
 * an input) × every file of the read set (each shard of a directory input, each shard of an
 * `--against` directory, the job's planned shards for `job report`), each file named as given and
 * through a symbolic link to its directory. Every case exits 2 naming the option, and the inputs'
 * bytes stay as they were; the same command with a fresh output path runs (the cases are not refused
 * for another reason).
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { dedupCommand } from '../../../src/cli/dedup/command.js';
import { jobCommand } from '../../../src/cli/job/command.js';
import { refuseAliasedOutputs } from '../../../src/io/write/alias.js';
import { UsageError } from '../../../src/common/errors.js';

/** Options with a path argument that name what a command reads (or its work dir), not what it writes. */
const READ_OPTIONS = new Set(['--against', '--work-dir']);

type Layout = 'shards' | 'against';
const COMMANDS = ['dedup', 'job plan', 'job dedup', 'job report'] as const;
type Cmd = (typeof COMMANDS)[number];

function commandOf(name: Cmd): Command {
  if (name === 'dedup') return dedupCommand();
  return jobCommand().commands.find((c) => c.name() === name.slice(4))!;
}

/** The output options of a command, from its definitions. */
function outputOptions(name: Cmd): string[] {
  return commandOf(name)
    .options.filter((o) => /<(file|dir)>/.test(o.flags) && !READ_OPTIONS.has(o.long!))
    .map((o) => o.long!);
}

function doc(id: string, n: number): string {
  return JSON.stringify({ id, text: `the quick brown fox number ${n} jumps over the lazy dog and runs far away ${n}` }) + '\n';
}

describe('no output overwrites an input (every command × output option × input file)', () => {
  let root: string;
  let files: { sx: string[]; ref: string[]; news: string };
  const digests = new Map<string, string>();
  const digest = (f: string): string => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
  let fresh = 0;
  const freshPath = (ext: string): string => path.join(root, 'fresh', `f${fresh++}${ext}`);

  before(async () => {
    root = fs.realpathSync(tmpDir());
    for (const d of ['sx', 'refs', 'fresh']) fs.mkdirSync(path.join(root, d));
    files = { sx: [], ref: [], news: path.join(root, 'new.jsonl') };
    for (let i = 0; i < 4; i++) {
      const f = path.join(root, 'sx', `part-000${i}.jsonl`);
      fs.writeFileSync(f, doc(`a${i}`, i) + doc(`b${i}`, i) + doc(`c${i}`, i + 10));
      files.sx.push(f);
    }
    for (let i = 0; i < 2; i++) {
      const f = path.join(root, 'refs', `r-000${i}.jsonl`);
      fs.writeFileSync(f, doc(`r${i}`, i));
      files.ref.push(f);
    }
    fs.writeFileSync(files.news, doc('n0', 0) + doc('n1', 7));
    // Another spelling of every input: through a link to its directory.
    fs.symlinkSync(root, path.join(root, 'link'));
    for (const f of [...files.sx, ...files.ref, files.news]) digests.set(f, digest(f));
  });

  /** The input arguments of a layout, and the files it reads. */
  function inputs(cmd: Cmd, layout: Layout): { args: string[]; read: string[] } {
    const sx = path.join(root, 'sx');
    const refs = path.join(root, 'refs');
    if (layout === 'shards') return { args: [sx], read: files.sx };
    // One process takes one input against a reference; a job takes shards against shards.
    if (cmd === 'dedup') return { args: [files.news, '--against', refs], read: [files.news, ...files.ref] };
    return { args: [sx, '--against', refs], read: [...files.sx, ...files.ref] };
  }

  /** The output flags of one case: `option` set to `target`, with the mode it needs. */
  function outputArgs(cmd: Cmd, option: string, target: string): string[] {
    if (option === '--out') return cmd === 'job report' ? ['--out', target] : ['--output', 'pairs', '--out', target];
    if (option === '--out-dir') return ['--output', 'dedup', '--out-dir', target];
    if (option === '--removed') return cmd === 'job report' ? ['--removed', target] : ['--output', 'dedup', '--out-dir', freshPath(''), '--removed', target];
    throw new Error(`${cmd}: an output option this test does not know: ${option} (add it to outputArgs)`);
  }

  let work = 0;
  /** A job of the layout run to its end, for `job report` (planned with --removed, so every report option applies). */
  async function finishedJob(layout: Layout): Promise<string> {
    const wd = path.join(root, `job${work++}`);
    const r = await cliInProcess([
      'job',
      'dedup',
      ...inputs('job dedup', layout).args,
      '--id-field',
      'id',
      '--local',
      '--work-dir',
      wd,
      '--output',
      'dedup',
      '--out-dir',
      freshPath(''),
      '--removed',
      freshPath('.tsv'),
      '-q',
    ]);
    assert.equal(r.code, 0, r.stderr);
    return wd;
  }

  async function run(cmd: Cmd, layout: Layout, output: string[], jobDir?: string): Promise<{ code: number; stderr: string }> {
    const common = ['--id-field', 'id', '-q'];
    if (cmd === 'dedup') return cliInProcess(['dedup', ...inputs(cmd, layout).args, ...common, ...output]);
    if (cmd === 'job report') return cliInProcess(['job', 'report', '--work-dir', jobDir!, '-q', ...output]);
    const extra = cmd === 'job dedup' ? ['--local'] : [];
    return cliInProcess(['job', cmd.slice(4), ...inputs(cmd, layout).args, ...common, ...extra, '--work-dir', path.join(root, `job${work++}`), ...output]);
  }

  it('the commands define the output options this test enumerates', () => {
    for (const cmd of COMMANDS) assert.ok(outputOptions(cmd).length > 0, cmd);
    assert.deepEqual(outputOptions('dedup').sort(), ['--out', '--out-dir', '--removed']);
  });

  for (const cmd of COMMANDS) {
    for (const layout of ['shards', 'against'] as Layout[]) {
      it(`${cmd} (${layout}): every output option on every input file is refused, the input unchanged`, async () => {
        const jobDir = cmd === 'job report' ? await finishedJob(layout) : undefined;
        const { read } = inputs(cmd, layout);
        let cases = 0;
        for (const option of outputOptions(cmd)) {
          // A control: the same options with a fresh path run.
          const ok = await run(cmd, layout, outputArgs(cmd, option, freshPath(option === '--out-dir' ? '' : '.tsv')), jobDir);
          assert.equal(ok.code, 0, `${cmd} ${option} fresh: ${ok.stderr}`);
          for (const file of read) {
            // A directory option names the directory holding the file; a file option the file.
            const target = option === '--out-dir' ? path.dirname(file) : file;
            for (const spelling of [target, path.join(root, 'link', path.relative(root, target))]) {
              const r = await run(cmd, layout, outputArgs(cmd, option, spelling), jobDir);
              assert.equal(r.code, 2, `${cmd} ${layout} ${option} ${spelling}: ${r.stderr}`);
              assert.ok(r.stderr.includes(option) && /same file|holds|overlaps|overwrite/.test(r.stderr), `${cmd} ${option} ${spelling}: ${r.stderr}`);
              assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
              for (const f of digests.keys()) assert.equal(digest(f), digests.get(f), `${cmd} ${option} ${spelling} changed ${f}`);
              cases++;
            }
          }
        }
        assert.ok(cases >= read.length * 2 * 2, `${cases} cases`);
      });
    }
  }
});

describe('refuseAliasedOutputs', () => {
  it('compares s3:// names by bucket and normalised key, and an output prefix with the inputs under it', async () => {
    const refused = async (out: { path: string; dir?: boolean }, input: string): Promise<boolean> =>
      refuseAliasedOutputs([{ what: '--out', ...out }], [{ what: 'the input', path: input, file: true }]).then(
        () => false,
        (e: unknown) => {
          assert.ok(e instanceof UsageError, String(e));
          return true;
        },
      );
    assert.equal(await refused({ path: 's3://b/in/a.jsonl' }, 's3://b/in/a.jsonl'), true);
    assert.equal(await refused({ path: 's3://b/in//a.jsonl' }, 's3://b/in/a.jsonl'), true);
    assert.equal(await refused({ path: 's3://b/in/', dir: true }, 's3://b/in/a.jsonl'), true);
    assert.equal(await refused({ path: 's3://b/in', dir: true }, 's3://b/in/sub/a.jsonl'), true);
    assert.equal(await refused({ path: 's3://b/in/a.jsonl', dir: true }, 's3://b/in/a.jsonl'), true);
    assert.equal(await refused({ path: 's3://b/out/', dir: true }, 's3://b/in/a.jsonl'), false);
    assert.equal(await refused({ path: 's3://b/in/a.jsonl' }, 's3://c/in/a.jsonl'), false);
    assert.equal(await refused({ path: 's3://b/inx', dir: true }, 's3://b/in/a.jsonl'), false);
  });

  it('a new output through a link to a directory is compared by its real directory and name', async () => {
    const dir = fs.realpathSync(tmpDir());
    fs.mkdirSync(path.join(dir, 'real'));
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'via'));
    await assert.rejects(
      refuseAliasedOutputs([{ what: '--out', path: path.join(dir, 'real', 'x.tsv') }, { what: '--removed', path: path.join(dir, 'via', 'x.tsv') }], []),
      /--out and --removed are the same file/,
    );
  });
});
