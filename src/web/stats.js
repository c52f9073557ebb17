// The statistics panel of the page: the index's parameters and counters, and its S-curve.
import { $, api, int, state } from './ui.js';

/** @type {Record<string, string>} */
const LABELS = { adds: 'added', queries: 'queries', removes: 'deleted', topK: 'top-k queries', candidates: 'candidates scored', verified: 'matches returned' };

/** "recordBytes" → "Record bytes". */
function human(/** @type {string} */ key) {
  const s = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function value(/** @type {string} */ key, /** @type {unknown} */ v) {
  if (typeof v !== 'number') return String(v);
  if (/bytes$/i.test(key)) return v >= 1048576 ? (v / 1048576).toFixed(1) + ' MiB' : v >= 1024 ? (v / 1024).toFixed(1) + ' KiB' : v + ' bytes';
  return int(v);
}

export async function refreshStats() {
  const s = await api('GET', '/v1/stats');
  const m = s.manifest;
  state.indexThreshold = m.threshold;
  $('threshold').placeholder = String(m.threshold);
  const rows = [
    ['Documents', int(s.documents)],
    ['Store', s.store],
    ['Threshold', 'Jaccard ≥ ' + m.threshold + ' (' + m.verify + ')'],
    ['Shingles', m.shingle.kind + ' k=' + m.shingle.k + ', normalize ' + (m.shingle.normalize.preset || 'default')],
    ['MinHash', m.minhash.method + ', ' + m.minhash.numPerm + ' hashes, seed ' + m.minhash.seed],
    ['LSH', m.bands + ' bands × ' + m.rows + ' rows'],
    ['Since the server started', Object.entries(s.counters).map(([k, v]) => int(/** @type {number} */ (v)) + ' ' + (LABELS[k] || human(k))).join(' · ')],
  ];
  for (const [k, v] of Object.entries(s.storeStats || {})) rows.push([human(k), value(k, v)]);
  const dl = $('stats-list');
  dl.replaceChildren();
  for (const [k, v] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
  }
  if (typeof Plot !== 'undefined') {
    const pts = [];
    for (let i = 0; i <= 100; i++) pts.push({ s: i / 100, p: 1 - Math.pow(1 - Math.pow(i / 100, m.rows), m.bands) });
    const svg = Plot.plot({
      width: 480,
      height: 220,
      grid: true,
      ariaLabel: 'S-curve of ' + m.bands + ' bands of ' + m.rows + ' rows',
      x: { label: 'Jaccard similarity s', domain: [0, 1] },
      y: { label: 'P(found)', domain: [0, 1] },
      marks: [Plot.line(pts, { x: 's', y: 'p', stroke: '#1b9e77', strokeWidth: 2 }), Plot.ruleX([m.threshold], { strokeDasharray: '4,3' })],
    });
    $('stats-plot').replaceChildren(svg);
    $('stats-chart').hidden = false;
  }
}
