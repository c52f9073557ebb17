// Renders a neardup report from the JSON in <script id="neardup-data"> with Observable Plot.
// Inlined into the report HTML by src/report/html.ts; plain browser script, no build step.
(function () {
  'use strict';
  const root = document.getElementById('report');
  const fmt = (x, d = 0) => Number(x).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const el = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  };

  let data;
  try {
    data = JSON.parse(document.getElementById('neardup-data').textContent);
  } catch (e) {
    root.append(el('p', { class: 'error', text: 'The report data is unreadable: ' + e.message }));
    return;
  }
  if (typeof Plot === 'undefined') {
    root.append(el('p', { class: 'error', text: 'The chart library did not load; only the tables are shown.' }));
  }

  const o = data.options;
  const s = data.summary;
  const t = o.threshold;

  // One section per chart: a heading, the chart in a <figure>, and a caption that says how to read it.
  function section(id, title, intro) {
    const sec = el('section', { id, 'aria-labelledby': id + '-h' }, el('h2', { id: id + '-h', text: title }));
    if (intro) sec.append(el('p', { class: 'intro', text: intro }));
    root.append(sec);
    return sec;
  }
  function chart(sec, name, build, caption) {
    const fig = el('figure', { class: 'chart', 'data-chart': name });
    try {
      if (typeof Plot === 'undefined') throw new Error('no chart library');
      fig.append(build());
    } catch (e) {
      fig.append(el('p', { class: 'error', text: 'Chart unavailable: ' + e.message }));
    }
    fig.append(el('figcaption', { text: caption }));
    sec.append(fig);
    return fig;
  }
  function table(headers, rows) {
    const tb = el('table');
    tb.append(el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { scope: 'col', text: h })))));
    const body = el('tbody');
    for (const r of rows) body.append(el('tr', {}, ...r.map((c) => el('td', { text: String(c) }))));
    tb.append(body);
    return tb;
  }

  // Summary.
  {
    const sec = section('summary', 'Summary');
    const rows = [
      ['Input', data.source.name + (data.source.format ? ' [' + data.source.format + ']' : '')],
      ['Documents', fmt(s.docs) + (s.emptyDocs ? ' (' + fmt(s.emptyDocs) + ' without shingles)' : '')],
      ['Shingles', o.shingle.kind + ' k=' + o.shingle.k + ', normalize ' + o.shingle.normalize + (o.shingle.multiset ? ', multiset' : '')],
      ['MinHash', o.minhash.method + ', ' + o.minhash.numPerm + ' hashes, seed ' + o.minhash.seed],
      ['LSH', o.bands + ' bands × ' + o.rows + ' rows (' + o.rule + '); P(' + t + ') = ' + fmt(data.sCurve.recallAtThreshold, 4)],
      ['Threshold', 'Jaccard ≥ ' + t + ' (verify ' + o.verify + ')'],
      ['Candidate pairs', fmt(s.candidates)],
      ['Near-duplicate pairs', fmt(s.pairs)],
      ['Clusters', fmt(s.clusters) + ' holding ' + fmt(s.docsInClusters) + ' documents; largest ' + fmt(s.largestCluster)],
      ['Duplicates', fmt(s.duplicates) + ' documents beyond one per cluster (' + fmt((100 * s.duplicates) / Math.max(1, s.docs), 1) + '%)'],
      ['Time', Object.entries(s.timings).map(([k, v]) => k + ' ' + fmt(v, 0) + ' ms').join(' · ')],
    ];
    const dl = el('dl', { class: 'summary' });
    for (const [k, v] of rows) dl.append(el('dt', { text: k }), el('dd', { text: v }));
    sec.append(dl);
  }

  // The S-curve.
  {
    const c = data.sCurve;
    const sec = section('s-curve', 'The S-curve of ' + c.bands + ' × ' + c.rows,
      'The chance that a pair of Jaccard similarity s becomes a candidate: P(s) = 1 − (1 − s^r)^b. Pairs left of the threshold that still become candidates are the false-positive area; pairs right of it that do not are the false-negative area.');
    chart(sec, 's-curve', () =>
      Plot.plot({
        width: 680,
        height: 340,
        grid: true,
        ariaLabel: 'S-curve of ' + c.bands + ' bands of ' + c.rows + ' rows',
        x: { label: 'Jaccard similarity s', domain: [0, 1] },
        y: { label: 'P(candidate)', domain: [0, 1] },
        marks: [
          Plot.areaY(c.points.filter((p) => p.s <= c.threshold), { x: 's', y: 'p', fill: '#d95f02', fillOpacity: 0.25 }),
          Plot.areaY(c.points.filter((p) => p.s >= c.threshold), { x: 's', y1: 'p', y2: 1, fill: '#7570b3', fillOpacity: 0.25 }),
          Plot.line(c.points, { x: 's', y: 'p', stroke: '#1b9e77', strokeWidth: 2.5 }),
          Plot.ruleX([c.threshold], { stroke: '#444', strokeDasharray: '4,3' }),
          Plot.dot([{ s: c.threshold, p: c.recallAtThreshold }], { x: 's', y: 'p', r: 5, fill: '#e7298a' }),
          Plot.text([{ s: c.threshold, p: c.recallAtThreshold }], {
            x: 's', y: 'p', dx: -8, dy: -12, textAnchor: 'end', fontSize: 12,
            text: () => 'threshold ' + c.threshold + ': expected recall P = ' + fmt(c.recallAtThreshold, 4),
          }),
          Plot.text([{ s: 0.03, p: 0.93 }], { x: 's', y: 'p', textAnchor: 'start', fontSize: 11, fill: '#555',
            text: () => 'false-positive area ' + fmt(c.falsePositiveArea, 4) + ' · false-negative area ' + fmt(c.falseNegativeArea, 4) }),
        ],
      }),
      'Green: P(s) for ' + c.bands + ' bands × ' + c.rows + ' rows. Dashed line: the threshold ' + c.threshold + '; the pink dot is the expected recall of a pair exactly at the threshold. Orange: candidates below the threshold (wasted checks); purple: pairs above it that LSH misses.');
  }

  // Histogram of verified similarities.
  {
    const h = data.similarityHistogram;
    const sec = section('similarities', 'Similarities of the ' + fmt(h.pairs) + ' near-duplicate pairs');
    if (!h.bins.length) sec.append(el('p', { text: 'No near-duplicate pairs at this threshold.' }));
    else
      chart(sec, 'histogram', () =>
        Plot.plot({
          width: 680,
          height: 300,
          marginLeft: 56,
          ariaLabel: 'Histogram of the similarities of the verified pairs',
          x: { label: h.measure, domain: [h.bins[0].x0, 1] },
          y: { label: 'pairs (log scale)', grid: true, type: 'symlog', ticks: [0, 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].filter((v) => v <= 2 * Math.max(...h.bins.map((b) => b.count))), tickFormat: (d) => fmt(d) },
          marks: [
            Plot.rectY(h.bins, { x1: 'x0', x2: 'x1', y: 'count', fill: '#1b9e77', insetLeft: 0.5, insetRight: 0.5, title: (b) => b.x0.toFixed(2) + '–' + b.x1.toFixed(2) + ': ' + b.count + ' pairs' }),
            Plot.ruleX([t], { stroke: '#444', strokeDasharray: '4,3' }),
            Plot.ruleY([0]),
          ],
        }),
        'Bins of 0.01. The bar at 0.99–1 holds exact copies (after normalization). Mass piled up near the threshold (dashed) means the threshold cuts through a crowd of borderline pairs: look at some of them before trusting it.');
  }

  // Estimated against exact similarity.
  {
    const e = data.estimateVsExact;
    const sec = section('estimates', 'MinHash estimate against exact Jaccard');
    if (!e.pairs.length) sec.append(el('p', { text: 'No candidate pairs to sample.' }));
    else {
      const ones = e.pairs.filter((p) => p.exact === 1 && p.estimate === 1).length;
      const band = [];
      for (let i = 0; i <= 100; i++) {
        const j = i / 100;
        const sd = Math.sqrt((j * (1 - j)) / e.numPerm);
        band.push({ j, lo: Math.max(0, j - 2 * sd), hi: Math.min(1, j + 2 * sd) });
      }
      chart(sec, 'estimates', () =>
        Plot.plot({
          width: 520,
          height: 520,
          grid: true,
          ariaLabel: 'Scatter plot of MinHash estimates against exact Jaccard similarities',
          x: { label: 'exact Jaccard', domain: [0, 1] },
          y: { label: 'MinHash estimate (' + e.method + ', ' + e.numPerm + ')', domain: [0, 1] },
          marks: [
            Plot.areaY(band, { x: 'j', y1: 'lo', y2: 'hi', fill: '#999', fillOpacity: 0.2 }),
            Plot.line([{ x: 0, y: 0 }, { x: 1, y: 1 }], { x: 'x', y: 'y', stroke: '#999' }),
            Plot.ruleX([t], { stroke: '#444', strokeDasharray: '4,3' }),
            Plot.ruleY([t], { stroke: '#444', strokeDasharray: '4,3' }),
            Plot.dot(e.pairs, { x: 'exact', y: 'estimate', r: 2.5, fill: '#7570b3', fillOpacity: 0.6, title: (p) => p.a + ' ~ ' + p.b + ': exact ' + p.exact + ', estimate ' + p.estimate }),
          ],
        }),
        fmt(e.pairs.length) + ' pairs (' + e.pool + ')' + (ones ? ', ' + fmt(ones) + ' of them exact copies drawn on top of each other at (1, 1)' : '') + '. RMSE ' + fmt(e.rmse, 4) + '. The grey band is ±2 standard deviations of an unbiased estimate, √(J(1−J)/' + e.numPerm + '); dashed lines mark the threshold, so dots in the top-left and bottom-right quadrants would be decided differently by the estimate than by the exact check.');
    }
  }

  // The bands sweep (seed 001).
  {
    const w = data.bandsSweep;
    const sec = section('bands', 'Candidate pairs against the number of bands (' + w.numPerm + ' hashes)',
      'More bands of fewer rows make LSH more promiscuous: more candidates, more of them below the threshold, and a higher chance of catching every true pair.');
    const flat = [];
    for (const r of w.rows) {
      if (r.atOrAbove === null) flat.push({ bands: String(r.bands), kind: 'candidates (not split)', n: r.candidates });
      else {
        flat.push({ bands: String(r.bands), kind: 'Jaccard ≥ ' + w.threshold, n: r.atOrAbove });
        flat.push({ bands: String(r.bands), kind: 'Jaccard < ' + w.threshold, n: r.below });
      }
    }
    chart(sec, 'bands', () =>
      Plot.plot({
        width: 680,
        height: 340,
        marginLeft: 60,
        ariaLabel: 'Bar chart of candidate pairs for each number of bands',
        x: { label: 'bands (rows = ' + w.numPerm + ' / bands)', domain: w.rows.map((r) => String(r.bands)) },
        y: { label: 'candidate pairs', grid: true },
        color: { legend: true, domain: ['Jaccard ≥ ' + w.threshold, 'Jaccard < ' + w.threshold, 'candidates (not split)'], range: ['#1b9e77', '#d95f02', '#999'] },
        marks: [
          Plot.barY(flat, { x: 'bands', y: 'n', fill: 'kind', title: (d) => d.bands + ' bands: ' + fmt(d.n) + ' ' + d.kind }),
          Plot.text(w.rows, { x: (r) => String(r.bands), y: 'candidates', text: (r) => fmt(r.candidates), dy: -8, fontSize: 11 }),
          Plot.ruleY([0]),
        ],
      }),
      'Bar height: distinct candidate pairs; green: at or above the threshold (worth finding), orange: below it (checked in vain).');
    sec.append(
      table(
        ['bands × rows', 'candidates', '≥ threshold', '< threshold', 'P(threshold)'],
        w.rows.map((r) => [r.bands + ' × ' + r.rows, fmt(r.candidates), r.atOrAbove === null ? '—' : fmt(r.atOrAbove), r.below === null ? '—' : fmt(r.below), fmt(r.recallAtThreshold, 4)]),
      ),
    );
  }

  // Jaccard against shingle size (seed 001).
  {
    const j = data.jaccardVsK;
    const sec = section('shingle-size', 'Similarity against shingle size',
      'The same pair of documents is more similar with short character shingles and less similar with long ones: k sets how strict "the same text" is.');
    if (!j.pairs.length) sec.append(el('p', { text: 'No near-duplicate pair below 1 to show.' }));
    else {
      const flat = j.pairs.flatMap((p) => p.points.map((q) => ({ pair: p.label, k: q.k, jaccard: q.jaccard })));
      chart(sec, 'shingle-size', () =>
        Plot.plot({
          width: 680,
          height: 340,
          grid: true,
          ariaLabel: 'Line chart of Jaccard similarity against character shingle size for sample pairs',
          x: { label: 'character shingle size k' },
          y: { label: 'exact Jaccard', domain: [0, 1] },
          color: { legend: true },
          marks: [
            Plot.ruleX([o.shingle.kind === 'char' ? o.shingle.k : null].filter((x) => x !== null), { stroke: '#bbb' }),
            Plot.ruleY([t], { stroke: '#444', strokeDasharray: '4,3' }),
            Plot.line(flat, { x: 'k', y: 'jaccard', stroke: 'pair', strokeWidth: 2 }),
            Plot.dot(flat, { x: 'k', y: 'jaccard', fill: 'pair', r: 3, title: (d) => d.pair + ', k=' + d.k + ': ' + d.jaccard }),
          ],
        }),
        'Pairs picked from the near-duplicate pairs at the 10th, 50th and 90th percentile of similarity (normalize ' + j.normalize + '). Dashed: the threshold; grey: the k of this run.');
    }
  }

  // The largest clusters.
  function memberNote(m) {
    const parts = [];
    if (m.copies > 1) parts.push(m.copies + ' members have exactly this text');
    if (m.truncated) parts.push('cut to the first ' + m.text.length + ' characters');
    return parts.join('; ');
  }
  {
    const c = data.clusters;
    const sec = section('clusters', 'The largest clusters (' + fmt(c.total) + ' in all)',
      'Each cluster’s first document is shown next to the members whose texts differ most from it (exact copies are only counted). Shared passages (the longest stretches of text found in both, case and spacing ignored) are highlighted with the same numbered color in both texts; hover or focus one to outline it in both.');
    if (c.copiesOnly.length) {
      sec.append(el('p', { text: fmt(c.exactCopyClusters) + ' of the ' + fmt(c.total) + ' clusters hold exact copies only (same text, character for character); the largest: ' +
        c.copiesOnly.map((x) => '#' + x.id + ' (' + fmt(x.size) + ' copies)').join(', ') + '. The clusters below have at least two distinct texts.' }));
    }
    if (!c.shown.length) sec.append(el('p', { text: c.total ? 'No cluster has two distinct texts.' : 'No clusters at this threshold.' }));
    for (const cl of c.shown) {
      const box = el('article', { class: 'cluster', 'aria-label': 'cluster ' + cl.id });
      box.append(el('h3', { text: 'Cluster ' + cl.id + ': ' + fmt(cl.size) + ' documents, ' + fmt(cl.distinctTexts) + ' distinct text' + (cl.distinctTexts === 1 ? '' : 's') }));
      if (cl.members.length < 2) box.append(el('p', { class: 'note', text: 'All members are exact copies of #' + cl.members[0].id + '.' }));
      const first = cl.members[0];
      for (const cmp of cl.comparisons) {
        const m = cl.members[cmp.member];
        box.append(el('p', { class: 'cmp', text: '#' + first.id + ' and #' + m.id + ': Jaccard ' + fmt(cmp.similarity, 3) + ', ' + cmp.passages.length + ' shared passage' + (cmp.passages.length === 1 ? '' : 's') + ' covering ' + fmt(cmp.coverage * 100, 0) + '% of #' + first.id }));
        box.append(
          neardupHighlight.sideBySide(
            { title: '#' + first.id, text: first.text, note: memberNote(first) },
            { title: '#' + m.id, text: m.text, note: memberNote(m) },
            cmp.passages,
          ),
        );
      }
      sec.append(box);
    }
  }
  document.documentElement.dataset.rendered = 'true';
})();
