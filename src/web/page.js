// The neardup web page: find a document's near duplicates, add it, browse clusters, see statistics.
// Plain ES module, no build step. Talks only to the JSON API (/v1/…). What changed between two
// texts is shown by window.neardupDiff (diffView.js, over jsdiff); the shared passages come from
// the library's own commonPassages (served as /ui/passages.js).
import { commonPassages } from './passages.js';

const $ = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));
const fmt = (/** @type {number} */ x, d = 3) => Number(x).toFixed(d);
const int = (/** @type {number} */ x) => Number(x).toLocaleString('en-US');
const MIN_PASSAGE = 15;
const SHOWN_OPEN = 3; // the first result groups are expanded; the rest are one click away
const PAGE = 10; // result groups shown at first, and per "show more"
const CLUSTER_PAGE = 20;
const POLL_MS = 3000;

let token = sessionStorage.getItem('neardup-token') || '';
/** @type {number | undefined} */
let indexThreshold;

/** Calls the API; a 401 reveals the token box. Throws an Error with the server's message. */
async function api(/** @type {string} */ method, /** @type {string} */ url, /** @type {unknown} */ body) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = 'Bearer ' + token;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) {
    $('token-box').hidden = false;
    const e = new Error(token ? 'The server refused this token (401 Unauthorized): check it and enter it again below the buttons.' : 'This server needs a bearer token: enter it below the buttons.');
    /** @type {any} */ (e).status = 401;
    throw e;
  }
  if (!res.ok) {
    const e = new Error(data.message || res.status + ' ' + res.statusText);
    /** @type {any} */ (e).status = res.status;
    throw e;
  }
  return data;
}

function status(/** @type {string} */ id, /** @type {string} */ text, isError = false) {
  const p = $(id);
  p.textContent = text;
  p.classList.toggle('error', isError);
}

function warn(/** @type {string} */ text) {
  const w = $('warning');
  w.textContent = text;
  w.hidden = !text;
}

/** @returns {string | null} */
function textOf(/** @type {any} */ meta) {
  if (meta && typeof meta === 'object' && typeof meta.text === 'string') return meta.text;
  if (typeof meta === 'string') return meta;
  return null;
}

function titleOf(/** @type {string} */ id, /** @type {any} */ meta) {
  return meta && typeof meta === 'object' && typeof meta.title === 'string' && meta.title.trim() ? meta.title.trim() + ' (#' + id + ')' : '#' + id;
}

