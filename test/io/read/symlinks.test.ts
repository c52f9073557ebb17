/**
 * Issue #31, item 3: shard directories and globs apply the rule directories of documents apply
 * (docs/operations.md): a symbolic link whose target lies outside the directory (to a file or a
 * directory) or that is broken is an input error naming the link (skipped and counted with
 * --skip-invalid); links to files inside are read; links to directories are not descended. And an
 * error quotes at most a short, escaped excerpt of a bad line. Directories of documents: symbolic
 * links never lead outside the root.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { excerpt, InputError } from '../../../src/common/errors.js';
import { openInput } from '../../../src/io/read/read.js';
import { neardup, tmpDir } from '../../cliUtil.js';

const SECRET = 'root:x:0:0:secret-content';

function setup(): { dir: string; shards: string } {
  const dir = tmpDir();
  const shards = path.join(dir, 'shards');
  const outside = path.join(dir, 'outside');
  fs.mkdirSync(path.join(shards, 'sub'), { recursive: true });
  fs.mkdirSync(outside);
  const text = 'a flat in rome near the metro with two rooms and a balcony';
  fs.writeFileSync(path.join(shards, 'a.jsonl'), `{"text":"${text}"}\n`);
  fs.writeFileSync(path.join(shards, 'sub', 'b.jsonl'), `{"text":"${text} and more"}\n`);
  fs.writeFileSync(path.join(outside, 'passwd.jsonl'), `${SECRET}\n`);
  fs.writeFileSync(path.join(outside, 'c.jsonl'), `{"text":"${text}!"}\n`);
  // Inside: a link to a file is read; a link to a directory (here a loop) is not descended.
  fs.symlinkSync('a.jsonl', path.join(shards, 'a-again.jsonl'));
  fs.symlinkSync('.', path.join(shards, 'loop'));
  return { dir, shards };
}

const LINKS: { name: string; target: (dir: string) => string; reason: RegExp }[] = [
  { name: 'passwd.jsonl', target: (d) => path.join(d, 'outside', 'passwd.jsonl'), reason: /outside the input directory: not followed/ },
  { name: 'elsewhere', target: (d) => path.join(d, 'outside'), reason: /outside the input directory: not followed/ },
  { name: 'gone.jsonl', target: (d) => path.join(d, 'nothing-here.jsonl'), reason: /broken symbolic link/ },
];

test('a link out of a shard directory or a glob is refused, naming the link, never reading it; --skip-invalid counts it', () => {
  for (const link of LINKS) {
    const { dir, shards } = setup();
    fs.symlinkSync(link.target(dir), path.join(shards, link.name));
    // A glob matches existing files only: a broken link is refused in a directory listing.
    const inputs = link.name === 'gone.jsonl' ? [shards] : [shards, path.join(shards, '*.jsonl'), path.join(shards, '**/*.jsonl')];
    // A link to a directory is matched by a glob only through the files below it.
    if (link.name === 'elsewhere') inputs[1] = path.join(shards, '*/*.jsonl');
    for (const input of inputs) {
      const r = neardup(['dedup', input]);
      assert.equal(r.code, 2, `${link.name} ${input}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${path.join(shards, link.name)}: `), r.stderr);
      assert.match(r.stderr, link.reason);
      assert.ok(!r.stderr.includes('secret'), r.stderr);
      const s = neardup(['dedup', input, '--skip-invalid']);
      assert.equal(s.code, 0, s.stderr);
      assert.match(s.stderr, /1 invalid skipped/);
      assert.ok(!s.stdout.includes('secret') && !s.stderr.includes('secret'));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('links inside a shard directory: a link to a file is read, a link to a directory (a loop) is not descended', () => {
  const { dir, shards } = setup();
  for (const input of [shards, path.join(shards, '**/*.jsonl')]) {
    const r = neardup(['dedup', input, '--output', 'clusters']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /docs +3 from/, `${input}: a.jsonl, a-again.jsonl, sub/b.jsonl`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an invalid line is quoted short and escaped: no control characters, no long raw content', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'bad.jsonl');
  fs.writeFileSync(file, `{"text": \u001b[31mred\u0007 ${'x'.repeat(5000)}\n`);
  const r = neardup(['dedup', file]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /bad\.jsonl:1: invalid JSON/);
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.stderr), JSON.stringify(r.stderr));
  assert.ok(r.stderr.length < 600, `${r.stderr.length} characters`);
  // Field names listed for a missing text field: at most ten, each short.
  const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(100)}${i}`, i]));
  fs.writeFileSync(file, JSON.stringify(many) + '\n');
  const m = neardup(['dedup', file]);
  assert.equal(m.code, 2);
  assert.match(m.stderr, /no field "text"; available fields: .* and 40 more/);
  assert.ok(m.stderr.length < 1000, `${m.stderr.length} characters`);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('excerpt: never a control character, line separator, bidi override or lone surrogate; at most max characters and an ellipsis', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 120 }), (s, max) => {
      const e = excerpt(s, max);
      assert.ok(!/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(e), JSON.stringify(e));
      assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(e), JSON.stringify(e));
      // Escapes lengthen: at most six characters for each one kept, and the ellipsis.
      assert.ok(e.length <= 6 * Math.min(max, s.length) + 1);
      if (s.length <= max && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/.test(s)) assert.equal(e, s);
    }),
  );
});

test('directory input: symbolic links never lead outside the root (files, directories, loops)', async () => {
  const base = tmpDir();
  const root = path.join(base, 'root');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(path.join(base, 'outside/deep'), { recursive: true });
  fs.writeFileSync(path.join(base, 'outside/secret.txt'), 'secret outside text');
  fs.writeFileSync(path.join(base, 'outside/deep/d.txt'), 'deep outside text');
  fs.writeFileSync(path.join(root, 'a.txt'), 'inside text a');
  fs.symlinkSync('../outside/secret.txt', path.join(root, 'leak.txt'));
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'linkdir'));
  fs.symlinkSync('../a.txt', path.join(root, 'sub/inside.txt'));
  fs.symlinkSync('..', path.join(root, 'sub/loop'));
  const read = async (skipInvalid: boolean) => {
    const input = await openInput(root, { skipInvalid });
    const docs: string[] = [];
    for await (const r of input.records) docs.push(`${r.id}=${r.text}`);
    return { docs, skips: input.skips };
  };
  const e = await read(false).catch((x: unknown) => x);
  assert.ok(e instanceof InputError, String(e));
  assert.match(e.message, /leak\.txt: symbolic link to .*outside.*not followed/);
  const { docs, skips } = await read(true);
  assert.deepEqual(docs, ['a.txt=inside text a', 'sub/inside.txt=inside text a']);
  assert.equal(skips.count, 2, 'leak.txt and linkdir are reported');
  assert.ok(!docs.some((d) => d.includes('outside')));
});
