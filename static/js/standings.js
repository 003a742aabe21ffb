// The evening's standings: the room's ended games summed per player (GET /api/rooms/{code}/standings), a
// compact table in the lobby and on the game-over screen. Loaded when the room reaches either, so it is
// fresh after each game; the server counts only ended games, so nothing of a running one is shown.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { actions, app } from "./state.js";

/** Fetch the room's standings and draw again; offline or refused, the last ones stay. */
export async function loadStandings(code) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(code)}/standings`);
    if (!response.ok) return;
    app.standings = { code, ...(await response.json()) };
    actions.render();
  } catch {
    /* offline: the table comes next time */
  }
}

/** Ranks as players read them: equal wins and points share a place ("1, 2, 2, 4"). */
function ranks(players) {
  const out = [];
  players.forEach((p, i) => {
    const before = players[i - 1];
    out.push(before && before.wins === p.wins && before.points === p.points ? out[i - 1] : i + 1);
  });
  return out;
}

/** The standings table of the room on screen, once at least one of its games has ended. */
export function standingsPanel() {
  const s = app.standings;
  const room = app.state?.room;
  if (!s || !room || s.code !== room.code || !s.games) return null;
  const you = app.state.you.seat;
  const myName = you !== null ? room.seats[you]?.name : null;
  const place = ranks(s.players);
  const col = (key, long) => h("th", { scope: "col", class: `col-${key}`, abbr: long ? t(long) : null }, t(key));
  return h(
    "div",
    { class: "card-panel standings" },
    h("h2", { id: "standings-title" }, t("standingsTitle")),
    h("p", { class: "muted standings-count" }, t("standingsGames", s.games, s.abandoned)),
    h(
      "table",
      { class: "standings-table", "aria-labelledby": "standings-title" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col", class: "col-rank", abbr: t("standingsRank") }, "#"),
          h("th", { scope: "col", class: "col-name" }, t("player")),
          col("standingsWins", null),
          col("standingsPoints", "standingsPointsLong"),
          col("standingsPlayed", "standingsPlayedLong"),
          col("standingsBest", "standingsBestLong"),
        ),
      ),
      h(
        "tbody",
        {},
        s.players.map((p, i) =>
          h(
            "tr",
            { class: `${place[i] === 1 && p.wins > 0 ? "leader" : ""} ${p.name === myName ? "me" : ""}` },
            h("td", { class: "col-rank" }, String(place[i])),
            h("th", { scope: "row", class: "col-name" }, h("span", { class: "seat-name", title: p.name }, p.name)),
            h("td", {}, String(p.wins)),
            h("td", {}, String(p.points)),
            h("td", {}, String(p.games)),
            h("td", {}, p.best_round === null ? [h("span", { "aria-hidden": "true" }, "–"), h("span", { class: "sr-only" }, t("standingsNoRound"))] : String(p.best_round)),
          ),
        ),
      ),
    ),
  );
}
