/**
 * `neardup dedup <input...>`: near-duplicate pairs, clusters, a deduplicated copy, or an annotated copy.
 * This module defines the command and its options; ./run.ts runs it.
 * @module
 */
import { Command, Option } from 'commander';
import { availableParallelism } from 'node:os';
import { heapRoom } from '../heap.js';
import { PARALLEL_MIN_CHARS } from '../engine.js';
import { addEngineOptions, addLogOptions, addZstdLevelOption, engineCliOption, markRouteLimits, parseCount, parsePositiveInt } from '../options.js';
import { engineOption } from '../../engine/options.js';
import type { DedupFlags } from './flags.js';
import { runDedup } from './run.js';

export type { OutputMode } from './flags.js';

/** Options of {@link dedupCommand}. */
export interface DedupCommandOptions {
  /** Mark in `--help` what a streamed run, `--exact` and `--against` do not take (default true; a job marks its own route). */
  routeMarks?: boolean;
}

/** The `dedup` command. */
export function dedupCommand(options: DedupCommandOptions = {}): Command {
  const cmd = new Command('dedup')
    .description('find near-duplicate documents in a file, a directory, or standard input (-); several inputs are one corpus, read in the order given')
    .argument(
      '<input...>',
      "TSV, CSV, JSONL, text, id⇥text or Parquet file (.gz/.zst ok), a directory, a quoted glob of shards ('shards/*.jsonl.zst'), or - for stdin; several: one corpus in this order, as neardup job dedup reads them (record files, directories and globs of shards; ids unique across them)",
    );
  addEngineOptions(cmd);
  addRunOptions(cmd);
  addMemoryOptions(cmd);
  addCopyOptions(cmd);
  addZstdLevelOption(cmd);
  addLogOptions(cmd, 'print a machine-readable summary on stdout (needs --out)');
  if (options.routeMarks ?? true) markRouteLimits(cmd, ['stream', 'exact', 'against']);
  cmd.addHelpText('after', DEDUP_HELP);
  cmd.action(async (files: string[], flags: DedupFlags) => {
    await runDedup(files, flags);
  });
  return cmd;
}

/** Options of what the run finds and writes, and where: `--exact`, `--verify`, `--output`, `--out`, `--out-dir`. */
function addRunOptions(cmd: Command): void {
  cmd
    .option('--exact', 'exact duplicates only (equal after --normalize): no shingles, no MinHash, one streaming pass; the fastest mode, same outputs')
    .addOption(engineCliOption(engineOption('verify')!))
    .addOption(
      new Option(
        '--output <mode>',
        'what to write: pairs, clusters (JSONL), dedup (the input without duplicates), annotate (the input with the tags cluster, cluster_size, duplicate_of, similarity, kept)',
      ).choices(['pairs', 'clusters', 'dedup', 'annotate']).default('pairs'),
    )
    .option(
      '-o, --out <file>',
      'write here (atomically: temp file, then rename; .gz/.zst compress) instead of stdout; for --output dedup|annotate of shards or several inputs: a directory, one output shard per input file, named as neardup job dedup names them',
    )
    .option('--out-dir <dir>', 'for --output dedup|annotate of shards: the directory of output shards (--out DIR by the name neardup job uses)');
}

/** Options of memory and threads: `--stream`, `--workers`, a streamed run's budget and batches. */
function addMemoryOptions(cmd: Command): void {
  cmd
    .option(
      '--stream',
      `keep the texts on disk and read the input again for each pass (memory: ~130 bytes per document plus ids); default for inputs over a quarter of the heap left (${
        (heapRoom() / 4e9).toFixed(2)
      } GB here), and for plain JSONL/text/TSV files over 16 MB, read in byte ranges (LSH candidates, component clusters)`,
    )
    .option('--no-stream', 'hold every text in memory, whatever the input size')
    .option(
      '--workers <n>',
      `worker threads for signing and verification; 0 = this thread (default: all ${availableParallelism()} cores for inputs over ${
        PARALLEL_MIN_CHARS / 1e6
      } M characters, else 0)`,
      parseCount('workers'),
    )
    .option(
      '--memory-budget <MB>',
      'streaming: megabytes of fingerprint sets held at once while verifying; less memory, more passes over the input (default 1024)',
      parsePositiveInt('--memory-budget', 1 << 20),
    )
    .option('--batch-size <n>', 'streaming: documents per batch sent to a worker (default 1024)', parsePositiveInt('--batch-size', 1 << 20));
}

