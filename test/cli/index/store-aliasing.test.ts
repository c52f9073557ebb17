/**
 * No `index` command writes over its store, and no store is made where it would mix with other
 * files: enumerated over every `index` subcommand with a `--store` and an output option (found in its
 * own option definitions: any `<file>`, `<dir>` or `<path>` option) × every store kind on local
 * files (a bare directory, `file:DIR`, `sqlite:PATH`) × every file the store holds (and, for a
 * SQLite store, the journal files beside it). Each case exits 2 naming the option, with no stack
 * trace, and the store's bytes stay as they were; the same command with a fresh output path runs.
 * An input inside the store (`index add`, `index query`, `index restore`, `index remove`) is refused the same way.
 * Every output option in a directory that does not exist (or under a file) is exit 2 naming it,
 * and nothing is made: no command makes its output's directory (a mistyped path is refused).
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { indexCommand } from '../../../src/cli/index/command.js';

/** Options with a path argument that do not name an output (a JSONL field path is not a file). */
const NOT_OUTPUTS = new Set(['--store', '--indexes', '--id-field']);

/** The `index` subcommands with `--store` and an output option, and those options, from their definitions. */
function outputOptions(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of indexCommand().commands) {
    if (!c.options.some((o) => o.long === '--store')) continue;
    const opts = c.options.filter((o) => /<(file|dir|path)>/.test(o.flags) && !NOT_OUTPUTS.has(o.long!)).map((o) => o.long!);
    if (opts.length) out.set(c.name(), opts);
  }
  return out;
}

const DOCS = 'id\ttext\na\tthe quick brown fox jumps over the lazy dog by the river\nb\ta flat near the station with a garden and a view\n';

