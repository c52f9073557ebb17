// The neardup web page: find a document's near duplicates, add it, browse clusters, see statistics.
// Plain ES module, no build step. Talks to the JSON API (/v1/…) and /ui/clusters; the shared
// passages are computed here by the library's own commonPassages (served as /ui/passages.js).
import { commonPassages } from './passages.js';

/** @type {(id: string) => any} Elements by id; any, since each is a different kind of input. */
const $ = (id) => document.getElementById(id);
const fmt = (x, d = 3) => Number(x).toFixed(d);
const MIN_PASSAGE = 15;
const SHOWN_OPEN = 3; // the first matches are expanded; the rest are one click away

let token = sessionStorage.getItem('neardup-token') || '';

/** Calls the API; a 401 reveals the token box. Throws an Error with the server's message. */
async function api(method, url, body) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = 'Bearer ' + token;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) {
    $('token-box').hidden = false;
    throw new Error('This server needs a bearer token: enter it below the buttons.');
  }
  if (!res.ok) throw new Error(data.message || res.status + ' ' + res.statusText);
  return data;
}

function status(id, text, isError = false) {
  const p = $(id);
  p.textContent = text;
  p.classList.toggle('error', isError);
}

function textOf(meta) {
  if (meta && typeof meta === 'object' && typeof meta.text === 'string') return meta.text;
  if (typeof meta === 'string') return meta;
  return null;
}

function titleOf(id, meta) {
  return meta && typeof meta === 'object' && typeof meta.title === 'string' && meta.title ? meta.title + ' (#' + id + ')' : '#' + id;
}

/** One similarity bar: a visual bar plus the number, and a text alternative. */
function bar(sim, threshold) {
  const wrap = document.createElement('span');
  wrap.className = 'bar' + (threshold !== undefined && sim < threshold ? ' below' : '');
  wrap.setAttribute('role', 'img');
  wrap.setAttribute('aria-label', 'similarity ' + fmt(sim));
  const fill = document.createElement('span');
  fill.style.width = Math.max(0, Math.min(100, sim * 100)).toFixed(1) + '%';
  wrap.append(fill);
  return wrap;
}

/** The query text next to a match's text, shared passages highlighted in both. */
function comparison(queryText, m) {
  const other = textOf(m.meta);
  if (other === null) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'Its text is not stored in the index (documents added with meta.text, as this page does, show their shared passages).';
    return p;
  }
  const r = commonPassages(queryText, other, { minLength: MIN_PASSAGE });
  const box = document.createElement('div');
  const cap = document.createElement('p');
  cap.className = 'note';
  cap.textContent = r.passages.length + ' shared passage' + (r.passages.length === 1 ? '' : 's') + ' of ' + MIN_PASSAGE + '+ characters, covering ' + Math.round(r.coverageA * 100) + '% of your text.';
  box.append(cap, neardupHighlight.sideBySide({ title: 'Your text', text: queryText }, { title: titleOf(m.id, m.meta), text: other }, r.passages));
  return box;
}

function showMatches(matches, queryText, heading, threshold) {
  const list = $('results');
  list.replaceChildren();
  const h = $('results-h');
  h.hidden = false;
  h.textContent = heading;
  matches.forEach((m, i) => {
    const li = document.createElement('li');
    li.className = 'match';
    const head = document.createElement('div');
    head.className = 'match-head';
    const idEl = document.createElement('span');
    idEl.className = 'match-id';
    idEl.textContent = titleOf(m.id, m.meta);
    const sim = document.createElement('span');
    sim.className = 'sim';
    sim.textContent = 'Jaccard ' + fmt(m.similarity) + (m.estimate !== undefined ? ' · MinHash estimate ' + fmt(m.estimate) : '');
    head.append(idEl, bar(m.similarity, threshold), sim);
    const det = document.createElement('details');
    det.open = i < SHOWN_OPEN;
    const sum = document.createElement('summary');
    sum.textContent = 'Shared passages';
    det.append(sum);
    const fill = () => {
      if (det.dataset.filled) return;
      det.dataset.filled = '1';
      det.append(comparison(queryText, m));
    };
    if (det.open) fill();
    det.addEventListener('toggle', () => det.open && fill());
    li.append(head, det);
    list.append(li);
  });
  h.focus();
}

