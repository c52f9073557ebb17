/**
 * Synthetic classified-ad corpus for the online benchmarks: ~300-character ads from a 20,000-word
 * vocabulary, where 10% are near duplicates (a few words changed) of an earlier ad. Deterministic.
 */
import { splitmix32 } from '../src/hash/mix.js';

/** A generator of ads; `next()` returns the i-th ad for i = 0, 1, 2, … */
export function adCorpus(seed = 7): { next(): string; nearDupOf(text: string): string } {
  const rnd = splitmix32(seed);
  const syll = [
    'ca',
    'sa',
    'mo',
    'ri',
    'ta',
    'ne',
    'lo',
    'pi',
    'vi',
    'da',
    'fo',
    'gu',
    'le',
    'ma',
    'no',
    'ro',
    'si',
    'te',
    'zu',
    'be',
    'ce',
    'di',
    'al',
    'en',
    'or',
  ];
  const vocab: string[] = [];
  for (let i = 0; i < 20000; i++) {
    let w = '';
    const n = 2 + (rnd() % 3);
    for (let j = 0; j < n; j++) w += syll[rnd() % syll.length];
    vocab.push(w);
  }
  // Zipf-ish word choice: common words are much more common, as in real text.
  const word = () => vocab[Math.floor(vocab.length * Math.pow(rnd() / 4294967296, 2.5))]!;
  const recent: string[] = [];
  const nearDupOf = (text: string) => {
    const words = text.split(' ');
    const edits = 1 + (rnd() % 3);
    for (let e = 0; e < edits; e++) words[rnd() % words.length] = word();
    return words.join(' ');
  };
  return {
    nearDupOf,
    next() {
      let t: string;
      if (recent.length > 0 && rnd() % 10 === 0) t = nearDupOf(recent[rnd() % recent.length]!);
      else {
        const words: string[] = [];
        const n = 40 + (rnd() % 20);
        for (let i = 0; i < n; i++) words.push(word());
        t = words.join(' ');
      }
      if (recent.length < 1000) recent.push(t);
      else recent[rnd() % 1000] = t;
      return t;
    },
  };
}

/** p-th percentile (0..100) of a sorted array. */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}
