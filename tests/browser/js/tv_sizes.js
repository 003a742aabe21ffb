// The big screen read from across the room: the smallest text drawn (its font size in px, with the text),
// the smallest card drawn (its height in px), and everything drawn outside the screen. Texts that are not
// drawn (screen readers' words, transparent, clipped to nothing) do not count.
() => {
  const out = { smallestText: null, smallestTextSample: "", smallestCard: null, outside: [] };
  const drawn = (el) => {
    if (el.closest(".sr-only, option, [hidden]")) return false;
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e);
      if (c.display === "none" || c.visibility === "hidden" || Number(c.opacity) === 0) return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  const walker = document.createTreeWalker(document.getElementById("app"), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || !drawn(el)) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (out.smallestText === null || size < out.smallestText) {
      out.smallestText = size;
      out.smallestTextSample = n.textContent.trim().slice(0, 40);
    }
  }
  for (const card of document.querySelectorAll("#app .card")) {
    if (!drawn(card)) continue;
    // The results' little hands in their table are a list, not the table's cards.
    if (card.closest(".round-table")) continue;
    const h = card.getBoundingClientRect().height;
    if (out.smallestCard === null || h < out.smallestCard) out.smallestCard = h;
  }
  for (const el of document.querySelectorAll("#app *")) {
    if (!drawn(el) || el.closest(".float-reaction, .crisp-flash")) continue;
    const r = el.getBoundingClientRect();
    if (r.left < -1 || r.top < -1 || r.right > innerWidth + 1 || r.bottom > innerHeight + 1) {
      out.outside.push(`${el.tagName.toLowerCase()}.${[...el.classList].join(".")}: ${el.textContent.trim().slice(0, 30)}`);
    }
  }
  out.outside = out.outside.slice(0, 10);
  return out;
}
