/**
 * The parsed flags of `neardup dedup`, shared by the command and its steps.
 * @module
 */
import type { PairFormat } from '../../io/write/write.js';
import type { EngineFlags, InputFlags } from '../options.js';
import type { LogFlags } from '../report.js';

/** What `dedup` writes. */
export type OutputMode = 'pairs' | 'clusters' | 'dedup' | 'annotate';

/** The flags of `neardup dedup`. */
export interface DedupFlags extends InputFlags, EngineFlags, LogFlags {
  exact?: boolean;
  workers?: number;
  stream?: boolean;
  /** Streaming: MiB of fingerprint sets held while verifying. */
  memoryBudget?: number;
  /** Streaming: documents per worker batch. */
  batchSize?: number;
  output: OutputMode;
  out?: string;
  /** The directory of output shards (`--out DIR` by another name, as in `neardup job`). */
  outDir?: string;
  outputFormat?: PairFormat;
  against?: string;
  /** `--tag-prefix`: prepended to the names of annotate's tags. */
  tagPrefix?: string;
  /** `--removed FILE`: the audit of the documents `--output dedup` drops. */
  removed?: string;
  /** `--dry-run`: the summary and the audit only, no deduplicated output. */
  dryRun?: boolean;
}
