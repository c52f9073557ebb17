/**
 * Deterministic corpus generator for benchmarks: pseudo-words with a Zipf-like frequency, about
 * 1.5 KB per document (mostly ASCII, ~3% accented Latin words), and planted near duplicates.
 *
 * A fraction `dupRate` of documents are edited copies of a uniformly chosen earlier document (so
 * duplicates sit anywhere in the file, the hard case for a streaming verifier). With `chainRate` c,
 * a copy's source is an earlier *copy* with probability c (so copies of copies form chains, as in a
 * web crawl where pages are re-published from re-published pages), else an original. Each copy
 * replaces a fraction q of its source's words, q drawn from EDIT_RATES; the planted pairs (copy and
 * its immediate source) and their q are written to `<out>.truth.tsv` (source, copy, q).
 *
 * Usage: node dist/bench/gen.js --docs 1000000 --out bench/data/m1.tsv [--dup-rate 0.1] [--chain-rate 0]
 *        [--format idtext|jsonl] [--seed 7] [--shards 32]
 * Output lines: `<id>\t<text>\n` (the text has no tab or newline), or with `--format jsonl`
 * `{"id":"<id>","url":"https://example.org/<id>","text":"<text>"}` lines (read with the default
 * `text` field). --shards (idtext only): also the same documents as JSONL shards in
 * `<out>.shards/`, see {@link writeJsonlShards}.
 * @module
 */
