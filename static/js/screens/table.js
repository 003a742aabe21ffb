// The table: the other players' seats, the piles, your hand, the moves you may make, the peek at the deal.
// It is drawn from a scene: the state as the server sends it (room, table, you), the lines that tell the
// moves, the cards peeked at and whether the round's hands lie face up. Live play makes its scene from the
// connection's state (liveScene); the replay makes one for each step of a finished game, with its own bar and
// controls in place of the live ones, so that both draw the same table.

import { cardFace, spoken } from "../cards.js";
import { h } from "../dom.js";
import { cardName, slotLabel, slotName, t } from "../i18n.js";
import { SLOTS, actions, app, clockIn, effects, hintMoment, mySeat, revealing } from "../state.js";
import { confirmLeave, langPicker, openRules, renderAt, ring, robot, tvLink } from "../ui.js";
import { touched } from "../motion.js";
import { effectSwitches } from "../effects.js";
import { roundOverlay } from "./results.js";
import { lessonPanel, markTarget } from "../lesson.js";

const REACTIONS = ["👍", "👏", "😂", "😮", "😬", "🤔", "🔥", "🍀"];

const send = (message) => actions.send(message);
const render = () => actions.render();

/** The scene being drawn (set by tableScreen for the drawing's duration). */
let scene = null;

/** The live game's scene: the state the server sent, its lines and peeks, and the round's reveal. */
export function liveScene() {
  return { state: app.state, lines: app.lines, peeks: app.peeks, reveal: revealing(), live: true, bar: null, foot: null };
}

/** The table of `drawn` (a scene: {state, lines, peeks, reveal, live, bar, foot}; a replay gives its own
 * `bar` and `foot`, and no moves are offered where `live` is false). A big screen's scene (`tv`) gives its
 * bar and its `results`, and puts half the seats above the piles and half below, around the table. */
export function tableScreen(drawn = liveScene()) {
  scene = drawn;
  const { room, table, you } = scene.state;
  const r = table.round;
  const me = you.seat;
  const n = room.seats.length;
  const order = me === null ? [...Array(n).keys()] : [...Array(n - 1).keys()].map((k) => (me + 1 + k) % n);
  const phase = room.phase;
  const myTurn = phase === "play" && r && r.turn === me;
  const ended = phase === "round_over" || phase === "game_over";
  const reveal = ended && scene.reveal;
  // A big screen shows the table (room option big_screen): a player's phone shows a compact one, its own
  // hand and moves as they are. A spectator (the big screen itself too) sees the whole table.
  const compact = scene.live && me !== null && room.options?.big_screen === true;
  shownNow.clear();
  // Around the table on a big screen: the first half left to right above the piles, the rest right to left
  // below them.
  const half = scene.tv ? Math.ceil(n / 2) : n;
  const screen = h(
    "section",
    {
      class: `screen table phase-${phase} seats-${n}${reveal ? " revealing" : ""}${you.lesson && scene.live ? " in-lesson" : ""}${compact ? " big-screen" : ""}${scene.tv ? " tv" : ""}`,
    },
    scene.bar ?? (scene.live ? tableBar() : null),
    h("div", { class: "opponents", role: "list" }, order.slice(0, half).map((s) => seatBox(s))),
    phase === "peek" ? peekPanel() : centerArea(r, me, myTurn),
    scene.tv ? h("div", { class: "opponents below", role: "list" }, order.slice(half).reverse().map((s) => seatBox(s))) : null,
    phase === "peek" ? null : turnState(r, me, myTurn),
    me !== null
      ? myHand(r, me, myTurn)
      : scene.live && !scene.tv
        ? h("p", { class: "spectating" }, t("spectating"), " · ", limitNote("limitWatching"))
        : null,
    me === null ? null : myLine(r, me),
    scene.live ? actionBar(r, me, myTurn) : null,
    // A hint takes the events' place until the game moves on: the same line, so nothing else moves. With a
    // big screen, the events are told there.
    app.hint
      ? h("p", { class: "event-line hint-line", "aria-live": "polite" }, h("span", {}, h("span", { "aria-hidden": "true" }, "💡 "), app.hint.text))
      : scene.live && !compact
        ? h("p", { class: "event-line", "aria-live": "polite" }, scene.lines.slice(scene.tv ? -3 : -2).map((l) => h("span", {}, typeof l === "function" ? l() : l)))
        : null,
    // Reactions are for people: in a practice game (only computer players besides you) their row gives
    // its room to the hint.
    me === null || you.hints || you.lesson || !scene.live ? null : reactionBar(),
    // A lesson's prompt and buttons in their place; over the round's results, in the results' foot.
    scene.live && you.lesson && !(ended && !reveal) ? lessonPanel() : null,
    // The round's end: every hand face up on the table for a moment, then the results over it.
    ended && !reveal && scene.live ? (scene.results ?? roundOverlay)() : null,
    scene.foot,
  );
  for (const key of firstSeen.keys()) if (!shownNow.has(key)) firstSeen.delete(key);
  for (const key of hintedKeys()) screen.querySelector(`[data-key="${key}"]`)?.classList.add("hinted");
  if (scene.live) markTarget(screen);
  return screen;
}

