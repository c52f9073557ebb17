/**
 * `neardup dedup NEW --against OLD` in one process: pairs (NEW document, OLD document) only, and the
 * NEW input without (dedup) or annotated with (annotate) its near duplicates of OLD.
 * @module
 */
import path from 'node:path';
import { dedupAgainst } from '../dedup/against.js';
import { UsageError } from '../io/errors.js';
import { openInput, type ReadOptions } from '../io/read.js';
import { openOutput, type OutputSink } from '../io/output.js';
import { annotateHeader, annotateRecord, pairHeader, type PairFormat } from '../io/write.js';
import type { DedupOptions } from '../dedup/dedup.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { idOf, loadCorpus } from './corpus.js';
import { int, ms, type Reporter } from './report.js';
import { tooManyPairsMessage } from './tooManyPairs.js';
import { writePairLines } from '../io/pairLines.js';
import { estimateRecall } from '../lsh/recallEstimate.js';
import { inexactWhy, recallJson, recallLine } from './dedupSummary.js';

/** What runAgainst needs from the dedup flags. */
export interface AgainstRun {
  file: string;
  against: string;
  output: 'pairs' | 'clusters' | 'dedup' | 'annotate';
  out?: string;
  pairFormat: PairFormat;
  json?: boolean;
}

/** Runs dedup of `run.file` against `run.against`. */
export async function runAgainst(run: AgainstRun, readOptions: ReadOptions, options: DedupOptions, reporter: Reporter): Promise<void> {
  if (run.output === 'clusters') throw new UsageError('--against reports pairs across the two inputs: --output clusters does not apply (use pairs, dedup or annotate)');
  if (run.file === '-' || run.against === '-') throw new UsageError('--against reads files or directories, not standard input');
  const t0 = performance.now();
  const corpus = await loadCorpus(run.file, readOptions, reporter);
  const ref = await loadCorpus(run.against, { ...readOptions, format: readOptions.format === 'auto' ? 'auto' : readOptions.format }, reporter);
  let result;
  try {
    result = dedupAgainst(corpus.texts, ref.texts, options);
  } catch (e) {
    if (e instanceof TooManyPairsError) throw new UsageError(tooManyPairsMessage(e, true));
    throw e;
  }
  let sink: OutputSink | undefined = await openOutput(run.out);
  let written = 0;
  try {
    if (run.output === 'pairs') {
      await sink.write(pairHeader(run.pairFormat, false));
      await writePairLines(sink, run.pairFormat, result.pairs, (a) => idOf(corpus, a), (b) => idOf(ref, b));
      written = result.pairs.length;
    } else {
      const input = await openInput(run.file, { ...readOptions, format: corpus.input.format, raw: true });
      const layout = { format: input.format, delimiter: input.delimiter, columns: corpus.input.header?.columns };
      const annotate = run.output === 'annotate';
      let headerDone = false;
      const header = async (): Promise<void> => {
        if (headerDone) return;
        headerDone = true;
        if (annotate) await sink!.write(annotateHeader(layout, input.header?.raw));
        else if (input.header) await sink!.write(input.header.raw + '\n');
      };
      let i = 0;
      for await (const r of input.records) {
        await header();
        if (i >= corpus.count || r.row !== corpus.rows[i]) throw new Error(`${input.name} changed while it was being read (record ${i})`);
        const m = result.bestMatch[i]!;
        if (annotate) {
          await sink.write(annotateRecord(layout, r.raw!, undefined, m >= 0 ? String(idOf(ref, m)) : undefined));
          written++;
        } else if (m < 0) {
          await sink.write(r.raw! + '\n');
          written++;
        }
        i++;
      }
      await header();
    }
    await sink.close();
    sink = undefined;
  } finally {
    await sink?.abort();
  }
  const total = performance.now() - t0;
  // Each corpus document with its reference matches is one unit of the standard error.
  const exact = (options.verify ?? 'exact') === 'exact';
  const recall = exact ? estimateRecall(result.pairs.map((p) => p.similarity), result.bands.bands, result.bands.rows, { units: result.pairs.map((p) => p.a) }) : undefined;
  const noRecall = exact ? undefined : inexactWhy(options.verify);
  if (run.json) {
    reporter.json({
      command: 'dedup',
      input: { path: run.file, format: corpus.input.format, docs: corpus.count },
      against: { path: run.against, format: ref.input.format, docs: ref.count },
      lsh: { bands: result.bands.bands, rows: result.bands.rows },
      candidates: result.candidates,
      pairs: result.pairs.length,
      ...recallJson(recall, noRecall),
      matched: result.matched,
      referenceMatched: result.referenceMatched,
      output: { mode: run.output, path: run.out, records: written },
      timings: { total },
    });
    return;
  }
  reporter.summary(`docs        ${int(corpus.count)} from ${run.file} [${corpus.input.format}], against ${int(ref.count)} from ${run.against} [${ref.input.format}]: ${int(result.emptyDocs)} empty`);
  reporter.summary(`lsh         ${result.bands.bands} bands × ${result.bands.rows} rows`);
  reporter.summary(`candidates  ${int(result.candidates)} (only across the two inputs)`);
  reporter.summary(`pairs       ${int(result.pairs.length)} (${options.verify ?? 'exact'} Jaccard ≥ ${options.threshold})`);
  reporter.summary(recallLine(recall, noRecall, result.bands.threshold, result.bands.recallAtThreshold));
  reporter.summary(`matched     ${int(result.matched)} of ${int(corpus.count)} documents of ${run.file} are near duplicates of a document of ${run.against}`);
  reporter.summary(`reference   ${int(result.referenceMatched)} of ${int(ref.count)} documents of ${run.against} are near duplicates of a document of ${run.file}`);
  reporter.summary(`time        total ${ms(total)}`);
  if (run.out) reporter.summary(`output      ${run.output}: ${int(written)} records → ${path.normalize(run.out)}`);
}
