/**
 * Options shared by several commands, and their conversion to library options.
 * @module
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { DedupOptions, VerifyMode } from '../dedup/dedup.js';
import type { ShingleKind, ShingleOptions } from '../text/shingler.js';
import { createShingler } from '../text/shingler.js';
import type { MinHashMethod, MinHashOptions } from '../sketch/minhash.js';
import { createMinHasher } from '../sketch/minhash.js';
import { chooseBands, type ChooseBandsOptions } from '../lsh/params.js';
import type { NormalizePreset } from '../text/normalize.js';
import { UsageError } from '../common/errors.js';
import { INPUT_FORMATS, extensionOf, type InputFormat } from '../io/read/formats.js';
import type { PairFormat } from '../io/write/write.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';
import type { CandidateMethod } from '../dedup/kinds.js';
import type { KeepPolicy } from '../cluster/keepPolicy.js';
import type { RemovalRule } from '../cluster/removal.js';
import type { ClusterMode, RepresentativePolicy } from '../cluster/clusterPolicy.js';
import { firstRefusal, routeMarks, type Route } from '../engine/routes.js';
import {
  collectList,
  ENGINE_OPTIONS,
  flagName,
  intParser,
  NORMALIZE_VALUES,
  seedParser,
  unitParser,
  weightsParser,
  type EngineOptionDef,
  type EngineOptionGroup,
} from '../engine/options.js';
import type { ReadOptions } from '../io/read/read.js';
import { setZstdLevel, ZSTD_DEFAULT_LEVEL, ZSTD_MAX_LEVEL } from '../io/codec/zstd.js';

/** An engine parser (RangeError) as a commander one (InvalidArgumentError: a usage error naming the option). */
export function cliParser<T>(parse: (v: string) => T): (v: string) => T {
  return (v) => {
    try {
      return parse(v);
    } catch (e) {
      if (e instanceof RangeError) throw new InvalidArgumentError(e.message);
      throw e;
    }
  };
}

/** Parses a number in (0, 1] (a threshold or probability). */
export function parseUnit(name: string, open = false): (v: string) => number {
  return cliParser(unitParser(name, open));
}

/** Parses an integer from `min` to `max` (digits only: no sign, exponent or fraction). */
function parseIntInRange(name: string, min: number, max: number): (v: string) => number {
  return cliParser(intParser(name, min, max));
}

/** Parses a positive integer. */
export function parsePositiveInt(name: string, max = 1e9): (v: string) => number {
  return parseIntInRange(name, 1, max);
}

/** Parses an integer from 0 to `max`. */
export function parseCount(name: string, max = 1024): (v: string) => number {
  return parseIntInRange(name, 0, max);
}

/** Parses a non-negative integer seed. */
export const parseSeed: (v: string) => number = cliParser(seedParser);

/** Parses `fp,fn` weights. */
export const parseWeights: (v: string) => { fp: number; fn: number } = cliParser(weightsParser);

/** Collects comma-separated lists over repeated flags (defined with the engine's options). */
export { collectList };

/**
 * Adds --format, --text, --id, --text-field, --id-field, --delimiter, --skip-invalid and, unless
 * `limit` is false (a command whose --limit means something else), --limit.
 */
export function addInputOptions(cmd: Command, limit = true): Command {
  cmd
    .addOption(new Option('--format <format>', 'input format').choices(['auto', ...INPUT_FORMATS]).default('auto'))
    .option(
      '--text <columns>',
      'TSV/CSV/Parquet text column(s), comma-separated, joined by one space (default: a column named "text", or the only column)',
      collectList,
    )
    .option('--id <column>', 'TSV/CSV/Parquet id column (default: the 0-based row number)')
    .option('--text-field <paths>', 'JSONL text field(s), dotted paths like meta.title, comma-separated (default: text)', collectList)
    .option('--id-field <path>', 'JSONL id field (default: the 0-based row number)')
    .option('--delimiter <char>', 'CSV field delimiter (default: ",")')
    .option(
      '--tsv-quotes',
      'read TSV with CSV-style quotes (a field starting with " may hold tabs and line breaks); default: a line is a record, no quoting (IANA text/tab-separated-values)',
    )
    .option('--skip-invalid', 'skip invalid records (ragged rows, bad JSON, invalid UTF-8) and report how many, instead of stopping at the first');
  if (limit) cmd.option('--limit <n>', 'read only the first n documents (e.g. 500 for a quick look at a large file)', parsePositiveInt('limit', 1e12));
  else cmd.option('--first <n>', 'read only the first n documents of the input', parsePositiveInt('first', 1e12));
  return cmd;
}

