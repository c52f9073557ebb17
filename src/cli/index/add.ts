/**
 * `neardup index add|query <input>`: the online index from the command line. `add` indexes every
 * document of a file into a persistent store and writes, for each, the near duplicates that were
 * already indexed (earlier documents of the same file included); `query` writes the matches of each
 * document without indexing it. Both read every input format `dedup` reads, in batches.
 * @module
 */
import { availableParallelism } from 'node:os';
import { Command, Option } from 'commander';
import type { Match, NewDocument, TopKMatch } from '../../online/nearDupIndex.js';
import { UsageError } from '../../common/errors.js';
import { openInput } from '../../io/read/read.js';
import type { InputRecord } from '../../io/read/record.js';
import { openOutput, type OutputSink } from '../../io/write/output.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import { csvField, formatPair, pairHeader, tsvField, type PairFormat } from '../../io/write/write.js';
import { addInputOptions, addLogOptions, addZstdLevelOption, pairFormatOf, parsePositiveInt, readOptionsFrom, type InputFlags } from '../options.js';
import {
  addFilterOption,
  addIndexOptions,
  checkStoreFile,
  indexOptionsFrom,
  num,
  openIndex,
  refuseMemoryStore,
  storeOutputs,
  type IndexFlags,
} from './options.js';
import { withTextSets } from '../../online/manifest.js';
import type { MetaFilter, NearDupIndex } from '../../online/nearDupIndex.js';
import { requireOutForJson } from '../pipelineOptions.js';
import { int, ms, Reporter, type LogFlags } from '../report.js';
import { spoolInput, warnSkipped } from '../corpus.js';
import { withStoredText } from '../../online/records/storedText.js';

interface IndexAddFlags extends InputFlags, IndexFlags, LogFlags {
  idPrefix?: string;
  batch: number;
  out?: string;
  outputFormat?: PairFormat;
  limit?: number;
  matchThreshold?: number;
  storeText?: boolean;
  title?: string;
  filter?: MetaFilter;
  topK?: number;
}

/** Adds `index add` and `index query` to the `index` command. */
export function addIndexAddCommands(index: Command): void {
  for (const mode of ['add', 'query'] as const) {
    const cmd = index
      .command(mode)
      .description(
        mode === 'add'
          ? 'index every document of a file into a store; write the near duplicates each one had among the documents already indexed'
          : 'write the near duplicates that each document of a file has in a store, without indexing anything',
      )
      .argument('<input>', 'TSV, CSV, JSONL, text, id⇥text or Parquet file (.gz/.zst ok), a directory, a quoted glob of shards, or - for stdin');
    // index query's --limit caps matches per document; there the first N documents are --first N.
    addInputOptions(cmd, mode === 'add');
    // One thread signs the next batch while this one inserts the last (bench/RESULTS.md: ~1.3× the
    // adds/s of one thread); more would wait for the inserts, which run on this thread.
    addIndexOptions(cmd, {
      help: mode === 'add' ? 'threads that shingle and sign each batch (1 when the machine has 2 cores or more, else 0)' : 'unused by query (add only)',
      default: mode === 'add' ? ADD_WORKERS : 0,
    });
    cmd
      .option('--id-prefix <prefix>', 'ids are PREFIX + the 0-based row number, for inputs without ids (--id, --id-field, id⇥text, directories)')
      .option('--batch <n>', 'documents per batch (add: one store write each)', parsePositiveInt('batch', 100_000), 1000)
      .option('-o, --out <file>', 'write the matches here (atomically) instead of stdout')
      .addOption(
        new Option('--output-format <format>', 'tsv (id⇥match⇥similarity⇥estimate, no header), csv or jsonl (default: from --out extension, else tsv)').choices(
          ['tsv', 'csv', 'jsonl'],
        ),
      );
    addZstdLevelOption(cmd);
    if (mode === 'add') {
      cmd
        .option(
          '--no-store-text',
          'do not keep the texts (kept by default in meta.text, so the web page and `neardup serve` can show what near duplicates share and what differs)',
        )
        .option('--title <column>', "TSV/CSV column (JSONL: field path) kept as each document's title, shown by the web page");
    }
    if (mode === 'query') {
      cmd
        .option('--limit <n>', 'at most this many matches per document, most similar first', parsePositiveInt('limit', 1e6))
        .option('--match-threshold <t>', 'report matches at or above this similarity (default: the index threshold)', num('--match-threshold', false))
        .option(
          '--top-k <k>',
          'instead: the k most similar distinct texts of each document, even below the threshold; rows of their copies follow each (fifth column: the hit they copy)',
          parsePositiveInt('top-k', 1000),
        );
    }
    addFilterOption(cmd, mode === 'add' ? 'report duplicates' : 'match');
    addLogOptions(cmd, 'print a machine-readable summary on stdout (needs --out)');
    cmd.addHelpText(
      'after',
      mode === 'add'
        ? `
Each document is added as it would be by POST /v1/documents: a document whose id is already indexed
replaces it. A new store takes the index options given here; an existing one keeps its own. Each document's
text is kept in its metadata (meta.text) unless --no-store-text, so that the web page of
neardup serve can show what near duplicates share and what differs.

Examples:
  $ neardup index add ads.tsv --text 'Title,Short Description' --title Title --id ad_id --store sqlite:./ads.db
  $ neardup index add today.jsonl --id-field id --store redis://127.0.0.1:6379?prefix=ads --out dups.tsv
  $ neardup index add crawl.txt --id-prefix crawl1: --store sqlite:./pages.db --threshold 0.9 -k 7`
        : `
Examples:
  $ neardup index query new-ads.tsv --text 'Title,Short Description' --store sqlite:./ads.db --limit 5
  $ neardup index query pages.jsonl --store redis://127.0.0.1:6379?prefix=pages --match-threshold 0.95 --out hits.jsonl`,
    );
    cmd.action(async (file: string, flags: IndexAddFlags) => {
      await runIndexAdd(mode, file, flags);
    });
  }
}