/** A short snippet of a text for one-line summaries. */
function snippet(/** @type {string | null} */ text, n = 110) {
  if (!text) return '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}

/** One similarity bar with a tick at the threshold, and a text alternative. */
function bar(/** @type {number} */ sim, /** @type {number | undefined} */ threshold) {
  const wrap = document.createElement('span');
  wrap.className = 'bar' + (threshold !== undefined && sim < threshold ? ' below' : '');
  wrap.setAttribute('role', 'img');
  wrap.setAttribute('aria-label', 'similarity ' + fmt(sim) + (threshold !== undefined ? ', threshold ' + threshold : ''));
  const fill = document.createElement('span');
  fill.className = 'fill';
  fill.style.width = Math.max(0, Math.min(100, sim * 100)).toFixed(1) + '%';
  wrap.append(fill);
  if (threshold !== undefined) {
    const tick = document.createElement('span');
    tick.className = 'tick';
    tick.style.left = (threshold * 100).toFixed(1) + '%';
    tick.title = 'threshold ' + threshold;
    wrap.append(tick);
  }
  return wrap;
}

/**
 * Matches with the same stored text, as one group each (best first): "#ad209 + 2 identical".
 * Matches whose text is not stored stay alone.
 */
function groupCopies(/** @type {any[]} */ matches) {
  /** @type {Map<string, any[]>} */
  const byText = new Map();
  /** @type {any[][]} */
  const groups = [];
  for (const m of matches) {
    const t = textOf(m.meta);
    const g = t === null ? undefined : byText.get(t);
    if (g) g.push(m);
    else {
      const ng = [m];
      groups.push(ng);
      if (t !== null) byText.set(t, ng);
    }
  }
  return groups;
}

function groupLabel(/** @type {any[]} */ g) {
  return titleOf(g[0].id, g[0].meta) + (g.length > 1 ? ' + ' + (g.length - 1) + ' identical' : '');
}

/** The query text next to a match's text: what changed, then the shared passages. */
function comparison(/** @type {string} */ queryText, /** @type {any[]} */ group) {
  const m = group[0];
  const other = textOf(m.meta);
  const box = document.createElement('div');
  if (group.length > 1) {
    const p = document.createElement('p');
    p.className = 'note copies';
    p.textContent = 'Same text as #' + m.id + ': ' + group.slice(1).map((x) => '#' + x.id).join(', ') + '.';
    box.append(p);
  }
  if (other === null) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'Its text is not stored in the index (it was added with --no-store-text or without meta.text), so there is nothing to compare.';
    box.append(p);
    return box;
  }
  // The indexed text on the left, yours on the right: the changes read as "theirs → yours".
  const r = commonPassages(other, queryText, { minLength: MIN_PASSAGE });
  const cap = document.createElement('p');
  cap.className = 'note';
  // Floor, not round: 99.6% shared is not "100%".
  cap.textContent = r.passages.length + ' shared passage' + (r.passages.length === 1 ? '' : 's') + ' of ' + MIN_PASSAGE + '+ characters, covering ' + Math.floor(r.coverageB * 100) + '% of your text.';
  const view = neardupDiff.compare({ title: titleOf(m.id, m.meta), text: other }, { title: 'Your text', text: queryText }, r.passages);
  box.append(view.element, cap);
  return box;
}

function clearResults() {
  $('results').replaceChildren();
  $('results-h').hidden = true;
  $('more-results').hidden = true;
  warn('');
}

/** Renders grouped matches, PAGE groups at a time, with a "show more" button. */
function showMatches(/** @type {any[]} */ matches, /** @type {string} */ queryText, /** @type {string} */ heading, /** @type {number | undefined} */ threshold) {
  clearResults();
  const list = $('results');
  const h = $('results-h');
  h.hidden = false;
  const groups = groupCopies(matches);
  h.textContent = heading + (matches.length ? ': ' + matches.length + ' document' + (matches.length === 1 ? '' : 's') + (groups.length < matches.length ? ' with ' + groups.length + ' distinct text' + (groups.length === 1 ? '' : 's') : '') : '');
  const copies = matches.filter((m) => textOf(m.meta) === queryText);
  if (copies.length) warn('Your text is an exact copy of ' + copies.slice(0, 3).map((m) => '#' + m.id).join(', ') + (copies.length > 3 ? ' and ' + (copies.length - 3) + ' more' : '') + ' already in the index.');
  let shown = 0;
  const more = () => {
    const end = Math.min(groups.length, shown + PAGE);
    for (let i = shown; i < end; i++) list.append(matchItem(groups[i], queryText, threshold, i < SHOWN_OPEN));
    shown = end;
    const btn = $('more-results');
    btn.hidden = shown >= groups.length;
    btn.textContent = 'Show ' + Math.min(PAGE, groups.length - shown) + ' more of ' + (groups.length - shown);
    btn.onclick = more;
  };
  more();
  h.focus();
}

