// Lobby: the link to share, the seats (the host adds, removes and sets the level of computer players),
// the host's options.

import { h } from "../dom.js";
import { levelName, t } from "../i18n.js";
import { actions, app } from "../state.js";
import { standingsPanel } from "../standings.js";
import { LEVELS, askName, confirmDialog, confirmLeave, historyPanel, nameField, robot, toast, topButtons, tvLink } from "../ui.js";
import { learnHref, lessonDone, lt } from "../lesson.js";
import { openBigScreen } from "./tv.js";

const send = (message) => actions.send(message);

export function lobbyScreen() {
  const { room, you } = app.state;
  const isHost = you.host;
  const hostName = room.seats[room.host]?.name ?? "";
  const canStart = room.seats.length >= 2 && room.seats.length <= 8;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(room.link);
      toast(t("copied"));
    } catch {
      toast(room.link);
    }
  };
  const share = navigator.share
    ? h(
        "button",
        {
          class: "secondary",
          "data-key": "share",
          "data-local": true,
          onclick: () => navigator.share({ title: "Crisp", url: room.link }).catch(() => {}),
        },
        t("share"),
      )
    : null;
  const opt = room.options;
  // Each option's value as the select holds it ("none" for no turn timer, "true"/"false" for a switch)
  // and back: what the select shows is always what the server last said.
  const asText = (v) => (v === null || v === undefined ? "none" : String(v));
  const fromText = (raw) => (raw === "none" ? null : raw === "true" ? true : raw === "false" ? false : Number(raw));
  const select = (key, values, label, fmt, describedBy = null) =>
    h(
      "label",
      { class: "option" },
      h("span", {}, label),
      h(
        "select",
        {
          "data-key": `opt-${key}`,
          "aria-describedby": describedBy,
          disabled: !isHost,
          onchange: (e) => send({ type: "options", ...opt, [key]: fromText(e.target.value) }),
        },
        values.map((v) => h("option", { value: asText(v), selected: asText(opt[key]) === asText(v) }, fmt(v))),
      ),
    );
  return h(
    "section",
    { class: "screen lobby" },
    topButtons(),
    h("h1", {}, t("lobby"), " ", h("span", { class: "code-badge" }, room.code)),
    h(
      "div",
      { class: "card-panel invite" },
      h("h2", {}, t("inviteFriends")),
      h("img", { class: "qr", src: `/api/rooms/${room.code}/qr.svg`, alt: t("qrAlt"), width: 160, height: 160 }),
      h("p", { class: "link-text" }, room.link),
      h(
        "div",
        { class: "row" },
        h("button", { class: "secondary", "data-key": "copy", "data-local": true, onclick: copy }, t("copyLink")),
        share,
      ),
      h(
        "button",
        { class: "link big-screen-button", "data-key": "big-screen", "data-local": true, onclick: () => openBigScreen(room) },
        h("span", { "aria-hidden": "true" }, "📺 "),
        t("showOnBigScreen"),
      ),
    ),
    h(
      "div",
      { class: "card-panel" },
      h("h2", {}, `${t("players")} (${room.seats.length}/8)`),
      h(
        "ul",
        { class: "seats" },
        room.seats.map((s, i) => seatRow(s, i, room, you)),
      ),
      isHost && room.seats.length < 8 ? addBotRow() : null,
      room.spectators ? h("p", { class: "muted" }, t("spectators", room.spectators)) : null,
    ),
    you.seat === null ? sitCard(room) : null,
    h(
      "div",
      { class: "card-panel" },
      h("h2", {}, t("options")),
      select("score_limit", [50, 100, 150], t("scoreLimit"), (v) => String(v)),
      select("turn_seconds", [30, 45, 60, null], t("turnTimer"), (v) => (v ? t("seconds", v) : t("none"))),
      select("discard_draw", [false, true], t("discardDraw"), (v) => (v ? t("on") : t("off"))),
      select("stand_in", [null, 30, 60], t("standIn"), (v) => (v ? t("seconds", v) : t("off")), "stand-in-help"),
      h("p", { class: "option-help", id: "stand-in-help" }, t("standInHelp")),
      select("big_screen", [false, true], t("bigScreen"), (v) => (v ? t("on") : t("off")), "big-screen-help"),
      h(
        "p",
        { class: "option-help", id: "big-screen-help" },
        t("bigScreenHelp"),
        // Where the big screen shows the table: the join link with /r/CODE made /tv/CODE (docs/protocol.md).
        opt.big_screen ? h("span", { class: "tv-link" }, t("bigScreenAt", tvLink(room.link))) : null,
      ),
    ),
    isHost
      ? h(
          "button",
          { class: "primary big", "data-key": "start", disabled: !canStart, onclick: () => send({ type: "start" }) },
          t("start"),
        )
      : h("p", { class: "muted center" }, t("waitingForHost", hostName)),
    !canStart && isHost ? h("p", { class: "muted center" }, t("needPlayers")) : null,
    // Waiting, seated: the tutorial in a new tab (this one keeps the seat).
    you.seat !== null && !lessonDone()
      ? h("a", { class: "learn-first center", href: learnHref(), target: "_blank", rel: "noopener", "data-key": "learn-waiting" }, lt("learnWhileWaiting"))
      : null,
    standingsPanel(),
    historyPanel(),
    h("button", { class: "link danger", "data-key": "leave", onclick: () => confirmLeave() }, t("leave")),
  );
}

