/**
 * The one place where the flags of a command that runs the pipeline (`dedup`, `job`, `report`)
 * become library options: engine options, reader options and the pair format, checked in that
 * order, and the output rules those commands share.
 * @module
 */
import type { DedupOptions } from '../dedup/dedup.js';
import type { ReadOptions } from '../io/read/read.js';
import type { PairFormat } from '../io/write/write.js';
import { UsageError } from '../common/errors.js';
import { dedupOptionsFrom, pairFormatOf, readOptionsFrom, type EngineFlags, type InputFlags } from './options.js';

/** The flags {@link pipelineOptionsFrom} reads. */
export type PipelineFlags = EngineFlags & InputFlags & { outputFormat?: PairFormat; out?: string; output?: string };

/** Library options of a pipeline run. */
export interface PipelineOptions {
  /** Shingles, MinHash, banding, verification, kinds (checked: bad values are usage errors). */
  dedup: DedupOptions;
  /** How the input is read. */
  read: ReadOptions;
  /** How pairs are written: --output-format, else from the --out extension, else TSV. */
  pairFormat: PairFormat;
}

/** The library options of the flags. The output format is checked against the output first, then engine flags, then the reader's. */
export function pipelineOptionsFrom(flags: PipelineFlags): PipelineOptions {
  if (flags.outputFormat && flags.output !== undefined && flags.output !== 'pairs') throw new UsageError('--output-format applies to --output pairs only');
  const dedup = dedupOptionsFrom(flags);
  const read = readOptionsFrom(flags);
  return { dedup, read, pairFormat: pairFormatOf(flags) };
}

/** `--json` prints the summary on stdout, so the output must go to a file: a usage error otherwise. */
export function requireOutForJson(flags: { json?: boolean; out?: string }): void {
  if (flags.json && (flags.out === undefined || flags.out === '-'))
    throw new UsageError('--json prints the summary on stdout, so the output needs --out <file>');
}