// -- hints -------------------------------------------------------------------------------------------

/** Whether to offer the Hint button: in a practice game (you.hints), on your move or in your crisp window. */
function hintOffered(r, me, myTurn) {
  const { you } = scene.state;
  if (!you.hints || me === null || !r || app.queen) return false;
  return you.can.includes("crisp") || (myTurn && you.can.length > 0);
}

function hintButton(compact) {
  return h(
    "button",
    {
      class: "hint-button",
      title: t("hint"),
      "data-key": "hint",
      "aria-label": t("hintLabel"),
      disabled: app.hintAsked !== null || app.hint !== null,
      onclick: () => {
        app.hintAsked = hintMoment();
        send({ type: "hint" });
        render();
      },
    },
    h("span", { "aria-hidden": "true" }, compact ? "💡" : "💡 "),
    compact ? null : t("hint"),
  );
}

/** The controls the hint's move would use, marked on the table: the move button, the pile, the slot. */
function hintedKeys() {
  const move = app.hint?.move;
  if (!move) return [];
  switch (move.type) {
    case "draw":
      return move.from === "discard" ? ["act-take", "discard-pile"] : ["act-draw", "draw-pile"];
    case "swap":
      return [`slot-${move.slot}`];
    case "discard":
      return ["act-discard"];
    case "jack":
    case "king":
      return [`act-${move.type}`];
    case "queen":
      // The Queen button first; once it is pressed, your card, then the other player's.
      return app.queen?.slot ? [`target-${move.target}-${move.target_slot}`] : app.queen ? [`slot-${move.slot}`] : ["act-queen"];
    case "crisp":
      return ["crisp"];
    default:
      return [];
  }
}

// -- no tap by accident ------------------------------------------------------------------------------
// A move button that appears under a finger must not take the tap meant for the button that was there:
// for GUARD_MS after it appears it is disabled, and a tap that began before then does not count.

const GUARD_MS = 400;
const firstSeen = new Map(); // data-key -> when the button first appeared
const shownNow = new Set();
let lastPointerDown = -Infinity;
document.addEventListener("pointerdown", () => (lastPointerDown = performance.now()), true);

function moveButton(key, attrs, onpress, ...children) {
  const now = performance.now();
  shownNow.add(key);
  if (!firstSeen.has(key)) firstSeen.set(key, now);
  const armedAt = firstSeen.get(key) + GUARD_MS;
  if (armedAt > now) renderAt(armedAt);
  return h(
    "button",
    {
      ...attrs,
      "data-key": key,
      disabled: attrs.disabled || armedAt > now,
      onclick: (e) => {
        // e.detail is 0 for a keyboard press: only a pointer can have started before the button was there.
        if (e.detail !== 0 && lastPointerDown < armedAt) return;
        onpress();
      },
    },
    ...children,
  );
}

