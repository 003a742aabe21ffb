// The end of a round and of the game: every hand, the points, the scores, the deck check, the rematch.

import { lessonPanel } from "../lesson.js";
import { cardFace } from "../cards.js";
import { h } from "../dom.js";
import { cardName, listOf, t } from "../i18n.js";
import { actions, app, clockIn } from "../state.js";
import { standingsPanel } from "../standings.js";
import { historyPanel, openRules, robot } from "../ui.js";

const send = (message) => actions.send(message);

/** Check the revealed deck against the commitment sent at the deal (SHA-256 in the browser). */
export async function checkDeck(fair) {
  if (!fair || !fair.salt || !fair.deck || app.fair[fair.round]) return;
  app.fair[fair.round] = "checking";
  try {
    const data = new TextEncoder().encode(fair.salt + fair.deck.join(""));
    const digest = await crypto.subtle.digest("SHA-256", data);
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    const complete = new Set(fair.deck).size === 52 && fair.deck.length === 52;
    app.fair[fair.round] = hex === fair.commitment && complete ? "ok" : "fail";
  } catch {
    app.fair[fair.round] = "fail"; // SubtleCrypto needs a secure context (https or localhost)
  }
  actions.render();
}

/** This round, one row per player: the cards, their sum, the caller's bonus, the round's points, the total. */
export function roundTable(r, table, room, over) {
  const winners = table.winners;
  const head = ["player", "cards", "sum", "crispBonus", "roundPoints", "totalShort"];
  return h(
    "table",
    { class: "round-table" },
    h("caption", { class: "sr-only" }, t("roundOver")),
    h("thead", {}, h("tr", {}, head.map((k, i) => h("th", { scope: "col", class: `col-${k}`, abbr: k === "totalShort" ? t("total") : null }, i === 0 ? h("span", { class: "sr-only" }, t(k)) : t(k))))),
    h(
      "tbody",
      {},
      room.seats.map((s, i) => {
        const bonus = r.points[i] - r.sums[i];
        return h(
          "tr",
          { class: `${r.caller === i ? "caller" : ""} ${over && winners.includes(i) ? "winner" : ""}` },
          h("th", { scope: "row" }, h("span", { class: "seat-name" }, over && winners.includes(i) ? "★ " : null, s.bot ? robot(s) : null, s.name)),
          h("td", { class: "col-cards" }, h("span", { class: "mini-hand", role: "img", "aria-label": r.hands[i].map((c) => cardName(c)).join(", ") }, r.hands[i].map((c) => cardFace(c, "mini")))),
          h("td", {}, String(r.sums[i])),
          h(
            "td",
            { class: `points ${bonus < 0 ? "good" : bonus > 0 ? "bad" : ""}` },
            r.caller === i ? h("span", { class: "badge tiny crisp-badge" }, "Crisp") : null,
            bonus ? h("span", { class: "bonus" }, `${bonus < 0 ? "−" : "+"}${Math.abs(bonus)}`) : null,
          ),
          h("td", {}, String(r.points[i])),
          h("td", { class: "total" }, String(table.totals[i])),
        );
      }),
    ),
  );
}

/** Why the caller got -5 or +5, in words (null in a round nobody called), with `seats` the room's seats. */
export function callerText(r, seats) {
  if (r.caller === null || r.caller === undefined) return null;
  const name = seats[r.caller]?.name ?? "";
  const bonus = r.points[r.caller] - r.sums[r.caller];
  if (bonus < 0) return t("callerAlone", name);
  const rivals = seats.map((_, i) => i).filter((i) => i !== r.caller && r.sums[i] <= r.sums[r.caller]);
  return t("callerBeaten", name, listOf(rivals.map((i) => seats[i]?.name ?? "")), rivals.length);
}

export function callerLine(r, room) {
  const text = callerText(r, room.seats);
  return text ? h("p", { class: "caller-line" }, text) : null;
}

