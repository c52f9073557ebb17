/**
 * The near-duplicate search of a `neardup dedup` run, the two ways: the texts in memory, or on disk
 * and read again for each pass (byte ranges when the format allows). ./run.ts chooses between them.
 * @module
 */
import type { DedupOptions, DedupResult } from '../../dedup/dedup.js';
import type { ReadOptions } from '../../io/read/read.js';
import { findDuplicates } from '../engine.js';
import { loadCorpus, rangedCorpus, streamCorpus, type Corpus } from '../corpus.js';
import { dedupStream, type StreamDedupExtra } from '../../dedup/streamDedup.js';
import { defaultWorkers } from '../../parallel/signPool.js';
import { int, type Reporter } from '../report.js';
import { outputTarget, type OutputTarget } from './output.js';
import type { DedupFlags } from './flags.js';

/** What the two ways of running the near-duplicate search take. */
export interface EngineRun {
  file: string;
  fileArg: string;
  name: string;
  flags: DedupFlags;
  options: DedupOptions;
  readOptions: ReadOptions;
  reporter: Reporter;
}

/** What they give back. */
export interface EngineResult {
  corpus: Corpus;
  result: DedupResult;
  target: OutputTarget;
  extra: StreamDedupExtra | undefined;
}

/** Progress bars of the sign and verify stages, fed by the engine's onProgress. */
function progressBars(reporter: Reporter): { onProgress: NonNullable<DedupOptions['onProgress']>; startSign: (total: number) => void; stop: () => void } {
  let signBar: ReturnType<Reporter['progress']> | undefined;
  let verifyBar: ReturnType<Reporter['progress']> | undefined;
  return {
    onProgress: (stage, done, total) => {
      if (stage === 'sign') signBar?.update(done);
      else {
        signBar?.stop();
        verifyBar ??= reporter.progress('verify', 'pairs', total);
        verifyBar.update(done);
      }
    },
    startSign: (total) => {
      signBar = reporter.progress('sign', 'docs', total);
    },
    stop: () => {
      signBar?.stop();
      verifyBar?.stop();
    },
  };
}

/** Texts in memory: read them all, then the dedup (worker threads for large inputs). */
export async function runInMemory(r: EngineRun): Promise<EngineResult> {
  const { flags, reporter } = r;
  const bars = progressBars(reporter);
  const corpus = await loadCorpus(r.file, r.readOptions, reporter);
  // Before the work: a missing or wrong --out is a usage error now, not after the dedup.
  const target = await outputTarget(flags, r.fileArg, corpus.input);
  bars.startSign(corpus.count);
  const { value: result } = await reporter.stage(
    'dedup',
    () => findDuplicates(corpus.texts, { ...r.options, keep: undefined, workers: flags.workers, onProgress: bars.onProgress }),
    (x) => `${int(x.stats.candidates)} candidates, ${int(x.stats.pairs)} pairs`,
  );
  bars.stop();
  return { corpus, result, target, extra: undefined };
}

/** Texts on disk: the input is read again for each pass. */
export async function runStreamed(r: EngineRun): Promise<EngineResult> {
  const { flags, reporter } = r;
  const bars = progressBars(reporter);
  reporter.verbose(`streaming ${r.name}: texts stay on disk, read again for each pass`);
  const ranged = await rangedCorpus(r.file, r.readOptions, reporter);
  if (ranged) reporter.verbose(flags.workers === 0 ? `this thread reads ${r.name} in byte ranges` : `the workers read ${r.name} themselves, in byte ranges`);
  const streamed = ranged ?? (await streamCorpus(r.file, r.readOptions, reporter));
  const corpus = streamed.corpus;
  const target = await outputTarget(flags, r.fileArg, corpus.input);
  // Pass 1 signs while it reads (its own progress bar); the later passes verify.
  const { value: result } = await reporter.stage(
    'dedup',
    () =>
      dedupStream(streamed.source, {
        ...r.options,
        workers: flags.workers ?? defaultWorkers(),
        memoryBudget: flags.memoryBudget === undefined ? undefined : flags.memoryBudget * 2 ** 20,
        batchSize: flags.batchSize,
        onProgress: (st, d, t) => st === 'verify' && bars.onProgress(st, d, t),
      }),
    (x) => `${int(x.stats.candidates)} candidates, ${int(x.stats.pairs)} pairs`,
  );
  bars.stop();
  return { corpus, result, target, extra: (result as DedupResult & { extra: StreamDedupExtra }).extra };
}
