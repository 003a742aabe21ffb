// The table: the other players' seats, the piles, your hand, the moves you may make, the peek at the deal.

import { cardFace, spoken } from "../cards.js";
import { h } from "../dom.js";
import { cardName, getLang, slotName, t } from "../i18n.js";
import { SLOTS, actions, app, clockIn, effects, mySeat } from "../state.js";
import { confirmLeave, langButton, openRules, ring } from "../ui.js";
import { roundOverlay } from "./results.js";

const REACTIONS = ["👍", "👏", "😂", "😮", "😬", "🤔", "🔥", "🍀"];

const send = (message) => actions.send(message);
const render = () => actions.render();

export function tableScreen() {
  const { room, table, you } = app.state;
  const r = table.round;
  const me = you.seat;
  const n = room.seats.length;
  const order = me === null ? [...Array(n).keys()] : [...Array(n - 1).keys()].map((k) => (me + 1 + k) % n);
  const phase = room.phase;
  const myTurn = phase === "play" && r && r.turn === me;
  return h(
    "section",
    { class: `screen table phase-${phase} seats-${n}` },
    tableBar(),
    h("div", { class: "opponents", role: "list" }, order.map((s) => seatBox(s))),
    centerArea(r, me, myTurn),
    promptLine(r, me, myTurn),
    me === null ? h("p", { class: "spectating" }, t("spectating")) : myHand(r, me, myTurn),
    actionBar(r, me, myTurn),
    h("p", { class: "event-line", "aria-live": "polite" }, app.lines.slice(-2).map((l) => h("span", {}, l))),
    me === null ? null : reactionBar(),
    phase === "peek" ? peekOverlay() : null,
    phase === "round_over" || phase === "game_over" ? roundOverlay() : null,
  );
}

function tableBar() {
  const { room, table } = app.state;
  const r = table.round;
  return h(
    "header",
    { class: "bar" },
    h("span", { class: "code-badge small" }, room.code),
    r ? h("span", {}, t("round", r.index + 1)) : null,
    h("span", { class: "spacer" }),
    h("button", { class: "link", "data-key": "rules", onclick: () => openRules() }, "?", h("span", { class: "sr-only" }, t("howToPlay"))),
    langButton(getLang() === "de" ? "EN" : "DE"),
    h(
      "button",
      {
        class: "link",
        "data-key": "sound",
        "aria-label": t("sound"),
        "aria-pressed": effects.sound ? "true" : "false",
        onclick: () => {
          effects.toggleSound();
          render();
        },
      },
      effects.sound ? "🔊" : "🔈",
    ),
    h("button", { class: "link danger", "data-key": "leave", onclick: () => confirmLeave() }, t("leave")),
  );
}

function seatBox(seat) {
  const { room, table } = app.state;
  const r = table.round;
  const info = room.seats[seat];
  const turn = r && !r.ended && r.turn === seat && room.phase === "play";
  const hand = r?.hands?.[seat];
  const picking = app.queen && app.queen.slot;
  const cards = SLOTS.map((slot, i) => {
    const code = hand ? hand[i] : null;
    if (picking && seat !== mySeat()) {
      return h(
        "button",
        {
          class: "mini-card target",
          "data-key": `target-${seat}-${slot}`,
          "aria-label": t("theirCard", info.name, slotName(slot)),
          onclick: () => {
            send({ type: "queen", slot: app.queen.slot, target: seat, target_slot: slot });
            app.queen = null;
          },
        },
        cardFace(null, "mini"),
      );
    }
    return h("span", { class: "mini-card", role: "img", "aria-label": `${t("theirCard", info.name, slotName(slot))}: ${spoken(code)}` }, cardFace(code, "mini"));
  });
  const floating = app.reactions.filter((x) => x.seat === seat && x.until > performance.now());
  const deadline = clockIn("deadline_in") ?? clockIn("auto_timeout_in");
  const status = info.left ? t("leftGame") : !info.connected ? t("away") : null;
  return h(
    "div",
    { class: `seat ${turn ? "turn" : ""} ${info.connected ? "" : "away"} ${info.left ? "gone" : ""}`, role: "listitem" },
    h(
      "div",
      { class: "seat-head" },
      h("span", { class: `dot ${info.connected && !info.left ? "on" : "off"}`, "aria-hidden": "true" }),
      h("span", { class: "seat-name" }, info.name, status ? h("span", { class: "sr-only" }, `, ${status}`) : null),
      seat === room.host ? h("span", { class: "badge tiny", title: t("host") }, "★") : null,
      r && r.caller === seat ? h("span", { class: "badge tiny crisp-badge" }, "Crisp") : null,
      turn && r.drawn ? h("span", { class: "holding", title: t("drawnBy", info.name) }, cardFace(r.drawn.card, "micro")) : null,
      turn && deadline ? ring(deadline, (app.state.table.options.turn_seconds ?? 60) * 1000, t("turnOf", info.name)) : null,
      h("span", { class: "total", "aria-label": `${t("total")}: ${table.totals[seat] ?? 0}` }, String(table.totals[seat] ?? 0)),
    ),
    h("div", { class: "mini-hand" }, cards),
    floating.map((x) => h("span", { class: "float-reaction", "aria-hidden": "true" }, x.emoji)),
  );
}