/** "Round 3", or "R3" where the bar is short of room (the CSS chooses; screen readers hear the whole);
 * nothing before the first round. The live table's bar and the replay's both show it. */
export function roundLabel(r) {
  if (!r) return null;
  return h(
    "span",
    { class: "round-label" },
    h("span", { class: "round-long" }, t("round", r.index + 1)),
    h("span", { class: "round-short", "aria-hidden": "true" }, t("roundShort", r.index + 1)),
  );
}

/** Whether the host's room menu is open (kept while the table is drawn anew). */
let roomMenuOpen = false;

/** The host's room menu, folded into the room's code in the bar: the big screen switch (the phones'
 * compact table) and, while it is on, the address to open on the big screen. */
function roomMenu(room) {
  return h(
    "details",
    {
      class: "share room-menu",
      open: roomMenuOpen,
      // The panel is drawn only while open (closed, nothing of it is on the page).
      ontoggle: (e) => {
        if (roomMenuOpen === e.currentTarget.open) return;
        roomMenuOpen = e.currentTarget.open;
        render();
      },
    },
    h(
      "summary",
      { class: "code-badge small", "data-key": "room-menu", "aria-label": t("roomMenuLabel", room.code), title: t("roomMenuLabel", room.code) },
      room.code,
      h("span", { class: "menu-caret", "aria-hidden": "true" }, "▾"),
    ),
    roomMenuOpen ? roomMenuPanel(room) : null,
  );
}

function roomMenuPanel(room) {
  const on = room.options.big_screen === true;
  return h(
    "div",
    { class: "share-panel" },
    h(
      "label",
      { class: "switch" },
      h("input", {
        type: "checkbox",
        role: "switch",
        "data-key": "big-screen",
        checked: on,
        onchange: (e) => send({ type: "options", big_screen: e.target.checked }),
      }),
      h("span", {}, t("bigScreen")),
    ),
    h("p", { class: "share-note" }, t("bigScreenHelp")),
    on ? h("p", { class: "share-note tv-link" }, t("bigScreenAt", tvLink(room.link))) : null,
  );
}

function tableBar() {
  const { room, table, you } = scene.state;
  const r = table.round;
  return h(
    "header",
    { class: "bar" },
    you.host && !you.lesson ? roomMenu(room) : h("span", { class: "code-badge small" }, room.code),
    roundLabel(r),
    h("span", { class: "spacer" }),
    h("button", { class: "link", "data-key": "rules", "data-local": true, onclick: () => openRules() }, "?", h("span", { class: "sr-only" }, t("howToPlay"))),
    langPicker("code"),
    effectSwitches(effects, render),
    h("button", { class: "link danger", "data-key": "leave", onclick: () => confirmLeave() }, t("leave")),
  );
}

/** The turn clock's seconds as players read them: never more than the limit (the clock of a move
 * includes the 2-second wait before it, which the limit does not). */
function turnLimitMs() {
  return (scene.state.table.options.turn_seconds ?? 60) * 1000;
}

