/**
 * Child process for the kill -9 tests: adds documents to an index in a store forever, singly and in
 * batches of 10 (or, with BATCH, in batches of that many), and prints each id once its add has
 * resolved (acknowledged). Usage: node store-writer.js STORE_SPEC [BATCH]; CHECKPOINT_EVERY=B has
 * a file store take a checkpoint whenever its log has grown by B bytes (its commits then run beside
 * the adds when the kill comes).
 */
import { NearDupIndex } from '../../src/index.js';
import { installFaultHooks } from '../../src/common/faults.js';
import { kijijiTexts } from './kijiji.js';

const texts = kijijiTexts();
const every = Number(process.env.CHECKPOINT_EVERY ?? 0);
if (every > 0) installFaultHooks({ fileStoreCheckpointEvery: () => every });
const idx = await NearDupIndex.open({ store: process.argv[2]!, shingle: { k: 10, normalize: { preset: 'seed000' } } });
const batch = Number(process.argv[3] ?? 10);
for (let i = 0;;) {
  if (i % 50 === 25 || batch > 10) {
    // A batch: one transaction (SQLite), one frame (the file store).
    const docs = Array.from({ length: batch }, (_, j) => ({ id: `w${i + j}`, text: texts[(i + j) % texts.length]!, meta: { i: i + j } }));
    await idx.addMany(docs);
    process.stdout.write(docs.map((d) => d.id).join('\n') + '\n');
    i += batch;
  } else {
    await idx.add(`w${i}`, texts[i % texts.length]!, { i });
    process.stdout.write(`w${i}\n`);
    i++;
  }
}