/** `index add`'s prepare threads: one beside this thread when there is a core for it. */
const ADD_WORKERS = availableParallelism() > 1 ? 1 : 0;

/** The CSV header of `index query --top-k`: a pair's columns and the hit a copy row copies. */
const TOPK_CSV_HEADER = 'a,b,similarity,estimate,copy_of\n';

/** Opens the index; `--top-k` takes no `--limit` or `--match-threshold`, and needs the forest keys. */
async function openSearched(flags: IndexAddFlags): Promise<NearDupIndex> {
  if (flags.topK !== undefined && (flags.limit !== undefined || flags.matchThreshold !== undefined)) {
    throw new UsageError('--top-k gives the k most similar texts whatever their similarity: drop --limit and --match-threshold');
  }
  const index = await openIndex(withTextSets(indexOptionsFrom(flags), flags.storeText !== false));
  if (flags.topK !== undefined && !index.manifest.forest) {
    await index.close();
    throw new UsageError(`--top-k needs the LSH-Forest keys, and ${flags.store} was created with --no-forest`);
  }
  return index;
}

/** The matches of a batch: added (`add`), or queried by threshold or, with `--top-k`, top k. */
function searchBatch(index: NearDupIndex, mode: 'add' | 'query', batch: NewDocument[], flags: IndexAddFlags): Promise<Match[][]> {
  const { filter, topK } = flags;
  if (mode === 'add') return index.addMany(batch, { filter });
  if (topK !== undefined) return Promise.all(batch.map((d) => index.topK(d.text, topK, { filter })));
  return Promise.all(batch.map((d) => index.query(d.text, { limit: flags.limit, threshold: flags.matchThreshold, filter })));
}

/**
 * The output rows of one match. With `--top-k`, a hit's row and a row per copy, each with a fifth
 * value: empty for the hit, the hit's id for a copy (TSV/CSV column `copy_of`, JSONL field).
 */
function rowsOf(fmt: PairFormat, id: string, m: Match, topK: boolean): string {
  if (!topK) return formatPair(fmt, id, m.id, m.similarity, m.estimate);
  const row = (x: Match, of: string | null): string => {
    const line = formatPair(fmt, id, x.id, x.similarity, x.estimate);
    if (fmt === 'jsonl') return `${line.slice(0, -2)},"copy_of":${JSON.stringify(of)}}\n`;
    return `${line.slice(0, -1)}${fmt === 'csv' ? ',' : '\t'}${of === null ? '' : fmt === 'csv' ? csvField(of) : tsvField(of)}\n`;
  };
  return [row(m, null), ...(m as TopKMatch).copies.map((c) => row(c, m.id))].join('');
}

/** `index add` or `index query`. */
type AddMode = 'add' | 'query';

/** Reads the input in batches, adds (or queries) each, writes the matches, prints the summary. */
async function runIndexAdd(mode: AddMode, file: string, flags: IndexAddFlags): Promise<void> {
  const reporter = new Reporter(flags);
  await checkAddTargets(mode, file, flags);
  const t0 = performance.now();
  // A named pipe (`<(zcat x.gz)`) is copied first, as dedup copies it: its format is sniffed by a
  // positional read (a Parquet footer). Messages still name the pipe.
  const spool = await spoolInput(file);
  try {
    await addFrom(mode, spool ?? { file }, flags, { reporter, t0 });
  } finally {
    await spool?.cleanup();
  }
}

