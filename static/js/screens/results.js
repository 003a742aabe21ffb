// The end of a round and of the game: every hand, the points, the scores, the deck check, the rematch.

import { cardFace } from "../cards.js";
import { h } from "../dom.js";
import { cardName, t } from "../i18n.js";
import { actions, app, clockIn } from "../state.js";
import { historyPanel } from "../ui.js";

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

function scoreboard(table, room) {
  return h(
    "table",
    { class: "scores" },
    h("caption", {}, t("scoreboard")),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), room.seats.map((s) => h("th", { scope: "col" }, s.name)))),
    h(
      "tbody",
      {},
      table.scores.map((row, k) => h("tr", {}, h("th", { scope: "row" }, String(k + 1)), row.map((p) => h("td", {}, String(p))))),
    ),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, t("total")), table.totals.map((x) => h("td", {}, h("strong", {}, String(x)))))),
  );
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
    h("h2", { id: "results-title" }, title),
    over && winners.length > 1 ? h("p", {}, `${t("winners")}: ${winners.map((w) => room.seats[w]?.name).join(", ")}`) : null,
    h(
      "ul",
      { class: "hands" },
      room.seats.map((s, i) =>
        h(
          "li",
          { class: `${r.caller === i ? "caller" : ""} ${over && winners.includes(i) ? "winner" : ""}` },
          h("span", { class: "seat-name" }, s.name, r.caller === i ? h("span", { class: "badge tiny crisp-badge" }, "Crisp") : null),
          h(
            "span",
            { class: "mini-hand", role: "img", "aria-label": r.hands[i].map((c) => cardName(c)).join(", ") },
            r.hands[i].map((c) => cardFace(c, "mini")),
          ),
          h("span", { class: "sum", title: t("sum") }, String(r.sums[i])),
          h("span", { class: `points ${r.points[i] < r.sums[i] ? "good" : r.points[i] > r.sums[i] ? "bad" : ""}`, title: t("points") }, r.points[i] === r.sums[i] ? "" : r.points[i] < r.sums[i] ? "−5" : "+5"),
          h("span", { class: "total", title: t("total") }, String(table.totals[i])),
        ),
      ),
    ),
    scoreboard(table, room),
    h(
      "p",
      { class: `fair ${check || ""}` },
      check === "ok" ? `✓ ${t("deckVerified")}` : check === "fail" ? `✗ ${t("deckNotVerified")}` : t("deckChecking"),
    ),
    over
      ? you.host
        ? h("button", { class: "primary big", "data-key": "rematch", onclick: () => send({ type: "rematch" }) }, t("rematch"))
        : h("p", { class: "muted" }, t("waitingRematch", room.seats[room.host]?.name ?? ""))
      : me === null
        ? null
        : ready
          ? h("p", { class: "muted" }, t("waitingOthers"))
          : h("button", { class: "primary big", "data-key": "ready", onclick: () => send({ type: "ready" }) }, t("ready")),
    !over && ends ? h("p", { class: "muted countdown", dataset: { ends: String(ends), format: "next" } }) : null,
    over ? historyPanel() : null,
  );
}
