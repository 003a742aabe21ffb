// Every step of the replay on this page, from the first to the last (the → key, as a reader steps): where
// the step's text box hides a line (its own scrolling, a box around it that clips it, something drawn over
// it) or cannot be brought on screen by scrolling the page: {problems, scrolls}, each problem with its step;
// `scrolls`: the steps whose page is taller than the screen (their words reached by scrolling it).
() => {
  const problems = [];
  const scrolls = [];
  const slider = document.querySelector('[data-key="slider"]');
  const last = Number(slider.max);
  document.dispatchEvent(new KeyboardEvent("keydown", { key: "Home", bubbles: true }));
  for (let step = 0; step <= last; step++) {
    if (step > 0) document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    const box = document.querySelector(".replay-lines");
    const where = `step ${box.dataset.step}`;
    if (box.scrollHeight > box.clientHeight + 1) {
      problems.push(`${where}: ${box.scrollHeight - box.clientHeight} px of text hidden in its box: ${box.innerText}`);
      continue;
    }
    // The page's own scrolling brings it into view: no box around it clips it...
    const r = box.getBoundingClientRect();
    if (r.height > innerHeight) problems.push(`${where}: the text is taller than the screen`);
    for (let p = box.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowY === "visible" && s.overflowX === "visible") continue;
      const c = p.getBoundingClientRect();
      if (r.top < c.top - 1 || r.bottom > c.bottom + 1) problems.push(`${where}: cut by ${p.className || p.tagName}`);
    }
    const page = document.scrollingElement;
    if (page.scrollHeight > innerHeight) scrolls.push(step);
    if (r.top + scrollY < -1 || r.bottom + scrollY > page.scrollHeight + 1) problems.push(`${where}: beyond the page`);
    // ... and, scrolled to, every line of it is there to read, nothing drawn over it.
    box.scrollIntoView({ block: "nearest" });
    for (const line of box.children) {
      const l = line.getBoundingClientRect();
      for (const y of [l.top + 2, l.bottom - 2]) {
        const hit = document.elementFromPoint(l.left + 4, y);
        if (!hit || !box.contains(hit)) {
          problems.push(`${where}: "${line.textContent}" covered by ${hit ? hit.className || hit.tagName : "nothing"} (y ${Math.round(y)})`);
          break;
        }
      }
    }
    scrollTo(0, 0);
  }
  return { problems, scrolls };
};