function centerArea(r, me, myTurn) {
  if (!r) return null;
  const can = app.state.you.can;
  const top = r.discard.length ? r.discard[r.discard.length - 1] : null;
  const drawnCard = app.state.you.drawn_card ?? (r.drawn && r.turn === me ? r.drawn.card : null);
  return h(
    "div",
    { class: "center" },
    h(
      "button",
      {
        class: "pile draw-pile",
        "data-key": "draw-pile",
        disabled: !can.includes("draw_deck"),
        "aria-label": t("drawPileCount", r.draw_pile),
        onclick: () => send({ type: "draw", from: "deck" }),
      },
      cardFace(null),
      h("span", { class: "count" }, String(r.draw_pile)),
    ),
    h(
      "div",
      { class: "drawn", "aria-live": "polite" },
      myTurn && drawnCard
        ? h("div", { class: "drawn-card" }, h("span", { class: "sr-only" }, `${t("youDrew")}: ${cardName(drawnCard)}`), cardFace(drawnCard, "big pop"))
        : null,
    ),
    h(
      "button",
      {
        class: "pile discard-pile",
        "data-key": "discard-pile",
        disabled: !can.includes("draw_discard"),
        "aria-label": top ? t("discardTop", cardName(top)) : t("discardEmpty"),
        onclick: () => send({ type: "draw", from: "discard" }),
      },
      top ? cardFace(top) : h("span", { class: "card empty", "aria-hidden": "true" }),
    ),
  );
}

function promptLine(r, me, myTurn) {
  if (!r || app.state.room.phase !== "play") return h("p", { class: "prompt" });
  const { room, you } = app.state;
  const can = you.can;
  let text;
  if (app.queen && app.queen.slot) text = t("queenPickTheirs");
  else if (app.queen) text = t("queenPickMine");
  else if (myTurn && can.includes("swap") && !can.includes("discard") && !can.includes("jack") && !can.includes("queen")) text = t("mustSwapHint");
  else if (myTurn && can.includes("swap")) text = t("swapHint");
  else if (myTurn) text = t("yourTurn");
  else text = t("turnOf", room.seats[r.turn]?.name ?? "");
  const bits = [h("span", { class: "prompt-text" }, text)];
  if (r.extra_moves > 0) bits.push(h("span", { class: "badge" }, t("extraMoves", r.extra_moves)));
  if (r.caller !== null) bits.push(h("span", { class: "badge crisp-badge" }, t("finalTurns", room.seats[r.caller]?.name ?? "")));
  const mayDraw = clockIn("may_draw_in");
  if (myTurn && mayDraw && mayDraw > performance.now() + 50) bits.push(h("span", { class: "countdown muted", dataset: { ends: String(mayDraw) } }));
  const deadline = clockIn("deadline_in");
  if (myTurn && deadline) bits.push(ring(deadline, (app.state.table.options.turn_seconds ?? 60) * 1000, t("yourTurn")));
  return h("p", { class: `prompt ${myTurn ? "mine" : ""}` }, bits);
}