/** One seat: connected or not, the name, host; a computer player's robot and level, which the host
 * can change; the host's Remove (a computer player is removed, a person asked to leave). */
function seatRow(s, i, room, you) {
  const host = you.host;
  const mine = i === you.seat;
  // The host's level is a select (the robot then marks the name); everyone else sees "🤖 Hard".
  const level = !s.bot
    ? null
    : host
      ? h(
          "select",
          {
            class: "bot-level",
            "data-key": `bot-level-${i}`,
            "aria-label": t("botLevelOf", s.name),
            onchange: (e) => send({ type: "bot_level", seat: i, level: e.target.value }),
          },
          LEVELS.map((l) => h("option", { value: l, selected: l === s.bot }, levelName(l))),
        )
      : robot(s, true);
  const remove =
    host && i !== room.host
      ? h(
          "button",
          {
            class: "small danger",
            "data-key": s.bot ? `remove-bot-${i}` : `kick-${i}`,
            "aria-label": t("kickLabel", s.name),
            onclick: () => removeSeat(s),
          },
          t("kick"),
        )
      : null;
  return h(
    "li",
    { class: s.bot ? "bot-seat" : "" },
    h("span", { class: `dot ${s.connected ? "on" : "off"}`, title: s.connected ? t("connected") : t("away") }),
    h("span", { class: "sr-only" }, s.connected ? t("connected") : t("away")),
    h("span", { class: "seat-name" }, host && s.bot ? robot(s) : null, s.name, mine ? ` (${t("you")})` : ""),
    i === room.host ? h("span", { class: "badge" }, t("host")) : null,
    level || remove ? h("span", { class: "seat-controls" }, level, remove) : null,
  );
}

/** A spectator in the lobby (after a game, or a full room that has a seat again) takes a free seat. */
function sitCard(room) {
  if (room.seats.length >= 8) return h("div", { class: "card-panel" }, h("p", { class: "muted" }, t("roomFullNow")));
  return h(
    "form",
    {
      class: "card-panel sit",
      onsubmit: (e) => {
        e.preventDefault();
        const name = askName(e.target.elements.name);
        if (!name) return;
        send({ type: "sit", name });
      },
    },
    h("h2", {}, t("takeASeat")),
    h("label", { for: "name" }, t("yourName")),
    nameField(),
    h("button", { class: "primary big", type: "submit", "data-key": "sit" }, t("sitDown")),
  );
}

/** Remove a computer player or ask a person to leave, once the host confirms. The seats may move while the
 * question is open (someone leaves): the seat is found again by its name, and nothing happens if it went. */
async function removeSeat(seat) {
  const question = seat.bot ? t("removeBotConfirm", seat.name) : t("kickConfirm", seat.name);
  if (!(await confirmDialog(question, null, t("kick")))) return;
  const seats = app.state?.room?.seats ?? [];
  const index = seats.findIndex((s) => s.name === seat.name);
  if (index < 0 || app.state.room.phase !== "lobby") return;
  send(seats[index].bot ? { type: "remove_bot", seat: index } : { type: "kick", seat: index });
}

/** The host's "add a computer player" (while a seat is free): its level, then the button. */
function addBotRow() {
  const chosen = app.newBotLevel ?? "normal";
  return h(
    "div",
    { class: "add-bot" },
    h(
      "select",
      {
        "data-key": "new-bot-level",
        "aria-label": t("newBotLevel"),
        onchange: (e) => {
          app.newBotLevel = e.target.value;
        },
      },
      LEVELS.map((l) => h("option", { value: l, selected: l === chosen }, levelName(l))),
    ),
    h(
      "button",
      {
        class: "secondary",
        "data-key": "add-bot",
        "aria-label": t("addBotLabel"),
        onclick: () => send({ type: "add_bot", level: app.newBotLevel ?? "normal" }),
      },
      h("span", { "aria-hidden": "true" }, "+\u00a0"),
      t("addBot"),
    ),
  );
}