function seatBox(seat) {
  const { room, table } = scene.state;
  const r = table.round;
  const info = room.seats[seat];
  const turn = r && !r.ended && r.turn === seat && room.phase === "play";
  const hand = r?.hands?.[seat];
  const picking = app.queen && app.queen.slot;
  const cards = SLOTS.map((slot, i) => {
    const code = hand ? hand[i] : null;
    const mark = touched(seat, slot) ? " touched" : "";
    if (picking && seat !== mySeat()) {
      return h(
        "button",
        {
          class: "mini-card target",
          "data-key": `target-${seat}-${slot}`,
          "data-anim": `seat-${seat}-${slot}`,
          "aria-label": t("theirCard", info.name, slotName(slot)),
          onclick: () => {
            send({ type: "queen", slot: app.queen.slot, target: seat, target_slot: slot });
            app.queen = null;
          },
        },
        cardFace(null, "mini"),
      );
    }
    return h(
      "span",
      { class: `mini-card${mark}`, "data-anim": `seat-${seat}-${slot}`, role: "img", "aria-label": `${t("theirCard", info.name, slotName(slot))}: ${spoken(code)}` },
      cardFace(code, "mini"),
    );
  });
  const floating = app.reactions.filter((x) => x.seat === seat && x.until > performance.now());
  // A seat a computer player plays for is in the game, not away: it says so instead of looking absent.
  const status = info.stand_in ? null : info.left ? t("leftGame") : !info.connected ? t("away") : null;
  const total = table.totals[seat] ?? 0;
  const absent = info.stand_in ? "stand-in" : `${info.connected ? "" : "away"} ${info.left ? "gone" : ""}`;
  return h(
    "div",
    { class: `seat ${turn ? "turn" : ""} ${absent}`, role: "listitem" },
    h(
      "span",
      { class: `seat-name${info.stand_in ? " stand-in" : ""}`, title: info.stand_in ? t("playingForLabel", info.name) : null },
      // "playing for Ana" where the seat is wide enough, "for Ana" where not (the CSS chooses).
      info.stand_in ? [h("span", { class: "playing-for long" }, t("playingFor")), h("span", { class: "playing-for short" }, t("playingForShort"))] : null,
      info.name,
      status ? h("span", { class: "sr-only" }, `, ${status}`) : null,
    ),
    h("div", { class: "mini-hand" }, cards),
    h(
      "div",
      { class: "seat-tags" },
      // A computer player's seat is always connected: its robot says more than the dot.
      // A replay says nothing of connections: it shows the game, not who was there.
      !scene.live
        ? null
        : info.bot
        ? robot(info)
        : info.stand_in
          ? h("span", { class: "robot", "aria-hidden": "true" }, "🤖") // the name says "playing for Ana"
          : h("span", { class: `dot ${info.connected && !info.left ? "on" : "off"}`, "aria-hidden": "true" }),
      r && r.dealer === seat ? dealerTag() : null,
      seat === room.host ? h("span", { class: "badge tiny", title: t("host"), "aria-label": t("host") }, "★") : null,
      r && r.caller === seat ? h("span", { class: "badge tiny crisp-badge" }, "Crisp") : null,
      turn && r.drawn ? h("span", { class: "holding", title: t("drawnBy", info.name) }, cardFace(r.drawn.card, "micro")) : null,
      // At the round's end the seat says its cards' sum; otherwise its game score so far.
      shownSum(r, seat) ?? h("span", { class: "total", "aria-label": `${t("total")}: ${total}` }, String(total)),
    ),
    floating.map((x) => h("span", { class: "float-reaction", "aria-hidden": "true" }, x.emoji)),
  );
}

/** A seat's sum while the round's hands lie face up, or null. */
function shownSum(r, seat) {
  if (!r || !r.sums || !scene.reveal) return null;
  const bonus = scene.tv && r.points ? r.points[seat] - r.sums[seat] : 0;
  return h(
    "span",
    { class: "total sum", "aria-label": `${t("sum")}: ${r.sums[seat]}` },
    `=${r.sums[seat]}`,
    // The caller's -5 or +5 beside the sum, on the big screen (a phone shows it in the results).
    bonus ? h("span", { class: `bonus ${bonus < 0 ? "good" : "bad"}` }, ` ${bonus < 0 ? "−" : "+"}${Math.abs(bonus)}`) : null,
  );
}

function dealerTag() {
  return h("span", { class: "badge tiny dealer", title: t("dealer"), "aria-label": t("dealer") }, t("dealerShort"));
}