function myHand(r, me, myTurn) {
  const can = app.state.you.can;
  const mine = app.reactions.filter((x) => x.seat === me && x.until > performance.now());
  const hand = r?.hands?.[me];
  const swapping = myTurn && can.includes("swap") && !app.queen;
  const pickingQueen = app.queen && !app.queen.slot;
  const now = performance.now();
  return h(
    "div",
    { class: "my-hand" },
    SLOTS.map((slot, i) => {
      const peek = app.peeks[slot];
      const shown = hand ? hand[i] : peek && peek.until > now ? peek.card : null;
      const active = swapping || pickingQueen;
      const label = `${t("yourCard", slotName(slot))}${shown ? `: ${cardName(shown)}` : ""}`;
      return h(
        "button",
        {
          class: `slot ${active ? "active" : ""} ${shown && !hand ? "peeking" : ""}`,
          "data-key": `slot-${slot}`,
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
        h("span", { class: "slot-name", "aria-hidden": "true" }, slotName(slot)),
      );
    }),
    mine.map((x) => h("span", { class: "float-reaction", "aria-hidden": "true" }, x.emoji)),
  );
}

function actionBar(r, me, myTurn) {
  if (!r || me === null) return null;
  const can = app.state.you.can;
  const buttons = [];
  if (can.includes("crisp")) {
    const ends = clockIn("window_closes_in");
    buttons.push(
      h(
        "button",
        { class: "crisp-button", "data-key": "crisp", "aria-label": `${t("crisp")} ${t("crispHint")}`, onclick: () => send({ type: "crisp" }) },
        h("span", {}, t("crisp")),
        ends ? h("span", { class: "countdown", dataset: { ends: String(ends) } }) : null,
      ),
    );
  }
  if (myTurn && !app.queen) {
    if (can.includes("draw_deck")) buttons.push(h("button", { class: "primary", "data-key": "act-draw", onclick: () => send({ type: "draw", from: "deck" }) }, t("draw")));
    if (can.includes("draw_discard")) buttons.push(h("button", { class: "secondary", "data-key": "act-take", onclick: () => send({ type: "draw", from: "discard" }) }, t("takeDiscard")));
    if (can.includes("jack")) buttons.push(h("button", { class: "special", "data-key": "act-jack", onclick: () => send({ type: "jack" }) }, t("useJack")));
    if (can.includes("queen"))
      buttons.push(
        h("button", { class: "special", "data-key": "act-queen", onclick: () => { app.queen = {}; render(); } }, t("useQueen")),
      );
    if (can.includes("king")) buttons.push(h("button", { class: "special", "data-key": "act-king", onclick: () => send({ type: "king" }) }, t("useKing")));
    if (can.includes("discard")) buttons.push(h("button", { class: "secondary", "data-key": "act-discard", onclick: () => send({ type: "discard" }) }, t("discardIt")));
  }
  if (app.queen) buttons.push(h("button", { class: "secondary", "data-key": "act-cancel", onclick: () => { app.queen = null; render(); } }, t("cancel")));
  return h("div", { class: "actions" }, buttons);
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

function peekOverlay() {
  const { room, you } = app.state;
  const ends = clockIn("peek_ends_in");
  const me = you.seat;
  const ready = me !== null && room.seats[me]?.ready;
  return h(
    "div",
    { class: "overlay peek", role: "dialog", "aria-modal": "false", "aria-labelledby": "peek-title" },
    h("h2", { id: "peek-title" }, t("peekTitle")),
    h("p", {}, t("peekHint")),
    me === null
      ? null
      : ready
        ? h("p", { class: "muted" }, t("waitingOthers"))
        : h("button", { class: "primary big", "data-key": "ready", onclick: () => send({ type: "ready" }) }, t("ready")),
    ends ? h("p", { class: "countdown muted", dataset: { ends: String(ends) } }) : null,
  );
}
