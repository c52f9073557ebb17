// Shared by the report and the web page: two texts side by side with their shared passages
// highlighted, one numbered color per passage, so each passage can be found in both texts.
// Plain browser script (no build step); defines window.neardupHighlight.
(function (global) {
  'use strict';

  /**
   * A <div class="doc"> holding `text`, with each passage wrapped in <mark class="pN">.
   * `side` picks the passage offsets: 'a' (aStart/aEnd) or 'b' (bStart/bEnd).
   */
  function highlighted(text, passages, side) {
    const div = document.createElement('div');
    div.className = 'doc';
    const spans = passages
      .map((p, n) => ({ start: side === 'a' ? p.aStart : p.bStart, end: side === 'a' ? p.aEnd : p.bEnd, n }))
      .filter((s) => s.end <= text.length && s.start < s.end)
      .sort((x, y) => x.start - y.start);
    let at = 0;
    for (const s of spans) {
      if (s.start < at) continue; // passages never overlap; this guards against bad data
      if (s.start > at) div.append(text.slice(at, s.start));
      const m = document.createElement('mark');
      m.className = 'p' + (s.n % 8);
      m.dataset.passage = String(s.n + 1);
      m.title = 'shared passage ' + (s.n + 1);
      m.textContent = text.slice(s.start, s.end);
      div.append(m);
      at = s.end;
    }
    if (at < text.length) div.append(text.slice(at));
    return div;
  }

  /** Hovering or focusing a passage outlines it in both texts of the comparison. */
  function linkPassages(root) {
    const toggle = (n, on) => {
      for (const m of root.querySelectorAll('mark[data-passage="' + n + '"]')) m.classList.toggle('active', on);
    };
    for (const m of root.querySelectorAll('mark[data-passage]')) {
      m.tabIndex = 0;
      m.addEventListener('mouseenter', () => toggle(m.dataset.passage, true));
      m.addEventListener('mouseleave', () => toggle(m.dataset.passage, false));
      m.addEventListener('focus', () => toggle(m.dataset.passage, true));
      m.addEventListener('blur', () => toggle(m.dataset.passage, false));
    }
  }

  /**
   * Two texts in two columns with their shared passages highlighted.
   * left/right: { title, text, note? }; passages: [{aStart, aEnd, bStart, bEnd, length}].
   */
  function sideBySide(left, right, passages) {
    const grid = document.createElement('div');
    grid.className = 'pair';
    for (const [col, side] of [[left, 'a'], [right, 'b']]) {
      const c = document.createElement('section');
      c.className = 'col';
      const h = document.createElement('h4');
      h.textContent = col.title;
      c.append(h);
      if (col.note) {
        const p = document.createElement('p');
        p.className = 'note';
        p.textContent = col.note;
        c.append(p);
      }
      c.append(highlighted(col.text, passages, side));
      grid.append(c);
    }
    linkPassages(grid);
    return grid;
  }

  global.neardupHighlight = { highlighted, sideBySide, linkPassages };
})(window);