/** Adds (or queries) the documents of `from.file` (named `from.displayName` in messages, when given). */
async function addFrom(
  mode: AddMode,
  from: { file: string; displayName?: string },
  flags: IndexAddFlags,
  run: { reporter: Reporter; t0: number },
): Promise<void> {
  const { reporter, t0 } = run;
  const { input, records, idOf } = await openAddInput(mode, from, flags);
  const index = await openSearched(flags);
  const fmt = pairFormatOf(flags);
  let sink: OutputSink | undefined;
  const bar = reporter.progress(mode, 'bytes', input.size);
  const batches = new AddBatches({ index, mode, flags, fmt, write: (rows) => sink!.write(rows), onFlush: (docs) => bar.update(input.bytesRead(), docs) });
  try {
    sink = await openOutput(flags.out);
    await sink.write(flags.topK !== undefined && fmt === 'csv' ? TOPK_CSV_HEADER : pairHeader(fmt, true));
    for await (const r of records) await batches.push(idOf(r), r);
    await batches.finish();
    bar.stop();
    await sink.close();
    sink = undefined;
  } catch (e) {
    bar.stop();
    await sink?.abort();
    await index.close().catch(() => undefined);
    throw e;
  }
  const size = await index.size();
  await index.close();
  printAddSummary(reporter, { mode, flags, input, batches, size, total: performance.now() - t0, threshold: index.manifest.threshold });
}

/** Before anything is read: a store that keeps nothing, an output that replaces the input or the store, a store file that is not one. */
async function checkAddTargets(mode: AddMode, file: string, flags: IndexAddFlags): Promise<void> {
  requireOutForJson(flags);
  refuseMemoryStore(flags.store, 'keeps nothing after the command ends');
  await refuseAliasedOutputs([{ what: '--out', path: flags.out }, ...storeOutputs(flags.store)], [{ what: 'the input', path: file }]);
  await checkStoreFile(flags.store, mode === 'query', `index ${mode}`);
}

/** The input of `index add|query`, opened: its records (the first one read early), and each record's id. */
interface AddInput {
  input: Awaited<ReturnType<typeof openInput>>;
  records: AsyncGenerator<InputRecord>;
  idOf: (r: InputRecord) => string;
}

/** Opens the input; its first record says whether it has ids, checked before a new store is created. */
async function openAddInput(mode: AddMode, from: { file: string; displayName?: string }, flags: IndexAddFlags): Promise<AddInput> {
  const { file, displayName } = from;
  // In query mode --limit caps the matches, not the documents read (that is --first).
  const read = readOptionsFrom(mode === 'query' ? { ...flags, limit: undefined } : flags);
  if (displayName !== undefined) read.displayName = displayName;
  if (flags.title !== undefined) {
    read.columns = { ...read.columns, title: flags.title };
    read.fields = { ...read.fields, title: flags.title };
  }
  const input = await openInput(file, read);
  // The first record says whether the input has ids: check that before a new store is created.
  const records = input.records;
  const head = await records.next();
  const idOf = (r: InputRecord): string => {
    if (r.id !== undefined) return r.id;
    if (flags.idPrefix !== undefined) return `${flags.idPrefix}${r.row}`;
    if (mode === 'query') return String(r.row);
    throw new UsageError(
      `${input.name} has no ids: give --id COLUMN (TSV/CSV), --id-field PATH (JSONL), or --id-prefix PREFIX to use PREFIX + the row number (so that the rows of another file do not replace these)`,
    );
  };
  if (!head.done) idOf(head.value);
  const all = async function* (): AsyncGenerator<InputRecord> {
    if (head.done) return;
    yield head.value;
    yield* records;
  };
  return { input, records: all(), idOf };
}

/** What {@link AddBatches} searches with and writes to. */
interface AddBatchesOptions {
  index: NearDupIndex;
  mode: AddMode;
  flags: IndexAddFlags;
  fmt: PairFormat;
  /** Writes output rows. */
  write: (rows: string) => Promise<void>;
  /** After each batch, with the documents done so far. */
  onFlush: (docs: number) => void;
}

/**
 * The documents of `index add|query` in batches of `--batch`, each batch searched (and added) at
 * once, its matches written; with the counts the summary prints.
 */
