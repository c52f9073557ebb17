/**
 * `neardup report <input> --out report.html`: one self-contained HTML file with the summary and
 * the charts of a dedup run (S-curve, similarities, estimate against exact, bands sweep, similarity
 * against shingle size) and the largest clusters with their shared passages.
 * @module
 */
import { Command, Option } from 'commander';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { openOutput } from '../../io/write/output.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import { findDuplicates } from '../engine.js';
import { idOf, loadCorpus, withInputCopy } from '../corpus.js';
import { addEngineOptions, addLogOptions, addZstdLevelOption, parsePositiveInt, type EngineFlags, type InputFlags } from '../options.js';
import { pipelineOptionsFrom } from '../pipelineOptions.js';
import { int, ms, Reporter, type LogFlags } from '../report.js';
import { buildReportData } from '../../report/data.js';
import { renderReportHtml } from '../../report/html.js';

interface ReportFlags extends InputFlags, EngineFlags, LogFlags {
  out?: string;
  title?: string;
  clusters: number;
  members: number;
  sample: number;
  minPassage: number;
  data?: string;
}

/** The `report` command. */
export function reportCommand(): Command {
  const cmd = new Command('report')
    .description('write an HTML report of a dedup run: summary, S-curve, similarity charts, and the largest clusters with their shared passages')
    .argument('<input>', 'TSV, CSV, JSONL, text, id⇥text or Parquet file (.gz/.zst ok), a directory, a quoted glob of shards, or - for stdin');
  addEngineOptions(cmd);
  cmd
    .addOption(new Option('--verify <mode>', 'check candidates by exact Jaccard or by the MinHash estimate').choices(['exact', 'estimate']).default('exact'))
    .option('-o, --out <file>', 'the HTML file to write (atomically: temp file, then rename)')
    .option('--title <text>', 'report title (default: "neardup report: <input>")')
    .option('--clusters <n>', 'largest clusters shown side by side', parsePositiveInt('clusters', 1000), 6)
    .option('--members <n>', 'members shown per cluster', parsePositiveInt('members', 100), 4)
    .option('--sample <n>', 'pairs in the estimate-against-exact chart', parsePositiveInt('sample', 100000), 1000)
    .option('--min-passage <chars>', 'shortest highlighted shared passage', parsePositiveInt('min-passage', 100000), 15)
    .option('--data <file>', 'also write the report data as JSON here');
  addZstdLevelOption(cmd);
  addLogOptions(cmd, 'print a machine-readable summary on stdout');
  cmd.addHelpText(
    'after',
    `
The file embeds its chart library (Observable Plot) and data, so it opens offline. See docs/report.md
for what each chart shows and how to read it.

Examples:
  $ neardup report ads.tsv --text 'Title,Short Description' -k 10 --normalize lowercase-collapse --out report.html
  $ neardup report news.jsonl --text-field body --threshold 0.7 --clusters 10 --out news.html`,
  );
  cmd.action(async (file: string, flags: ReportFlags) => {
    await runReport(file, flags);
  });
  return cmd;
}

async function runReport(file: string, flags: ReportFlags): Promise<void> {
  if (!flags.out || flags.out === '-') throw new UsageError('report needs --out <file.html>');
  if ((flags.keep ?? 'first') !== 'first')
    throw new UsageError(
      `--keep ${flags.keep} applies to the outputs of neardup dedup and neardup job: the report's clusters show their first member (or --representative's)`,
    );
  const reporter = new Reporter(flags);
  await refuseAliasedOutputs(
    [
      { what: '--out', path: flags.out },
      { what: '--data', path: flags.data },
    ],
    [{ what: 'the input', path: file }],
  );
  const { dedup: options, read } = pipelineOptionsFrom(flags);
  const t0 = performance.now();
  // A named pipe (`<(zcat a.gz)`) is copied first: the readers sniff a format by a positional read.
  const corpus = await withInputCopy(file, read, (f, r) => loadCorpus(f, r, reporter));
  const readMs = performance.now() - t0;
  const name = file === '-' ? '<stdin>' : file;
  const { value: result } = await reporter.stage('dedup', () => findDuplicates(corpus.texts, options), (r) => `${int(r.stats.pairs)} pairs`);
  const ids = corpus.texts.map((_, i) => idOf(corpus, i));
  const { value: data } = await reporter.stage('report data', () =>
    buildReportData(corpus.texts, {
      dedup: options,
      result,
      ids,
      source: { name: path.basename(name), format: corpus.input.format, bytes: corpus.bytes },
      clusters: flags.clusters,
      membersPerCluster: flags.members,
      samplePairs: flags.sample,
      minPassage: flags.minPassage,
      timings: { read: readMs },
    }));
  const html = renderReportHtml(data, flags.title ? { title: flags.title } : {});
  const sink = await openOutput(flags.out);
  try {
    await sink.write(html);
    await sink.close();
  } catch (e) {
    await sink.abort();
    throw e;
  }
  if (flags.data) {
    const ds = await openOutput(flags.data);
    try {
      await ds.write(JSON.stringify(data) + '\n');
      await ds.close();
    } catch (e) {
      await ds.abort();
      throw e;
    }
  }
  const total = performance.now() - t0;
  const s = data.summary;
  if (flags.json) {
    reporter.json({
      command: 'report',
      out: flags.out,
      bytes: Buffer.byteLength(html),
      docs: s.docs,
      pairs: s.pairs,
      clusters: s.clusters,
      recall: data.sCurve.recall ?? null,
      timeMs: total,
    });
    return;
  }
  reporter.summary(
    `report      ${int(s.docs)} docs, ${int(s.pairs)} pairs, ${int(s.clusters)} clusters; ${data.options.bands} bands × ${data.options.rows} rows${
      data.sCurve.recall ? `, recall ~${data.sCurve.recall.estimate.toFixed(4)} ± ${data.sCurve.recall.stdError.toFixed(4)} (estimated)` : ''
    }`,
  );
  reporter.summary(`output      ${path.normalize(flags.out)} (${(Buffer.byteLength(html) / 1e6).toFixed(2)} MB, self-contained) in ${ms(total)}`);
}
