/**
 * `neardup spans <input...>`: repeated lines, paragraphs, sentence windows or substrings removed below the
 * document, in one process (src/spans/); `neardup job spans` runs it sharded (src/cli/job/spans.ts).
 * @module
 */
import { Command, Option } from 'commander';
import { stat } from 'node:fs/promises';
import { UsageError } from '../../common/errors.js';
import { engineOption } from '../../engine/options.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import type { NormalizePreset } from '../../text/normalize.js';
import { dedupSpansFile } from '../../spans/file/file.js';
import { spansAuditFormat } from '../../spans/file/audit.js';
import { LENGTH_UNITS, SPANS_DEFAULTS, type LengthUnit, type SpansOptions } from '../../spans/options.js';
import { UNIT_KINDS, type UnitKind } from '../../spans/units.js';
import {
  addInputOptions,
  addLogOptions,
  addZstdLevelOption,
  cliParser,
  engineCliOption,
  parsePositiveInt,
  readOptionsFrom,
  type InputFlags,
} from '../options.js';
import { requireOutForJson } from '../pipelineOptions.js';
import { Reporter, type LogFlags } from '../report.js';
import { severalInputs } from '../dedup/inputs.js';
import { resolveShards } from '../../io/read/shards.js';
import { removeCopies, spoolInput, type InputCopy } from '../corpus.js';
import { printSpansSummary } from './summary.js';
import { keepYoungGenerationSmall } from '../youngGeneration.js';

/** The parsed flags of `neardup spans`. */
export interface SpansFlags extends InputFlags, LogFlags {
  unit: UnitKind;
  window?: number;
  minLength?: number;
  lengthUnit?: LengthUnit;
  minDocs?: number;
  minUnitWords: number;
  minDocWords: number;
  normalize: NormalizePreset;
  output: 'dedup' | 'annotate';
  out?: string;
  removed?: string;
  dryRun?: boolean;
  top: number;
}

/** The spans options the flags give, as `neardup spans` and `neardup job spans` pass them on. */
export function spansOptionsFrom(flags: SpansFlags): SpansOptions {
  return {
    unit: flags.unit,
    window: flags.window,
    minLength: flags.minLength,
    lengthUnit: flags.lengthUnit,
    minDocs: flags.minDocs,
    minUnitWords: flags.minUnitWords,
    minDocWords: flags.minDocWords,
    top: flags.top,
    normalize: { preset: flags.normalize },
  };
}

/** `--unit`: one of the unit kinds (exit 2 otherwise). */
const parseUnitKind = cliParser((v: string): UnitKind => {
  if ((UNIT_KINDS as readonly string[]).includes(v)) return v as UnitKind;
  throw new UsageError(`--unit must be ${UNIT_KINDS.slice(0, -1).join(', ')} or ${UNIT_KINDS[UNIT_KINDS.length - 1]}, got "${v}"`);
});

