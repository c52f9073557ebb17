// The cluster list of the page: the index keeps the clusters; this list asks for them every few
// seconds and shows, for an opened cluster, its distinct texts and what changed between them.
import { commonPassages } from './passages.js';
import { $, api, int, MIN_PASSAGE, groupCopies, groupLabel, snippet, status, textOf } from './ui.js';

const CLUSTER_PAGE = 20;

let clusterLimit = CLUSTER_PAGE;
let clusterSig = '';
/** @type {Map<string, any>} */
const docCache = new Map();

async function docOf(/** @type {string} */ id) {
  let d = docCache.get(id);
  if (!d) {
    d = api('GET', '/v1/documents/' + encodeURIComponent(id) + '?fields=id,meta,text').catch(() => ({ id, meta: null }));
    docCache.set(id, d);
  }
  return d;
}

export async function refreshClusters(force = false) {
  let data;
  try {
    data = await api('GET', '/v1/clusters?limit=' + clusterLimit + '&members=12');
  } catch (e) {
    // Keep what is listed, but do not claim it is current.
    if (/** @type {any} */ (e).status === 0) {
      clusterSig = '';
      status('clusters-status', 'The server does not answer: this list may be out of date. It updates again once the server is back.', true);
      return;
    }
    throw e;
  }
  const sig = JSON.stringify(data);
  if (!force && sig === clusterSig) return;
  clusterSig = sig;
  if (force) docCache.clear();
  const list = $('cluster-list');
  const open = new Set([...list.querySelectorAll('details[open]')].map((d) => /** @type {any} */ (d).dataset.id));
  if (data.building) {
    // A restored or reopened index counts its documents as it goes: "0 of 0 read" said nothing.
    const b = data.building;
    status(
      'clusters-status',
      'Building the clusters of the documents indexed before' + (b.total > 0 ? ': ' + int(b.done) + ' of ' + int(b.total) + ' read' : ' (counting them)')
        + '. This list updates by itself.',
    );
    list.replaceChildren();
    $('more-clusters').hidden = true;
    return;
  }
  status(
    'clusters-status',
    data.total === 0
      ? 'No clusters: no two indexed documents are near duplicates. This list updates by itself.'
      : int(data.total) + ' cluster' + (data.total === 1 ? '' : 's') + ', largest first; showing ' + data.clusters.length + '. This list updates by itself.',
  );
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
    snip.textContent = snippet((d.meta && d.meta.title) || textOf(d), 90);
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
  note.textContent = full.size + ' documents, ' + groups.length + ' distinct text' + (groups.length === 1 ? '' : 's')
    + (ids.length < full.size ? ' among the first ' + ids.length : '') + ': ' + groups.map(groupLabel).join('; ') + '.';
  det.append(note);
  const first = groups[0][0];
  const a = textOf(first);
  // Each pair shown carries its similarity; a pair below the threshold says which member links it.
  const threshold = await indexThreshold();
  const compared = groups.slice(1, 6);
  const fromFirst = compared.length ? await similaritiesOf(first.id, 0.01) : new Map();
  for (const g of compared) {
    const d = g[0];
    const sim = fromFirst.get(d.id);
    let link;
    if (sim === undefined || sim < threshold) {
      const fromD = await similaritiesOf(d.id);
      for (const [x, s1] of fromFirst) {
        const s2 = fromD.get(x);
        if (s1 >= threshold && s2 !== undefined && s2 >= threshold && x !== d.id && (!link || Math.min(s1, s2) > Math.min(...link.similarities)))
          link = { id: x, similarities: [s1, s2] };
      }
    }
    const label = document.createElement('p');
    label.className = 'cmp' + (sim === undefined || sim < threshold ? ' below' : '');
    label.textContent = /** @type {(a: string, b: string, s: number | undefined, t: number, l: any) => string} */ (neardupDiff.pairLabel)(
      first.id,
      d.id,
      sim,
      threshold,
      link,
    );
    det.append(label);
    const b = textOf(d);
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

let thresholdPromise = /** @type {Promise<number> | undefined} */ (undefined);

/** The index's threshold (its manifest, from /v1/stats), asked once. */
function indexThreshold() {
  thresholdPromise ??= api('GET', '/v1/stats').then((s) => s.manifest.threshold);
  return thresholdPromise;
}

/** The similarity of each indexed document to `id` at or above `threshold` (default: the index's), by id. */
async function similaritiesOf(/** @type {string} */ id, /** @type {number | undefined} */ threshold = undefined) {
  const r = await api(
    'GET',
    '/v1/documents/' + encodeURIComponent(id) + '/duplicates?fields=id,similarity&limit=1000' + (threshold !== undefined ? '&threshold=' + threshold : ''),
  );
  return new Map(r.duplicates.map((/** @type {any} */ m) => [m.id, m.similarity]));
}

/** Shows CLUSTER_PAGE more clusters. */
export function moreClusters() {
  clusterLimit += CLUSTER_PAGE;
  return refreshClusters(true);
}
