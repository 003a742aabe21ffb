// WCAG contrast of every visible text, from the rendered colours: the text colour (times the opacity of
// it and its ancestors) over the backgrounds it sits on, every stop of a gradient counted. The texts that fail.
() => {
  const parse = (c) => {
    let m = c.match(/^rgba?\(([^)]+)\)$/);
    if (m) { const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p[3] ?? 1]; }
    m = c.match(/^color\(srgb ([^)]+)\)$/);
    if (m) { const p = m[1].split(/[\s\/]+/).filter(Boolean).map(Number); return [p[0] * 255, p[1] * 255, p[2] * 255, p[3] ?? 1]; }
    return null;
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3])).concat(1);
  const lum = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const backgrounds = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.push(e);
    let layers = [[255, 255, 255, 1]];
    for (const e of chain.reverse()) {
      const s = getComputedStyle(e);
      const colour = parse(s.backgroundColor);
      if (colour && colour[3] > 0) layers = layers.map((b) => over(colour, b));
      const stops = (s.backgroundImage.match(/rgba?\([^)]+\)|color\(srgb[^)]+\)/g) || []).map(parse).filter(Boolean);
      if (stops.length) layers = stops.flatMap((stop) => layers.map((b) => over(stop, b)));
    }
    return layers;
  };
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (seen.has(el) || !/[\p{L}\p{N}]/u.test(n.textContent)) continue;
    seen.add(el);
    if (el.closest("[disabled], .sr-only, [aria-hidden=true] .pip, option")) continue;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    if (r.width < 2 || r.height < 2 || s.visibility !== "visible") continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    if (opacity < 0.05) continue;
    const fg = parse(s.color);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    for (const bg of backgrounds(el)) {
      const seenFg = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
      const got = ratio(seenFg, bg);
      if (got < need - 0.005) { bad.push(`${n.textContent.trim().slice(0, 40)}: ${got.toFixed(2)} < ${need}`); break; }
    }
  }
  return bad;
}
