/**
 * Issue 7, backup and restore (docs/operations.md): `neardup index backup` copies a SQLite store in
 * use with the online backup API; `snapshot` and `restore` move an index between stores.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os, { hostname } from 'node:os';
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

describe('index backup of a file store: the lock of the directory it writes', () => {
  let dir: string;
  const stores: string[] = [];
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-backup-file-'));
    for (const [name, from] of [['a', 0], ['b', 200]] as const) {
      const store = `file:${path.join(dir, name)}`;
      const idx = await NearDupIndex.open({ store, k: 8 });
      await idx.addMany(texts.slice(from, from + 200).map((text, i) => ({ id: `${name}${i}`, text })));
      await idx.close();
      stores.push(store);
    }
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const live = `${process.pid}@${hostname()} 2026-01-01T00:00:00Z\n`;
  /** The hidden names beside `out` (locks, work directories) once a run ended. */
  const beside = (name: string): string[] => fs.readdirSync(dir).filter((f) => f.startsWith(`.${name}.`)).sort();

  test('no file lock beside the directory: a live one planted there is left alone, and none is left after', () => {
    const out = path.join(dir, 'copy1');
    fs.writeFileSync(path.join(dir, '.copy1.neardup-writing'), live);
    const r = run(['index', 'backup', '--store', stores[0]!, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(beside('copy1'), ['.copy1.neardup-writing'], 'only the planted lock: no work directory, no lock of its own');
    assert.equal(fs.readFileSync(path.join(dir, '.copy1.neardup-writing'), 'utf8'), live);
    assert.ok(!fs.readdirSync(out).some((f) => f.includes('neardup-writing')), 'no lock inside the copy');
    const checked = run(['index', 'check', '--store', `file:${out}`]);
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /documents 200 /);
  });

  test('a backup to the same --out while one runs is refused (exit 2) naming --out and the lock; nothing of the running one is touched', () => {
    const out = path.join(dir, 'copy2');
    const work = path.join(dir, '.copy2.backup-tmp');
    fs.mkdirSync(path.join(work, 'store'), { recursive: true });
    fs.writeFileSync(path.join(work, '.neardup-writing'), live);
    const r = run(['index', 'backup', '--store', stores[0]!, '--out', out]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^neardup: --out ${out} is being written by another run \\(${process.pid}@`));
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.ok(!fs.existsSync(out));
    assert.deepEqual(fs.readdirSync(work).sort(), ['.neardup-writing', 'store'], "the running backup's work directory is left alone");
    // Its process gone, its lock is taken over and what it left is replaced.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    fs.writeFileSync(path.join(work, '.neardup-writing'), `${dead}@${hostname()} 2026-01-01T00:00:00Z\n`);
    const again = run(['index', 'backup', '--store', stores[0]!, '--out', out]);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(beside('copy2'), []);
    assert.match(run(['index', 'check', '--store', `file:${out}`]).stdout, /documents 200 /);
  });

  test('two backups of two stores to one --out at once: one writes it, the other is refused (exit 2); nothing is left beside it', async () => {
    const { execFile } = await import('node:child_process');
    const out = path.join(dir, 'copy3');
    const backup = (store: string) =>
      new Promise<{ code: number; store: string }>((resolve) => {
        const p = execFile(process.execPath, [mainJs, 'index', 'backup', '--store', store, '--out', out]);
        p.on('exit', (code) => resolve({ code: code ?? -1, store }));
      });
    for (let round = 0; round < 3; round++) {
      fs.rmSync(out, { recursive: true, force: true });
      const done = await Promise.all([backup(stores[0]!), backup(stores[1]!)]);
      assert.deepEqual(done.map((d) => d.code).sort(), [0, 2], `round ${round}: exactly one backup wins`);
      assert.deepEqual(beside('copy3'), [], `round ${round}: no lock or work directory left`);
      const r = run(['index', 'check', '--store', `file:${out}`]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const winner = done.find((d) => d.code === 0)!.store === stores[0] ? 'a' : 'b';
      const copy = await NearDupIndex.open({ store: `file:${out}` });
      try {
        assert.ok(await copy.get(`${winner}1`), `round ${round}: the copy is the winner's store`);
      } finally {
        await copy.close();
      }
    }
  });
});

test('restore into each local store form (sqlite:, file:, a bare directory): restored once, refused the second time (exit 2), consistent; a file backup says what it copied', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-restore-'));
  try {
    const from = `file:${path.join(dir, 'from')}`;
    const idx = await NearDupIndex.open({ store: from, k: 8 });
    await idx.addMany(texts.slice(0, 120).map((text, i) => ({ id: `d${i}`, text })));
    await idx.close();
    const copy = path.join(dir, 'copy');
    let r = run(['index', 'backup', '--store', from, '--out', copy]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `backed up ${path.join(dir, 'from')} to ${copy}\n`);
    const snap = path.join(dir, 'snap.ndx');
    assert.equal(run(['index', 'snapshot', '--store', `file:${copy}`, '--out', snap]).status, 0);
    for (const store of [`sqlite:${path.join(dir, 'r.db')}`, `file:${path.join(dir, 'r-file')}`, path.join(dir, 'r-bare')]) {
      r = run(['index', 'restore', snap, '--store', store]);
      assert.equal(r.status, 0, `${store}: ${r.stderr}`);
      assert.equal(r.stdout, `120 documents restored into ${store}\n`);
      r = run(['index', 'restore', snap, '--store', store]);
      assert.equal(r.status, 2, store);
      assert.match(r.stderr, /already holds 120 documents/);
      r = run(['index', 'check', '--store', store]);
      assert.equal(r.status, 0, `${store}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /documents 120 /);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
