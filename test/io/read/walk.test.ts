/** The one directory walk under directory inputs and shard directories (io/read/walk.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { walkTree } from '../../../src/io/read/walk.js';
import { tmpDir } from '../../cliUtil.js';

test('walkTree: files and links below the root, directory links not descended, skip rule applied to files and folders', async () => {
  const dir = tmpDir();
  fs.mkdirSync(path.join(dir, 'sub/deeper'), { recursive: true });
  fs.mkdirSync(path.join(dir, '_hidden'));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  fs.writeFileSync(path.join(dir, 'sub/deeper/b.txt'), 'b');
  fs.writeFileSync(path.join(dir, '_hidden/c.txt'), 'c');
  fs.writeFileSync(path.join(dir, '.dot'), 'd');
  fs.symlinkSync(path.join(dir, 'a.txt'), path.join(dir, 'link.txt'));
  fs.symlinkSync(path.join(dir, 'sub'), path.join(dir, 'dirlink'));
  const all = (await walkTree(dir)).sort((x, y) => (x.rel < y.rel ? -1 : 1));
  assert.deepEqual(all, [
    { rel: '.dot', kind: 'file' },
    { rel: '_hidden/c.txt', kind: 'file' },
    { rel: 'a.txt', kind: 'file' },
    { rel: 'dirlink', kind: 'link' },
    { rel: 'link.txt', kind: 'link' },
    { rel: 'sub/deeper/b.txt', kind: 'file' },
  ]);
  const visible = (await walkTree(dir, { skip: (n) => n.startsWith('.') || n.startsWith('_') })).map((e) => e.rel).sort();
  assert.deepEqual(visible, ['a.txt', 'dirlink', 'link.txt', 'sub/deeper/b.txt']);
  await assert.rejects(walkTree(path.join(dir, 'missing')), /missing/);
});
