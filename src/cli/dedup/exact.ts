/**
 * `neardup dedup --exact`: identical documents (after --normalize) in one streaming pass, no
 * shingles and no MinHash, then the same outputs as the near-duplicate run.
 * @module
 */
import path from 'node:path';
import type { ReadOptions } from '../../io/read/read.js';
import { exactDuplicates } from '../../dedup/exactDups.js';
import { formatLabel, streamCorpus } from '../corpus.js';
import { refuseForRoute } from '../options.js';
import { int, ms, type Reporter } from '../report.js';
import { outputTarget, writeResult } from './output.js';
import { dedupOutputJson, removedLines } from './summary.js';
import { docsLine, outputLine, printSummary, removedJson, summaryLine } from '../summary.js';
import type { DedupFlags } from './flags.js';

/** What `dedup --exact` runs on: the prepared input, its flags and reader options, and when the run started. */
export interface ExactRun {
  /** The file read (a spooled copy of standard input, or the input itself). */
  file: string;
  /** The input as given (for outputs named after it). */
  fileArg: string;
  /** The input's name in the summary. */
  name: string;
  flags: DedupFlags;
  readOptions: ReadOptions;
  reporter: Reporter;
  /** `performance.now()` when the run started (the summary's total). */
  tStart: number;
}

/**
 * `dedup --exact`: one streaming pass that hashes each normalized text (texts stay on disk), then
 * the chosen output. Returns undefined once the output is closed (the sink to abort on failure is
 * handled inside).
 */
export async function runExact(run: ExactRun): Promise<undefined> {
  const { file, fileArg, name, flags, readOptions, reporter, tStart } = run;
  // The exact route's table (src/engine/routes.ts) says which options it refuses, and in what words.
  refuseForRoute('exact', { ...flags });
  const streamed = await streamCorpus(file, readOptions, reporter);
  // Before the work: a missing or wrong --out is a usage error now.
  const target = await outputTarget(flags, fileArg, streamed.corpus.input);
  const { value: result } = await reporter.stage(
    'exact',
    () =>
      exactDuplicates(streamed.source(), {
        normalize: { preset: flags.normalize },
        pairs: flags.output === 'pairs',
        ...(flags.maxPairs !== undefined ? { maxPairs: flags.maxPairs } : {}),
      }),
    (r) => `${int(r.stats.pairs)} pairs`,
  );
  const corpus = streamed.corpus;
  const tw = performance.now();
  {
    // Copies are identical after normalization: their similarity to the kept copy is 1.
    const { written, removed } = await writeResult({ flags, file, corpus, result, target, read: readOptions }, { options: {}, exact: true, reporter });
    const writeMs = performance.now() - tw;
    const total = performance.now() - tStart;
    const s = result.stats;
    const dupDocs = result.clusters.reduce((a, c) => a + c.members.length - 1, 0);
    const inCluster = result.clusters.reduce((a, c) => a + c.members.length, 0);
    printSummary(reporter, flags.json, {
      json: () => ({
        command: 'dedup',
        input: { path: name, format: corpus.input.format, docs: corpus.count, emptyDocs: s.emptyDocs, skipped: corpus.input.skips.count, bytes: corpus.bytes },
        options: { exact: true, normalize: flags.normalize },
        pairs: s.pairs,
        clusters: s.clusters,
        docsInClusters: inCluster,
        duplicates: dupDocs,
        output: dedupOutputJson(flags, written),
        ...removedJson(flags.removed, removed),
        timings: { hash: s.timings.sign, cluster: s.timings.cluster, write: writeMs, total },
      }),
      lines: () => [
        docsLine({ docs: corpus.count, from: `${name} [${formatLabel(corpus.input)}]`, empty: s.emptyDocs, skipped: corpus.input.skips.count }),
        summaryLine(
          'method',
          `exact duplicates: equal after normalize ${flags.normalize} (64-bit hash of the text; no shingles, no MinHash; one streaming pass)`,
        ),
        summaryLine('pairs', `${int(s.pairs)} (identical, similarity 1)`),
        summaryLine('clusters', `${int(s.clusters)}, holding ${int(inCluster)} docs (${int(dupDocs)} duplicates beyond one per cluster)`),
        summaryLine('time', `read and hash ${ms(s.timings.sign)} · cluster ${ms(s.timings.cluster)} · write ${ms(writeMs)} · total ${ms(total)}`),
        flags.out ? outputLine(flags.output, written, path.normalize(flags.out)) : undefined,
        ...removedLines(flags, corpus.count - dupDocs, removed),
      ],
    });
    return undefined;
  }
}
