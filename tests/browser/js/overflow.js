// Texts that do not fit their box, whatever the language: each visible text's rendered lines are measured
// against the box it belongs to (its button, link, badge, cell, heading, paragraph, list item or dialog, or
// the nearest box that clips), and against the screen's width. A word that sticks out of its button, a label
// cut by its box, a line running off the screen: each is a problem. Boxes that scroll (the results' lists)
// are left to fits.js; so is a text without a letter (an emoji, a count) off the screen: no language wrote
// it. Player names are the players' own and shortened on purpose (fits.js checks they keep 6 letters); a
// card's face is drawn the same in every language (its rank's glyph may touch its corner's edge).
() => {
  const BOX = "button, a, summary, label, select, th, td, li, p, h1, h2, h3, dialog, .badge, .code-badge, .prompt, .clock";
  const problems = [];
  const seen = new Set();
  const clips = (el) => {
    const s = getComputedStyle(el);
    return s.overflowX !== "visible" || s.overflowY !== "visible";
  };
  const scrolls = (el) => {
    const s = getComputedStyle(el);
    return ["auto", "scroll"].includes(s.overflowX) || ["auto", "scroll"].includes(s.overflowY);
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest("script, style, noscript, option, .sr-only, .seat-name, .my-name, .card")) continue;
    if (!el.closest("#app, dialog, .toast.show, .status.show")) continue;
    const s = getComputedStyle(el);
    if (s.visibility !== "visible" || el.closest("[hidden]")) continue;
    // Not drawn: transparent, or clipped to nothing (the screen reader's words, as .round-long on a phone).
    let unseen = false;
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e);
      if (c.opacity === "0" || (c.position === "absolute" && c.clip !== "auto")) unseen = true;
    }
    if (unseen) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    if (!rects.length) continue;
    const text = { left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)), top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom)) };
    const words = n.textContent.trim().slice(0, 40);
    // The box the text belongs to, and every clipping box on the way there.
    // A label laid out of the flow (position: absolute, as a pile's name above it or a count on its corner)
    // is its own box: it grows with its words unless its width is bounded, which is what is checked then.
    let box = null;
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (scrolls(e)) break; // a list that scrolls: its content may lie beyond it
      if (e.matches(BOX) || clips(e) || ["absolute", "fixed"].includes(getComputedStyle(e).position)) {
        box = e;
        break;
      }
    }
    // Off the screen's side: a text with words (an emoji's place is no language's doing).
    if (/\p{L}/u.test(words) && (text.left < -1 || text.right > innerWidth + 1)) problems.push(`off the screen's side: "${words}"`);
    if (!box || seen.has(`${words}@${box}`)) continue;
    const b = box.getBoundingClientRect();
    const tol = 1.5;
    if (text.left < b.left - tol || text.right > b.right + tol || text.top < b.top - tol || text.bottom > b.bottom + tol) {
      const how = clips(box) ? "cut by" : "sticks out of";
      const key = box.dataset.key ? `[data-key=${box.dataset.key}]` : box.className ? `.${String(box.className).split(" ")[0]}` : box.tagName.toLowerCase();
      problems.push(`"${words}" ${how} its box ${box.tagName.toLowerCase()}${key} by ${Math.round(Math.max(b.left - text.left, text.right - b.right, b.top - text.top, text.bottom - b.bottom))} px`);
      seen.add(`${words}@${box}`);
    }
  }
  return problems;
}
