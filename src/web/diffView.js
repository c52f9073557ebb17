// Shared by the web page and the report: two near-duplicate texts side by side, showing first what
// changed, token by token (jsdiff's diffArrays over words, whole numbers and spaces: deleted tokens struck through on the left,
// inserted words underlined on the right), and, as a second layer, the numbered shared passages
// (commonPassages) as coloured backgrounds whose ends are moved to token boundaries, so a passage
// number never lands inside a word or a number ("1.100,00" stays whole).
// Plain browser script (no build step); needs window.Diff (jsdiff's UMD bundle). Defines
// window.neardupDiff.
(function (global) {
  'use strict';

  const WORD = /[\p{L}\p{N}\p{M}_]/u;
  const JOINER = /[.,'’\-]/;

  /** True when position i of `text` (between text[i-1] and text[i]) is inside a token. */
  function insideToken(text, i) {
    if (i <= 0 || i >= text.length) return false;
    const a = text[i - 1];
    const b = text[i];
    if (WORD.test(a) && WORD.test(b)) return true;
    // "1.100,00", "l'acqua", "ex-novo": a joiner between two word characters belongs to the token.
    if (JOINER.test(b) && WORD.test(a) && i + 1 < text.length && WORD.test(text[i + 1])) return true;
    if (JOINER.test(a) && WORD.test(b) && i >= 2 && WORD.test(text[i - 2])) return true;
    return false;
  }

  /** A passage range shrunk to whole tokens: [start, end) or null when nothing whole is left. */
  function snap(text, start, end) {
    while (start < end && insideToken(text, start)) start++;
    while (end > start && insideToken(text, end)) end--;
    return end > start ? [start, end] : null;
  }

  /**
   * The tokens of a text, in order, covering it: a number with its separators ("1.100,00",
   * "1,100.00", "17.000", "3'500"), a word (with inner apostrophes and hyphens: "l'acqua",
   * "ex-novo"), a run of spaces, or one other character. A space is never a thousands separator
   * ("87 625" is two bus lines), a no-break or narrow no-break space is.
   */
  const TOKEN = /\p{N}+(?:[.,'’\u00a0\u202f]\p{N}{3})*(?:[.,]\p{N}+)?(?![\p{L}\p{N}_])|[\p{L}\p{N}\p{M}_]+(?:['’\-][\p{L}\p{N}\p{M}_]+)*|\s+|[^]/gu;
  function tokenize(text) {
    return text.match(TOKEN) || [];
  }

  const HAS_NUMBER = /\p{N}/u;

  /**
   * The word-level differences of a and b, over {@link tokenize}'s tokens (so a number is one
   * token, whatever its separators): changed ranges in each text and the list of changes
   * ({ from, to, at }, in text order). A removal next to an insertion is one change "from → to"
   * unless one side holds a number and the other does not ("da" is not what "16" replaced): then
   * they are listed apart. null when the texts are too different to diff within the time limit.
   */
  function wordDiff(a, b) {
    if (typeof Diff === 'undefined') return null;
    const diffed = Diff.diffArrays(tokenize(a), tokenize(b), { timeout: 400 });
    if (!diffed) return null;
    const parts = joinSplitEdits(diffed);
    const left = [];
    const right = [];
    const changes = [];
    let i = 0;
    let j = 0;
    let words = 0;
    const len = (p) => p.value.reduce((n, t) => n + t.length, 0);
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k];
      const n = len(p);
      if (p.removed) {
        left.push([i, i + n]);
        const from = p.value.join('');
        const next = parts[k + 1];
        if (next && next.added) {
          const m = len(next);
          const to = next.value.join('');
          right.push([j, j + m]);
          if (HAS_NUMBER.test(from) === HAS_NUMBER.test(to)) changes.push({ from, to, at: changes.length });
          else changes.push({ from, to: '', at: changes.length }, { from: '', to, at: changes.length + 1 });
          j += m;
          k++;
        } else changes.push({ from, to: '', at: changes.length });
        i += n;
      } else if (p.added) {
        right.push([j, j + n]);
        changes.push({ from: '', to: p.value.join(''), at: changes.length });
        j += n;
      } else {
        i += n;
        j += n;
      }
      // The spaces a joined edit took in (see joinSplitEdits) are in the other text too: marked
      // there as well, so that what both sides leave unmarked stays the same text.
      if (p.otherSkip) {
        if (p.added) left.push([i, i += p.otherSkip]);
        else right.push([j, j += p.otherSkip]);
      }
    }
    for (const c of changes) words += Math.max(countWords(c.from), countWords(c.to), 1);
    return { left, right, changes, words };
  }

  /**
   * jsdiff may match a run of spaces of the old text inside an inserted stretch of the new one:
   * "… end " + " New sentence here." matches the old trailing space with the one after "New", so
   * one appended sentence would be two changes, which the summary then orders apart. A run of
   * spaces between two pure insertions (or two pure deletions) joins them into one edit; the
   * joined part carries `otherSkip`, the length of those spaces in the other text.
   */
  function joinSplitEdits(parts) {
    const kind = (p) => (!p ? '' : p.added ? 'added' : p.removed ? 'removed' : 'same');
    const blank = (p) => kind(p) === 'same' && p.value.every((t) => /^\s+$/.test(t));
    const out = [];
    for (let k = 0; k < parts.length; k++) {
      const last = out[out.length - 1];
      const lk = kind(last);
      const next = parts[k + 1];
      // Pure: no change of the other kind right next to either edit (that is a replacement, listed as such).
      const other = lk === 'added' ? 'removed' : 'added';
      if ((lk === 'added' || lk === 'removed') && blank(parts[k]) && kind(next) === lk && kind(out[out.length - 2]) !== other && kind(parts[k + 2]) !== other) {
        const skip = parts[k].value.reduce((n, t) => n + t.length, 0);
        out[out.length - 1] = { ...last, value: last.value.concat(parts[k].value, next.value), otherSkip: (last.otherSkip || 0) + skip };
        k++;
      } else out.push(parts[k]);
    }
    return out;
  }

  function countWords(s) {
    const m = s.match(/[\p{L}\p{N}]+/gu);
    return m ? m.length : 0;
  }

  /**
   * "“950” → “1.100” · − “solo” · + “Chiamare dopo le 18.”": the changes a reader looks for first —
   * those with a number (prices, sizes, dates) before the others, then the longest — up to `max`,
   * and how many more.
   */
  function changeSummary(changes, max = 5) {
    const q = (s) => {
      const t = s.replace(/\s+/g, ' ').trim();
      return t.length > 40 ? '“' + t.slice(0, 38) + '…”' : '“' + t + '”';
    };
    const real = changes.filter((c) => c.from.trim() || c.to.trim());
    const weight = (c) => Math.max(c.from.trim().length, c.to.trim().length);
    const numeric = (c) => (HAS_NUMBER.test(c.from) || HAS_NUMBER.test(c.to) ? 1 : 0);
    const ranked = real
      .map((c, k) => ({ c, k }))
      .sort((x, y) => numeric(y.c) - numeric(x.c) || weight(y.c) - weight(x.c) || x.k - y.k)
      .map((x) => x.c);
    const shown = ranked
      .slice(0, max)
      .map((c) => (c.from.trim() && c.to.trim() ? q(c.from) + ' → ' + q(c.to) : c.from.trim() ? '− ' + q(c.from) : '+ ' + q(c.to)));
    const more = real.length - shown.length;
    return shown.join(' · ') + (more > 0 ? ' · and ' + more + ' more' : '');
  }

  /** The text of one side as segments: changed ranges (del/ins) over passage backgrounds. */
  function renderSide(text, changed, passages, side) {
    const div = document.createElement('div');
    div.className = 'doc';
    div.dir = 'auto';
    const spans = [];
    passages.forEach((p, n) => {
      const s = snap(text, side === 'a' ? p.aStart : p.bStart, side === 'a' ? p.aEnd : p.bEnd);
      if (s) spans.push({ start: s[0], end: s[1], n });
    });
    spans.sort((x, y) => x.start - y.start);
    const cuts = new Set([0, text.length]);
    for (const [s, e] of changed) cuts.add(s).add(e);
    for (const s of spans) cuts.add(s.start).add(s.end);
    const points = [...cuts].filter((x) => x >= 0 && x <= text.length).sort((x, y) => x - y);
    let ci = 0;
    let si = 0;
    const numbered = new Set();
    for (let k = 0; k + 1 < points.length; k++) {
      const x = points[k];
      const y = points[k + 1];
      while (ci < changed.length && changed[ci][1] <= x) ci++;
      while (si < spans.length && spans[si].end <= x) si++;
      const isChanged = ci < changed.length && changed[ci][0] <= x && x < changed[ci][1];
      const sp = si < spans.length && spans[si].start <= x && x < spans[si].end ? spans[si] : null;
      let node = document.createTextNode(text.slice(x, y));
      if (isChanged) {
        const c = document.createElement(side === 'a' ? 'del' : 'ins');
        c.append(node);
        node = c;
      }
      if (sp) {
        const m = document.createElement('mark');
        m.className = 'p' + (sp.n % 8);
        m.dataset.p = String(sp.n + 1);
        m.title = 'shared passage ' + (sp.n + 1);
        if (!numbered.has(sp.n)) {
          numbered.add(sp.n);
          m.dataset.passage = String(sp.n + 1);
        }
        m.append(node);
        node = m;
      }
      div.append(node);
    }
    return div;
  }

  /**
   * The line above a compared pair: both ids and their similarity, and for a pair below the
   * threshold how it shares the cluster: "linked through #61: 0.820, 0.801" (link: { id,
   * similarities }), or through a longer path. similarity null: not found, hence below the threshold.
   */
  function pairLabel(aId, bId, similarity, threshold, link) {
    const f = (x) => x.toFixed(3);
    const known = similarity !== null && similarity !== undefined;
    let s = '#' + aId + ' and #' + bId + ': ' + (known ? 'Jaccard ' + f(similarity) : 'similarity not found');
    if (threshold !== undefined && (!known || similarity < threshold)) {
      s += ', below the threshold ' + threshold + ': not a near-duplicate pair, ';
      s += link
        ? 'linked through #' + link.id + ' (' + f(link.similarities[0]) + ', ' + f(link.similarities[1]) + ')'
        : 'linked through a chain of other members';
    }
    return s;
  }

  /** Hovering or focusing a passage outlines it in both texts. */
  function linkPassages(root) {
    const toggle = (n, on) => {
      for (const m of root.querySelectorAll('mark[data-p="' + n + '"]')) m.classList.toggle('active', on);
    };
    for (const m of root.querySelectorAll('mark[data-passage]')) {
      m.tabIndex = 0;
      for (const [ev, on] of [['mouseenter', true], ['mouseleave', false], ['focus', true], ['blur', false]])
        m.addEventListener(ev, () => toggle(m.dataset.p, on));
    }
  }

  /**
   * Two texts side by side: what changed (word by word) and the shared passages.
   * left/right: { title, text, note? }; passages: commonPassages(left.text, right.text).passages.
   * Returns { element, diff } (diff null when the texts were too different to diff).
   */
  function compare(left, right, passages) {
    const diff = left.text === right.text ? { left: [], right: [], changes: [], words: 0 } : wordDiff(left.text, right.text);
    const wrap = document.createElement('div');
    wrap.className = 'compare';
    const sum = document.createElement('p');
    sum.className = 'changes';
    if (!diff) sum.textContent = 'Too different for a word-by-word view; the shared passages are highlighted.';
    else if (diff.changes.length === 0) sum.textContent = 'Identical texts.';
    else sum.textContent = 'Changed (' + diff.words + ' word' + (diff.words === 1 ? '' : 's') + '): ' + changeSummary(diff.changes);
    const grid = document.createElement('div');
    grid.className = 'pair';
    for (const [col, side, changed] of [[left, 'a', diff ? diff.left : []], [right, 'b', diff ? diff.right : []]]) {
      const c = document.createElement('section');
      c.className = 'col';
      const h = document.createElement('h4');
      h.dir = 'auto';
      h.textContent = col.title;
      c.append(h);
      if (col.note) {
        const p = document.createElement('p');
        p.className = 'note';
        p.textContent = col.note;
        c.append(p);
      }
      c.append(renderSide(col.text, changed, passages, side));
      grid.append(c);
    }
    linkPassages(grid);
    wrap.append(sum, grid);
    return { element: wrap, diff };
  }

  global.neardupDiff = { compare, wordDiff, snap, insideToken, changeSummary, tokenize, pairLabel };
})(window);
