/**
 * The engine's options, defined once: for each user-visible option of the near-duplicate engine its
 * flag, help text, default, values and validator. `dedup()`, `NearDupIndex`, sharded jobs and the
 * CLI (whose commander options are built from {@link ENGINE_OPTIONS}) read their defaults and checks
 * here; what each route does with an option is in ./routes.ts.
 * @module
 */
import { NORMALIZE_PRESETS, PRESET_ALIASES } from '../text/normalize.js';

/** The candidate methods (`--candidates`). */
export const CANDIDATE_METHOD_VALUES = ['lsh', 'exact', 'sketch', 'auto'] as const;
/** The cluster modes (`--cluster-mode`). */
export const CLUSTER_MODE_VALUES = ['components', 'centre'] as const;
/** The representative policies (`--representative`). */
export const REPRESENTATIVE_VALUES = ['first', 'longest', 'central'] as const;
/** The removal rules (`--removal`). */
export const REMOVAL_RULE_VALUES = ['verified', 'cluster'] as const;
/** The verify modes (`--verify`). */
export const VERIFY_MODE_VALUES = ['exact', 'estimate', 'none'] as const;
/** The keep policies, as the option's help lists them (`--keep`). */
export const KEEP_POLICY_VALUES = ['first', 'longest', 'shortest', 'max:FIELD', 'min:FIELD', 'none', 'source'] as const;
/** The --normalize values: the presets, then their old names (accepted, same meaning). */
export const NORMALIZE_VALUES: readonly string[] = [...NORMALIZE_PRESETS, ...Object.keys(PRESET_ALIASES)];

/**
 * Every default of the engine, written once. The library fills unset options from these, the CLI
 * shows them in `--help`, and a sharded job's plan records them.
 */
export const ENGINE_DEFAULTS = {
  /** Jaccard threshold: pairs at or above it are near duplicates. */
  threshold: 0.8,
  /** P(candidate) at the threshold that automatic banding guarantees. */
  minRecall: 0.99,
  /** The most pairs held in memory (~40 bytes each). */
  maxPairs: 50_000_000,
  /** How candidates are checked. */
  verify: 'exact' as (typeof VERIFY_MODE_VALUES)[number],
  /** Shingle kind. */
  shingle: 'char' as const,
  /** Normalization preset. */
  normalize: 'default' as const,
  /** MinHash signature length. */
  numPerm: 128,
  /** MinHash method. */
  method: 'oph' as const,
  /** MinHash seed. */
  seed: 1,
  /** Similarity measure. */
  measure: 'jaccard' as const,
  /** Buckets of the `sketch` candidates (25 suits about 100 documents). */
  buckets: 25,
  /**
   * `--candidates auto` takes the exact join for word/spot shingles of documents with at most this
   * many shingles on average (../dedup/kinds.ts, `autoChoice`; measured in bench/RESULTS.md).
   */
  autoExactMaxShingles: 100,
  /** Cluster mode. */
  clusterMode: 'components' as const,
  /** Representative of a cluster. */
  representative: 'first' as const,
  /** Keep policy. */
  keep: 'first' as const,
  /** Removal rule. */
  removal: 'verified' as const,
  /** Fingerprint width in bits. */
  fingerprintBits: 32 as const,
};

/**
 * Throws a RangeError unless `threshold` is in (0, 1] (NaN included): the one check every
 * similarity threshold of the library goes through, so they all reject the same values in the same words.
 */
export function checkThreshold(threshold: number): void {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
}

/** Checks a verify mode (exact, estimate or none); throws a RangeError naming the bad value. */
export function checkVerifyMode(verify: unknown): void {
  if (!(VERIFY_MODE_VALUES as readonly unknown[]).includes(verify))
    throw new RangeError(`unknown verify mode "${String(verify)}" (expected exact, estimate or none)`);
}

/** Checks a pair limit; throws a RangeError naming the bad value. */
export function checkMaxPairs(maxPairs: number): void {
  if (!(maxPairs >= 0)) throw new RangeError(`maxPairs must be a number ≥ 0, got ${maxPairs}`);
}

/** Whether `value` is a keep policy (`first`, …, `max:FIELD`, `min:FIELD`). */
export function isKeepPolicy(value: string): boolean {
  return ['first', 'longest', 'shortest', 'none', 'source'].includes(value) || /^(max|min):(.+)$/.test(value);
}

/** A command-line text parser: returns the value, or throws a RangeError whose message names the option. */
export type TextParser = (text: string) => unknown;

/** Parses a number in (0, 1] (a threshold or probability); `open`: in (0, 1). */
export function unitParser(name: string, open = false): (v: string) => number {
  return (v) => {
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x) || x <= 0 || x > 1 || (open && x >= 1)) {
      throw new RangeError(`${name} must be a number in (0, ${open ? '1)' : '1]'}, got "${v}"`);
    }
    return x;
  };
}

