// The neardup web page: find a document's near duplicates, add it, browse clusters, see statistics.
// Plain ES modules, no build step, served under /ui/: this file (the form, adding, loading a file,
// the result list, the wiring), ui.js (API calls and helpers), clusters.js, stats.js. Talks only to the
// JSON API (/v1/…). What changed between two texts is shown by window.neardupDiff (diffView.js,
// over jsdiff); the shared passages come from the library's own commonPassages (/ui/passages.js).
import { commonPassages } from './passages.js';
import { $, api, fmt, int, MATCH_FIELDS, MIN_PASSAGE, groupCopies, snippet, state, status, textOf, titleOf, warn } from './ui.js';
import { moreClusters, refreshClusters } from './clusters.js';
import { refreshStats } from './stats.js';

// ---- Results: matches grouped by identical text, each with what changed and what is shared. ----

const SHOWN_OPEN = 3; // the first result groups are expanded; the rest are one click away
const PAGE = 10; // result groups shown at first, and per "show more"

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

/** The query text next to a match's text: what changed, then the shared passages. */
function comparison(/** @type {string} */ queryText, /** @type {any[]} */ group) {
  const m = group[0];
  const other = textOf(m);
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
  cap.textContent = r.passages.length + ' shared passage' + (r.passages.length === 1 ? '' : 's') + ' of ' + MIN_PASSAGE + '+ characters, covering '
    + Math.floor(r.coverageB * 100) + '% of your text.';
  const view = neardupDiff.compare({ title: titleOf(m.id, m.meta), text: other }, { title: 'Your text', text: queryText }, r.passages);
  box.append(view.element, cap);
  return box;
}

function clearResults() {
  thresholdWarning(undefined);
  $('results').replaceChildren();
  $('results-h').hidden = true;
  $('more-results').hidden = true;
  warn('');
}

/** Renders grouped matches, PAGE groups at a time, with a "show more" button. */
function showMatches(
  /** @type {any[]} */ matches,
  /** @type {string} */ queryText,
  /** @type {string} */ heading,
  /** @type {number | undefined} */ threshold,
) {
  clearResults();
  const list = $('results');
  const h = $('results-h');
  h.hidden = false;
  if (matches.length === 0) {
    // No heading over an empty list: the status line says there is nothing.
    h.hidden = true;
    return;
  }
  const groups = groupCopies(matches);
  const docs = groups.flat();
  h.textContent = heading + ': ' + docs.length + ' document' + (docs.length === 1 ? '' : 's')
    + (groups.length < docs.length ? ' with ' + groups.length + ' distinct text' + (groups.length === 1 ? '' : 's') : '');
  const copies = docs.filter((m) => textOf(m) === queryText);
  if (copies.length)
    warn(
      'Your text is an exact copy of ' + copies.slice(0, 3).map((m) => '#' + m.id).join(', ')
        + (copies.length > 3 ? ' and ' + (copies.length - 3) + ' more' : '') + ' already in the index.',
    );
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

// ---- The form ----

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
  const body = { text, fields: MATCH_FIELDS, ...(topK ? { topK: 10 } : threshold !== undefined ? { threshold } : {}) };
  const { matches, recall } = await api('POST', '/v1/query', body);
  const ms = Math.round(performance.now() - t0);
  const t = threshold ?? state.indexThreshold;
  const none = topK ? 'No similar documents: none shares a band or a key prefix with your text' : 'No near duplicates' + (t ? ' at Jaccard ≥ ' + t : '');
  status('status', matches.length === 0 ? none + ' (' + ms + ' ms).' : matches.length + ' match' + (matches.length === 1 ? '' : 'es') + ' (' + ms + ' ms).');
  // topK counts distinct texts: each hit lists its copies (src/online/search/copies.ts).
  showMatches(matches, text, topK ? 'The 10 most similar texts' : 'Near duplicates', t);
  thresholdWarning(recall);
  refreshStats().catch(() => {});
}

/**
 * Under the form row with the threshold box: the server's `recall` warning of a query below the index's threshold
 * (its LSH bands were chosen for its own, so the pairs in between are found only in part, src/online/keys/recall.ts).
 */
function thresholdWarning(/** @type {{ message: string } | undefined} */ recall) {
  const w = $('threshold-warning');
  w.textContent = recall ? recall.message + ' “Show the 10 most similar texts” looks further.' : '';
  w.hidden = !recall;
}

function newId() {
  return 'doc-' + new Date().toISOString().replace(/[-:TZ.]/g, '').slice(0, 14) + '-' + Math.random().toString(36).slice(2, 6);
}

/** Where the id in the field came from: typed by the user, taken from a file name, or none. */
let idSource = /** @type {'user' | 'file' | null} */ (null);

/** Asks, inline, whether to replace an indexed document; resolves true or false. */
function confirmReplace(/** @type {string} */ id, /** @type {any} */ doc) {
  const box = $('confirm-box');
  $('confirm-text').textContent = '#' + id + ' is already in the index' + (doc.meta && doc.meta.title ? ' (“' + snippet(doc.meta.title, 60) + '”)' : '')
    + '. Adding replaces it with this text.';
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
  const { duplicates } = await api('POST', '/v1/documents', { id, text, meta: { title, source: 'page' }, fields: MATCH_FIELDS });
  const copies = duplicates.filter((/** @type {any} */ m) => textOf(m) === text);
  status(
    'status',
    (replacing ? 'Replaced #' + id + ' with this text. It had ' : 'Added #' + id + '. It had ')
      + (duplicates.length === 0 ? 'no near duplicates' : duplicates.length + ' near duplicate' + (duplicates.length === 1 ? '' : 's')) + ' in the index'
      + (copies.length ? ', ' + copies.length + ' of them exact cop' + (copies.length === 1 ? 'y' : 'ies') : '') + '.',
  );
  $('doc-id').value = '';
  idSource = null;
  showMatches(duplicates, text, 'Near duplicates of #' + id + ' (before it was added)', state.indexThreshold);
  refreshStats().catch(() => {});
  refreshClusters(true).catch(() => {});
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
    return {
      text: new TextDecoder('windows-1252').decode(buf),
      note: 'It is not valid UTF-8: read as Latin-1 (Windows-1252). Check the accented letters; if they look wrong, save the file as UTF-8 and load it again.',
    };
  }
}

// ---- Wiring ----

const POLL_MS = 3000;

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
  state.token = $('token').value;
  sessionStorage.setItem('neardup-token', state.token);
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
  moreClusters().catch((e) => status('clusters-status', e.message, true));
});
$('stats-btn').addEventListener('click', () => refreshStats().catch((e) => status('status', e.message, true)));

refreshStats().catch((e) => status('status', e.message, true));
refreshClusters(true).catch((e) => status('clusters-status', e.message, true));
// Clusters change when anyone adds or deletes (another tab, the API, another process on the store).
setInterval(() => {
  if (document.visibilityState === 'visible' && $('token-box').hidden) refreshClusters().catch(() => {});
}, POLL_MS);
document.documentElement.dataset.ready = 'true';