/** Options of `--against`, of the copies (`--tag-prefix`, `--removed`, `--dry-run`) and of the pairs' format. */
function addCopyOptions(cmd: Command): void {
  cmd
    .option(
      '--against <reference>',
      'report (pairs) or drop (--output dedup) or mark (annotate) the documents of <input> that are near duplicates of a document of <reference>; pairs only across the two',
    )
    .option(
      '--tag-prefix <prefix>',
      'for --output annotate: prepended to the names of the tags cluster, cluster_size, duplicate_of, similarity and kept, e.g. nd_ (default: those names, or neardup_<name> when the input already has a field of one of them)',
    )
    .option(
      '--removed <file>',
      'for --output dedup: also write one row per dropped document (id, kept_id, similarity, cluster; with --against also reference_id, reference_source) to <file>, .tsv, .jsonl or .parquet (TSV and JSONL may end in .gz/.zst), atomically',
    )
    .option('--dry-run', 'for --output dedup: print the summary and write only the --removed audit, not the deduplicated copy')
    .addOption(
      new Option('--output-format <format>', 'pairs as tsv (a⇥b⇥similarity, no header), csv or jsonl (default: from --out extension, else tsv)').choices([
        'tsv',
        'csv',
        'jsonl',
      ]),
    );
}

/** What `--help` prints after the options: the output's form and examples. */
const DEDUP_HELP = `
Output (default: pairs as "a<TAB>b<TAB>similarity" lines, a < b in input order, sorted; ids are
0-based row numbers unless --id/--id-field). With --measure containment, "a<TAB>b<TAB>c" means a
(the document with fewer shingles) is contained in b: c = |A∩B|/|A|; sorted by a. With --exact,
similarity is 1. A summary goes to stderr, with the candidate method that ran.

Examples:
  $ neardup dedup ads.tsv --text 'Title,Short Description'
  $ neardup dedup ads.tsv --text 'Title,Short Description' -k 10 --normalize lowercase-collapse --threshold 0.8 --out pairs.tsv
  $ neardup dedup ads.csv --text body --id ad_id --output dedup --out unique.csv
  $ neardup dedup news.jsonl --text-field title,body --id-field meta.id --output clusters --out clusters.jsonl
  $ neardup dedup rcv1.txt --format idtext --output annotate --out annotated.txt
  $ neardup dedup crawl.parquet --text body --id url --output dedup --out crawl.dedup.parquet
  $ neardup dedup 'shards/*.jsonl.zst' --id id --output dedup --out shards-dedup/
  $ neardup dedup 's3://corpus/crawl/*.jsonl.zst' --id id --output dedup --out-dir s3://corpus/clean/
  $ neardup dedup ads.tsv --text 'Title,Short Description' --exact --output clusters
  $ neardup dedup ads.tsv --text 'Title,Short Description' --measure containment --threshold 0.9
  $ neardup dedup ads.tsv --text 'Title,Short Description' --threshold 0.5 --candidates exact
  $ neardup dedup ads.tsv --text 'Title,Short Description' --candidates sketch --buckets 25
  $ neardup dedup ads.tsv --text 'Title,Short Description' --cluster-mode centre --representative longest --output dedup
  $ neardup dedup news.jsonl --id-field id --keep max:quality --output dedup --out best.jsonl
  $ neardup dedup fineweb-edu/ dclm/ extra.parquet --id id --keep source --output dedup --out clean/
  $ neardup dedup ads.tsv --text 'Title,Short Description' --limit 500
  $ zcat big.tsv.gz | neardup dedup - --format tsv --text text --json --out pairs.tsv
  $ neardup dedup train.jsonl --against test.jsonl --output dedup --out train-clean.jsonl`;
