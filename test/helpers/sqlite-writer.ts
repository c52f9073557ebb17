/**
 * Child process for the kill -9 test: adds documents to a SQLite-backed index forever and prints
 * each id once its add has resolved (acknowledged). Usage: node sqlite-writer.js DB_PATH
 */
import { NearDupIndex } from '../../src/index.js';
import { kijijiTexts } from './kijiji.js';

const texts = kijijiTexts();
const idx = await NearDupIndex.open({ store: `sqlite:${process.argv[2]}`, shingle: { k: 10, normalize: { preset: 'seed000' } } });
for (let i = 0; ; ) {
  if (i % 50 === 25) {
    // A batch of 10: one transaction.
    const docs = Array.from({ length: 10 }, (_, j) => ({ id: `w${i + j}`, text: texts[(i + j) % texts.length]!, meta: { i: i + j } }));
    await idx.addMany(docs);
    process.stdout.write(docs.map((d) => d.id).join('\n') + '\n');
    i += 10;
  } else {
    await idx.add(`w${i}`, texts[i % texts.length]!, { i });
    process.stdout.write(`w${i}\n`);
    i++;
  }
}