function centerArea(r, me, myTurn) {
  if (!r) return null;
  const can = scene.state.you.can;
  const top = r.discard.length ? r.discard[r.discard.length - 1] : null;
  const drawnCard = scene.state.you.drawn_card ?? (r.drawn && r.turn === me ? r.drawn.card : null);
  let middle = null;
  if (can.includes("crisp")) {
    // In the drawn card's place, away from the move buttons: never where the finger just was.
    const ends = clockIn("window_closes_in");
    middle = moveButton(
      "crisp",
      { class: "crisp-button", "aria-label": `${t("crisp")} ${t("crispHint")}` },
      () => send({ type: "crisp" }),
      h("span", {}, t("crisp")),
      ends ? h("span", { class: "countdown", dataset: { ends: String(ends) } }) : null,
    );
  } else if (myTurn && drawnCard) {
    middle = h(
      "div",
      { class: "drawn-card", "data-anim": "drawn" },
      h("span", { class: "sr-only" }, `${t("youDrew")}: ${cardName(drawnCard)}`),
      cardFace(drawnCard, "big"),
    );
  } else if (scene.tv && r.window && !r.drawn && room().phase === "play") {
    // The big screen counts the crisp window down in the drawn card's place, large.
    const ends = clockIn("window_closes_in");
    // (The line below says whose call it is.)
    middle = ends ? h("div", { class: "crisp-window", "aria-hidden": "true" }, h("span", { class: "countdown", dataset: { ends: String(ends) } })) : null;
  } else if (r.drawn && r.turn !== me && room().phase === "play") {
    middle = h("div", { class: "drawn-card", "data-anim": "drawn", "aria-hidden": "true" }, cardFace(r.drawn.card, "big"));
  }
  return h(
    "div",
    { class: "center" },
    h(
      "button",
      {
        class: "pile draw-pile",
        "data-key": "draw-pile",
        "data-anim": "deck",
        disabled: !can.includes("draw_deck"),
        "aria-label": t("drawPileCount", r.draw_pile),
        onclick: () => send({ type: "draw", from: "deck" }),
      },
      cardFace(null),
      h("span", { class: "count" }, String(r.draw_pile)),
      h("span", { class: "pile-label", "aria-hidden": "true" }, t("drawPileShort")),
    ),
    h("div", { class: "drawn", "aria-live": "polite" }, middle),
    h(
      "button",
      {
        class: "pile discard-pile",
        "data-key": "discard-pile",
        "data-anim": "discard",
        disabled: !can.includes("draw_discard"),
        "aria-label": top ? t("discardTop", cardName(top)) : t("discardEmpty"),
        onclick: () => send({ type: "draw", from: "discard" }),
      },
      top ? cardFace(top) : h("span", { class: "card empty", "aria-hidden": "true" }),
      h("span", { class: "pile-label", "aria-hidden": "true" }, t("discardPileShort")),
    ),
  );
}

function room() {
  return scene.state.room;
}

