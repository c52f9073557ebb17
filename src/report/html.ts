/**
 * Rendering report data as one self-contained HTML file: the chart library (d3 + Observable Plot),
 * the renderer (src/web/report.js), the styles and the data (JSON) are all inlined, so the file
 * opens offline and can be mailed around.
 * @module
 */
import type { ReportData } from './data.js';
import { vendorBundle, webFile } from '../web/assets.js';
import { formatTimestamp, summaryHtml } from './summary.js';

/** Options of {@link renderReportHtml}. */
export interface RenderReportOptions {
  /** Page title. Default: "neardup report: <source name>". */
  title?: string;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * JSON that is safe inside a `<script>` element: `<`, `>`, `&` and the JS-only line separators are
 * escaped, so no text in the data can close the element.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A script's source, made safe to inline (a literal `</script` inside would end the element). */
function inlineScript(src: string): string {
  return src.replace(/<\/script/gi, '<\\/script');
}

/** Renders the report as one HTML document (a string). */
export function renderReportHtml(data: ReportData, options: RenderReportOptions = {}): string {
  const title = options.title ?? `neardup report: ${data.source.name}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="neardup">
<title>${escapeHtml(title)}</title>
<style>
${webFile('common.css')}
${webFile('report.css')}
</style>
</head>
<body>
<a class="skip" href="#main">Skip to the report</a>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="sub">Generated <time datetime="${escapeHtml(data.generatedAt)}">${
    escapeHtml(formatTimestamp(data.generatedAt))
  }</time> by neardup. Everything in this file works offline.</p>
</header>
<main id="main">
<div id="report" aria-live="polite">
${summaryHtml(data)}
<noscript><p class="error">The charts and the side-by-side texts below need JavaScript; the summary above is plain HTML.</p></noscript>
</div>
</main>
<script type="application/json" id="neardup-data">${scriptJson(data)}</script>
<script>${inlineScript(vendorBundle('d3.min.js'))}</script>
<script>${inlineScript(vendorBundle('plot.umd.min.js'))}</script>
<script>${inlineScript(vendorBundle('diff.min.js'))}</script>
<script>${inlineScript(webFile('diffView.js'))}</script>
<script>${inlineScript(webFile('report.js'))}</script>
</body>
</html>
`;
}
