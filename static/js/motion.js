// Moves you can follow: a card flies from where it was to where it went (pile to the player who drew,
// hand to the discard pile, between two hands on a Queen's swap, the discard pile turned over as the new
// draw pile) and the slots a move touched are marked for a moment. The flights are copies of cards over
// the page that take no taps, last FLIGHT_MS, and are left out when the system asks for reduced motion.

import { cardFace } from "./cards.js";
import { app } from "./state.js";

const FLIGHT_MS = 350;
const BIG_SCREEN_FLIGHT_MS = 800; // slow enough to follow from the sofa
const TOUCHED_MS = 1500;

const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Where each animatable thing is on screen now (`data-anim` names it), before the page is drawn anew. */
export function positions() {
  const out = new Map();
  for (const el of document.querySelectorAll("#app [data-anim]")) {
    const card = el.matches(".card") ? el : el.querySelector(".card") ?? el;
    out.set(el.dataset.anim, card.getBoundingClientRect());
  }
  return out;
}

/** Mark `slot` of `seat` as just changed; the table draws it highlighted until TOUCHED_MS have passed. */
export function touch(seat, slot) {
  const now = performance.now();
  for (const [k, marks] of Object.entries(app.touched)) {
    if (Object.values(marks).every((until) => until <= now)) delete app.touched[k];
  }
  const key = `${seat}-`;
  app.touched[key] = { ...(app.touched[key] ?? {}), [slot]: now + TOUCHED_MS };
}

/** Whether `slot` of `seat` is still marked as just changed. */
export function touched(seat, slot) {
  return (app.touched[`${seat}-`]?.[slot] ?? 0) > performance.now();
}

/** The flights a batch of events makes: [from, to, card or null, flip]. A drawn card is held between
 * the piles (the table shows it there for every player), so it flies there and from there; the page's
 * own drawn card (`myDrawnCard`, for seat `me`) flies face up. */
export function flightsFor(events, me, myDrawnCard) {
  const flights = [];
  const hand = () => "drawn";
  for (const e of events) {
    switch (e.type) {
      case "drew":
        flights.push([e.source === "discard" ? "discard" : "deck", hand(e.seat), e.card ?? (e.seat === me ? myDrawnCard : null), false]);
        break;
      case "discarded":
      case "timed_out":
        flights.push([hand(e.seat), "discard", e.card ?? e.discarded ?? null, false]);
        break;
      case "swapped":
        flights.push([`seat-${e.seat}-${e.slot}`, "discard", e.discarded, false]);
        flights.push([hand(e.seat), `seat-${e.seat}-${e.slot}`, e.card ?? null, false]);
        touch(e.seat, e.slot);
        break;
      case "queen_used":
        flights.push([`seat-${e.seat}-${e.slot}`, `seat-${e.target}-${e.target_slot}`, null, false]);
        flights.push([`seat-${e.target}-${e.target_slot}`, `seat-${e.seat}-${e.slot}`, null, false]);
        touch(e.seat, e.slot);
        touch(e.target, e.target_slot);
        break;
      case "jack_used":
        touch(e.seat, "middle");
        break;
      case "pile_turned":
        flights.push(["discard", "deck", null, true]);
        break;
      default:
        break;
    }
  }
  return flights;
}

/** Fly each card from where its source was (`before`) to where its target is now. */
export function fly(flights, before) {
  if (reduced() || !flights.length) return;
  const now = positions();
  for (const [from, to, code, flip] of flights) {
    const a = before.get(from) ?? now.get(from);
    const b = now.get(to) ?? before.get(to);
    if (!a || !b || !a.width || !b.width) continue;
    const card = cardFace(code, "flying");
    Object.assign(card.style, { left: `${a.left}px`, top: `${a.top}px`, width: `${a.width}px`, height: `${a.height}px` });
    document.body.append(card);
    const dx = b.left - a.left + (b.width - a.width) / 2;
    const dy = b.top - a.top + (b.height - a.height) / 2;
    const scale = b.width / a.width;
    const end = `translate(${dx}px, ${dy}px) scale(${scale})`;
    const frames = flip
      ? [{ transform: "rotateY(0deg)" }, { transform: `translate(${dx / 2}px, ${dy / 2}px) rotateY(90deg)` }, { transform: `${end} rotateY(180deg)` }]
      : [{ transform: "none" }, { transform: end }];
    // The card where it landed shows once the flight is over (until then the flying copy is the card);
    // transparent, not hidden, so that it still takes a tap.
    const landing = document.querySelector(`#app [data-anim="${CSS.escape(to)}"]`);
    if (landing) landing.style.opacity = "0";
    const land = () => {
      card.remove();
      if (landing) landing.style.opacity = "";
    };
    const run = card.animate(frames, { duration: app.tv ? BIG_SCREEN_FLIGHT_MS : FLIGHT_MS, easing: "ease-in-out" });
    run.finished.then(land, land);
  }
}
