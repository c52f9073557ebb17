/**
 * `neardup compare <a> <b>`: how similar two documents are, per shingle kind, and what they share.
 * @module
 */
import { Command } from 'commander';
import { createShingler, defaultK, type ShingleKind } from '../../text/shingler.js';
import { createTextSigner } from '../../sketch/textSigner.js';
import { createMinHasher, estimateJaccard } from '../../sketch/minhash.js';
import { intersectionSize, jaccard } from '../../similarity/jaccard.js';
import { readTextFile } from '../../io/read/textFile.js';
import { shingleRuns } from '../../similarity/passages.js';
import {
  addLogOptions,
  addMinHashOptions,
  addShingleOptions,
  minhashOptionsFrom,
  parsePositiveInt,
  shingleOptionsFrom,
  validated,
  type EngineFlags,
} from '../options.js';
import { int, Reporter, type LogFlags } from '../report.js';

interface CompareFlags extends Pick<EngineFlags, 'shingle' | 'k' | 'normalize' | 'multiset' | 'stopwords' | 'numPerm' | 'method' | 'seed'>, LogFlags {
  text?: boolean;
  passages: number;
  minPassage?: number;
}

/** A passage of document a whose every character k-gram also occurs in document b. */
export interface SharedPassage {
  /** Start offset in a's normalized text (code points). */
  start: number;
  /** Length in code points. */
  length: number;
  /** The passage (normalized). */
  text: string;
}

/**
 * The maximal runs of a's character k-grams that occur in b, as passages of a's normalized text,
 * longest first. Also returns the fraction of a's characters they cover. The runs come from
 * {@link shingleRuns}; this adds their text.
 */
export function sharedPassages(a: string, b: string, k: number, normalize: EngineFlags['normalize']): { passages: SharedPassage[]; coverage: number } {
  const sh = createShingler({ kind: 'char', k, normalize: { preset: normalize } });
  const na = sh.normalize(a);
  const cps = Array.from(na);
  const setB = sh.set(b);
  if (cps.length < k || setB.length === 0) return { passages: [], coverage: 0 };
  const { runs, coverage } = shingleRuns(sh.fingerprints(na), setB, k, cps.length);
  return { passages: runs.map((r) => ({ start: r.start, length: r.length, text: cps.slice(r.start, r.start + r.length).join('') })), coverage };
}

/** The `compare` command. */
export function compareCommand(): Command {
  const cmd = new Command('compare')
    .description('compare two documents: exact Jaccard per shingle kind, the MinHash estimate, and the passages they share')
    .argument('<a>', 'first file (or text, with --text)')
    .argument('<b>', 'second file (or text, with --text)')
    .option('--text', 'the arguments are the texts themselves, not file names');
  addShingleOptions(cmd);
  addMinHashOptions(cmd);
  cmd
    .option('--passages <n>', 'how many shared passages to show', parsePositiveInt('passages', 1e6), 5)
    .option(
      '--min-passage <chars>',
      'shortest shared passage to show, in characters (default: 2k for char shingles, min 20)',
      parsePositiveInt('min-passage', 1e9),
    );
  addLogOptions(cmd, 'print the comparison as JSON on stdout');
  cmd.addHelpText(
    'after',
    `
-k and --shingle set the length for that kind; the other kinds use their defaults (char 5, word 3,
spot 3). Shared passages are runs of character k-grams of a that also occur in b (k from -k when
--shingle char, else 5), shown in a's normalized text.

Examples:
  $ neardup compare a.txt b.txt
  $ neardup compare --text "what's the flight time from Berlin to Helsinki" "what's the flight time from Berlin to Oulu"
  $ neardup compare page1.html page2.html --shingle word -k 4 --json`,
  );
  cmd.action(runCompare);
  return cmd;
}

/** `neardup compare`: the two texts, per shingle kind, and their shared passages (JSON or text). */
async function runCompare(a: string, b: string, flags: CompareFlags): Promise<void> {
  const reporter = new Reporter({ ...flags, json: false });
  const [ta, tb] = flags.text ? [a, b] : await Promise.all([readTextFile(a), readTextFile(b)]);
  const kinds: ShingleKind[] = ['char', 'word', 'spot'];
  const minhash = minhashOptionsFrom(flags);
  const hasher = validated(() => createMinHasher(minhash));
  const rows = kinds.map((kind) => {
    const k = kind === flags.shingle && flags.k !== undefined ? flags.k : defaultK(kind);
    // The library's one text → set and signature path, as dedup and the index use it.
    const signer = validated(() => createTextSigner({ shingle: shingleOptionsFrom({ ...flags, shingle: kind, k }), minhash }));
    const { set: sa, sig: ea } = signer.sketch(ta);
    const { set: sb, sig: eb } = signer.sketch(tb);
    const inter = intersectionSize(sa, sb);
    return { kind, k, sizeA: sa.length, sizeB: sb.length, intersection: inter, jaccard: jaccard(sa, sb), estimate: ea && eb ? estimateJaccard(ea, eb) : 0 };
  });
  const kc = flags.shingle === 'char' && flags.k !== undefined ? flags.k : 5;
  const minLen = flags.minPassage ?? Math.max(20, 2 * kc);
  const shared = sharedPassages(ta, tb, kc, flags.normalize);
  const shown = shared.passages.filter((p) => p.length >= minLen).slice(0, flags.passages);
  if (flags.json) {
    reporter.json({
      a: flags.text ? { text: ta } : { file: a, chars: ta.length },
      b: flags.text ? { text: tb } : { file: b, chars: tb.length },
      normalize: flags.normalize,
      minhash: { method: hasher.method, numPerm: hasher.numPerm, seed: hasher.seed },
      kinds: rows,
      shared: { k: kc, coverage: shared.coverage, passages: shown },
    });
    return;
  }
  const out = (s: string): void => void process.stdout.write(s + '\n');
  out(`a: ${flags.text ? 'text' : a} (${int(ta.length)} chars)   b: ${flags.text ? 'text' : b} (${int(tb.length)} chars)   normalize ${flags.normalize}`);
  out('');
  out(`kind   k   |A|      |B|      |A∩B|    Jaccard   estimate (${hasher.method}, ${hasher.numPerm})`);
  for (const r of rows) {
    out(
      `${r.kind.padEnd(5)} ${String(r.k).padStart(2)}   ${int(r.sizeA).padEnd(8)} ${int(r.sizeB).padEnd(8)} ${int(r.intersection).padEnd(8)} ${
        r.jaccard.toFixed(4).padEnd(9)
      } ${r.estimate.toFixed(4)}`,
    );
  }
  out('');
  out(
    `shared passages (char ${kc}-grams of a found in b): ${int(shared.passages.length)} run${shared.passages.length === 1 ? '' : 's'} covering ${
      (shared.coverage * 100).toFixed(1)
    }% of a; ${shown.length === 0 ? `none of ${minLen}+ chars` : `longest ${shown.length} of ${minLen}+ chars:`}`,
  );
  for (const p of shown) {
    const t = p.text.length > 160 ? `${p.text.slice(0, 120)} … ${p.text.slice(-30)}` : p.text;
    out(`  @${p.start} (${p.length} chars) "${t}"`);
  }
}
