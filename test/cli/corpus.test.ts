/** streamCorpus: ids and rows from the first pass; a later pass that finds another file is an error. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { streamCorpus } from '../../src/cli/corpus.js';
import { Reporter } from '../../src/cli/report.js';
import { tmpDir } from '../cliUtil.js';

async function drain(source: () => AsyncIterable<string[]>): Promise<string[]> {
  const texts: string[] = [];
  for await (const batch of source()) texts.push(...batch);
  return texts;
}

test('streamCorpus: the first pass collects ids and rows; later passes yield the same texts; a changed file is an error', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'docs.tsv');
  const rows = Array.from({ length: 3000 }, (_, i) => `id${i}\tsome text number ${i % 700}`);
  fs.writeFileSync(file, ['id\ttext', ...rows].join('\n') + '\n');
  const quiet = new Reporter({ quiet: true });
  const { corpus, source } = await streamCorpus(file, { columns: { text: ['text'], id: 'id' } }, quiet);
  const first = await drain(source);
  assert.equal(first.length, 3000);
  assert.equal(corpus.count, 3000);
  assert.equal(corpus.texts.length, 0, 'texts are not kept');
  assert.equal(corpus.ids![2999], 'id2999');
  assert.equal(corpus.rows.length, 3000);
  assert.deepEqual(await drain(source), first);
  fs.appendFileSync(file, 'id3000\tone more\n');
  await assert.rejects(drain(source), /docs\.tsv changed while it was being read \(record 3000\)/);
  fs.writeFileSync(file, ['id\ttext', ...rows.slice(1)].join('\n') + '\n');
  await assert.rejects(drain(source), /changed while it was being read \(2,999 records instead of 3,000\)/);
});
