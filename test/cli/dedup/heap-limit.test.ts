/**
 * Issue 7, huge inputs (the long runs are in bench/huge-input.ts): an input larger than the heap is
 * refused up front with a clear message (exit 2), instead of V8 aborting with a native stack after
 * minutes of work (what the 5 GB benchmark saw).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mainJs } from '../../cliUtil.js';

test('dedup refuses an input larger than the heap limit, naming the file, its size and the fix', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-huge-'));
  try {
    const file = path.join(dir, 'big.txt');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 1 << 30); // sparse: 1 GiB on paper, nothing on disk
    const r = spawnSync(process.execPath, ['--max-old-space-size=64', mainJs, 'dedup', file, '--no-stream'], { encoding: 'utf8', timeout: 30000 });
    assert.equal(r.status, 2, r.stderr.slice(0, 500));
    assert.match(r.stderr, /^neardup: .*big\.txt: is 1\.07 GB, more than the 0\.\d+ GB this process may hold; use --stream .*max-old-space-size/);
    assert.ok(!/FATAL|Native stack/.test(r.stderr));
    // Streamed (the default for this size), the file is one line of 1 GiB: too long for one string.
    const s = spawnSync(process.execPath, ['--max-old-space-size=64', mainJs, 'dedup', file], { encoding: 'utf8', timeout: 60000 });
    assert.equal(s.status, 2, s.stderr.slice(0, 500));
    assert.match(s.stderr, /^neardup: .*big\.txt:1: the line is longer than the 511 Mi characters a JavaScript string can hold/);
    assert.ok(!/FATAL|Native stack|\n\s+at /.test(s.stderr));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
