/**
 * The store parity scenario: one sequence of index calls whose answers every store must reproduce.
 * Its variant with stored texts gives most documents their text in `meta.text` (as `index add`
 * keeps it) and the others a caller's other text, a string, an array or no metadata: run with
 * `setSource: 'text'` it must answer as with the sets kept in the records.
 */
import path from 'node:path';
import { NearDupIndex, type NearDupIndexOptions } from '../../src/index.js';
import { withStoredText } from '../../src/online/records/storedText.js';
import { kijijiTexts } from './kijiji.js';

const texts = kijijiTexts().slice(0, 700);
const OPTS: NearDupIndexOptions = { shingle: { k: 10, normalize: { preset: 'seed000' } }, threshold: 0.8 };

/** Variant of {@link storeScenario}. */
export interface ScenarioVariant {
  /** Metadata with the stored text (mostly), as {@link textMeta} gives it. */
  textMeta?: boolean;
  /** The index's setSource. */
  setSource?: 'record' | 'text';
}

/**
 * The metadata document `i` with `text` gets in the stored-text variant: its text kept (4 in 7),
 * a caller's `text` that is another text, a string or an array (no object to keep the text in),
 * or `base` as it is.
 */
export function textMeta(i: number, text: string, base: unknown): unknown {
  switch (i % 7) {
    case 3:
      return { ...(base as object | undefined), text: `${text} (the caller's edit)` };
    case 4:
      return base === undefined ? 'a caller string' : [base];
    case 5:
      return base;
    default:
      return withStoredText(base, text);
  }
}

/** Runs the scenario against `store` (snapshots go to `dir`) and returns everything the index answered. */
export async function storeScenario(dir: string, store: string, variant: ScenarioVariant = {}): Promise<unknown[]> {
  // A fake clock (the index's `now` seam): the expiry part below moves it.
  let t = 1_700_000_000_000;
  const now = () => t;
  const idx = await NearDupIndex.open({ ...OPTS, store, now, ...(variant.setSource ? { setSource: variant.setSource } : {}) });
  let n = 0;
  const m = (text: string, base?: unknown): unknown => (variant.textMeta ? textMeta(n++, text, base) : base);
  const log: unknown[] = [];
  // Single adds, a batch, replacements (ids reused), removals (single and bulk), queries, topK, get, size, expiry.
  for (let i = 0; i < 250; i++) log.push(await idx.add(`d${i}`, texts[i]!, m(texts[i]!, i % 3 === 0 ? { i, tag: 'x' } : undefined)));
  log.push(await idx.addMany(texts.slice(250, 500).map((text, i) => ({ id: `d${250 + i}`, text, meta: m(text, { i: 250 + i }) }))));
  log.push(await idx.addMany(texts.slice(500, 600).map((text, i) => ({ id: `d${i * 2}`, text, meta: m(text) }))));
  for (let i = 0; i < 600; i += 7) log.push(await idx.remove(`d${i}`));
  log.push(await idx.remove('nope'));
  // A bulk delete: present, already removed, repeated and unknown ids, in one store write.
  log.push(await idx.removeMany([...Array.from({ length: 40 }, (_, j) => `d${j * 13 + 2}`), 'd2', 'nope']));
  for (let i = 600; i < 700; i++) log.push(await idx.query(texts[i]!));
  for (let i = 0; i < 700; i += 10) log.push(await idx.query(texts[i]!, { limit: 2, threshold: 0.9 }));
  for (let i = 600; i < 640; i++) log.push(await idx.topK(texts[i]!, 5));
  // Planted copies (#51 item 3): topK lists them under one hit (the smallest id); filters select by metadata.
  log.push(
    await idx.addMany([600, 600, 601, 605, 600].map((j, c) => ({ id: `cp${4 - c}`, text: texts[j]!, meta: m(texts[j]!, { tag: c % 2 ? 'x' : 'y', c }) }))),
  );
  for (let i = 600; i < 610; i++)
    log.push(await idx.topK(texts[i]!, 3), await idx.topK(texts[i]!, 3, { filter: { tag: ['x', 'y'] } }), await idx.query(texts[i]!, { filter: { tag: 'x' } }));
  log.push(await idx.duplicatesOf('cp0', { filter: { tag: 'y' } }), await idx.add('cp5', texts[600]!, m(texts[600]!, { tag: 'x' }), { filter: { tag: 'y' } }));
  for (const id of ['d1', 'd3', 'd7', 'd8', 'd300', 'zzz']) log.push(await idx.get(id));
  log.push(await idx.size());
  // Expiry: copies of indexed texts with expiries (given, by ttl, replaced with and without one),
  // then the clock moves past some of them: they are neither found, got, counted nor clustered.
  log.push(
    await idx.addMany(
      texts.slice(600, 640).map((text, i) => ({ id: `x${i}`, text, meta: m(text), ...(i % 4 ? { expiresAt: t + 1000 * (i % 4) } : { ttl: '5s' }) })),
    ),
  );
  log.push(await idx.add('x1', texts[601]!, m(texts[601]!), { ttl: 60_000 }));
  log.push(await idx.add('x2', texts[602]!, m(texts[602]!)));
  log.push(await idx.add('x7', texts[607]!, m(texts[607]!, { tag: 'past' }), { expiresAt: t - 1 }));
  log.push(await idx.size(), await idx.get('x3'));
  t += 2500;
  log.push(await idx.size());
  for (let i = 600; i < 640; i += 3) log.push(await idx.query(texts[i]!));
  for (const id of ['x0', 'x1', 'x2', 'x3', 'x5', 'x7']) log.push(await idx.get(id), await idx.duplicatesOf(id, { fields: ['id', 'similarity'] }));
  log.push(await idx.removeMany(['x5', 'x6', 'x8']));
  t += 10_000;
  log.push(await idx.size(), await idx.topK(texts[604]!, 3));
  log.push((await idx.purgeExpired()).sort(), await idx.size(), await idx.store.size(), await idx.store.countExpired(t));
  log.push((await idx.clusters({ limit: 1000, members: 1000 })).clusters);
  // The candidate and verified counters too: a store that screens candidates (the file store) counts them alike.
  log.push((await idx.stats()).counters);
  // Reopen: persistent stores from their file or server, memory from a snapshot. Same answers again.
  const snapshot = path.join(dir, `${store.replace(/[^a-z0-9]/gi, '_')}${variant.textMeta ? `-${variant.setSource ?? 'record'}` : ''}.ndix`);
  if (store === 'memory') await idx.save(snapshot);
  await idx.close();
  const again = store === 'memory' ? await NearDupIndex.load(snapshot, { now }) : await NearDupIndex.open({ store, now });
  log.push(await again.size());
  for (let i = 600; i < 620; i++) log.push(await again.query(texts[i]!));
  // The expiry survives the reopen (and the snapshot): x1 expires after 60 s.
  log.push(await again.get('x1'));
  t += 60_000;
  log.push(await again.get('x1'), await again.size(), await again.purgeExpired(), await again.store.size());
  await again.close();
  return log;
}
