"""What the browser tests measure on a page, as JavaScript run in it: cut-off lines, a dialog
that fits, typeset formulas, raw LaTeX."""

from __future__ import annotations

import re

# Every line of text in the elements matched by the selector: is it whole? A line is cut off
# when one of its words reaches past an ancestor that clips (overflow other than visible, or an
# ellipsis) or past the window's edge (spaces at the end of a wrapped row do not count: they
# are not drawn). Returns the cut lines, the number of lines, and how many of them wrap onto
# more than one row (to show the check had long lines to look at).
LINES = r"""(selector) => {
  const viewport = document.documentElement.clientWidth;
  const cut = [];
  let lines = 0, wrapped = 0;
  for (const el of document.querySelectorAll(selector)) {
    const bounds = [[0, viewport]];
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.textOverflow === 'ellipsis') {
        const r = a.getBoundingClientRect();
        bounds.push([r.left + a.clientLeft, r.left + a.clientLeft + a.clientWidth]);
      }
    }
    const outside = range => [...range.getClientRects()].some(r => r.width > 0 &&
      bounds.some(([left, right]) => r.right > right + 0.5 || r.left < left - 0.5));
    // one range per line of the element's text (across its text nodes), one per word
    let line = null;
    const finish = () => {
      if (!line) return;
      const rects = [...line.range.getClientRects()].filter(r => r.width > 0);
      if (line.text.trim() && rects.length) {
        lines += 1;
        if (new Set(rects.map(r => Math.round(r.top))).size > 1) wrapped += 1;
        if (line.cut) cut.push(line.text.trim().slice(0, 160));
      }
      line = null;
    };
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    for (const node of nodes) {
      const s = node.textContent;
      let start = 0;
      while (start <= s.length) {
        const nl = s.indexOf('\n', start);
        const end = nl === -1 ? s.length : nl;
        if (!line) {
          line = {range: document.createRange(), text: '', cut: false};
          line.range.setStart(node, start);
        }
        line.range.setEnd(node, end);
        line.text += s.slice(start, end);
        for (const word of s.slice(start, end).matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, start + word.index);
          range.setEnd(node, start + word.index + word[0].length);
          if (outside(range)) line.cut = true;
        }
        if (nl === -1) break;
        finish();
        start = nl + 1;
      }
    }
    finish();
  }
  return {cut, lines, wrapped};
}"""

# Each block of the open dialog (the elements the selector matches) wider than its box
# (scrolled or cut), and whether the dialog reaches past the window's edges.
DIALOG_FIT = r"""(selector) => {
  const blocks = [...document.querySelectorAll(selector)];
  const dialog = blocks.length ? blocks[0].closest('.jp-Dialog-content') : null;
  const box = (dialog || document.querySelector('.jp-Dialog-content')).getBoundingClientRect();
  return {
    blocks: blocks.length,
    wider: blocks.filter(e => e.scrollWidth > e.clientWidth).map(e => e.innerText.slice(0, 80)),
    outside: box.left < 0 || box.right > document.documentElement.clientWidth,
  };
}"""

# Each <math> element: drawn with a size, and laid out as mathematics (a fraction's numerator
# above its denominator, a superscript raised, a square root wider than what it covers).
MATH = r"""(selector) => {
  const root = document.querySelector(selector) || document;
  const box = e => e.getBoundingClientRect();
  const maths = [...root.querySelectorAll('math')];
  return {
    count: maths.length,
    empty: maths.filter(m => box(m).width < 1 || box(m).height < 1).map(m => m.textContent),
    fractions: [...root.querySelectorAll('mfrac')].map(f =>
      box(f.children[0]).bottom <= box(f.children[1]).top + 1),
    superscripts: [...root.querySelectorAll('msup')].map(s =>
      box(s.children[1]).top < box(s.children[0]).top),
    roots: [...root.querySelectorAll('msqrt')].map(r =>
      box(r).width > [...r.children].reduce((w, c) => w + box(c).width, 0) + 2),
  };
}"""

# LaTeX left in rendered text: a $ delimiter or a backslash command.
RAW_LATEX = re.compile(r"\$|\\[A-Za-z]+")


def raw_latex(texts: list[str]) -> list[str]:
    """The snippets of `texts` that still hold LaTeX source."""
    found = []
    for text in texts:
        for match in RAW_LATEX.finditer(text):
            found.append(text[max(0, match.start() - 30) : match.end() + 30].replace("\n", " "))
    return found
