/**
 * The report's summary as plain HTML (rendered in Node, not by the page's script), so it reads the
 * same with JavaScript off, in a mail client's preview or in a text browser.
 * @module
 */
import type { ReportData } from './data.js';

/** Escapes text for HTML element content and attribute values. */
function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const num = (x: number, d = 0): string => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** "23 November 2026, 18:22 UTC" for an ISO timestamp (the ISO form stays in `<time datetime>`). */
export function formatTimestamp(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())} UTC`;
}

/** Stage names as the time row shows them, in pipeline order. */
const STAGES: Record<string, string> = {
  read: 'read',
  shingle: 'shingle',
  sign: 'sign',
  lsh: 'LSH',
  verify: 'verify',
  cluster: 'cluster',
  report: 'report data',
};

/** The run's estimated recall as the summary and the S-curve's caption say it. */
function recallText(r: NonNullable<ReportData['sCurve']['recall']>): string {
  return `~${num(r.estimate, 4)} ± ${num(r.stdError, 4)}, estimated from the ${num(r.verifiedPairs)} verified pairs (Σ 1/P(s) = ${
    num(r.estimatedPairs, 1)
  } pairs at or above the threshold)`;
}

/** The summary rows: [label, value]. */
export function summaryRows(data: ReportData): [string, string][] {
  const o = data.options;
  const s = data.summary;
  const t = o.threshold;
  const times = Object.entries(s.timings);
  const total = times.reduce((a, [, v]) => a + v, 0);
  return [
    ['Input', data.source.name + (data.source.format ? ` [${data.source.format}]` : '')],
    ['Documents', num(s.docs) + (s.emptyDocs ? ` (${num(s.emptyDocs)} without shingles)` : '')],
    ['Shingles', `${o.shingle.kind} k=${o.shingle.k}, normalize ${o.shingle.normalize}${o.shingle.multiset ? ', multiset' : ''}`],
    ['MinHash', `${o.minhash.method}, ${o.minhash.numPerm} hashes, seed ${o.minhash.seed}`],
    ['LSH', `${o.bands} bands × ${o.rows} rows (${o.rule}); P(${t}) = ${num(data.sCurve.recallAtThreshold, 4)}`],
    ...(data.sCurve.recall ? [['Recall (estimated)', recallText(data.sCurve.recall)] as [string, string]] : []),
    ['Threshold', `Jaccard ≥ ${t} (verify ${o.verify})`],
    ['Candidate pairs', num(s.candidates)],
    ['Near-duplicate pairs', num(s.pairs)],
    ['Clusters', `${num(s.clusters)} holding ${num(s.docsInClusters)} documents; largest ${num(s.largestCluster)}`],
    ['Duplicates', `${num(s.duplicates)} documents beyond one per cluster (${num((100 * s.duplicates) / Math.max(1, s.docs), 1)}%)`],
    ['Time', times.map(([k, v]) => `${STAGES[k] ?? k} ${num(v)} ms`).join(' · ') + ` · total ${num(total)} ms (writing this file came after)`],
  ];
}

/** The summary section as HTML. */
export function summaryHtml(data: ReportData): string {
  const rows = summaryRows(data)
    .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`)
    .join('\n');
  return `<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>\n<dl class="summary">\n${rows}\n</dl></section>`;
}
