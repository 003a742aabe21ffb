// Home: create a room, or join one (opening /r/CODE fills the code in).

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { actions, app } from "../state.js";
import { goneGamesPanel, topButtons } from "../ui.js";

const enter = (message) => actions.enter(message);

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
    code ? [joinForm, createForm] : [createForm, joinForm],
  );
}