/** The parsed input options. */
export interface InputFlags {
  format: InputFormat | 'auto';
  text?: string[];
  id?: string;
  textField?: string[];
  idField?: string;
  /** Undefined when not given: a comma, and a CSV header another delimiter splits is refused with a hint. */
  delimiter?: string;
  tsvQuotes?: boolean;
  skipInvalid?: boolean;
  limit?: number;
  first?: number;
}

/** Input flags as reader options. For JSONL and Parquet, --text and --id work as --text-field and --id-field. */
export function readOptionsFrom(f: InputFlags): ReadOptions {
  if (f.delimiter !== undefined && f.delimiter.length !== 1) throw new UsageError(`--delimiter must be one character, got "${f.delimiter}"`);
  return {
    format: f.format,
    columns: { text: f.text, id: f.id },
    fields: { text: f.textField ?? f.text, id: f.idField ?? f.id },
    delimiter: f.delimiter,
    tsvQuotes: f.tsvQuotes ?? false,
    skipInvalid: f.skipInvalid ?? false,
    ...(f.first !== undefined ? { limit: f.first } : f.limit !== undefined ? { limit: f.limit } : {}),
  };
}

/** The --normalize values: the presets, then their old names (accepted, same meaning). */
export const NORMALIZE_CHOICES: string[] = [...NORMALIZE_VALUES];

/**
 * The commander option of an engine option's definition (../engine/options.ts): its flags, help,
 * values, default and parser, as every command that takes it shows and parses it. `help` replaces
 * the help text for a command that says it its own way (`neardup params`).
 */
export function engineCliOption(def: EngineOptionDef, help?: { help: string }): Option {
  const o = new Option(def.flags, help?.help ?? def.help);
  if (def.choices) o.choices([...def.choices]);
  if (def.cliDefault !== undefined) o.default(def.cliDefault);
  if (def.parse) o.argParser(cliParser(def.parse));
  if (def.collect) o.argParser(def.collect);
  if (def.conflicts) o.conflicts(def.conflicts);
  return o;
}

/** Adds the engine options of `group`, in the table's order. */
export function addEngineGroup(cmd: Command, group: EngineOptionGroup): Command {
  for (const def of ENGINE_OPTIONS) if (def.group === group) cmd.addOption(engineCliOption(def));
  return cmd;
}

/** Adds the shingling options. */
export function addShingleOptions(cmd: Command): Command {
  return addEngineGroup(cmd, 'shingle');
}

/** Adds the MinHash options. */
export function addMinHashOptions(cmd: Command): Command {
  return addEngineGroup(cmd, 'minhash');
}

/** Adds the threshold and banding options. */
export function addLshOptions(cmd: Command): Command {
  return addEngineGroup(cmd, 'lsh');
}

/**
 * The keep policy of the flags: --keep, or --representative first|longest (its alias). Both given
 * must agree; --representative central is a policy of its own that --keep cannot follow.
 */
function keepFrom(f: Pick<EngineFlags, 'keep' | 'representative'>): KeepPolicy {
  const rep = f.representative ?? 'first';
  if (f.keep === undefined) return rep === 'longest' ? 'longest' : 'first';
  if (rep === 'central' && f.keep !== 'first') throw new UsageError(`--keep ${f.keep} and --representative central choose the kept member two ways: give one`);
  if (rep === 'longest' && f.keep !== 'longest')
    throw new UsageError(`--keep ${f.keep} and --representative longest choose the kept member two ways: give one`);
  return f.keep;
}