function matchItem(/** @type {any[]} */ group, /** @type {string} */ queryText, /** @type {number | undefined} */ threshold, /** @type {boolean} */ open) {
  const m = group[0];
  const li = document.createElement('li');
  li.className = 'match';
  li.dataset.ids = group.map((x) => x.id).join(' ');
  const head = document.createElement('div');
  head.className = 'match-head';
  // The title may be cut (ellipsis); the "+ n identical" count never is.
  const idEl = document.createElement('span');
  idEl.className = 'match-id';
  const name = document.createElement('bdi');
  name.className = 'name';
  name.textContent = titleOf(m.id, m.meta);
  name.title = name.textContent;
  idEl.append(name);
  if (group.length > 1) {
    const c = document.createElement('span');
    c.className = 'copies';
    c.textContent = '+ ' + (group.length - 1) + ' identical';
    idEl.append(c);
  }
  const sim = document.createElement('span');
  sim.className = 'sim';
  sim.textContent = 'Jaccard ' + fmt(m.similarity) + (m.estimate !== undefined ? ' · estimate ' + fmt(m.estimate) : '');
  head.append(idEl, bar(m.similarity, threshold), sim);
  const det = document.createElement('details');
  det.open = open;
  const sum = document.createElement('summary');
  sum.textContent = 'What changed, and the shared passages';
  det.append(sum);
  const fill = () => {
    if (det.dataset.filled) return;
    det.dataset.filled = '1';
    det.append(comparison(queryText, group));
  };
  if (det.open) fill();
  det.addEventListener('toggle', () => det.open && fill());
  li.append(head, det);
  return li;
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
  /** @type {number | undefined} */
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

/** Runs an action with the buttons disabled; an error clears the results, so none look current. */
async function busy(/** @type {() => Promise<void>} */ fn) {
  const buttons = [$('find-btn'), $('add-btn')];
  for (const b of buttons) b.disabled = true;
  try {
    await fn();
  } catch (e) {
    clearResults();
    status('status', /** @type {Error} */ (e).message, true);
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

async function find() {
  const { text, threshold, topK } = readForm();
  clearResults();
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

/** Where the id in the field came from: typed by the user, taken from a file name, or none. */
let idSource = /** @type {'user' | 'file' | null} */ (null);

/** Asks, inline, whether to replace an indexed document; resolves true or false. */
function confirmReplace(/** @type {string} */ id, /** @type {any} */ doc) {
  const box = $('confirm-box');
  $('confirm-text').textContent = '#' + id + ' is already in the index' + (doc.meta && doc.meta.title ? ' (“' + snippet(doc.meta.title, 60) + '”)' : '') + '. Adding replaces it with this text.';
  $('confirm-yes').textContent = 'Replace #' + id;
  box.hidden = false;
  $('confirm-yes').focus();
  return new Promise((resolve) => {
    const done = (/** @type {boolean} */ v) => {
      box.hidden = true;
      $('confirm-yes').onclick = null;
      $('confirm-no').onclick = null;
      resolve(v);
    };
    $('confirm-yes').onclick = () => done(true);
    $('confirm-no').onclick = () => done(false);
  });
}

async function add() {
  const { text } = readForm();
  clearResults();
  const typed = $('doc-id').value.trim();
  let replacing = false;
  const id = typed || newId();
  if (typed) {
    /** @type {any} */
    let existing = null;
    try {
      existing = await api('GET', '/v1/documents/' + encodeURIComponent(id));
    } catch (e) {
      if (/** @type {any} */ (e).status !== 404) throw e;
    }
    if (existing) {
      replacing = true;
      status('status', '');
      if (!(await confirmReplace(id, existing))) {
        status('status', 'Not added: #' + id + ' was kept as it was. Change the id to add this text as a new document.');
        return;
      }
    }
  }
  const title = snippet(text.trim().split('\n')[0] || '', 80);
  status('status', 'Adding…');
  // The text is sent once: the server keeps it (meta.text) unless started with --no-store-text.
  const { duplicates } = await api('POST', '/v1/documents', { id, text, meta: { title, source: 'page' } });
  const copies = duplicates.filter((/** @type {any} */ m) => textOf(m.meta) === text);
  status(
    'status',
    (replacing ? 'Replaced #' + id + ' with this text. It had ' : 'Added #' + id + '. It had ') + (duplicates.length === 0 ? 'no near duplicates' : duplicates.length + ' near duplicate' + (duplicates.length === 1 ? '' : 's')) + ' in the index' +
      (copies.length ? ', ' + copies.length + ' of them exact cop' + (copies.length === 1 ? 'y' : 'ies') : '') + '.',
  );
  $('doc-id').value = '';
  idSource = null;
  showMatches(duplicates, text, 'Near duplicates of #' + id + ' (before it was added)', indexThreshold);
  refreshStats().catch(() => {});
  refreshClusters(true).catch(() => {});
}

// ---- Clusters: the index keeps them; this list asks for them every few seconds. ----

let clusterLimit = CLUSTER_PAGE;
let clusterSig = '';
/** @type {Map<string, any>} */
const docCache = new Map();

async function docOf(/** @type {string} */ id) {
  let d = docCache.get(id);
  if (!d) {
    d = api('GET', '/v1/documents/' + encodeURIComponent(id)).catch(() => ({ id, meta: null }));
    docCache.set(id, d);
  }
  return d;
}

async function refreshClusters(force = false) {
  const data = await api('GET', '/v1/clusters?limit=' + clusterLimit + '&members=12');
  const sig = JSON.stringify(data);
  if (!force && sig === clusterSig) return;
  clusterSig = sig;
  if (force) docCache.clear();
  const list = $('cluster-list');
  const open = new Set([...list.querySelectorAll('details[open]')].map((d) => /** @type {any} */ (d).dataset.id));
  if (data.building) {
    status('clusters-status', 'Building the clusters of the documents indexed before: ' + int(data.building.done) + ' of ' + int(data.building.total) + ' read. This list updates by itself.');
    list.replaceChildren();
    $('more-clusters').hidden = true;
    return;
  }
  status('clusters-status', data.total === 0 ? 'No clusters: no two indexed documents are near duplicates. This list updates by itself.' : int(data.total) + ' cluster' + (data.total === 1 ? '' : 's') + ', largest first; showing ' + data.clusters.length + '. This list updates by itself.');
  list.replaceChildren();
  for (const c of data.clusters) list.append(clusterItem(c, open.has(c.id)));
  const btn = $('more-clusters');
  btn.hidden = data.clusters.length >= data.total;
  btn.textContent = 'Show ' + Math.min(CLUSTER_PAGE, data.total - data.clusters.length) + ' more clusters';
}

function clusterItem(/** @type {any} */ c, /** @type {boolean} */ open) {
  const li = document.createElement('li');
  li.dataset.members = c.members.join(' ');
  li.dataset.id = c.id;
  const det = document.createElement('details');
  det.dataset.id = c.id;
  const sum = document.createElement('summary');
  const head = document.createElement('span');
  head.className = 'cluster-head';
  head.textContent = c.size + ' documents: #' + c.id + (c.size > 1 ? ' + ' + (c.size - 1) : '');
  const snip = document.createElement('span');
  snip.className = 'snippet';
  snip.dir = 'auto';
  sum.append(head, snip);
  docOf(c.id).then((d) => {
    snip.textContent = snippet((d.meta && d.meta.title) || textOf(d.meta), 90);
  });
  det.append(sum);
  const fill = () => {
    if (det.dataset.filled) return;
    det.dataset.filled = '1';
    fillCluster(det, c).catch((e) => {
      const p = document.createElement('p');
      p.className = 'error';
      p.textContent = e.message;
      det.append(p);
    });
  };
  det.addEventListener('toggle', () => det.open && fill());
  if (open) {
    det.open = true;
    fill();
  }
  li.append(det);
  return li;
}

/** A cluster's members grouped by identical text; the first text next to each other distinct one. */
async function fillCluster(/** @type {HTMLElement} */ det, /** @type {any} */ c) {
  const full = await api('GET', '/v1/clusters/' + encodeURIComponent(c.id));
  const ids = full.members.slice(0, 60);
  const docs = await Promise.all(ids.map((/** @type {string} */ id) => docOf(id)));
  const groups = groupCopies(docs);
  const note = document.createElement('p');
  note.className = 'note';
  note.textContent = full.size + ' documents, ' + groups.length + ' distinct text' + (groups.length === 1 ? '' : 's') + (ids.length < full.size ? ' among the first ' + ids.length : '') + ': ' + groups.map(groupLabel).join('; ') + '.';
  det.append(note);
  const first = groups[0][0];
  const a = textOf(first.meta);
  for (const g of groups.slice(1, 6)) {
    const d = g[0];
    const b = textOf(d.meta);
    if (a === null || b === null) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = '#' + first.id + ' and #' + d.id + ': text not stored (added with --no-store-text), nothing to compare.';
      det.append(p);
      continue;
    }
    const r = commonPassages(a, b, { minLength: MIN_PASSAGE });
    det.append(neardupDiff.compare({ title: groupLabel(groups[0]), text: a }, { title: groupLabel(g), text: b }, r.passages).element);
  }
}

// ---- Statistics ----

/** @type {Record<string, string>} */
const LABELS = { adds: 'added', queries: 'queries', removes: 'deleted', topK: 'top-k queries', candidates: 'candidates checked', verified: 'matches verified' };

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

async function refreshStats() {
  const s = await api('GET', '/v1/stats');
  const m = s.manifest;
  indexThreshold = m.threshold;
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

// ---- Loading a file: detect its encoding rather than show "Citt� di Roma". ----

/** Decodes file bytes: UTF-8 (or UTF-16 with a byte order mark); else Windows-1252, with a warning. */
function decode(/** @type {ArrayBuffer} */ buf) {
  const b = new Uint8Array(buf);
  if (b[0] === 0xff && b[1] === 0xfe) return { text: new TextDecoder('utf-16le').decode(buf), note: '' };
  if (b[0] === 0xfe && b[1] === 0xff) return { text: new TextDecoder('utf-16be').decode(buf), note: '' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(buf), note: '' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(buf), note: 'It is not valid UTF-8: read as Latin-1 (Windows-1252). Check the accented letters; if they look wrong, save the file as UTF-8 and load it again.' };
  }
}

// ---- Wiring ----

$('doc-form').addEventListener('submit', (/** @type {Event} */ e) => {
  e.preventDefault();
  busy(find);
});
$('add-btn').addEventListener('click', () => busy(add));
$('doc-text').addEventListener('keydown', (/** @type {KeyboardEvent} */ e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    busy(find);
  }
});
// New input: the results on screen no longer describe it, and an id taken from a file no longer names it.
$('doc-text').addEventListener('input', () => {
  clearResults();
  status('status', '');
  $('confirm-box').hidden = true;
  if (idSource === 'file') {
    $('doc-id').value = '';
    idSource = null;
  }
});
$('doc-id').addEventListener('input', () => {
  idSource = $('doc-id').value.trim() ? 'user' : null;
});
$('doc-file').addEventListener('change', async () => {
  const f = $('doc-file').files[0];
  if (!f) return;
  clearResults();
  $('confirm-box').hidden = true;
  const { text, note } = decode(await f.arrayBuffer());
  $('doc-text').value = text;
  // A new file is a new document: its name replaces any id taken from an earlier file.
  if (idSource !== 'user') {
    $('doc-id').value = f.name;
    idSource = 'file';
  }
  status('status', 'Loaded ' + f.name + ' (' + int(f.size) + ' bytes).' + (note ? ' ' + note : ''), !!note);
});
$('token-btn').addEventListener('click', () => {
  token = $('token').value;
  sessionStorage.setItem('neardup-token', token);
  status('status', 'Checking the token…');
  refreshStats()
    .then(() => {
      $('token-box').hidden = true;
      status('status', 'Token accepted.');
      refreshClusters(true).catch((e) => status('clusters-status', e.message, true));
    })
    .catch((e) => status('status', e.message, true));
});
$('more-clusters').addEventListener('click', () => {
  clusterLimit += CLUSTER_PAGE;
  refreshClusters(true).catch((e) => status('clusters-status', e.message, true));
});
$('stats-btn').addEventListener('click', () => refreshStats().catch((e) => status('status', e.message, true)));

refreshStats().catch((e) => status('status', e.message, true));
refreshClusters(true).catch((e) => status('clusters-status', e.message, true));
// Clusters change when anyone adds or deletes (another tab, the API, another process on the store).
setInterval(() => {
  if (document.visibilityState === 'visible' && $('token-box').hidden) refreshClusters().catch(() => {});
}, POLL_MS);
document.documentElement.dataset.ready = 'true';
