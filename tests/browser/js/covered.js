// Which of five points of a card (centre and corners) something else covers, or "off screen".
(key) => {
  const card = document.querySelector(`[data-key="${key}"] .card`);
  const r = card.getBoundingClientRect();
  const points = [[0.5, 0.5], [0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]];
  const off = r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth;
  const covered = points.filter(([fx, fy]) => {
    const top = document.elementFromPoint(r.left + r.width * fx, r.top + r.height * fy);
    return !top || !card.contains(top);
  }).map(([fx, fy]) => { const top = document.elementFromPoint(r.left + r.width * fx, r.top + r.height * fy);
    return top ? top.className || top.tagName : "nothing"; });
  return off ? ["off screen"] : covered;
}
