/**
 * Issue 7, backup and restore (docs/operations.md): `neardup index backup` copies a SQLite store in
 * use with the online backup API; `snapshot` and `restore` move an index between stores.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../../../src/index.js';
import { mainJs } from '../../cliUtil.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

const texts = kijijiTexts();
const run = (args: string[]) => spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8' });

test('backup of a live SQLite store, snapshot, restore into another store; all pass index check', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-backup-'));
  try {
    const db = path.join(dir, 'live.db');
    const live = await NearDupIndex.open({ store: `sqlite:${db}`, k: 8 });
    await live.addMany(texts.slice(0, 300).map((text, i) => ({ id: `d${i}`, text, meta: { i } })));
    // The live index stays open (WAL, uncheckpointed writes) while the backup runs.
    let r = run(['index', 'backup', '--store', `sqlite:${db}`, '--out', path.join(dir, 'copy.db')]);
    assert.equal(r.status, 0, r.stderr);
    await live.add('after', texts[400]!);
    r = run(['index', 'check', '--store', `sqlite:${path.join(dir, 'copy.db')}`]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /documents 300 /);
    r = run(['index', 'backup', '--store', `sqlite:${db}`, '--out', path.join(dir, 'copy.db')]);
    assert.equal(r.status, 2, 'never overwrites');

    r = run(['index', 'snapshot', '--store', `sqlite:${db}`, '--out', path.join(dir, 'snap.ndx')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /301 documents/);
    await live.close();
    r = run(['index', 'restore', path.join(dir, 'snap.ndx'), '--store', `sqlite:${path.join(dir, 'restored.db')}`]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /301 documents restored/);
    r = run(['index', 'restore', path.join(dir, 'snap.ndx'), '--store', `sqlite:${path.join(dir, 'restored.db')}`]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /already holds 301 documents/);
    r = run(['index', 'check', '--store', `sqlite:${path.join(dir, 'restored.db')}`]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const restored = await NearDupIndex.open({ store: `sqlite:${path.join(dir, 'restored.db')}` });
    assert.equal(restored.manifest.shingle.k, 8);
    assert.deepEqual((await restored.get('d42'))!.meta, { i: 42 });
    assert.ok((await restored.query(texts[42]!, { threshold: 1 })).some((m) => m.id === 'd42'));
    await restored.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('two backups to one --out at once: one writes it, the other is refused (exit 2); no partial or temporary file is left', async () => {
  const { execFile } = await import('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-backup2-'));
  try {
    const db = path.join(dir, 'live.db');
    const live = await NearDupIndex.open({ store: `sqlite:${db}`, k: 8 });
    await live.addMany(texts.slice(0, 500).map((text, i) => ({ id: `d${i}`, text })));
    await live.close();
    const out = path.join(dir, 'copy.db');
    const backup = () =>
      new Promise<number>((resolve) => {
        const p = execFile(process.execPath, [mainJs, 'index', 'backup', '--store', `sqlite:${db}`, '--out', out]);
        p.on('exit', (code) => resolve(code ?? -1));
      });
    for (let round = 0; round < 3; round++) {
      fs.rmSync(out, { force: true });
      const codes = (await Promise.all([backup(), backup()])).sort();
      assert.deepEqual(codes, [0, 2], `round ${round}: exactly one backup wins`);
      assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('backup-tmp')), [], 'no temporary file left');
      const r = run(['index', 'check', '--store', `sqlite:${out}`]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /documents 500 /);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
