/**
 * `neardup dedup --exact`: identical documents (after --normalize) in one streaming pass, no
 * shingles and no MinHash, then the same outputs as the near-duplicate run.
 * @module
 */
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import type { ReadOptions } from '../../io/read/read.js';
import { exactDuplicates } from '../../dedup/exactDups.js';
import { formatLabel, streamCorpus } from '../corpus.js';
import { pairFormatOf } from '../options.js';
import { int, ms, type Reporter } from '../report.js';
import { outputTarget, writeResult } from './output.js';
import { printRemovedLines } from './summary.js';
import type { DedupFlags } from './flags.js';

/**
 * `dedup --exact`: one streaming pass that hashes each normalized text (texts stay on disk), then
 * the chosen output. Returns undefined once the output is closed (the sink to abort on failure is
 * handled inside).
 */
export async function runExact(file: string, fileArg: string, name: string, flags: DedupFlags, readOptions: ReadOptions, reporter: Reporter, tStart: number): Promise<undefined> {
  if (flags.measure === 'containment' || flags.candidates !== undefined || flags.buckets !== undefined || (flags.clusterMode ?? 'components') !== 'components' || (flags.representative ?? 'first') !== 'first') {
    throw new UsageError('--exact finds identical documents: it takes no --measure, --candidates, --buckets, --cluster-mode or --representative');
  }
  // source keeps the first too: inputs are read in the order given.
  if ((flags.keep ?? 'first') !== 'first' && flags.keep !== 'source') {
    throw new UsageError(`--keep ${flags.keep} is not supported with --exact: it keeps the first of each group of copies (drop --exact to choose the kept member)`);
  }
  if ((flags.verify ?? 'exact') !== 'exact') {
    throw new UsageError(`--exact finds identical documents, compared whole: there are no candidates to --verify ${flags.verify} (drop --verify, or drop --exact for near duplicates)`);
  }
  const streamed = await streamCorpus(file, readOptions, reporter);
  // Before the work: a missing or wrong --out is a usage error now.
  const target = await outputTarget(flags, fileArg, streamed.corpus.input);
  const { value: result } = await reporter.stage(
    'exact',
    () => exactDuplicates(streamed.source(), { normalize: { preset: flags.normalize }, pairs: flags.output === 'pairs', ...(flags.maxPairs !== undefined ? { maxPairs: flags.maxPairs } : {}) }),
    (r) => `${int(r.stats.pairs)} pairs`,
  );
  const corpus = streamed.corpus;
  const tw = performance.now();
  {
    // Copies are identical after normalization: their similarity to the kept copy is 1.
    const { written, removed } = await writeResult(flags, file, corpus, result, target, readOptions, {}, true, reporter);
    const writeMs = performance.now() - tw;
    const total = performance.now() - tStart;
    const s = result.stats;
    const dupDocs = result.clusters.reduce((a, c) => a + c.members.length - 1, 0);
    const inCluster = result.clusters.reduce((a, c) => a + c.members.length, 0);
    if (flags.json) {
      reporter.json({
        command: 'dedup',
        input: { path: name, format: corpus.input.format, docs: corpus.count, emptyDocs: s.emptyDocs, skipped: corpus.input.skips.count, bytes: corpus.bytes },
        options: { exact: true, normalize: flags.normalize },
        pairs: s.pairs,
        clusters: s.clusters,
        docsInClusters: inCluster,
        duplicates: dupDocs,
        output: { mode: flags.output, path: flags.out, records: written, format: flags.output === 'pairs' ? pairFormatOf(flags) : undefined, ...(flags.dryRun ? { dryRun: true } : {}) },
        ...(removed !== undefined ? { removed: { path: flags.removed, records: removed } } : {}),
        timings: { hash: s.timings.sign, cluster: s.timings.cluster, write: writeMs, total },
      });
      return undefined;
    }
    const skipped = corpus.input.skips.count;
    reporter.summary(`docs        ${int(corpus.count)} from ${name} [${formatLabel(corpus.input)}]: ${int(s.emptyDocs)} empty${skipped ? `, ${int(skipped)} invalid skipped` : ''}`);
    reporter.summary(`method      exact duplicates: equal after normalize ${flags.normalize} (64-bit hash of the text; no shingles, no MinHash; one streaming pass)`);
    reporter.summary(`pairs       ${int(s.pairs)} (identical, similarity 1)`);
    reporter.summary(`clusters    ${int(s.clusters)}, holding ${int(inCluster)} docs (${int(dupDocs)} duplicates beyond one per cluster)`);
    reporter.summary(`time        read and hash ${ms(s.timings.sign)} · cluster ${ms(s.timings.cluster)} · write ${ms(writeMs)} · total ${ms(total)}`);
    if (flags.out) reporter.summary(`output      ${flags.output}: ${int(written)} records → ${path.normalize(flags.out)}`);
    printRemovedLines(flags, reporter, corpus.count - dupDocs, removed);
    return undefined;
  }
}