import { openSync, writeSync, closeSync, mkdirSync, renameSync, createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { fmix32, splitmix32 } from '../src/hash/mix.js';

/** Word replacement rates of the planted copies. */
export const EDIT_RATES = [0, 0.01, 0.02, 0.04, 0.06, 0.1, 0.15, 0.25];

const CONS = ['b', 'c', 'd', 'f', 'g', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'ch', 'st', 'tr', 'br', 'pr', 'sc'];
const VOW = ['a', 'e', 'i', 'o', 'u', 'ia', 'io', 'ue'];
const ACC = ['à', 'è', 'é', 'ì', 'ò', 'ù', 'ü', 'ñ', 'ç'];

/** A vocabulary of `size` distinct pseudo-words, deterministic in `seed`. */
export function vocabulary(size: number, seed: number): string[] {
  const rnd = splitmix32(seed);
  const seen = new Set<string>();
  const words: string[] = [];
  while (words.length < size) {
    const syl = 1 + (rnd() % 4);
    let w = '';
    for (let s = 0; s < syl; s++) w += CONS[rnd() % CONS.length]! + VOW[rnd() % VOW.length]!;
    if (rnd() % 100 < 3) w += ACC[rnd() % ACC.length]!;
    else if (rnd() % 3 === 0) w += CONS[rnd() % 12]!;
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/** Generates documents as word-index arrays and renders them; see the module comment. */
export class CorpusGenerator {
  private readonly vocab: string[];
  constructor(readonly seed = 7) {
    this.vocab = vocabulary(40000, seed);
  }

  private pick(rnd: () => number): number {
    const u = rnd() / 4294967296;
    return Math.floor(this.vocab.length * u * u * u);
  }

  /** The words (vocabulary indices) of original document `i`. */
  original(i: number): Int32Array {
    const rnd = splitmix32(fmix32((i ^ Math.imul(this.seed, 0x9e3779b1)) >>> 0));
    const target = 1200 + (rnd() % 600);
    const words: number[] = [];
    let len = 0;
    while (len < target) {
      const w = this.pick(rnd);
      words.push(w);
      len += this.vocab[w]!.length + 1;
    }
    return Int32Array.from(words);
  }

  /**
   * A copy of `words` with a fraction `q` of them replaced, deterministic in `salt`: by words drawn
   * as the originals draw them, or `uniform` over the vocabulary (a long chain of edits then keeps
   * drifting apart, where Zipf-drawn replacements pull it towards the common words).
   */
  edit(words: Int32Array, q: number, salt: number, uniform = false): Int32Array {
    const rnd = splitmix32(fmix32((salt ^ 0x5bd1e995) >>> 0));
    const out = words.slice();
    const n = Math.round(out.length * q);
    for (let e = 0; e < n; e++) out[rnd() % out.length] = uniform ? rnd() % this.vocab.length : this.pick(rnd);
    return out;
  }

  /** Text of a word array: sentences of 8–20 words, capitalized, with ". " and occasional ", ". */
  render(words: Int32Array, salt: number): string {
    const rnd = splitmix32(salt >>> 0);
    const parts: string[] = [];
    let sentence = 0;
    for (let i = 0; i < words.length; i++) {
      let w = this.vocab[words[i]!]!;
      if (sentence === 0) w = w[0]!.toUpperCase() + w.slice(1);
      sentence++;
      const end = i === words.length - 1 || (sentence >= 8 && rnd() % 8 === 0);
      if (end) {
        parts.push(w + '.');
        sentence = 0;
      } else parts.push(rnd() % 15 === 0 ? w + ',' : w);
    }
    return parts.join(' ');
  }
}

/**
 * Document `i` of the online stores' benches (bench/file-store.ts fills a store with them,
 * bench/online-http.ts adds more): every tenth an edited copy of the one five before it.
 */
export function storeDocument(gen: CorpusGenerator, i: number): string {
  if (i % 10 === 9) return gen.render(gen.edit(gen.original(i - 5), 0.05, i), i);
  return gen.render(gen.original(i), i);
}

/** Options of {@link generateCorpus}. */
/**
 * `n` short generated documents (10–24 words, ~60–170 characters, like titles or short ads): 70%
 * originals, 30% copies of an earlier document with a fraction of their words replaced.
 */
export function shortCorpus(n: number): string[] {
  const gen = new CorpusGenerator(23);
  const words: Int32Array[] = [];
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const h = Math.imul(i + 1, 0x9e3779b1) >>> 0;
    const w = i > 0 && h % 10 < 3 ? gen.edit(words[h % i]!, EDIT_RATES[h % EDIT_RATES.length]!, i) : gen.original(i).subarray(0, 10 + (h % 15));
    words.push(w);
    texts.push(gen.render(w, i));
  }
  return texts;
}

export interface GenerateOptions {
  /** Number of documents. */
  docs: number;
  /** Output TSV path (written atomically); the truth file is `<out>.truth.tsv`. */
  out: string;
  /** Fraction of documents that are planted near duplicates. Default 0.1. */
  dupRate?: number;
  /** Seed. Default 7. */
  seed?: number;
  /** Fraction of copies whose source is an earlier copy (chains of copies). Default 0. */
  chainRate?: number;
  /** `idtext` (default): `<id>\t<text>` lines; `jsonl`: one JSON object per line. */
  format?: 'idtext' | 'jsonl';
}

/** Writes a corpus and its planted pairs; returns the bytes written and the number of planted pairs. */
export function generateCorpus(options: GenerateOptions): { bytes: number; planted: number } {
  const { docs, out } = options;
  const dupRate = options.dupRate ?? 0.1;
  const seed = options.seed ?? 7;
  const gen = new CorpusGenerator(seed);
  const rnd = splitmix32(seed ^ 0x1234567);
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.tmp`;
  const fd = openSync(tmp, 'w');
  const truth: string[] = [];
  // Root original of each document (its rendering salt), its immediate source (−1: an original)
  // and its edit rate; copies are listed so a chained copy can pick one.
  const root = new Int32Array(docs);
  const parent = new Int32Array(docs).fill(-1);
  const rate = new Float64Array(docs);
  const copies: number[] = [];
  const chainRate = options.chainRate ?? 0;
  const format = options.format ?? 'idtext';
  // Words of document i: its original, or its source's words edited (recursively, for chains).
  const wordsOf = (i: number): Int32Array => (parent[i]! < 0 ? gen.original(i) : gen.edit(wordsOf(parent[i]!), rate[i]!, i));
  let bytes = 0;
  let chunk: string[] = [];
  let chunkLen = 0;
  for (let i = 0; i < docs; i++) {
    const dup = i > 0 && rnd() / 4294967296 < dupRate;
    if (dup) {
      const chained = copies.length > 0 && chainRate > 0 && rnd() / 4294967296 < chainRate;
      const src = chained ? copies[rnd() % copies.length]! : root[rnd() % i]!;
      const q = EDIT_RATES[rnd() % EDIT_RATES.length]!;
      parent[i] = src;
      rate[i] = q;
      root[i] = root[src]!;
      copies.push(i);
      truth.push(`${src}\t${i}\t${q}\n`);
    } else {
      root[i] = i;
    }
    const words = wordsOf(i);
    const text = gen.render(words, root[i]! * 31 + 1);
    const line = format === 'jsonl' ? `{"id":"${i}","url":"https://example.org/${i}","text":${JSON.stringify(text)}}\n` : `${i}\t${text}\n`;
    chunk.push(line);
    chunkLen += line.length;
    if (chunkLen > 1 << 22) {
      bytes += writeSync(fd, chunk.join(''));
      chunk = [];
      chunkLen = 0;
    }
  }
  bytes += writeSync(fd, chunk.join(''));
  closeSync(fd);
  renameSync(tmp, out);
  const tfd = openSync(`${out}.truth.tsv.tmp`, 'w');
  writeSync(tfd, truth.join(''));
  closeSync(tfd);
  renameSync(`${out}.truth.tsv.tmp`, `${out}.truth.tsv`);
  return { bytes, planted: truth.length };
}

/** Options of {@link generateShards}. */
export interface ShardsOptions {
  docs: number;
  /** Directory of the shards `part-NNNN.jsonl` (plain JSONL, consecutive documents each). */
  dir: string;
  shards: number;
  dupRate?: number;
  chainRate?: number;
  /**
   * Documents of one planted chain (each an edit of the one before, 1–4 % of its words), placed
   * through the whole corpus in chain order: one connected component of this many documents whose
   * ends share nothing. Default 0.
   */
  giant?: number;
  seed?: number;
}

/**
 * Writes a corpus as plain JSONL shards (`{"id","url","text"}` lines), as {@link generateCorpus}
 * makes it, and one giant chain through it; returns the bytes written and the giant chain's size.
 * Streams: memory does not grow with the corpus beyond 13 bytes per document.
 */
export function generateShards(options: ShardsOptions): { bytes: number; giant: number } {
  const { docs, dir, shards } = options;
  const dupRate = options.dupRate ?? 0.1;
  const seed = options.seed ?? 7;
  const giant = options.giant ?? 0;
  const gen = new CorpusGenerator(seed);
  const rnd = splitmix32(seed ^ 0x1234567);
  const place = splitmix32(seed ^ 0x7654321);
  mkdirSync(dir, { recursive: true });
  const root = new Int32Array(docs);
  const parent = new Int32Array(docs).fill(-1);
  const rate = new Float32Array(docs);
  const copies: number[] = [];
  const chainRate = options.chainRate ?? 0;
  const wordsOf = (i: number): Int32Array => (parent[i]! < 0 ? gen.original(i) : gen.edit(wordsOf(parent[i]!), rate[i]!, i));
  const per = Math.ceil(docs / shards);
  let bytes = 0;
  let chain: Int32Array | undefined;
  let inChain = 0;
  let fd = -1;
  let name = '';
  let chunk: string[] = [];
  let chunkLen = 0;
  const flush = (): void => {
    bytes += writeSync(fd, chunk.join(''));
    chunk = [];
    chunkLen = 0;
  };
  for (let i = 0; i < docs; i++) {
    if (i % per === 0) {
      if (fd >= 0) {
        flush();
        closeSync(fd);
        renameSync(`${name}.tmp`, name);
      }
      name = join(dir, `part-${String(i / per).padStart(4, '0')}.jsonl`);
      fd = openSync(`${name}.tmp`, 'w');
    }
    let words: Int32Array;
    let salt: number;
    // A giant-chain document with probability giant/docs (while the chain is short of its size).
    if (inChain < giant && place() / 4294967296 < (giant - inChain) / (docs - i)) {
      chain = chain ? gen.edit(chain, [0.01, 0.02, 0.04][place() % 3]!, i, true) : gen.original(i);
      words = chain;
      salt = 12345;
      inChain++;
      root[i] = i;
    } else {
      const dup = i > 0 && rnd() / 4294967296 < dupRate;
      if (dup) {
        const chained = copies.length > 0 && chainRate > 0 && rnd() / 4294967296 < chainRate;
        const src = chained ? copies[rnd() % copies.length]! : root[rnd() % i]!;
        parent[i] = src;
        rate[i] = EDIT_RATES[rnd() % EDIT_RATES.length]!;
        root[i] = root[src]!;
        copies.push(i);
      } else root[i] = i;
      words = wordsOf(i);
      salt = root[i]! * 31 + 1;
    }
    const line = `{"id":"${i}","url":"https://example.org/${i}","text":${JSON.stringify(gen.render(words, salt))}}\n`;
    chunk.push(line);
    chunkLen += line.length;
    if (chunkLen > 1 << 22) flush();
  }
  flush();
  closeSync(fd);
  renameSync(`${name}.tmp`, name);
  return { bytes, giant: inChain };
}

/**
 * Splits a generated corpus (`<id>⇥<text>` lines) into `shards` JSONL shards `part-NNNN.jsonl`
 * under `dir` (`{"id": "<id>", "text": "…"}` per line), consecutive documents per shard; every
 * odd-numbered shard is gzipped (`.jsonl.gz`), so a job reads both. Returns the shard paths.
 */
export async function writeJsonlShards(file: string, dir: string, shards: number, docs: number): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const per = Math.ceil(docs / shards);
  const paths: string[] = [];
  let lines: string[] = [];
  let shard = 0;
  const flush = (): void => {
    const name = join(dir, `part-${String(shard).padStart(4, '0')}.jsonl${shard % 2 === 1 ? '.gz' : ''}`);
    const text = lines.join('');
    const fd = openSync(`${name}.tmp`, 'w');
    writeSync(fd, shard % 2 === 1 ? gzipSync(text, { level: 1 }) : Buffer.from(text));
    closeSync(fd);
    renameSync(`${name}.tmp`, name);
    paths.push(name);
    lines = [];
    shard++;
  };
  for await (const line of createInterface({ input: createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
    const tab = line.indexOf('\t');
    lines.push(JSON.stringify({ id: line.slice(0, tab), text: line.slice(tab + 1) }) + '\n');
    if (lines.length === per) flush();
  }
  if (lines.length > 0) flush();
  return paths;
}

function arg(name: string, def?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

const USAGE = `node dist/bench/gen.js --docs N [--out bench/data/corpus.tsv] [--format idtext|jsonl] [--dup-rate 0.1] [--chain-rate 0] [--seed 7] [--shards K]
node dist/bench/gen.js --docs N --jsonl-shards DIR [--shards 32] [--giant M] [--dup-rate 0.1] [--chain-rate 0] [--seed 7]
Writes a generated corpus (about 1.5 KB a document, planted near duplicates listed in <out>.truth.tsv); --docs defaults to 70000 (107 MB).`;

const main = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/.*\//, ''));
if (main && (process.argv.includes('--help') || process.argv.includes('-h'))) {
  // Only a help flag: print the usage and write nothing (the defaults would write a 107 MB corpus).
  console.log(USAGE);
} else if (main && arg('jsonl-shards')) {
  // node dist/bench/gen.js --docs N --jsonl-shards DIR --shards K [--giant M] [--dup-rate r] [--chain-rate c]
  const t0 = performance.now();
  const r = generateShards({
    docs: Number(arg('docs', '70000')),
    dir: arg('jsonl-shards')!,
    shards: Number(arg('shards', '32')),
    dupRate: Number(arg('dup-rate', '0.1')),
    chainRate: Number(arg('chain-rate', '0')),
    giant: Number(arg('giant', '0')),
    seed: Number(arg('seed', '7')),
  });
  console.log(
    `wrote ${arg('jsonl-shards')}: ${(r.bytes / 1e9).toFixed(2)} GB, a giant chain of ${r.giant} documents, in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );
} else if (main) {
  const docs = Number(arg('docs', '70000'));
  const out = arg('out', 'bench/data/corpus.tsv')!;
  const t0 = performance.now();
  const format = arg('format', 'idtext');
  if (format !== 'idtext' && format !== 'jsonl') throw new Error(`--format must be idtext or jsonl, got ${format}`);
  const r = generateCorpus({
    docs,
    out,
    dupRate: Number(arg('dup-rate', '0.1')),
    chainRate: Number(arg('chain-rate', '0')),
    format,
    seed: Number(arg('seed', '7')),
  });
  console.log(`wrote ${out}: ${docs} docs, ${(r.bytes / 1e6).toFixed(1)} MB, ${r.planted} planted pairs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const shards = Number(arg('shards', '0'));
  if (shards > 0) {
    if (format !== 'idtext') throw new Error('--shards splits an idtext corpus: leave out --format jsonl');
    const paths = await writeJsonlShards(out, `${out}.shards`, shards, docs);
    console.log(`wrote ${paths.length} JSONL shards (odd ones gzipped) to ${out}.shards`);
  }
}
