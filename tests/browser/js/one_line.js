// What keeps an element's children from sitting on its one line: overflow, a child sticking out of it,
// a child on another line or wrapping onto two.
(el) => {
  const box = el.getBoundingClientRect();
  const out = [];
  if (el.scrollWidth > el.clientWidth) out.push(`overflows by ${el.scrollWidth - el.clientWidth} px`);
  for (const child of el.children) {
    const r = child.getBoundingClientRect();
    const name = child.dataset.key || child.textContent;
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(`${name} sticks out`);
    if (Math.abs(r.top + r.height / 2 - (box.top + box.height / 2)) > 2) out.push(`${name} is on another line`);
    if (r.height > 60) out.push(`${name} wraps`);
  }
  return out;
}