/** Parses an integer from `min` to `max` (digits only: no sign, exponent or fraction). */
export function intParser(name: string, min: number, max: number): (v: string) => number {
  return (v) => {
    const x = Number(v);
    if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(x) || x < min || x > max) {
      throw new RangeError(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
    }
    return x;
  };
}

/** Parses a non-negative integer seed. */
export function seedParser(v: string): number {
  const x = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(x)) throw new RangeError(`seed must be a non-negative integer, got "${v}"`);
  return x;
}

/** Parses `fp,fn` weights. */
export function weightsParser(v: string): { fp: number; fn: number } {
  const parts = v.split(',').map((s) => Number(s));
  if (parts.length !== 2 || parts.some((x) => !Number.isFinite(x) || x < 0) || parts[0]! + parts[1]! <= 0) {
    throw new RangeError(`weights must be two non-negative numbers "fp,fn", not both 0, got "${v}"`);
  }
  return { fp: parts[0]!, fn: parts[1]! };
}

/** Parses a keep policy (the message lists the policies). */
export function keepParser(v: string): string {
  if (!isKeepPolicy(v)) throw new RangeError(`expected ${KEEP_POLICY_VALUES.join(', ')}`);
  return v;
}

/** Collects comma-separated lists over repeated flags: `--text a,b --text c` gives [a, b, c]. */
export function collectList(v: string, previous: string[] | undefined): string[] {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return [...(previous ?? []), ...items];
}

/** The groups of engine options, in the order `neardup dedup --help` lists them. */
export type EngineOptionGroup = 'shingle' | 'minhash' | 'lsh' | 'kind' | 'check';

/** One user-visible option of the engine. */
export interface EngineOptionDef {
  /** Its name: the commander attribute of its flag (`maxPairs` for `--max-pairs`). */
  name: string;
  /** The command-line flags, as commander takes them (`--threshold <t>`). */
  flags: string;
  /** The help text of `neardup dedup`. */
  help: string;
  /** Which `add…Options` adds it. */
  group: EngineOptionGroup;
  /** The value commander holds when the option is not given (none: undefined). */
  cliDefault?: string | number | boolean;
  /** The values it takes, for options that take one of a list. */
  choices?: readonly string[];
  /** Parses the command-line text; throws a RangeError naming the option. */
  parse?: TextParser;
  /** Collects a repeated option (`--stopwords en --stopwords de`). */
  collect?: (v: string, previous: string[] | undefined) => string[];
  /** Options it cannot be given with. */
  conflicts?: string[];
}

const D = ENGINE_DEFAULTS;

/**
 * Every engine option, once. Commands build their commander options from these entries (the help
 * texts are `neardup dedup`'s), so an option added here reaches every command that runs the engine,
 * and every route then accepts or refuses it by ./routes.ts.
 */
