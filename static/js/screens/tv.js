// The big screen (/tv/CODE): a room's table on a TV, a laptop on a projector or a tablet propped up, for
// friends in one living room who hold their hands on their phones. It is a spectator: it is sent only what
// every spectator is sent, and shows it landscape and large enough to follow from the sofa. It needs no
// input: it follows the room through its rounds, games and rematches, reconnects by itself (net.js), keeps
// the screen awake and plays the table's sounds (on by default here, with its own switch).

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { effectSwitches } from "../effects.js";
import { actions, app, clockIn, effects } from "../state.js";
import { standingsPanel } from "../standings.js";
import { langPicker, robot, tvLink } from "../ui.js";
import { callerLine, endLine, roundTable, scoreboard } from "./results.js";
import { liveScene, roundLabel, tableScreen } from "./table.js";

/** How long a round's hands lie face up on the big screen before its results (a phone: 2.2 s). */
export const TV_REVEAL_MS = 4500;

/** The page is a big screen: its look (the `tv` class sizes everything from the screen's height) and its
 * sound, on unless turned off here. */
export function watchOnTv() {
  document.documentElement.classList.add("tv");
  effects.bigScreen(() => actions.render());
}

/** A link as read aloud from a screen: no scheme, no trailing slash. */
export function shortLink(link) {
  return link.replace(/^https?:\/\//, "").replace(/\/$/, "");
}

export function tvScreen() {
  if (app.tvGone) return tvGone();
  const s = app.state;
  if (!s) return h("section", { class: "screen tv-screen tv-waiting" }, h("p", { class: "tv-notice" }, t("connecting")));
  if (s.room.phase === "lobby") return tvLobby();
  return tableScreen({ ...liveScene(), tv: true, bar: tvBar(), results: tvResults, foot: crispFlash() });
}

/** The bar: the room, the round, how to join, the sound switch and the language. */
function tvBar() {
  const { room, table } = app.state;
  const r = table?.round ?? null;
  return h(
    "header",
    { class: "bar tv-bar" },
    h("span", { class: "brand" }, "Crisp"),
    h("span", { class: "code-badge" }, room.code),
    roundLabel(r),
    table ? h("span", { class: "tv-limit" }, t("limitWatching", table.options.score_limit)) : null,
    h("span", { class: "spacer" }),
    effects.audioHeld() ? h("span", { class: "tv-sound-held", role: "status" }, t("tvSoundHeld")) : null,
    // The sound switch alone: a TV does not vibrate.
    effectSwitches(effects, () => actions.render())[0],
    langPicker("code"),
  );
}

/** The lobby, large: the QR code and the link to join, and who has joined. */
function tvLobby() {
  const { room } = app.state;
  const hostName = room.seats[room.host]?.name ?? "";
  const full = room.seats.length >= 8;
  return h(
    "section",
    { class: "screen tv-screen tv-lobby" },
    tvBar(),
    h(
      "div",
      { class: "tv-lobby-body" },
      h(
        "div",
        { class: "tv-join" },
        h("h1", {}, full ? t("tvRoomFull") : t("tvScanToJoin")),
        full ? null : h("img", { class: "qr", src: `/api/rooms/${encodeURIComponent(room.code)}/qr.svg`, alt: t("qrAlt"), width: 300, height: 300 }),
        full ? null : h("p", { class: "tv-link" }, shortLink(room.link)),
      ),
      h(
        "div",
        { class: "tv-players" },
        h("h2", {}, `${t("players")} (${room.seats.length}/8)`),
        h(
          "ul",
          {},
          room.seats.map((s, i) =>
            h(
              "li",
              { class: s.connected || s.bot ? "" : "away" },
              s.bot ? robot(s) : null,
              h("span", { class: "seat-name" }, s.name),
              i === room.host ? h("span", { class: "badge", title: t("host"), "aria-label": t("host") }, "★") : null,
            ),
          ),
        ),
        h("p", { class: "tv-wait" }, room.seats.length >= 2 ? t("waitingForHost", hostName) : t("needPlayers")),
        h("p", { class: "tv-options" }, optionsLine(room.options)),
      ),
    ),
  );
}

/** The game's options in one line: "Score limit 100 · Turn timer 30 s · Drawing from the discard pile: on". */
function optionsLine(o) {
  return [
    `${t("scoreLimit")} ${o.score_limit}`,
    `${t("turnTimer")} ${o.turn_seconds === null ? t("none") : t("seconds", o.turn_seconds)}`,
    t("optionIs", t("discardDraw"), t(o.discard_draw ? "on" : "off")),
  ].join(" · ");
}

/** A round's end on the big screen: its hands, sums and points beside the scores so far, and when the next
 * round comes; the game's end: the winner, the scores beside the evening's standings. */
function tvResults() {
  const { room, table } = app.state;
  const r = table.round;
  const over = room.phase === "game_over";
  const winners = table.winners;
  const ends = clockIn("next_round_in");
  const title = over
    ? winners.length > 1
      ? `${t("sharedWin")}`
      : `${t("winner")}: ${room.seats[winners[0]]?.name ?? ""}`
    : t("roundOver");
  return h(
    "div",
    { class: "overlay results tv-results", role: "region", "aria-labelledby": "results-title" },
    h("h2", { id: "results-title" }, title),
    over ? endLine(table, room) : callerLine(r, room),
    h(
      "div",
      { class: "tv-results-body" },
      // The game's end: every round's points beside the evening's standings; a round's: its hands beside them.
      h("div", { class: "tv-round" }, over ? scoreboard(table, room) : roundTable(r, table, room, over)),
      h("div", { class: "tv-scores" }, over ? standingsPanel() : scoreboard(table, room)),
    ),
    over
      ? h("p", { class: "tv-wait" }, t("waitingRematch", room.seats[room.host]?.name ?? ""))
      : ends
        ? h("p", { class: "tv-wait countdown", dataset: { ends: String(ends), format: "next" } })
        : null,
  );
}

/** "Ana calls Crisp!" across the table for a moment after the call. */
function crispFlash() {
  const flash = app.crispFlash;
  if (!flash || flash.until <= performance.now()) return null;
  const name = app.state.room.seats[flash.seat]?.name ?? "";
  return h("div", { class: "crisp-flash", "aria-hidden": "true" }, t("tvCrispCalled", name));
}

/** The room closed (or was never there): said large, with the way home. */
function tvGone() {
  return h(
    "section",
    { class: "screen tv-screen tv-gone" },
    h("p", { class: "brand" }, "Crisp"),
    h("h1", { class: "tv-notice" }, app.tvGone.notice),
    h("p", {}, t("tvGoneHint")),
    h("a", { class: "link", href: "/" }, t("tvHome")),
  );
}

/** The lobby's "Show on a big screen": the big screen's address, as a QR code and as text to type, to open
 * on a TV's browser, a laptop on a projector or a tablet (any player may open it: it shows no hand). */
export function openBigScreen(room) {
  const link = tvLink(room.link);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      copied.textContent = t("copied");
    } catch {
      copied.textContent = link;
    }
  };
  const copied = h("p", { class: "muted", role: "status" });
  const dialog = h(
    "dialog",
    { class: "confirm big-screen-dialog", "aria-labelledby": "big-screen-title", "aria-describedby": "big-screen-how" },
    h("h2", { id: "big-screen-title" }, t("showOnBigScreen")),
    h("p", { id: "big-screen-how" }, t("bigScreenHow")),
    h("img", { class: "qr", src: `/api/rooms/${encodeURIComponent(room.code)}/qr.svg?for=tv`, alt: t("bigScreenQrAlt"), width: 160, height: 160 }),
    h("p", { class: "link-text", "data-key": "big-screen-link" }, shortLink(link)),
    copied,
    // The host may make the phones' table compact at once: the big screen shows the rest.
    app.state?.you?.host
      ? h(
          "label",
          { class: "option big-screen-compact" },
          h("input", {
            type: "checkbox",
            "data-key": "big-screen-compact",
            checked: Boolean(room.options.big_screen),
            onchange: (e) => actions.send({ type: "options", big_screen: e.target.checked }),
          }),
          h("span", {}, t("bigScreenCompact")),
        )
      : null,
    h(
      "div",
      { class: "row confirm-buttons" },
      h("button", { class: "secondary", "data-key": "big-screen-copy", onclick: copy }, t("copyLink")),
      h("a", { class: "button secondary", href: link, target: "_blank", rel: "noopener", "data-key": "big-screen-open" }, t("bigScreenOpen")),
      h("button", { class: "primary", "data-key": "big-screen-close", onclick: () => dialog.close() }, t("close")),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
