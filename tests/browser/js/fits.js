// What does not fit the screen: sideways scrolling, controls off screen, names cut before 6 characters,
// tables wider than their panel. `controls`: whether every control must be on screen (not on a page that scrolls).
(controls) => {
  const problems = [];
  const e = document.scrollingElement;
  if (e.scrollWidth > innerWidth) problems.push(`scrolls sideways by ${e.scrollWidth - innerWidth} px`);
  // A control inside a box that scrolls (the results' lists) counts as on screen when the box is on screen
  // and the control lies within what the box scrolls through.
  const scroller = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const y = getComputedStyle(p).overflowY;
      if ((y === "auto" || y === "scroll") && p.scrollHeight > p.clientHeight) return p;
    }
    return null;
  };
  const outside = (r) => r.left < -1 || r.right > innerWidth + 1 || r.top < -1 || r.bottom > innerHeight + 1;
  for (const b of controls ? document.querySelectorAll("#app button, #app select") : []) {
    const r = b.getBoundingClientRect();
    if (r.width === 0) continue;
    const box = scroller(b);
    let off = outside(r);
    if (box) {
      const s = box.getBoundingClientRect();
      const top = r.top - s.top + box.scrollTop;
      off = outside(s) || r.left < s.left - 1 || r.right > s.right + 1 || top < -1 || top + r.height > box.scrollHeight + 1;
    }
    if (off) problems.push(`off screen: ${b.dataset.key || b.textContent}`);
  }
  for (const el of document.querySelectorAll("#app .seat-name")) {
    const text = [...el.childNodes].find((n) => n.nodeType === 3 && n.textContent.trim());
    if (!text) { problems.push("a seat without a name"); continue; }
    const range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(text, Math.min(6, text.textContent.length));
    const r = range.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    if (r.width === 0 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5)
      problems.push(`name cut: ${text.textContent}`);
  }
  for (const t of document.querySelectorAll("#app table")) {
    const panel = t.parentElement.getBoundingClientRect();
    if (t.getBoundingClientRect().width > panel.width + 0.5) problems.push("a table wider than its panel");
  }
  return problems;
}