describe('index commands: no output lands on the store, no input is read from it', () => {
  let root: string;
  let input: string;
  let fresh = 0;
  const freshPath = (ext: string): string => path.join(root, 'fresh', `f${fresh++}${ext}`);
  const digest = (files: string[]): string => {
    const h = createHash('sha256');
    for (const f of files) h.update(f).update(fs.existsSync(f) ? fs.readFileSync(f) : 'absent');
    return h.digest('hex');
  };

  before(() => {
    root = fs.realpathSync(tmpDir());
    fs.mkdirSync(path.join(root, 'fresh'));
    input = path.join(root, 'in.tsv');
    fs.writeFileSync(input, DOCS);
  });

  it('the commands define the output options this test enumerates', () => {
    assert.deepEqual(Object.fromEntries(outputOptions()), { add: ['--out'], query: ['--out'], backup: ['--out'], snapshot: ['--out'] });
  });

  /** The arguments of `index NAME` with `option` set to `target`. */
  function args(name: string, option: string, target: string, store: string): string[] {
    if (name === 'add' || name === 'query') return ['index', name, input, '--id', 'id', '--store', store, option, target, '-q'];
    return ['index', name, '--store', store, option, target];
  }

  const kinds = [
    ['a bare directory', (d: string) => d],
    ['file:DIR', (d: string) => `file:${d}`],
    ['sqlite:PATH', (d: string) => `sqlite:${d}.db`],
  ] as const;
  for (const [kind, specOf] of kinds) {
    it(`${kind}: every output option on every file of the store is refused, the store unchanged`, async () => {
      const base = path.join(root, `s${fresh++}`);
      const store = specOf(base);
      const made = await cliInProcess(['index', 'add', input, '--id', 'id', '--store', store, '--out', freshPath('.tsv'), '-q']);
      assert.equal(made.code, 0, made.stderr);
      const sqlite = store.startsWith('sqlite:');
      const files = sqlite ? ['', '-wal', '-shm', '-journal'].map((s) => `${base}.db${s}`) : fs.readdirSync(base).map((f) => path.join(base, f));
      let cases = 0;
      for (const [name, options] of outputOptions()) {
        for (const option of options) {
          const ok = await cliInProcess(args(name, option, freshPath(name === 'backup' ? (sqlite ? '.db' : '') : '.tsv'), store));
          assert.equal(ok.code, 0, `${name} ${option} fresh: ${ok.stderr}`);
          // After the control (index add writes the store again).
          const before = digest(files);
          for (const target of [...files, ...(sqlite ? [] : [path.join(base, 'new-file')])]) {
            const r = await cliInProcess(args(name, option, target, store));
            assert.equal(r.code, 2, `${kind}: index ${name} ${option} ${target}: ${r.stderr}`);
            assert.ok(r.stderr.includes(option) && r.stderr.includes('--store'), `${name} ${option} ${target}: ${r.stderr}`);
            assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
            assert.equal(digest(files), before, `${kind}: index ${name} ${option} ${target} changed the store`);
            assert.ok(!fs.existsSync(path.join(base, 'new-file')), 'nothing written into the store');
            cases++;
          }
        }
      }
      // An input that is one of the store's files.
      const before = digest(files);
      for (const target of files.filter((f) => fs.existsSync(f))) {
        for (
          const a of [
            ['index', 'add', target, '--format', 'idtext', '--store', store, '--out', freshPath('.tsv'), '-q'],
            ['index', 'query', target, '--format', 'idtext', '--store', store, '--out', freshPath('.tsv'), '-q'],
            ['index', 'restore', target, '--store', store],
            ['index', 'remove', target, '--store', store],
          ]
        ) {
          const r = await cliInProcess(a);
          assert.equal(r.code, 2, `${kind}: ${a.slice(0, 3).join(' ')}: ${r.stderr}`);
          assert.match(r.stderr, /--store/);
          assert.equal(digest(files), before, `${kind}: ${a.slice(0, 3).join(' ')} changed the store`);
          cases++;
        }
      }
      assert.ok(cases >= 12, `${cases} cases`);
    });
  }

  for (const [kind, specOf] of kinds) {
    it(`${kind}: every output option in a directory that does not exist, or under a file, is refused, nothing made`, async () => {
      const store = specOf(path.join(root, `m${fresh++}`));
      const made = await cliInProcess(['index', 'add', input, '--id', 'id', '--store', store, '-q']);
      assert.equal(made.code, 0, made.stderr);
      const plain = path.join(root, `plain${fresh++}`);
      fs.writeFileSync(plain, 'a file');
      for (const [name, options] of outputOptions()) {
        for (const option of options) {
          const missing = path.join(root, `missing${fresh++}`);
          for (
            const [target, why] of [[path.join(missing, 'deeper', 'out.tsv'), /does not exist/], [path.join(plain, 'out.tsv'), /is not a directory/]] as const
          ) {
            const r = await cliInProcess(args(name, option, target, store));
            assert.equal(r.code, 2, `${kind}: index ${name} ${option} ${target}: ${r.stderr}`);
            assert.ok(r.stderr.includes(target) && why.test(r.stderr), `${name} ${option}: ${r.stderr}`);
            assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
            assert.ok(!fs.existsSync(missing), `${name} ${option}: nothing made`);
          }
        }
      }
    });
  }

  it('a new file store is not made in a directory that holds other files, nor on a file', async () => {
    const busy = path.join(root, 'busy');
    fs.mkdirSync(busy);
    fs.writeFileSync(path.join(busy, 'notes.txt'), 'mine');
    const file = path.join(root, 'plain.db');
    fs.writeFileSync(file, 'not a directory');
    for (
      const [store, want] of [
        [busy, /holds 1 file \(notes\.txt\) and no index: a new store needs a new or empty directory/],
        [`file:${busy}`, /holds 1 file/],
        [file, /that path is a file, and a file store is a directory \(a SQLite database is sqlite:/],
      ] as const
    ) {
      for (const cmd of ['add', 'query']) {
        const r = await cliInProcess(['index', cmd, input, '--id', 'id', '--store', store, '--out', freshPath('.tsv'), '-q']);
        assert.equal(r.code, 2, `${cmd} ${store}: ${r.stderr}`);
        assert.match(r.stderr, want);
      }
    }
    assert.deepEqual(fs.readdirSync(busy), ['notes.txt'], 'nothing added to the directory');
    assert.equal(fs.readFileSync(file, 'utf8'), 'not a directory');
  });

  it('a store whose own file (manifest.json, log, records, table, lock) is a directory is refused naming it, not a bare EISDIR', async () => {
    for (const name of ['manifest.json', 'log', 'records', 'table', 'lock']) {
      const store = path.join(root, `own-${name}`);
      const add = await cliInProcess(['index', 'add', input, '--id', 'id', '--store', store, '-q']);
      assert.equal(add.code, 0, add.stderr);
      fs.rmSync(path.join(store, name), { force: true });
      fs.mkdirSync(path.join(store, name));
      for (const cmd of [['check'], ['query', input, '--id', 'id']]) {
        const r = await cliInProcess(['index', ...cmd, '--store', store]);
        assert.equal(r.code, 2, `${name} ${cmd[0]}: ${r.stderr}`);
        assert.ok(r.stderr.includes(`${path.join(store, name)} is a directory`), `${name} ${cmd[0]}: ${r.stderr}`);
      }
    }
  });
});
