/**
 * Errors are worded in the library's terms (file, line, the option that fixes them, in `fix`); the
 * CLI adds its flag (cli/flagHints.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openInput } from '../../src/io/read/read.js';
import { InputError, UsageError } from '../../src/common/errors.js';
import { flagHint } from '../../src/cli/flagHints.js';
import { neardup, tmpDir } from '../cliUtil.js';

test("io errors name the file and line in the library's words and carry the option that fixes them; the CLI adds its flag", async () => {
  const dir = tmpDir();
  const tsv = path.join(dir, 'docs.tsv');
  fs.writeFileSync(tsv, 'id\ttitle\tbody\n1\ta\tb\n');
  let err: unknown;
  try {
    const input = await openInput(tsv);
    for await (const _ of input.records) void _;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof InputError);
  assert.equal(err.message, `${tsv}:1: no text column given; available columns: "id", "title", "body"`);
  assert.doesNotMatch(err.message, /--/);
  assert.deepEqual(err.fix, { option: 'text' });
  assert.equal(flagHint(err.fix), ' (use --text)');
  const cli = neardup(['dedup', 'docs.tsv'], { cwd: dir });
  assert.equal(cli.code, 2);
  assert.equal(cli.stderr, 'neardup: docs.tsv:1: no text column given; available columns: "id", "title", "body" (use --text)\n');

  // A directory holding both shard files and document files.
  fs.mkdirSync(path.join(dir, 'mixed'));
  fs.writeFileSync(path.join(dir, 'mixed/a.txt'), 'hello');
  fs.writeFileSync(path.join(dir, 'mixed/b.jsonl'), '{"text":"x"}\n');
  let dirErr: unknown;
  try {
    await openInput(path.join(dir, 'mixed'));
  } catch (e) {
    dirErr = e;
  }
  assert.ok(dirErr instanceof UsageError);
  assert.match(
    dirErr.message,
    /mixed holds both shard files \(b\.jsonl\) and document files \(a\.txt\): read it as format dir to take each \.txt\/\.md\/\.html file as one document, or name the shards with a glob \(e\.g\. '.*mixed\/\*\.jsonl'\)$/,
  );
  assert.deepEqual(dirErr.fix, { option: 'format', value: 'dir' });
  const cliDir = neardup(['dedup', 'mixed'], { cwd: dir });
  assert.equal(cliDir.code, 2);
  assert.match(cliDir.stderr, /^neardup: mixed holds both shard files \(b\.jsonl\) and document files \(a\.txt\): .* \(use --format dir\)\n$/);
  assert.equal(flagHint(undefined), '');
  assert.equal(flagHint({ option: 'format' }), ' (use --format)');
  assert.equal(flagHint({ option: 'out' }), ' (choose another --out)');
});

test('a JSONL input is told its own flag: spans with several --text-field names hints --text-field, a TSV input --text', () => {
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'a.jsonl'), '{"text":"x","t":"y"}\n');
  fs.writeFileSync(path.join(dir, 'a.tsv'), 'text\tt\nx\ty\n');
  const jsonl = neardup(['spans', 'a.jsonl', '--text-field', 'text,t', '--out', 'o.jsonl'], { cwd: dir });
  assert.equal(jsonl.code, 2);
  assert.equal(jsonl.stderr, 'neardup: spans cuts ranges out of one text field: name one (got text, t) (use --text-field)\n');
  const tsv = neardup(['spans', 'a.tsv', '--text', 'text,t', '--out', 'o.tsv'], { cwd: dir });
  assert.equal(tsv.code, 2);
  assert.equal(tsv.stderr, 'neardup: spans cuts ranges out of one text column: name one (got text, t) (use --text)\n');
});
