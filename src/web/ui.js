// Shared by the page's browser modules (page.js, clusters.js, stats.js): DOM and
// number helpers, the API call with the bearer token, status lines, and how a document's text and
// title are read from its metadata.

export const $ = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));
export const fmt = (/** @type {number} */ x, d = 3) => Number(x).toFixed(d);
export const int = (/** @type {number} */ x) => Number(x).toLocaleString('en-US');
/** Shortest shared passage shown, in characters. */
export const MIN_PASSAGE = 15;

/** What the modules share: the bearer token (kept for the tab) and the index's threshold once known. */
export const state = {
  token: sessionStorage.getItem('neardup-token') || '',
  /** @type {number | undefined} */
  indexThreshold: undefined,
};

/** The message of a request that got no answer at all (fetch's own "Failed to fetch" says nothing). */
export const SERVER_DOWN = 'The neardup server does not answer: is it still running? Nothing was changed; try again once it is back.';

/** Calls the API; a 401 reveals the token box. Throws an Error with the server's message. */
export async function api(/** @type {string} */ method, /** @type {string} */ url, /** @type {unknown} */ body) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (state.token) headers.authorization = 'Bearer ' + state.token;
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (cause) {
    const e = new Error(SERVER_DOWN, { cause });
    /** @type {any} */ (e).status = 0;
    throw e;
  }
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) {
    $('token-box').hidden = false;
    const e = new Error(
      state.token
        ? 'The server refused this token (401 Unauthorized): check it and enter it again below the buttons.'
        : 'This server needs a bearer token: enter it below the buttons.',
    );
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

export function status(/** @type {string} */ id, /** @type {string} */ text, isError = false) {
  const p = $(id);
  p.textContent = text;
  p.classList.toggle('error', isError);
}

export function warn(/** @type {string} */ text) {
  const w = $('warning');
  w.textContent = text;
  w.hidden = !text;
}

/**
 * The stored text of a match or document: its `text` field (the page asks the server for it with
 * `fields`, since replies leave it out by default), else its metadata's text or string metadata.
 * @returns {string | null}
 */
export function textOf(/** @type {any} */ x) {
  if (x && typeof x.text === 'string') return x.text;
  const meta = x && x.meta;
  if (meta && typeof meta === 'object' && typeof meta.text === 'string') return meta.text;
  if (typeof meta === 'string') return meta;
  return null;
}

/** What the page shows of each match: `fields` of /v1/query, /v1/documents and …/duplicates. */
export const MATCH_FIELDS = ['id', 'similarity', 'estimate', 'meta', 'text'];

export function titleOf(/** @type {string} */ id, /** @type {any} */ meta) {
  return meta && typeof meta === 'object' && typeof meta.title === 'string' && meta.title.trim() ? meta.title.trim() + ' (#' + id + ')' : '#' + id;
}

/** A short snippet of a text for one-line summaries. */
export function snippet(/** @type {string | null} */ text, n = 110) {
  if (!text) return '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}

/**
 * Matches with the same stored text, as one group each (best first): "#ad209 + 2 identical".
 * Matches whose text is not stored stay alone. topK hits come grouped by the server (each lists its
 * `copies`: the same fingerprint set): one group each, the hit first.
 */
export function groupCopies(/** @type {any[]} */ matches) {
  if (matches.some((m) => Array.isArray(m.copies))) return matches.map((m) => [m, ...(m.copies ?? [])]);
  /** @type {Map<string, any[]>} */
  const byText = new Map();
  /** @type {any[][]} */
  const groups = [];
  for (const m of matches) {
    const t = textOf(m);
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

export function groupLabel(/** @type {any[]} */ g) {
  return titleOf(g[0].id, g[0].meta) + (g.length > 1 ? ' + ' + (g.length - 1) + ' identical' : '');
}