function readForm() {
  const text = $('doc-text').value;
  if (!text.trim()) {
    $('doc-text').setAttribute('aria-invalid', 'true');
    $('doc-text').focus();
    throw new Error('Paste or load a document first.');
  }
  $('doc-text').removeAttribute('aria-invalid');
  const t = $('threshold').value.trim();
  let threshold;
  if (t !== '') {
    threshold = Number(t);
    if (!(threshold > 0 && threshold <= 1)) {
      $('threshold').setAttribute('aria-invalid', 'true');
      $('threshold').focus();
      throw new Error('The threshold must be a number in (0, 1].');
    }
  }
  $('threshold').removeAttribute('aria-invalid');
  return { text, threshold, topK: $('topk').checked };
}

async function busy(fn) {
  const buttons = [$('find-btn'), $('add-btn')];
  for (const b of buttons) b.disabled = true;
  try {
    await fn();
  } catch (e) {
    status('status', e.message, true);
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

let indexThreshold;

async function find() {
  const { text, threshold, topK } = readForm();
  status('status', 'Searching…');
  const t0 = performance.now();
  const body = topK ? { text, topK: 10 } : threshold !== undefined ? { text, threshold } : { text };
  const { matches } = await api('POST', '/v1/query', body);
  const ms = Math.round(performance.now() - t0);
  const t = threshold ?? indexThreshold;
  status('status', matches.length === 0 ? 'No near duplicates' + (t ? ' at Jaccard ≥ ' + t : '') + ' (' + ms + ' ms).' : matches.length + ' match' + (matches.length === 1 ? '' : 'es') + ' (' + ms + ' ms).');
  showMatches(matches, text, topK ? 'The 10 most similar documents' : 'Near duplicates', t);
}

function newId() {
  return 'doc-' + new Date().toISOString().replace(/[-:TZ.]/g, '').slice(0, 14) + '-' + Math.random().toString(36).slice(2, 6);
}

async function add() {
  const { text } = readForm();
  const id = $('doc-id').value.trim() || newId();
  const title = text.trim().split('\n')[0].slice(0, 80);
  status('status', 'Adding…');
  const { duplicates } = await api('POST', '/v1/documents', { id, text, meta: { text, title, source: 'page' } });
  status('status', 'Added #' + id + '. It had ' + (duplicates.length === 0 ? 'no near duplicates' : duplicates.length + ' near duplicate' + (duplicates.length === 1 ? '' : 's')) + ' in the index.');
  $('doc-id').value = '';
  showMatches(duplicates, text, 'Near duplicates of #' + id + ' (before it was added)', indexThreshold);
  refreshStats().catch(() => {});
}

async function refreshClusters() {
  status('clusters-status', 'Loading…');
  const data = await api('GET', '/ui/clusters?limit=50');
  const list = $('cluster-list');
  list.replaceChildren();
  const seed = data.seeding;
  const reading = seed && !seed.finished ? ' Still reading the documents indexed before the server started: ' + seed.done + ' of ' + seed.total + ' (refresh to update).' : '';
  const failed = seed && seed.error ? ' Reading the indexed documents stopped: ' + seed.error : '';
  status('clusters-status', (data.total === 0 ? 'No clusters yet: add near-duplicate documents to see them.' : data.total + ' cluster' + (data.total === 1 ? '' : 's') + ' among ' + data.tracked + ' documents seen; the ' + data.clusters.length + ' largest:') + reading + failed);
  for (const c of data.clusters) {
    const li = document.createElement('li');
    li.dataset.members = c.members.join(' ');
    const det = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = c.size + ' documents: ' + c.members.slice(0, 8).map((m) => '#' + m).join(', ') + (c.members.length > 8 ? ', …' : '');
    det.append(sum);
    det.addEventListener('toggle', () => {
      if (!det.open || det.dataset.filled) return;
      det.dataset.filled = '1';
      fillCluster(det, c).catch((e) => {
        const p = document.createElement('p');
        p.className = 'error';
        p.textContent = e.message;
        det.append(p);
      });
    });
    li.append(det);
    list.append(li);
  }
}

/** A cluster's first member next to (up to) five others, shared passages highlighted. */
async function fillCluster(det, c) {
  const ids = c.members.slice(0, 6);
  const docs = await Promise.all(ids.map((id) => api('GET', '/v1/documents/' + encodeURIComponent(id)).catch(() => ({ id, meta: null }))));
  const first = docs[0];
  const a = textOf(first.meta);
  for (const d of docs.slice(1)) {
    const b = textOf(d.meta);
    if (a === null || b === null) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = '#' + first.id + ' and #' + d.id + ': text not stored, nothing to align.';
      det.append(p);
      continue;
    }
    const r = commonPassages(a, b, { minLength: MIN_PASSAGE });
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = '#' + first.id + ' and #' + d.id + ': ' + r.passages.length + ' shared passages covering ' + Math.round(r.coverageA * 100) + '% of #' + first.id + '.';
    det.append(p, neardupHighlight.sideBySide({ title: titleOf(first.id, first.meta), text: a }, { title: titleOf(d.id, d.meta), text: b }, r.passages));
  }
}

async function refreshStats() {
  const s = await api('GET', '/v1/stats');
  const m = s.manifest;
  indexThreshold = m.threshold;
  $('threshold').placeholder = String(m.threshold);
  const rows = [
    ['Documents', s.documents.toLocaleString('en-US')],
    ['Store', s.store],
    ['Threshold', 'Jaccard ≥ ' + m.threshold + ' (' + m.verify + ')'],
    ['Shingles', m.shingle.kind + ' k=' + m.shingle.k + ', normalize ' + (m.shingle.normalize.preset || 'default')],
    ['MinHash', m.minhash.method + ', ' + m.minhash.numPerm + ' hashes, seed ' + m.minhash.seed],
    ['LSH', m.bands + ' bands × ' + m.rows + ' rows'],
    ['Since start', Object.entries(s.counters).map(([k, v]) => k + ' ' + v).join(' · ')],
  ];
  for (const [k, v] of Object.entries(s.storeStats || {})) rows.push([k, String(v)]);
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

$('doc-form').addEventListener('submit', (e) => {
  e.preventDefault();
  busy(find);
});
$('add-btn').addEventListener('click', () => busy(add));
$('doc-text').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    busy(find);
  }
});
$('doc-file').addEventListener('change', async () => {
  const f = $('doc-file').files[0];
  if (!f) return;
  $('doc-text').value = await f.text();
  if (!$('doc-id').value) $('doc-id').value = f.name;
  status('status', 'Loaded ' + f.name + ' (' + f.size.toLocaleString('en-US') + ' bytes).');
});
$('token-btn').addEventListener('click', () => {
  token = $('token').value;
  sessionStorage.setItem('neardup-token', token);
  $('token-box').hidden = true;
  status('status', 'Token set.');
  refreshStats().catch((e) => status('status', e.message, true));
});
$('clusters-btn').addEventListener('click', () => refreshClusters().catch((e) => status('clusters-status', e.message, true)));
$('stats-btn').addEventListener('click', () => refreshStats().catch((e) => status('status', e.message, true)));

refreshStats().catch((e) => status('status', e.message, true));
refreshClusters().catch((e) => status('clusters-status', e.message, true));
document.documentElement.dataset.ready = 'true';