/** Adds the options that choose the kind of duplicates: measure, candidate method, cluster policy. */
export function addKindOptions(cmd: Command): Command {
  return addEngineGroup(cmd, 'kind');
}

/** Adds the input, shingling, MinHash and LSH options: everything a command that runs dedup reads. */
export function addEngineOptions(cmd: Command): Command {
  addInputOptions(cmd);
  addShingleOptions(cmd);
  addMinHashOptions(cmd);
  addLshOptions(cmd);
  return addKindOptions(cmd);
}

/**
 * The parsed engine flags: the CLI's flat spelling of the library's `EngineOptions`
 * (src/engine/config.ts), built from the one option table (`ENGINE_OPTIONS`) and turned back into
 * them by {@link shingleOptionsFrom}, {@link minhashOptionsFrom} and {@link lshOptionsFrom}.
 */
export interface EngineFlags {
  shingle: ShingleKind;
  k?: number;
  normalize: NormalizePreset;
  multiset?: boolean;
  stopwords?: string[];
  numPerm: number;
  method: MinHashMethod;
  seed: number;
  threshold: number;
  minRecall?: number;
  weights?: { fp: number; fn: number };
  bands?: number;
  rows?: number;
  verify?: VerifyMode;
  maxPairs?: number;
  measure?: SetMeasure;
  candidates?: CandidateMethod;
  buckets?: number;
  clusterMode?: ClusterMode;
  representative?: RepresentativePolicy;
  keep?: KeepPolicy;
  removal?: RemovalRule;
  fingerprintBits?: '32' | '64';
}

/** Shingle options from the flags. */
export function shingleOptionsFrom(f: Pick<EngineFlags, 'shingle' | 'k' | 'normalize' | 'multiset' | 'stopwords'>): ShingleOptions {
  const o: ShingleOptions = { kind: f.shingle, normalize: { preset: f.normalize } };
  if (f.k !== undefined) o.k = f.k;
  if (f.multiset) o.multiset = true;
  if (f.stopwords) o.stopwords = f.stopwords;
  return o;
}

/** MinHash options from the flags. */
export function minhashOptionsFrom(f: Pick<EngineFlags, 'numPerm' | 'method' | 'seed'>): MinHashOptions {
  return { numPerm: f.numPerm, method: f.method, seed: f.seed };
}

/** Banding options from the flags. */
export function lshOptionsFrom(f: Pick<EngineFlags, 'minRecall' | 'weights' | 'bands' | 'rows'>): ChooseBandsOptions {
  const o: ChooseBandsOptions = {};
  if (f.minRecall !== undefined) o.minRecallAtThreshold = f.minRecall;
  if (f.weights) o.weights = f.weights;
  if (f.bands !== undefined) o.bands = f.bands;
  if (f.rows !== undefined) o.rows = f.rows;
  return o;
}

/** Turns the library's RangeErrors about options into usage errors. */
export function validated<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
}

