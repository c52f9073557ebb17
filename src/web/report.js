// Renders a neardup report from the JSON in <script id="neardup-data"> with Observable Plot.
// Inlined into the report HTML by src/report/html.ts; plain browser script, no build step.
// Why this file is long: one page's renderer, a section after another, each chart with its caption.
(function () {
  'use strict';
  const root = document.getElementById('report');
  const fmt = (x, d = 0) => Number(x).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  // A share as a whole percentage rounded down (docs/report.md): 0.996 is 99%, 0.57 is 57%.
  const percentDown = (x) => {
    const p = Math.floor(x * 100);
    return (p + 1) / 100 <= x ? p + 1 : p;
  };
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
  const t = o.threshold;
  // Readable log-scale ticks: 1, 2, 5, 10, 20, 50, … up to the largest value.
  const logTicks = (max) => {
    const out = [0];
    for (let p = 1; p <= Math.max(1, max) * 1.001; p *= 10) for (const m of [1, 2, 5]) if (m * p <= Math.max(1, max) * 1.001) out.push(m * p);
    return out;
  };

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

  // The summary is plain HTML in the file (src/report/summary.ts): it reads without scripts.

  // The S-curve.
  {
    const c = data.sCurve;
    const sec = section(
      's-curve',
      'The S-curve of ' + c.bands + ' × ' + c.rows,
      'The chance that a pair of Jaccard similarity s becomes a candidate: P(s) = 1 − (1 − s^r)^b. Pairs left of the threshold that still become candidates are the false-positive area; pairs right of it that do not are the false-negative area.',
    );
    chart(
      sec,
      's-curve',
      () =>
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
              x: 's',
              y: 'p',
              dx: -8,
              dy: -12,
              textAnchor: 'end',
              fontSize: 12,
              text: () => 'threshold ' + c.threshold + ': expected recall P = ' + fmt(c.recallAtThreshold, 4),
            }),
            Plot.text([{ s: 0.03, p: 0.93 }], {
              x: 's',
              y: 'p',
              textAnchor: 'start',
              fontSize: 11,
              fill: '#555',
              text: () => 'false-positive area ' + fmt(c.falsePositiveArea, 4) + ' · false-negative area ' + fmt(c.falseNegativeArea, 4),
            }),
          ],
        }),
      'Green: P(s) for ' + c.bands + ' bands × ' + c.rows + ' rows. Dashed line: the threshold ' + c.threshold
        + '; the pink dot is the expected recall of a pair exactly at the threshold. Orange: candidates below the threshold (wasted checks); purple: pairs above it that LSH misses.'
        + (c.recall
          ? " The run's recall, over the pairs it verified, is estimated at " + fmt(c.recall.estimate, 4) + ' ± ' + fmt(c.recall.stdError, 4)
            + ' (each verified pair of similarity s counts 1/P(s) pairs: ' + fmt(c.recall.estimatedPairs, 1) + ' estimated, ' + c.recall.verifiedPairs
            + ' found).'
          : ''),
    );
  }

  // Several bandings on the same hashes, each with the rule of thumb (1/b)^(1/r) (src/report/curves.ts).
  if (data.sCurves && data.sCurves.curves.length > 0) {
    const sc = data.sCurves;
    const flat = sc.curves.flatMap((c) => c.points.map((p) => ({ s: p.s, p: p.p, curve: c.label + (c.chosen ? ' (this run)' : '') })));
    const rules = sc.curves.map((c) => ({
      s: c.ruleOfThumb,
      p: 1 - Math.pow(1 - Math.pow(c.ruleOfThumb, c.rows), c.bands),
      curve: c.label + (c.chosen ? ' (this run)' : ''),
      label: c.label + ': t ≈ (1/' + c.bands + ')^(1/' + c.rows + ') = ' + fmt(c.ruleOfThumb, 3),
    }));
    const sec = section(
      's-curves',
      'S-curves of other bandings on the same hashes',
      'Each curve is P(s) = 1 − (1 − s^r)^b for b bands of r rows. The dot on each marks the rule of thumb t ≈ (1/b)^(1/r), where that curve is steepest: more rows move it right (fewer candidates, fewer near-threshold pairs found), fewer rows move it left.',
    );
    chart(sec, 's-curves', () =>
      Plot.plot({
        width: 680,
        height: 340,
        grid: true,
        color: { legend: true },
        ariaLabel: 'S-curves of ' + sc.curves.map((c) => c.label).join(', '),
        x: { label: 'Jaccard similarity s', domain: [0, 1] },
        y: { label: 'P(candidate)', domain: [0, 1] },
        marks: [
          Plot.ruleX([sc.threshold], { stroke: '#444', strokeDasharray: '4,3' }),
          Plot.line(flat, { x: 's', y: 'p', stroke: 'curve', strokeWidth: (d) => (d.curve.endsWith('(this run)') ? 3 : 1.5) }),
          Plot.dot(rules, { x: 's', y: 'p', fill: 'curve', r: 4.5, title: (d) => d.label }),
        ],
      }), 'Dashed line: the threshold ' + sc.threshold + '. Dots: the rule of thumb of each banding (' + rules.map((r) => r.label).join('; ') + ').');
    sec.append(
      table(
        ['banding', 'rule of thumb (1/b)^(1/r)', 'P(threshold)'],
        sc.curves.map((
          c,
        ) => [c.label + (c.chosen ? ' (this run)' : ''), fmt(c.ruleOfThumb, 3), fmt(1 - Math.pow(1 - Math.pow(sc.threshold, c.rows), c.bands), 4)]),
      ),
    );
  }

  // Histogram of verified similarities.
  {
    const h = data.similarityHistogram;
    const sec = section('similarities', 'Similarities of the ' + fmt(h.pairs) + ' near-duplicate pairs');
    if (!h.bins.length) sec.append(el('p', { text: 'No near-duplicate pairs at this threshold.' }));
    else
      chart(
        sec,
        'histogram',
        () =>
          Plot.plot({
            width: 680,
            height: 300,
            marginLeft: 56,
            ariaLabel: 'Histogram of the similarities of the verified pairs',
            x: { label: h.measure, domain: [h.bins[0].x0, 1] },
            y: { label: 'pairs (log scale)', grid: true, type: 'symlog', ticks: logTicks(Math.max(...h.bins.map((b) => b.count))), tickFormat: (d) => fmt(d) },
            marks: [
              Plot.rectY(h.bins, {
                x1: 'x0',
                x2: 'x1',
                y: 'count',
                fill: '#1b9e77',
                insetLeft: 0.5,
                insetRight: 0.5,
                title: (b) => b.x0.toFixed(2) + '–' + b.x1.toFixed(2) + ': ' + b.count + ' pairs',
              }),
              Plot.ruleX([t], { stroke: '#444', strokeDasharray: '4,3' }),
              Plot.ruleY([0]),
            ],
          }),
        'Bins of 0.01. The bar at 0.99–1 holds exact copies (after normalization). Mass piled up near the threshold (dashed) means the threshold cuts through a crowd of borderline pairs: look at some of them before trusting it.',
      );
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
      chart(
        sec,
        'estimates',
        () =>
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
              Plot.dot(e.pairs, {
                x: 'exact',
                y: 'estimate',
                r: 2.5,
                fill: '#7570b3',
                fillOpacity: 0.6,
                title: (p) => p.a + ' ~ ' + p.b + ': exact ' + p.exact + ', estimate ' + p.estimate,
              }),
            ],
          }),
        fmt(e.pairs.length) + ' pairs (' + e.pool + ')' + (ones ? ', ' + fmt(ones) + ' of them exact copies drawn on top of each other at (1, 1)' : '')
          + '. RMSE ' + fmt(e.rmse, 4) + '. The grey band is ±2 standard deviations of an unbiased estimate, √(J(1−J)/' + e.numPerm
          + '); dashed lines mark the threshold, so dots in the top-left and bottom-right quadrants would be decided differently by the estimate than by the exact check.',
      );
    }
  }

  // The bands sweep.
  {
    const w = data.bandsSweep;
    const sec = section(
      'bands',
      'Candidate pairs against the number of bands (' + w.numPerm + ' hashes)',
      'More bands of fewer rows make LSH more promiscuous: more candidates, more of them below the threshold, and a higher chance of catching every true pair.',
    );
    // Bars are labelled "b × r"; this run's own banding (at its own signature length) is the last bar.
    const xOf = (r) => (r.run ? r.bands + '×' + r.rows + ' (this run, ' + r.numPerm + ')' : r.bands + '×' + r.rows);
    const flat = [];
    for (const r of w.rows) {
      if (r.atOrAbove === null) flat.push({ x: xOf(r), kind: 'candidates (not split)', n: r.candidates });
      else {
        flat.push({ x: xOf(r), kind: 'Jaccard ≥ ' + w.threshold, n: r.atOrAbove });
        flat.push({ x: xOf(r), kind: 'Jaccard < ' + w.threshold, n: r.below });
      }
    }
    // The legend lists only the series that are drawn.
    const kinds = [['Jaccard ≥ ' + w.threshold, '#1b9e77'], ['Jaccard < ' + w.threshold, '#d95f02'], ['candidates (not split)', '#999']].filter(([k]) =>
      flat.some((d) => d.kind === k)
    );
    chart(
      sec,
      'bands',
      () =>
        Plot.plot({
          width: 680,
          height: 340,
          marginLeft: 60,
          ariaLabel: 'Bar chart of candidate pairs for each banding',
          x: { label: 'bands × rows (' + w.numPerm + ' hashes; last bar: this run)', domain: w.rows.map(xOf) },
          y: { label: 'candidate pairs', grid: true },
          color: { legend: true, domain: kinds.map((k) => k[0]), range: kinds.map((k) => k[1]) },
          marks: [
            Plot.barY(flat, { x: 'x', y: 'n', fill: 'kind', title: (d) => d.x + ': ' + fmt(d.n) + ' ' + d.kind }),
            Plot.text(w.rows, { x: xOf, y: 'candidates', text: (r) => fmt(r.candidates), dy: -8, fontSize: 11 }),
            Plot.ruleY([0]),
          ],
        }),
      'Bar height: distinct candidate pairs; green: at or above the threshold (worth finding), orange: below it (checked in vain). The sweep uses ' + w.numPerm
        + ' hashes; the last bar is this run’s banding with its own signature.',
    );
    sec.append(
      table(
        ['bands × rows', 'hashes', 'candidates', '≥ threshold', '< threshold', 'P(threshold)'],
        w.rows.map((
          r,
        ) => [
          xOf(r),
          r.numPerm || w.numPerm,
          fmt(r.candidates),
          r.atOrAbove === null ? '—' : fmt(r.atOrAbove),
          r.below === null ? '—' : fmt(r.below),
          fmt(r.recallAtThreshold, 4),
        ]),
      ),
    );
  }

  // Jaccard against shingle size.
  {
    const j = data.jaccardVsK;
    const sec = section(
      'shingle-size',
      'Similarity against shingle size',
      'The same pair of documents is more similar with short character shingles and less similar with long ones: k sets how strict "the same text" is.',
    );
    if (!j.pairs.length) sec.append(el('p', { text: 'No near-duplicate pair below 1 to show.' }));
    else {
      // Fixed order and colours (by percentile), so two reports look alike; dashes and symbols
      // tell overlapping lines apart.
      const pct = (p) => Number((/(\d+)th pct/.exec(p.label) || [0, 0])[1]);
      const ordered = [...j.pairs].sort((x, y) => pct(x) - pct(y));
      const palette = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e'];
      const flat = ordered.flatMap((p) => p.points.map((q) => ({ pair: p.label, k: q.k, jaccard: q.jaccard })));
      chart(
        sec,
        'shingle-size',
        () =>
          Plot.plot({
            width: 680,
            height: 340,
            grid: true,
            ariaLabel: 'Line chart of Jaccard similarity against character shingle size for sample pairs',
            x: { label: 'character shingle size k' },
            // The range the pairs and the threshold span, not 0–1: lines 0.01 apart stay apart.
            y: { label: 'exact Jaccard', domain: [Math.max(0, Math.floor((Math.min(t, ...flat.map((d) => d.jaccard)) - 0.02) * 20) / 20), 1] },
            color: { legend: true, domain: ordered.map((p) => p.label), range: palette.slice(0, ordered.length) },
            symbol: { domain: ordered.map((p) => p.label), range: ['circle', 'square', 'triangle', 'diamond', 'star'].slice(0, ordered.length) },
            marks: [
              Plot.ruleX([o.shingle.kind === 'char' ? o.shingle.k : null].filter((x) => x !== null), { stroke: '#bbb' }),
              Plot.ruleY([t], { stroke: '#444', strokeDasharray: '4,3' }),
              ...ordered.map((p, i) =>
                Plot.line(flat.filter((d) => d.pair === p.label), {
                  x: 'k',
                  y: 'jaccard',
                  stroke: palette[i],
                  strokeWidth: 2,
                  strokeDasharray: ['', '6,3', '2,2', '8,2,2,2', ''][i],
                })
              ),
              Plot.dot(flat, {
                x: 'k',
                y: 'jaccard',
                stroke: 'pair',
                symbol: 'pair',
                fill: 'white',
                r: 3.5,
                title: (d) => d.pair + ', k=' + d.k + ': ' + d.jaccard,
              }),
            ],
          }),
        'Pairs picked from the near-duplicate pairs at the 10th, 50th and 90th percentile of similarity (normalize ' + j.normalize
          + '). Dashed: the threshold; grey: the k of this run.',
      );
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
    const sec = section(
      'clusters',
      'The largest clusters (' + fmt(c.total) + ' in all)',
      'Each cluster’s first document is shown next to the members whose texts differ most from it (exact copies are only counted). Shared passages (the longest stretches of text found in both, case and spacing ignored) are highlighted with the same numbered color in both texts; hover or focus one to outline it in both.',
    );
    if (c.copiesOnly.length) {
      sec.append(
        el('p', {
          text: fmt(c.exactCopyClusters) + ' of the ' + fmt(c.total) + ' clusters hold exact copies only (same text, character for character); the largest: '
            + c.copiesOnly.map((x) => '#' + x.id + ' (' + fmt(x.size) + ' copies)').join(', ') + '. The clusters below have at least two distinct texts.',
        }),
      );
    }
    if (!c.shown.length) sec.append(el('p', { text: c.total ? 'No cluster has two distinct texts.' : 'No clusters at this threshold.' }));
    for (const cl of c.shown) {
      const box = el('article', { class: 'cluster', 'aria-label': 'cluster ' + cl.id });
      box.append(
        el('h3', {
          text: 'Cluster ' + cl.id + ': ' + fmt(cl.size) + ' documents, ' + fmt(cl.distinctTexts) + ' distinct text' + (cl.distinctTexts === 1 ? '' : 's'),
        }),
      );
      if (cl.members.length < 2) box.append(el('p', { class: 'note', text: 'All members are exact copies of #' + cl.members[0].id + '.' }));
      const first = cl.members[0];
      for (const cmp of cl.comparisons) {
        const m = cl.members[cmp.member];
        const label = /** @type {(a: string, b: string, s: number, t: number, l: any) => string} */ (neardupDiff.pairLabel)(
          first.id,
          m.id,
          cmp.similarity,
          cmp.belowThreshold ? data.options.threshold : undefined,
          cmp.linkedThrough,
        );
        box.append(
          el('p', {
            class: 'cmp' + (cmp.belowThreshold ? ' below' : ''),
            text: label + ', ' + cmp.passages.length + ' shared passage' + (cmp.passages.length === 1 ? '' : 's') + ' covering ' + percentDown(cmp.coverage)
              + '% of #' + first.id,
          }),
        );
        box.append(
          neardupDiff.compare(
            { title: '#' + first.id + (first.copies > 1 ? ' + ' + (first.copies - 1) + ' identical' : ''), text: first.text, note: memberNote(first) },
            { title: '#' + m.id + (m.copies > 1 ? ' + ' + (m.copies - 1) + ' identical' : ''), text: m.text, note: memberNote(m) },
            cmp.passages,
          ).element,
        );
      }
      sec.append(box);
    }
  }
  // Cluster sizes.
  {
    const cs = data.clusterSizes || [];
    const sec = section(
      'cluster-sizes',
      'Cluster sizes',
      'How many clusters have 2, 3, … members: a long tail of large clusters usually means templates or mass re-posting, a threshold set too low, or both.',
    );
    if (!cs.length) sec.append(el('p', { text: 'No clusters at this threshold.' }));
    else {
      chart(sec, 'cluster-sizes', () =>
        Plot.plot({
          width: Math.min(1060, Math.max(680, 90 + 15 * cs[cs.length - 1].size)),
          height: 300,
          marginLeft: 56,
          marginTop: 28,
          ariaLabel: 'Bar chart of the number of clusters of each size',
          // A size axis, not categories: 9, 38 and 53 members are far apart. Wide enough for a
          // two-digit count over each bar (up to the page's width).
          x: { label: 'members per cluster', type: 'linear', domain: [1, cs[cs.length - 1].size + 1], grid: false },
          // The axis label runs along the axis, so the count over the tallest bar never meets it.
          y: {
            label: 'clusters (log scale)',
            labelAnchor: 'center',
            type: 'symlog',
            grid: true,
            ticks: logTicks(Math.max(...cs.map((d) => d.count))),
            tickFormat: (d) => fmt(d),
          },
          marks: [
            Plot.rectY(cs, {
              x1: (d) => d.size - 0.42,
              x2: (d) => d.size + 0.42,
              y: 'count',
              fill: '#7570b3',
              title: (d) => fmt(d.count) + ' clusters of ' + d.size,
            }),
            Plot.text(cs, { x: 'size', y: 'count', text: (d) => fmt(d.count), dy: -7, fontSize: 10 }),
            Plot.ruleY([0]),
          ],
        }), fmt(cs.reduce((a, d) => a + d.count, 0)) + ' clusters; the largest has ' + fmt(cs[cs.length - 1].size) + ' members.');
    }
  }

  // Borderline pairs, side by side.
  {
    const bl = data.borderline || [];
    const sec = section(
      'borderline',
      'Pairs just above the threshold',
      'The near-duplicate pairs with the lowest similarity the threshold ' + t
        + ' still accepts: if these should not count as duplicates, raise the threshold; if pairs just like them are missing, lower it. Changed words are struck through on the left and underlined on the right; shared passages are numbered.',
    );
    if (!bl.length) sec.append(el('p', { text: 'No near-duplicate pairs with two different texts.' }));
    for (const p of bl) {
      const box = el('article', { class: 'borderline', 'aria-label': 'pair ' + p.a + ' and ' + p.b });
      box.append(el('h3', { text: '#' + p.a + ' and #' + p.b + ': Jaccard ' + fmt(p.similarity, 3) }));
      box.append(neardupDiff.compare({ title: '#' + p.a, text: p.aText }, { title: '#' + p.b, text: p.bText }, p.passages).element);
      sec.append(box);
    }
  }
  document.documentElement.dataset.rendered = 'true';
})();
