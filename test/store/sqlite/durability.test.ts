/**
 * SQLite persistence: reopening restores the index, and kill -9 in the middle of a stream of adds
 * loses no acknowledged document and leaves no half-written one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../../src/store/sqlite/driver.js';
import { NearDupIndex } from '../../../src/index.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import { killWriter } from '../../helpers/killWriter.js';

const texts = kijijiTexts();

/** Structural check straight on the file: each document has all its postings, no posting is orphaned. */
function checkSqliteConsistency(db: string, keysPerDoc: number): number {
  const d = openDatabase(db);
  try {
    const orphans = d.prepare('SELECT count(*) FROM postings p LEFT JOIN docs d ON d.n = p.doc WHERE d.n IS NULL').pluck().get() as number;
    assert.equal(orphans, 0, 'postings without a document');
    const wrong = d.prepare('SELECT d.id, count(p.key) c FROM docs d LEFT JOIN postings p ON p.doc = d.n GROUP BY d.n HAVING c != ?').all(keysPerDoc);
    assert.deepEqual(wrong, [], 'documents without all their postings');
    return d.prepare('SELECT count(*) FROM docs').pluck().get() as number;
  } finally {
    d.close();
  }
}

test('sqlite: reopening the file restores the index', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-sqlite-'));
  try {
    const store = `sqlite:${path.join(dir, 'i.db')}`;
    const a = await NearDupIndex.open({ store, k: 8, threshold: 0.7 });
    await a.addMany(texts.slice(0, 300).map((text, i) => ({ id: String(i), text, meta: { i } })));
    const before = await Promise.all(texts.slice(300, 400).map((t) => a.query(t)));
    await a.close();
    const b = await NearDupIndex.open({ store });
    assert.equal(b.manifest.shingle.k, 8);
    assert.equal(b.manifest.threshold, 0.7);
    assert.equal(await b.size(), 300);
    assert.deepEqual(await Promise.all(texts.slice(300, 400).map((t) => b.query(t))), before);
    assert.deepEqual((await b.get('42'))!.meta, { i: 42 });
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: kill -9 during a stream of adds loses no acknowledged document', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-kill-'));
  try {
    const db = path.join(dir, 'k.db');
    const acked = await killWriter(`sqlite:${db}`, 400);
    assert.ok(acked.length >= 400);
    const idx = await NearDupIndex.open({ store: `sqlite:${db}` });
    const n = checkSqliteConsistency(db, idx.manifest.keysPerDoc);
    // Every acknowledged add is there; at most the add in flight (one batch) was committed unprinted.
    assert.ok(n >= acked.length && n <= acked.length + 10, `${n} documents for ${acked.length} acknowledged`);
    for (const id of acked) {
      const i = Number(id.slice(1));
      const doc = await idx.get(id);
      assert.ok(doc, `acknowledged ${id} lost`);
      assert.deepEqual(doc.meta, { i });
    }
    // The index answers from the reopened file: each sampled document finds itself, exactly.
    for (const id of acked.filter((_, j) => j % 20 === 0)) {
      const i = Number(id.slice(1));
      const m = await idx.query(texts[i % texts.length]!, { threshold: 1 });
      assert.ok(m.some((x) => x.id === id && x.similarity === 1), `${id} not found by its own text`);
    }
    await idx.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