/** Whose move it is, in words, with its countdown: "Ana may call Crisp 2", then "Ben: draw 30". */
function turnState(r, me, myTurn) {
  if (r && r.sums && scene.reveal) {
    const caller = r.caller !== null ? room().seats[r.caller]?.name : null;
    return h("p", { class: "turn-state prompt reveal-line", role: "status" }, h("span", { class: "prompt-text" }, caller ? t("revealCalled", caller) : t("revealAll")));
  }
  if (!r || room().phase !== "play") return h("p", { class: "turn-state" });
  const { you } = scene.state;
  const can = you.can;
  const now = performance.now();
  const nameOf = (seat) => room().seats[seat]?.name ?? "";
  const mayDraw = clockIn("may_draw_in");
  const windowEnds = clockIn("window_closes_in");
  // A replay tells the window while it is open (no clock runs there).
  const waiting = scene.live ? r.window && mayDraw !== null && mayDraw > now + 50 && !r.drawn : Boolean(r.window && !r.drawn);
  let text;
  let countdown = null;
  if (waiting) {
    // The crisp window's first two seconds: the next player may not draw yet.
    const caller = r.window.seat;
    if (caller === me && scene.live) text = t("youMayCall");
    else text = myTurn && scene.live ? t("mayCallThenYou", nameOf(caller)) : t("mayCall", nameOf(caller));
    if (mayDraw !== null) renderAt(mayDraw);
    if (windowEnds) countdown = h("span", { class: "countdown window-count", dataset: { ends: String(windowEnds) } });
  } else {
    if (!scene.live) text = r.drawn ? t("turnPlay", nameOf(r.turn)) : t("turnDraw", nameOf(r.turn)); // told, not asked
    else if (app.queen && app.queen.slot) text = t("queenPickTheirsFor", slotName(app.queen.slot));
    else if (app.queen) text = t("queenPickMine");
    else if (myTurn && can.includes("swap") && !can.includes("discard") && !can.includes("jack") && !can.includes("queen")) text = t("mustSwapHint");
    else if (myTurn && can.includes("swap")) text = can.includes("discard") ? t("swapOrDiscardHint") : t("swapHint");
    else if (myTurn && can.includes("king")) text = t("kingHint");
    else if (myTurn && (can.includes("jack") || can.includes("queen"))) text = t("specialHint");
    else if (myTurn) text = t("yourTurnDraw");
    else text = r.drawn ? t("turnPlay", nameOf(r.turn)) : t("turnDraw", nameOf(r.turn));
    const deadline = clockIn("deadline_in") ?? clockIn("auto_timeout_in");
    if (deadline) countdown = ring(Math.min(deadline, now + turnLimitMs()), turnLimitMs(), t("timeLeftLabel"));
  }
  const bits = [h("span", { class: "prompt-text" }, text), countdown];
  const kingNow = scene.live && app.kingTurn === r.turn;
  const extra = r.extra_moves + (kingNow ? 1 : 0);
  if (extra > 0 && (kingNow || r.extra_moves > 0)) bits.push(h("span", { class: "badge extra-moves" }, t("extraMovesToPlay", extra)));
  if (r.caller !== null) {
    const finalTurns = t("finalTurnsLeft", nameOf(r.caller), r.final_turns_left ?? 0);
    bits.push(h("span", { class: "badge crisp-badge final-turns", title: finalTurns }, finalTurns)); // cut short on a narrow phone
  }
  return h("p", { class: `turn-state prompt ${myTurn && !waiting && scene.live ? "mine" : ""}`, role: "status" }, bits);
}

function myHand(r, me, myTurn) {
  const can = scene.state.you.can;
  const mine = app.reactions.filter((x) => x.seat === me && x.until > performance.now());
  const hand = r?.hands?.[me];
  const swapping = myTurn && can.includes("swap") && !app.queen;
  const pickingQueen = app.queen && !app.queen.slot;
  const now = performance.now();
  return h(
    "div",
    { class: "my-hand" },
    SLOTS.map((slot, i) => {
      const peek = scene.peeks[slot];
      const shown = hand ? hand[i] : peek && peek.until > now ? peek.card : null;
      const active = swapping || pickingQueen;
      const picked = app.queen?.slot === slot;
      const label = `${t("yourCard", slotName(slot))}${shown ? `: ${cardName(shown)}` : ""}${picked ? ` (${t("picked")})` : ""}`;
      return h(
        "button",
        {
          class: `slot ${active ? "active" : ""} ${shown && !hand ? "peeking" : ""} ${picked ? "picked" : ""} ${touched(me, slot) ? "touched" : ""}`,
          "data-key": `slot-${slot}`,
          "data-anim": `seat-${me}-${slot}`,
          disabled: !active,
          "aria-label": label,
          onclick: () => {
            if (pickingQueen) {
              app.queen = { slot };
              render();
            } else if (swapping) send({ type: "swap", slot });
          },
        },
        cardFace(shown, "big"),
        // A Jack's or Queen's peek counts down beside the slot's name, off the card's face.
        h(
          "span",
          { class: "slot-name", "aria-hidden": "true" },
          picked ? `✓ ${slotLabel(slot)}` : slotLabel(slot),
          peek && peek.why !== "deal" && peek.until > now && !hand
            ? h("span", { class: "countdown peek-count", dataset: { ends: String(peek.until) } })
            : null,
        ),
      );
    }),
    mine.map((x) => h("span", { class: "float-reaction", "aria-hidden": "true" }, x.emoji)),
  );
}

/** The score limit beside a game score: "of 100" (the game ends when a total reaches it; said in full to
 * screen readers). */