/** Why the game ended: who reached the score limit ("Ben reached the limit of 50 points"). */
export function endLine(table, room) {
  const limit = table.options.score_limit;
  const reached = room.seats.map((_, i) => i).filter((i) => table.totals[i] >= limit);
  if (!reached.length) return null;
  const names = reached.map((i) => `${room.seats[i]?.name ?? ""} (${table.totals[i]})`);
  return h("p", { class: "end-line" }, t("gameEndedBy", listOf(names), limit, reached.length));
}

/** Every round's points so far, one row per player (a long game scrolls sideways inside its box). */
export function scoreboard(table, room) {
  return h(
    "div",
    { class: "scroll-x" },
    h(
      "table",
      { class: "scores" },
      h("caption", {}, t("scoreboardTo", table.options.score_limit)),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("player"))), table.scores.map((_, k) => h("th", { scope: "col" }, t("roundShort", k + 1))), h("th", { scope: "col", abbr: t("total") }, t("totalShort")))),
      h(
        "tbody",
        {},
        room.seats.map((s, i) => h("tr", {}, h("th", { scope: "row" }, h("span", { class: "seat-name" }, s.bot ? robot(s) : null, s.name)), table.scores.map((row) => h("td", {}, String(row[i]))), h("td", {}, h("strong", {}, String(table.totals[i]))))),
      ),
    ),
  );
}

function fairLine(check) {
  const how = h("button", { class: "link how", "data-key": "fair-how", "data-local": true, onclick: () => openRules("rules-online") }, t("fairHow"));
  if (check === "ok") return h("p", { class: "fair ok" }, `✓ ${t("deckVerifiedPlain")} `, how);
  if (check === "fail") return h("p", { class: "fair fail" }, `✗ ${t("deckNotVerifiedPlain")} `, how);
  return h("p", { class: "fair" }, t("deckChecking"));
}

/** The game just ended, watched again: its replay, once the room's list of games names it. */
function replayLink(room) {
  const newest = app.history?.code === room.code ? app.history.games[0] : null;
  if (!newest || app.state.you.seat === null) return null;
  return h("a", { class: "link replay-link", href: `/g/${encodeURIComponent(newest.id)}`, "data-key": "watch-replay" }, t("watchReplay"));
}

export function roundOverlay() {
  const { room, table, you } = app.state;
  const r = table.round;
  const over = room.phase === "game_over";
  const me = you.seat;
  const fair = room.fair;
  const check = fair ? app.fair[fair.round] : null;
  const winners = table.winners;
  const ends = clockIn("next_round_in");
  const ready = me !== null && room.seats[me]?.ready;
  let title = t("roundOver");
  if (over) title = winners.includes(me) ? t("youWon") : winners.length > 1 ? t("sharedWin") : `${t("winner")}: ${room.seats[winners[0]]?.name}`;
  return h(
    "div",
    { class: "overlay results", role: "dialog", "aria-modal": "false", "aria-labelledby": "results-title" },
    h(
      "div",
      { class: "results-body" },
      h("h2", { id: "results-title" }, title),
      over && winners.length > 1 ? h("p", {}, `${t("winners")}: ${listOf(winners.map((w) => room.seats[w]?.name ?? ""))}`) : null,
      over ? endLine(table, room) : null,
      callerLine(r, room),
      roundTable(r, table, room, over),
      fairLine(check),
      scoreboard(table, room),
      over ? standingsPanel() : null,
      over ? historyPanel() : null,
    ),
    // The way on stays in sight, however long the lists above.
    h(
      "div",
      { class: "results-foot" },
      you.lesson
        ? lessonPanel()
        : over
        ? you.host
          ? h("button", { class: "primary big", "data-key": "rematch", onclick: () => send({ type: "rematch" }) }, t("rematch"))
          : h("p", { class: "muted" }, t("waitingRematch", room.seats[room.host]?.name ?? ""))
        : me === null
          ? null
          : ready
            ? h("p", { class: "muted" }, t("waitingOthers"))
            : h("button", { class: "primary big", "data-key": "ready", onclick: () => send({ type: "ready" }) }, t("ready")),
      !over && ends ? h("p", { class: "muted countdown", dataset: { ends: String(ends), format: "next" } }) : null,
      over ? replayLink(room) : null,
    ),
  );
}
