// Home: create a room, join one (opening /r/CODE fills the code in), or play against computer players at
// once.

import { h } from "../dom.js";
import { levelName, t } from "../i18n.js";
import { actions, app } from "../state.js";
import { LEVELS, goneGamesPanel, topButtons } from "../ui.js";

const enter = (message) => actions.enter(message);

const PRACTICE_KEY = "crisp.practice";
const MAX_BOTS = 7;

/** The last game against the computer's choice, {bots, level}: three of level normal the first time. */
function practiceChoice() {
  try {
    const saved = JSON.parse(localStorage.getItem(PRACTICE_KEY) || "null");
    const bots = Number(saved?.bots);
    if (Number.isInteger(bots) && bots >= 1 && bots <= MAX_BOTS && LEVELS.includes(saved?.level)) return { bots, level: saved.level };
  } catch {
    /* no storage, or something else stored there */
  }
  return { bots: 3, level: "normal" };
}

function chosen(form) {
  return { bots: Number(form.elements.bots.value), level: form.elements.level.value };
}

function savePracticeChoice(choice) {
  try {
    localStorage.setItem(PRACTICE_KEY, JSON.stringify(choice));
  } catch {
    /* no storage */
  }
}

export function homeScreen() {
  const session = app.session;
  const code = app.joinCode;
  const nameField = (id) =>
    h("input", {
      id,
      name: "name",
      autocomplete: "nickname",
      maxlength: 20,
      required: true,
      "data-key": id,
      value: localStorage.getItem("crisp.name") || "",
    });
  const remember = (form) => {
    const name = form.elements.name.value.trim();
    try {
      localStorage.setItem("crisp.name", name);
    } catch {
      /* no storage */
    }
    return name;
  };
  const createForm = h(
    "form",
    {
      class: "card-panel",
      onsubmit: (e) => {
        e.preventDefault();
        const name = remember(e.target);
        if (name) enter({ type: "create", name });
      },
    },
    h("h2", {}, t("createRoom")),
    h("label", { for: "create-name" }, t("yourName")),
    nameField("create-name"),
    h("button", { class: "primary big", type: "submit", "data-key": "create", disabled: app.busy }, t("createRoom")),
  );
  const choice = practiceChoice();
  // A room with computer players only besides you: the game starts as soon as the room is made.
  const practiceForm = h(
    "form",
    {
      class: "card-panel practice",
      // Kept as it is chosen: the home screen is drawn again when the language changes.
      onchange: (e) => savePracticeChoice(chosen(e.currentTarget)),
      onsubmit: (e) => {
        e.preventDefault();
        const name = remember(e.target);
        if (name) enter({ type: "create", name, ...chosen(e.target) });
      },
    },
    h("h2", {}, t("playComputer")),
    h("p", { class: "muted" }, t("playComputerHint")),
    h("label", { for: "practice-name" }, t("yourName")),
    nameField("practice-name"),
    h(
      "label",
      { class: "option" },
      h("span", {}, t("computerPlayers")),
      h(
        "select",
        { name: "bots", "data-key": "practice-bots" },
        Array.from({ length: MAX_BOTS }, (_, k) => k + 1).map((n) => h("option", { value: n, selected: n === choice.bots }, String(n))),
      ),
    ),
    h(
      "fieldset",
      { class: "levels" },
      h("legend", {}, t("level")),
      LEVELS.map((level) =>
        h(
          "label",
          { class: "level-choice" },
          h("input", { type: "radio", name: "level", value: level, checked: level === choice.level, "data-key": `practice-${level}` }),
          h("span", {}, levelName(level)),
        ),
      ),
    ),
    h("button", { class: "primary big", type: "submit", "data-key": "practice", disabled: app.busy }, t("playNow")),
  );
  const info = app.roomInfo && app.roomInfo.code === code ? app.roomInfo : null;
  // A friend who comes after the start (or to a full room) cannot join: watching is what is offered.
  const late = Boolean(info && !info.joinable);
  const joinForm = h(
    "form",
    {
      class: "card-panel",
      onsubmit: (e) => {
        e.preventDefault();
        if (late) return enter({ type: "watch", room: code });
        const name = remember(e.target);
        const room = e.target.elements.code.value.trim().toUpperCase();
        if (name && room) enter({ type: "join", room, name });
      },
    },
    h("h2", {}, late ? t("watchGame") : t("joinRoom")),
    info && info.players.length ? h("p", { class: "muted" }, `${t("players")}: ${info.players.join(", ")}`) : null,
    h("label", { for: "join-code" }, t("roomCode")),
    h("input", {
      id: "join-code",
      name: "code",
      value: code,
      autocomplete: "off",
      autocapitalize: "characters",
      spellcheck: "false",
      maxlength: 8,
      required: true,
      "data-key": "join-code",
      class: "code",
    }),
    late ? null : h("label", { for: "join-name" }, t("yourName")),
    late ? null : nameField("join-name"),
    late ? null : h("button", { class: "primary big", type: "submit", "data-key": "join", disabled: app.busy }, t("join")),
    info && info.watchable
      ? [
          h("p", { class: "late" }, info.phase === "lobby" ? t("roomFullLate") : t("gameStartedLate")),
          h(
            "button",
            { class: late ? "primary big" : "secondary", type: "button", "data-key": "watch", disabled: app.busy, onclick: () => enter({ type: "watch", room: code }) },
            t("watch"),
          ),
        ]
      : null,
  );
  const back =
    session && !app.notice
      ? h(
          "button",
          {
            class: "primary big",
            "data-key": "resume",
            onclick: () => enter({ type: "resume", room: session.room, token: session.token }),
          },
          `${t("join")} ${session.room}`,
        )
      : null;
  return h(
    "section",
    { class: "screen home" },
    topButtons(),
    h("header", { class: "hero" }, h("h1", { class: "logo" }, "Crisp"), h("p", { class: "tagline" }, t("tagline"))),
    app.notice ? h("p", { class: "notice", role: "alert" }, app.notice) : null,
    goneGamesPanel(),
    back,
    code ? [joinForm, createForm, practiceForm] : [createForm, practiceForm, joinForm],
  );
}