class AddBatches {
  docs = 0;
  withMatches = 0;
  matches = 0;
  /** Records whose id an earlier record had, and the first such. */
  repeated = 0;
  firstRepeat: string | undefined;
  private batch: NewDocument[] = [];
  private ids = new Set<string>();
  /** The batch searched last, until its matches are written. */
  private inFlight: Promise<void> = Promise.resolve();
  /** The line of each id's first record. */
  private readonly lines = new Map<string, number>();
  private readonly o: AddBatchesOptions;
  /** The text (and title) go with each document unless --no-store-text: the page shows them. */
  private readonly keepText: boolean;

  constructor(o: AddBatchesOptions) {
    this.o = o;
    this.keepText = o.mode === 'add' && o.flags.storeText !== false;
  }

  async push(id: string, r: InputRecord): Promise<void> {
    // Policy (docs/cli.md): a repeated id replaces the earlier document, as a second add would;
    // it is counted and the summary warns, naming the first repetition's lines.
    const firstLine = this.lines.get(id);
    if (firstLine !== undefined) {
      this.repeated++;
      this.firstRepeat ??= `id "${id}" on lines ${firstLine} and ${r.line}`;
    } else this.lines.set(id, r.line);
    // A repeated id replaces the earlier document, as sequential adds would: end the batch first.
    if (this.ids.has(id)) await this.flush();
    this.ids.add(id);
    const meta = this.keepText ? withStoredText(undefined, r.text, r.title) : r.title !== undefined ? { title: r.title } : undefined;
    this.batch.push({ id, text: r.text, meta });
    if (this.batch.length >= this.o.flags.batch) await this.flush();
  }

  /**
   * Starts the search of the batch so far. Two batches are in flight: this one is prepared (signed,
   * on a worker thread with --workers) while the one before is inserted; the index inserts them in
   * call order, so the answers are those of one batch after another.
   */
  async flush(): Promise<void> {
    const { batch } = this;
    if (batch.length === 0) return;
    this.batch = [];
    this.ids = new Set();
    const { index, mode, flags } = this.o;
    const found = searchBatch(index, mode, batch, flags);
    // Its failure is reported through the chain below, when the batches before it are written.
    found.catch(() => undefined);
    const before = this.inFlight;
    this.inFlight = before.then(() => found).then((f) => this.written(batch, f));
    await before;
  }

  /** Flushes the last batch and waits until every batch is written. */
  async finish(): Promise<void> {
    await this.flush();
    await this.inFlight;
  }

  /** Writes a batch's matches and counts them. */
  private async written(batch: NewDocument[], found: Match[][]): Promise<void> {
    const { flags, fmt } = this.o;
    for (let i = 0; i < batch.length; i++) {
      const m = found[i]!;
      if (m.length > 0) this.withMatches++;
      this.matches += m.length;
      for (const x of m) await this.o.write(rowsOf(fmt, batch[i]!.id, x, flags.topK !== undefined));
    }
    this.docs += batch.length;
    this.o.onFlush(this.docs);
  }
}

/** What the summary of `index add|query` says. */
interface AddSummary {
  mode: AddMode;
  flags: IndexAddFlags;
  input: AddInput['input'];
  batches: AddBatches;
  /** Documents in the index at the end. */
  size: number;
  /** Wall time, ms. */
  total: number;
  threshold: number;
}

/** The warnings and summary of `index add|query` (human, or --json). */
function printAddSummary(reporter: Reporter, r: AddSummary): void {
  const { mode, flags, input, total, size } = r;
  const { docs, matches, withMatches, repeated } = r.batches;
  warnSkipped(reporter, input);
  if (repeated > 0)
    reporter.warn(
      `${int(repeated)} record${
        repeated === 1 ? ' repeats an id' : 's repeat ids'
      } of earlier records of ${input.name} (first: ${r.batches.firstRepeat}); each replaced the earlier document`,
    );
  if (flags.json) {
    reporter.json({
      command: `index ${mode}`,
      input: { path: input.name, format: input.format, docs, skipped: input.skips.count },
      store: flags.store,
      docsWithMatches: withMatches,
      matches,
      indexSize: size,
      ms: total,
    });
    return;
  }
  const verb = mode === 'add' ? 'added' : 'queried';
  reporter.summary(
    `${verb.padEnd(11)} ${int(docs)} documents from ${input.name} [${input.format}] in ${ms(total)} (${int((docs * 1000) / Math.max(total, 1e-3))} docs/s)`,
  );
  reporter.summary(`matches     ${int(matches)}: ${int(withMatches)} documents had near duplicates ${mode === 'add' ? 'already indexed' : 'in the index'}`);
  reporter.summary(`index       ${int(size)} documents in ${flags.store} (threshold ${r.threshold})`);
  if (flags.out) reporter.summary(`output      ${int(matches)} matches → ${flags.out}`);
}
