// Where a hint's ring (what .hinted marks: its outline with its offset, and hard box-shadow rings, on the
// element or inside it) crosses or touches a text on the screen: a player's name, a pile's label, a line.
// Text inside the marked element is its own (a pile's count, a slot's name inside the slot's box) unless
// it is a pile's label, which hangs above the pile. A list of problems.
() => {
  const px = (v) => parseFloat(v) || 0;
  const grow = (r, d) => ({ left: r.left - d, top: r.top - d, right: r.right + d, bottom: r.bottom + d });
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const within = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  /** The rings drawn around `e`: {inner, outer} boxes (the band between them is painted). */
  const ringsOf = (e) => {
    const out = [];
    const s = getComputedStyle(e);
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return out;
    if (s.outlineStyle !== "none" && px(s.outlineWidth) > 0) {
      const o = px(s.outlineOffset);
      out.push({ inner: grow(r, o), outer: grow(r, o + px(s.outlineWidth)) });
    }
    // box-shadow: "color x y blur spread" lists; a ring is a hard one (no blur) with a spread, not inset.
    for (const shadow of (s.boxShadow === "none" ? "" : s.boxShadow).split(/,(?![^(]*\))/)) {
      if (!shadow.trim() || shadow.includes("inset")) continue;
      const [x, y, blur, spread] = (shadow.replace(/rgba?\([^)]*\)|#[0-9a-f]+|[a-z]+\([^)]*\)/gi, "").match(/-?[\d.]+px/g) || []).map(px);
      if ((blur || 0) > 1 || !(spread > 0)) continue;
      const moved = { left: r.left + x, right: r.right + x, top: r.top + y, bottom: r.bottom + y };
      out.push({ inner: r, outer: grow(moved, spread) });
    }
    return out;
  };
  const texts = [];
  const walker = document.createTreeWalker(document.querySelector("#app"), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest(".sr-only")) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const rect of range.getClientRects()) if (rect.width > 1 && rect.height > 1) texts.push({ node: n, rect });
  }
  const problems = [];
  for (const marked of document.querySelectorAll(".hinted")) {
    const rings = [marked, ...marked.querySelectorAll("*")].flatMap(ringsOf);
    for (const { node, rect } of texts) {
      const own = marked.contains(node) && !node.parentElement.closest(".pile-label");
      if (own) continue;
      for (const ring of rings) {
        // Touching counts: a pixel of felt between a ring and a text at least.
        if (meets(grow(ring.outer, 1), rect) && !within(rect, ring.inner)) {
          problems.push(`the ring of ${marked.dataset.key} meets "${node.textContent.trim()}"`);
          break;
        }
      }
    }
  }
  return [...new Set(problems)];
};