const count = (name: string, min: number) =>
  cliParser((v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got "${v}"`);
    return n;
  });

/** The `spans` command. */
export function spansCommand(): Command {
  const cmd = new Command('spans')
    .description(
      'remove repeated lines, paragraphs, sentence windows or long substrings inside documents (below the document level): keep-first, or boilerplate found in at least K documents',
    )
    .argument(
      '<input...>',
      'JSONL, TSV, CSV, text, id⇥text (.gz/.zst ok) or Parquet file, a quoted glob or directory of such shards, or - for stdin; several: one corpus in this order (keep-first across them), written as one output shard each under --out DIR; directories of documents are read for --dry-run (summary and --removed audit) but not rewritten',
    );
  addInputOptions(cmd);
  addUnitOptions(cmd);
  addSpansOutputOptions(cmd);
  addZstdLevelOption(cmd);
  addLogOptions(cmd, 'print a machine-readable summary on stdout (needs --out or --dry-run)');
  cmd.addHelpText('after', SPANS_HELP);
  cmd.action(async (args: string[], flags: SpansFlags) => {
    await runSpans(args, flags);
  });
  return cmd;
}

/** What `neardup spans --help` says after the options. */
const SPANS_HELP = `
Units are compared after --normalize, by a 64-bit hash of the normalized text. Offsets in the
audit and in spans_removed are code points (start, end) and UTF-8 bytes (byte_start, byte_end)
into the text field's value. A line is cut with its line break; a paragraph with the blank lines
after it; a sentence window with its trailing spaces; a substring from its first word to its last
(words compared one by one, so the spaces and punctuation between them are not), or with
--length-unit bytes from its first character to its last. Keep-first follows input order (there is no
--keep for spans). neardup job spans runs the same as a sharded job, with the same bytes.

Examples:
  $ neardup spans crawl.jsonl --unit paragraph --out crawl.clean.jsonl --removed removed.tsv
  $ neardup spans crawl.jsonl --unit line --min-docs 3 --dry-run --top 20
  $ neardup spans news.tsv --text body --unit sentence --window 3 --output annotate --out news.spans.tsv
  $ neardup spans web.jsonl --unit substring --min-length 50 --out web.clean.jsonl --removed removed.tsv
  $ neardup spans web.jsonl --unit substring --length-unit bytes --min-length 100 --dry-run --top 5`;

/** The options that say what a unit is, how units compare, and what is removed. */
function addUnitOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option(
        '--unit <kind>',
        'what is compared and removed: line, paragraph (blank-line separated), sentence (windows of --window sentences, Unicode sentence boundaries), substring (repeats of at least --min-length words, however long)',
      ).argParser(parseUnitKind).default(SPANS_DEFAULTS.unit),
    )
    .option(
      '--window <n>',
      `with --unit sentence: sentences per window; every window of n consecutive sentences is a unit (default ${SPANS_DEFAULTS.window})`,
      parsePositiveInt('window', 1000),
    )
    .option(
      '--min-length <n>',
      `with --unit substring: words (or --length-unit bytes) a repeated substring has at least; every window of n consecutive words is a unit, so longer repeats are cut whole (default ${SPANS_DEFAULTS.minLength})`,
      parsePositiveInt('min-length', 100000),
    )
    .addOption(
      new Option(
        '--length-unit <unit>',
        `with --unit substring: what --min-length counts: words, or bytes (UTF-8 bytes of the text, each character normalized alone, a run of whitespace as one space; cut from its first character to its last) (default ${SPANS_DEFAULTS.lengthUnit})`,
      ).choices(LENGTH_UNITS),
    )
    .option(
      '--min-docs <k>',
      'boilerplate mode: remove every occurrence of a unit found in at least k documents (default: keep-first, the first occurrence in input order is kept, later ones removed)',
      count('min-docs', 1),
    )
    .option('--min-unit-words <n>', 'units of fewer words are never removed', count('min-unit-words', 0), SPANS_DEFAULTS.minUnitWords)
    .option(
      '--min-doc-words <n>',
      'a document that lost units and has fewer words left is dropped (0: never drop)',
      count('min-doc-words', 0),
      SPANS_DEFAULTS.minDocWords,
    )
    .addOption(
      engineCliOption(engineOption('normalize')!, {
        help: 'how units are normalized before they are compared: default (NFKC, lowercase, collapse whitespace), lowercase-collapse, none',
      }),
    );
}

/** The options that say what is written, and where. */
function addSpansOutputOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option(
        '--output <mode>',
        'what to write: dedup (the records with the repeated units cut out of the text field; every other byte kept), annotate (every record as is, plus spans_removed: the ranges cut, and spans_dropped)',
      ).choices(['dedup', 'annotate']).default('dedup'),
    )
    .option(
      '-o, --out <file>',
      'write the records here (atomically: temp file, then rename; .gz/.zst compress) instead of stdout; for shards or several inputs: a directory, one output shard per input file under its relative name, then _SUCCESS',
    )
    .option(
      '--removed <file>',
      'also write one row per removed unit (id, start, end, byte_start, byte_end, kept_id, kept_start, kept_byte_start, count, docs) to <file>, .tsv or .jsonl (may end in .gz/.zst), atomically',
    )
    .option('--dry-run', 'write no records: the summary and the --removed audit only')
    .option('--top <n>', 'how many of the most repeated units the summary lists', count('top', 0), SPANS_DEFAULTS.top);
}

/** `--length-unit`: with `--unit substring` only, and bytes without `--min-unit-words` (exit 2 naming the option). */
export function refuseLengthUnit(flags: Pick<SpansFlags, 'unit' | 'lengthUnit' | 'minUnitWords'>): void {
  if (flags.lengthUnit !== undefined && flags.unit !== 'substring') throw new UsageError('--length-unit applies to --unit substring only');
  if (flags.lengthUnit === 'bytes' && flags.minUnitWords > 0)
    throw new UsageError('--min-unit-words does not apply to --length-unit bytes: a byte window is cut whatever its words');
}

/** Runs `neardup spans` on its inputs `args`; every pipe it copied is removed however it ends. */
async function runSpans(args: string[], flags: SpansFlags): Promise<void> {
  const copies: InputCopy[] = [];
  try {
    await spansRun(args, flags, copies);
  } finally {
    await removeCopies(copies);
  }
}

async function spansRun(args: string[], flags: SpansFlags, copies: InputCopy[]): Promise<void> {
  const reporter = new Reporter(flags);
  if (flags.window !== undefined && flags.unit !== 'sentence') throw new UsageError('--window applies to --unit sentence only');
  if (flags.minLength !== undefined && flags.unit !== 'substring') throw new UsageError('--min-length applies to --unit substring only');
  refuseLengthUnit(flags);
  if (!flags.dryRun) requireOutForJson(flags);
  if (flags.removed !== undefined) spansAuditFormat(flags.removed, '--removed');
  const read = readOptionsFrom(flags);
  const several = args.length > 1;
  let input = several ? args.join(' ') : args[0]!;
  if (
    !flags.dryRun && args.length === 1 && flags.out !== undefined && flags.out !== '-' && (await stat(flags.out).catch(() => undefined))?.isDirectory()
    && !(await resolveShards(args[0]!, read.format ?? 'auto'))
  ) {
    throw new UsageError(`--out ${flags.out} is a directory: name the output file`, { option: 'out' });
  }
  // Before anything is read or written: no output may replace a file of the read set.
  // Several inputs, a glob or a directory of shards: --out is the directory of output shards.
  const sharded = several || (input !== '-' && (await resolveShards(input, read.format ?? 'auto')) !== undefined);
  if (sharded && !flags.dryRun && (flags.out === undefined || flags.out === '-'))
    throw new UsageError(
      `${input} is several files: --output ${flags.output} writes one output shard per input file, so it needs --out DIR (or --dry-run for the summary and the audit only)`,
    );
  const outputs = [...(flags.dryRun ? [] : [{ what: '--out', path: flags.out, dir: sharded }]), { what: '--removed', path: flags.removed }];
  await refuseAliasedOutputs(outputs, args.map((p) => ({ what: 'the input', path: p })));
  // Several inputs read as one (their named pipes copied first): named by the arguments joined.
  if (several) read.inputs = await severalInputs(args, read.format ?? 'auto', copies);
  // Two passes: standard input or a named pipe is copied to a temp file first, and named as given in messages.
  const copy = sharded ? undefined : await spoolInput(input, { stdin: true, copies });
  if (copy) {
    read.displayName = copy.displayName;
    input = copy.file;
  }
  if (flags.unit === 'substring') keepYoungGenerationSmall();
  const t0 = performance.now();
  const result = await dedupSpansFile(input, {
    read,
    spans: spansOptionsFrom(flags),
    mode: flags.dryRun ? 'none' : flags.output,
    out: flags.out,
    removed: flags.removed,
  });
  printSpansSummary(reporter, flags, result, performance.now() - t0);
}
