// The table's seats: every seat's box, and the problems: two seats that overlap, anything drawn in a seat
// (its name, cards, tags, held card) that reaches out of its box into a neighbour's (a reaction that floats up
// out of the seat for a moment does not count, nor text only screen readers get), and rows of the table that
// overlap or are squeezed.
() => {
  const seats = [...document.querySelectorAll("#app .seat")];
  const boxes = seats.map((s) => s.getBoundingClientRect());
  const problems = [];
  const name = (s) => s.querySelector(".seat-name")?.textContent.trim() ?? "?";
  const meets = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  for (let i = 0; i < seats.length; i++)
    for (let j = i + 1; j < seats.length; j++)
      if (meets(boxes[i], boxes[j])) problems.push(`seats overlap: ${name(seats[i])} and ${name(seats[j])}`);
  seats.forEach((seat, i) => {
    const box = boxes[i];
    for (const el of seat.querySelectorAll("*")) {
      if (el.closest(".float-reaction, .sr-only")) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        problems.push(`out of ${name(seat)}'s seat: ${el.className || el.tagName} by ${[box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom].map((d) => Math.max(0, Math.round(d))).join("/")} (left/right/top/bottom)`);
    }
  });
  // The table's rows (header, seats, piles, whose move, hand, moves, events, reactions): none overlaps
  // another, and none is squeezed below its content (which then spills over the next row).
  const rows = [...document.querySelectorAll("#app .screen.table > *:not(.overlay)")].filter((el) => el.getClientRects().length);
  const label = (el) => (typeof el.className === "string" && el.className.split(" ")[0]) || el.tagName;
  rows.forEach((el, i) => {
    if (el.scrollHeight > el.clientHeight + 1) problems.push(`squeezed: ${label(el)} (${el.scrollHeight} px of content in ${el.clientHeight})`);
    const r = el.getBoundingClientRect();
    for (const other of rows.slice(i + 1)) if (meets(r, other.getBoundingClientRect())) problems.push(`rows overlap: ${label(el)} and ${label(other)}`);
  });
  return { boxes: boxes.map((r) => [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 10) / 10)), problems };
}