/** Full dedup options from the flags, checked by building each part once (bad values become usage errors). */
export function dedupOptionsFrom(f: EngineFlags): DedupOptions {
  const o: DedupOptions = {
    threshold: f.threshold,
    shingle: shingleOptionsFrom(f),
    minhash: minhashOptionsFrom(f),
    lsh: lshOptionsFrom(f),
    verify: f.verify ?? 'exact',
  };
  if (f.maxPairs !== undefined) o.maxPairs = f.maxPairs;
  if (f.measure !== undefined) o.measure = f.measure;
  if (f.candidates !== undefined) o.candidates = f.candidates;
  else if (f.measure === 'containment') o.candidates = 'exact';
  if (f.buckets !== undefined) {
    if (f.candidates !== 'sketch') throw new UsageError('--buckets applies to --candidates sketch only');
    o.buckets = f.buckets;
  }
  if (f.clusterMode !== undefined) o.clusters = f.clusterMode;
  if (f.removal === 'cluster') o.removal = 'cluster';
  else {
    // The verified rule decides what is kept from the pairs: a policy of one survivor per cluster has nothing to choose.
    if (f.clusterMode === 'centre')
      throw new UsageError(
        '--cluster-mode centre keeps one centre per cluster: it needs --removal cluster (the default --removal verified keeps every document no kept document duplicates, so each dropped one has a kept near duplicate, as a centre cluster promises)',
      );
    if (f.representative === 'central')
      throw new UsageError(
        '--representative central keeps one member per cluster: it needs --removal cluster (under the default --removal verified, --keep orders the documents)',
      );
  }
  const keep = keepFrom(f);
  if (keep !== 'first') o.keep = keep;
  // The engine's own policy (report and bench use it; dedup leaves first and longest to --keep).
  if (f.representative !== undefined) o.representative = f.representative;
  if (f.fingerprintBits === '64') {
    if (f.candidates !== 'exact') throw new UsageError('--fingerprint-bits 64 needs --candidates exact (LSH and sketch work on 32-bit fingerprints)');
    if (f.multiset) throw new UsageError('--fingerprint-bits 64 does not support --multiset');
    o.fingerprintBits = 64;
  }
  if (o.measure === 'containment' && o.candidates !== 'exact' && o.candidates !== 'auto') {
    throw new UsageError(
      `--measure containment needs --candidates exact (or auto): ${o.candidates} candidates are Jaccard-based and miss short documents inside long ones`,
    );
  }
  if (o.candidates !== undefined && o.candidates !== 'lsh' && o.candidates !== 'auto' && o.verify !== 'exact') {
    throw new UsageError(`--verify ${o.verify} applies to LSH candidates only: ${o.candidates} candidates are always scored exactly`);
  }
  validated(() => {
    createShingler(o.shingle);
    const h = createMinHasher(o.minhash);
    chooseBands(f.threshold, h.numPerm, o.lsh);
  });
  return o;
}

/**
 * Adds --zstd-level: how hard the command's `.zst` outputs (and the ZSTD pages of its Parquet
 * outputs) are compressed. It is process-wide (./zstd.ts), so it is set before the command runs.
 */
export function addZstdLevelOption(cmd: Command): Command {
  return cmd
    .option(
      '--zstd-level <n>',
      `zstd level of the .zst outputs and of Parquet outputs' ZSTD pages, 1 (fastest) to ${ZSTD_MAX_LEVEL} (smallest) (default ${ZSTD_DEFAULT_LEVEL})`,
      parseIntInRange('zstd-level', 1, ZSTD_MAX_LEVEL),
    )
    .hook('preAction', (self) => setZstdLevel(self.opts<{ zstdLevel?: number }>().zstdLevel));
}

/** Adds --quiet, --verbose and --json. */
export function addLogOptions(cmd: Command, json = 'print a machine-readable summary on stdout'): Command {
  return cmd.option('-q, --quiet', 'no summary and no progress bars').option('-v, --verbose', 'print stage timings as they happen, and more detail').option(
    '--json',
    json,
  );
}

/** The pair output format: --output-format, else from the --out extension, else TSV. */
export function pairFormatOf(f: { outputFormat?: PairFormat; out?: string }): PairFormat {
  if (f.outputFormat) return f.outputFormat;
  const ext = f.out ? extensionOf(f.out) : '';
  return ext === 'csv' ? 'csv' : ext === 'jsonl' || ext === 'ndjson' || ext === 'json' ? 'jsonl' : 'tsv';
}

/**
 * Refuses (a usage error, exit 2) the first option `route`'s capability table (src/engine/routes.ts)
 * does not take among `values`, the options as given by name (undefined and false: not given).
 */
export function refuseForRoute(route: Route, values: Record<string, unknown>): void {
  const why = firstRefusal(route, values, flagName);
  if (why !== undefined) throw new UsageError(why);
}

/** Appends to the help of each option of `cmd` the marks of what `routes` do not take of it (`[with --exact: not taken]`). */
export function markRouteLimits(cmd: Command, routes: readonly Route[]): void {
  for (const o of cmd.options) o.description += routeMarks(o.attributeName(), routes);
}