export const ENGINE_OPTIONS: EngineOptionDef[] = [
  {
    name: 'shingle',
    group: 'shingle',
    flags: '--shingle <kind>',
    help: 'shingles: char k-grams, word k-grams, or stopword-anchored "spot" signatures',
    choices: ['char', 'word', 'spot'],
    cliDefault: D.shingle,
  },
  {
    name: 'k',
    group: 'shingle',
    flags: '-k <n>',
    help: 'shingle length: characters for char (default 5), words for word and spot (default 3)',
    parse: intParser('k', 1, 1000),
  },
  {
    name: 'normalize',
    group: 'shingle',
    flags: '--normalize <preset>',
    help:
      'text normalization: default (NFKC, lowercase, collapse whitespace), lowercase-collapse (collapse runs of spaces or of newlines to one space, lowercase; nothing else; alias seed000), none',
    choices: NORMALIZE_VALUES,
    cliDefault: D.normalize,
  },
  { name: 'multiset', group: 'shingle', flags: '--multiset', help: 'count repeated shingles (multiset Jaccard)' },
  { name: 'stopwords', group: 'shingle', flags: '--stopwords <langs>', help: 'stopword languages for --shingle spot, comma-separated', collect: collectList },
  {
    name: 'numPerm',
    group: 'minhash',
    flags: '--num-perm <n>',
    help: 'MinHash signature length',
    parse: intParser('num-perm', 1, 65536),
    cliDefault: D.numPerm,
  },
  {
    name: 'method',
    group: 'minhash',
    flags: '--method <method>',
    help: 'MinHash: one-permutation hashing (oph) or classic k permutations',
    choices: ['oph', 'classic'],
    cliDefault: D.method,
  },
  { name: 'seed', group: 'minhash', flags: '--seed <n>', help: 'MinHash seed', parse: seedParser, cliDefault: D.seed },
  {
    name: 'threshold',
    group: 'lsh',
    flags: '--threshold <t>',
    help: 'Jaccard similarity at or above which two documents are near duplicates',
    parse: unitParser('threshold'),
    cliDefault: D.threshold,
  },
  {
    name: 'minRecall',
    group: 'lsh',
    flags: '--min-recall <p>',
    help: `choose bands so that P(threshold) ≥ p, with the fewest false candidates (default ${D.minRecall})`,
    parse: unitParser('min-recall', true),
    conflicts: ['weights'],
  },
  {
    name: 'weights',
    group: 'lsh',
    flags: '--weights <fp,fn>',
    help: 'choose bands minimising fp·false-positive area + fn·false-negative area (datasketch style)',
    parse: weightsParser,
  },
  {
    name: 'bands',
    group: 'lsh',
    flags: '--bands <b>',
    help: 'explicit number of bands (overrides --min-recall/--weights)',
    parse: intParser('bands', 1, 65536),
  },
  { name: 'rows', group: 'lsh', flags: '--rows <r>', help: 'explicit rows per band', parse: intParser('rows', 1, 65536) },
  {
    name: 'maxPairs',
    group: 'lsh',
    flags: '--max-pairs <n>',
    help:
      `most pairs held in memory (LSH candidates among distinct documents, and pairs written); past it, stop with a clear error (default ${D.maxPairs}, ~40 bytes each)`,
    parse: intParser('max-pairs', 1, 1e9),
  },
  {
    name: 'measure',
    group: 'kind',
    flags: '--measure <m>',
    help: "jaccard, or containment: pairs where the smaller document is ≥ threshold inside the larger (output a⇥b⇥c: c of a's shingles are in b)",
    choices: ['jaccard', 'containment'],
    cliDefault: D.measure,
  },
  {
    name: 'candidates',
    group: 'kind',
    flags: '--candidates <method>',
    help:
      `where candidate pairs come from: lsh (MinHash bands), exact (prefix-filtering join: every pair ≥ threshold), sketch (documents sharing a bucket minimum of their hashed shingles), auto (exact for containment, and for word/spot shingles of short documents: ≤ ${D.autoExactMaxShingles} shingles on average, where it measured faster; else lsh) (default: auto for word/spot shingles, lsh for char shingles, exact for containment)`,
    choices: CANDIDATE_METHOD_VALUES,
  },
  {
    name: 'buckets',
    group: 'kind',
    flags: '--buckets <n>',
    help: `buckets of --candidates sketch (default ${D.buckets})`,
    parse: intParser('buckets', 1, 65536),
  },
  {
    name: 'clusterMode',
    group: 'kind',
    flags: '--cluster-mode <mode>',
    help: "components (transitive: a~b, b~c put a, b, c together) or centre (every member a near duplicate of the cluster's centre)",
    choices: CLUSTER_MODE_VALUES,
    cliDefault: D.clusterMode,
  },
  {
    name: 'fingerprintBits',
    group: 'kind',
    flags: '--fingerprint-bits <n>',
    help:
      'shingle fingerprint width for sets and exact scores: 32, or 64 (no chance collisions of distinct shingles on large corpora; needs --candidates exact)',
    choices: ['32', '64'],
    cliDefault: String(D.fingerprintBits),
  },
  {
    name: 'representative',
    group: 'kind',
    flags: '--representative <policy>',
    help:
      'the member a cluster keeps (dedup) and points to (annotate): first, longest text, or most central (first and longest are --keep policies; central needs the texts in memory)',
    choices: REPRESENTATIVE_VALUES,
    cliDefault: D.representative,
  },
  {
    name: 'keep',
    group: 'kind',
    flags: '--keep <policy>',
    help:
      `for --output dedup|annotate|clusters, the order in which documents are kept: first (input order), longest or shortest text, max:FIELD or min:FIELD (a numeric or ISO date JSON field or TSV/CSV column; ties: input order), none (drop every clustered document), source (documents of the earliest of several inputs first, A in "dedup A B C"; with one input, first); the clusters stay the same (default ${D.keep})`,
    parse: keepParser,
  },
  {
    name: 'removal',
    group: 'kind',
    flags: '--removal <rule>',
    help:
      'which documents --output dedup drops: verified (each document in --keep order is kept unless a kept document is its verified near duplicate: every dropped document has a kept one ≥ --threshold) or cluster (one member kept per cluster: removes more, but near duplication is not transitive, so a dropped member can be far below the threshold to its survivor)',
    choices: REMOVAL_RULE_VALUES,
    cliDefault: D.removal,
  },
  {
    name: 'verify',
    group: 'check',
    flags: '--verify <mode>',
    help: 'check candidates by exact Jaccard, by the MinHash estimate, or not at all',
    choices: VERIFY_MODE_VALUES,
    cliDefault: D.verify,
  },
];

/** The engine option named `name` (its commander attribute); undefined for another option. */
export function engineOption(name: string): EngineOptionDef | undefined {
  return ENGINE_OPTIONS.find((o) => o.name === name);
}

/**
 * The long flag of option `name` as typed (`--cluster-mode`; `-k` for k): the engine table's, else
 * the commander attribute in kebab case (`exact` → `--exact`).
 */
export function flagName(name: string): string {
  const def = engineOption(name);
  if (def) return /--[a-z][\w-]*/.exec(def.flags)?.[0] ?? def.flags.split(/[ ,]/)[0]!;
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
