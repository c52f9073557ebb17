/**
 * `NearDupIndex.save(path)` never writes over a file of the index's own store, under any name:
 * a file store's directory and anything in it, a SQLite database and its journal files, through a
 * link to the directory, a `..` spelling or a hard link. Each refusal is a RangeError naming the
 * store file, and the store's bytes are unchanged; a path outside the store still saves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../../src/index.js';

/** A digest of every file under `dir` (names and bytes). */
function digest(dir: string): string {
  const h = createHash('sha256');
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const p = path.join(dir, name);
    h.update(name);
    try {
      h.update(readFileSync(p));
    } catch {
      // a directory
    }
  }
  return h.digest('hex');
}

async function filled(store: string): Promise<NearDupIndex> {
  const idx = await NearDupIndex.open({ store });
  await idx.addMany([
    { id: 'a', text: 'the quick brown fox jumps over the lazy dog' },
    { id: 'b', text: 'a completely different sentence about snapshots and stores' },
  ]);
  return idx;
}

test('save refuses every path that names a file of a file store', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'nd-save-alias-'));
  try {
    const dir = path.join(root, 'st');
    const idx = await filled(dir);
    symlinkSync(dir, path.join(root, 'link'));
    mkdirSync(path.join(root, 'other'));
    const before = digest(dir);
    const names = readdirSync(dir);
    assert.ok(names.length > 0);
    const paths = [
      dir,
      ...names.map((n) => path.join(dir, n)),
      path.join(dir, 'new-file.snap'),
      path.join(root, 'link', names[0]!),
      path.join(root, 'other', '..', 'st', 'x.snap'),
    ];
    for (const p of paths) {
      await assert.rejects(
        idx.save(p),
        (e: Error) => e instanceof RangeError && e.message.includes(`cannot save a snapshot to ${p}`) && e.message.includes(dir),
        p,
      );
    }
    assert.equal(digest(dir), before);
    assert.equal(existsSync(path.join(dir, 'new-file.snap')), false);
    assert.equal(await idx.save(path.join(root, 'other', 'ok.snap')), 2);
    await idx.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("save refuses a SQLite store's database and journals, and a hard link to the database", async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'nd-save-alias-'));
  try {
    const db = path.join(root, 'x.db');
    const idx = await filled(`sqlite:${db}`);
    linkSync(db, path.join(root, 'hard.db'));
    const before = readFileSync(db);
    for (const p of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, path.join(root, 'hard.db')]) {
      await assert.rejects(idx.save(p), (e: Error) => e instanceof RangeError && e.message.includes(`cannot save a snapshot to ${p}`), p);
    }
    assert.deepEqual(readFileSync(db), before);
    assert.equal(await idx.save(path.join(root, 'x.snap')), 2);
    await idx.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