function limitNote(key = "limitShort") {
  const limit = scene.state.table.options.score_limit;
  return h(
    "span",
    { class: "limit" },
    h("span", { "aria-hidden": "true" }, t(key, limit)),
    h("span", { class: "sr-only" }, t("limitLabel", limit)),
  );
}

/** Your own name, total and dealer marker, always in sight. */
function myLine(r, me) {
  const { room, table } = scene.state;
  const total = table.totals[me] ?? 0;
  return h(
    "p",
    { class: "my-line" },
    h("span", { class: "my-name" }, room.seats[me]?.name ?? ""),
    r && r.dealer === me ? dealerTag() : null,
    r && r.caller === me ? h("span", { class: "badge tiny crisp-badge" }, "Crisp") : null,
    r && r.sums && scene.reveal
      ? h("span", { class: "my-total sum" }, `${t("sum")} ${r.sums[me]}`)
      : h("span", { class: "my-total" }, t("yourTotal", total), " ", limitNote()),
  );
}

function actionBar(r, me, myTurn) {
  if (!r || me === null) return null;
  const can = scene.state.you.can;
  const buttons = [];
  if (myTurn && !app.queen) {
    if (can.includes("draw_deck")) buttons.push(moveButton("act-draw", { class: "primary" }, () => send({ type: "draw", from: "deck" }), t("draw")));
    if (can.includes("draw_discard")) buttons.push(moveButton("act-take", { class: "secondary" }, () => send({ type: "draw", from: "discard" }), t("takeDiscard")));
    if (can.includes("jack")) buttons.push(moveButton("act-jack", { class: "special" }, () => send({ type: "jack" }), t("useJack")));
    if (can.includes("queen"))
      buttons.push(
        moveButton("act-queen", { class: "special" }, () => { app.queen = {}; render(); }, t("useQueen")),
      );
    if (can.includes("king")) buttons.push(moveButton("act-king", { class: "special" }, () => send({ type: "king" }), t("useKing")));
    if (can.includes("discard")) buttons.push(moveButton("act-discard", { class: "secondary" }, () => send({ type: "discard" }), t("discardIt")));
  }
  // Beside two moves, the bulb alone, and the plain move as wide as its word: one row on a small phone.
  const bulb = hintOffered(r, me, myTurn) && buttons.length >= 2;
  if (hintOffered(r, me, myTurn)) buttons.push(hintButton(bulb));
  if (app.queen) buttons.push(h("button", { class: "secondary", "data-key": "act-cancel", onclick: () => { app.queen = null; render(); } }, t("cancel")));
  return h("div", { class: `actions${bulb ? " with-bulb" : ""}` }, buttons);
}

function reactionBar() {
  return h(
    "div",
    { class: "reactions", role: "group", "aria-label": t("reactions") },
    REACTIONS.map((emoji) =>
      h("button", { class: "emoji", "data-key": `react-${emoji}`, "aria-label": t("react", emoji), onclick: () => send({ type: "react", emoji }) }, emoji),
    ),
  );
}

/** The deal's peek, in the piles' place: nothing may cover the cards it shows. */
function peekPanel() {
  const { room, you } = scene.state;
  const ends = clockIn("peek_ends_in");
  const me = you.seat;
  const ready = me !== null && room.seats[me]?.ready;
  return h(
    "div",
    { class: "peek-panel", role: "region", "aria-labelledby": "peek-title" },
    // A spectator has no cards to remember: they are told what the players are doing.
    h("h2", { id: "peek-title" }, me === null ? t("peekTitleWatching") : t("peekTitle"), ends ? h("span", { class: "countdown peek-ends", dataset: { ends: String(ends) } }) : null),
    // (A tutorial's prompt says it: its peek waits for Ready.)
    you.lesson ? null : h("p", {}, me === null ? t("peekHintWatching") : t("peekHint")),
    me === null
      ? null
      : ready
        ? h("p", { class: "waiting" }, t("waitingOthers"))
        : h("button", { class: "primary", "data-key": "ready", onclick: () => send({ type: "ready" }) }, t("ready")),
  );
}
