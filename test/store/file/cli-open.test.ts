/**
 * The bundled CLI opens a file store from its checkpoint through the worker threads that stores of
 * 2^18 documents and more rebuild their table in (src/store/file/rebuildWorker.ts), forced here on
 * a small store by a fault hook. The worker script was once left out of the bundle, and every such
 * open failed over to folding the whole log: right answers, but 145 s instead of ~13 s at 10^7
 * documents, with nothing said. test/repo/bundle-workers.test.ts checks every worker script has its
 * bundle entry; a worker that cannot start now runs its job in the main thread instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../../../src/index.js';
import { startServe } from '../../helpers/procs.js';
import { withFaultEnv } from '../../helpers/faults.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

test('neardup serve opens a file store from its checkpoint with the rebuild in worker threads', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-cli-open-'));
  try {
    const store = path.join(dir, 'st');
    const texts = kijijiTexts().slice(0, 200);
    const idx = await NearDupIndex.open({ store });
    await idx.addMany(texts.map((text, i) => ({ id: `d${i}`, text })));
    // Close writes the checkpoint the serve below opens from.
    await idx.close();
    const s = await withFaultEnv({ fileStoreWorkersFrom: 0 }, () => startServe(['--store', store]));
    try {
      const stats = (await (await fetch(`${s.url}/v1/stats`)).json()) as { documents: number; storeStats: Record<string, unknown> };
      assert.equal(stats.documents, 200);
      assert.equal(stats.storeStats.framesFoldedAtOpen, 0, 'opened from the checkpoint, not by folding the log');
      const q =
        (await (await fetch(`${s.url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: texts[7] }) }))
          .json()) as {
            matches: { id: string }[];
          };
      assert.ok(q.matches.some((m) => m.id === 'd7'));
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
