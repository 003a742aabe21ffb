// Lobby: the link to share, the seats, the host's options.

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { actions, app } from "../state.js";
import { confirmLeave, historyPanel, toast, topButtons } from "../ui.js";

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
  const select = (key, values, label, fmt) =>
    h(
      "label",
      { class: "option" },
      h("span", {}, label),
      h(
        "select",
        {
          "data-key": `opt-${key}`,
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
    ),
    h(
      "div",
      { class: "card-panel" },
      h("h2", {}, `${t("players")} (${room.seats.length}/8)`),
      h(
        "ul",
        { class: "seats" },
        room.seats.map((s, i) =>
          h(
            "li",
            {},
            h("span", { class: `dot ${s.connected ? "on" : "off"}`, title: s.connected ? t("connected") : t("away") }),
            h("span", { class: "sr-only" }, s.connected ? t("connected") : t("away")),
            h("span", { class: "seat-name" }, s.name, i === you.seat ? ` (${t("you")})` : ""),
            i === room.host ? h("span", { class: "badge" }, t("host")) : null,
            isHost && i !== room.host
              ? h(
                  "button",
                  {
                    class: "small danger",
                    "data-key": `kick-${i}`,
                    "aria-label": t("kickLabel", s.name),
                    onclick: () => send({ type: "kick", seat: i }),
                  },
                  t("kick"),
                )
              : null,
          ),
        ),
      ),
      room.spectators ? h("p", { class: "muted" }, t("spectators", room.spectators)) : null,
    ),
    h(
      "div",
      { class: "card-panel" },
      h("h2", {}, t("options")),
      select("score_limit", [50, 100, 150], t("scoreLimit"), (v) => String(v)),
      select("turn_seconds", [30, 45, 60, null], t("turnTimer"), (v) => (v ? t("seconds", v) : t("none"))),
      select("discard_draw", [false, true], t("discardDraw"), (v) => (v ? t("on") : t("off"))),
    ),
    isHost
      ? h(
          "button",
          { class: "primary big", "data-key": "start", disabled: !canStart, onclick: () => send({ type: "start" }) },
          t("start"),
        )
      : h("p", { class: "muted center" }, t("waitingForHost", hostName)),
    !canStart && isHost ? h("p", { class: "muted center" }, t("needPlayers")) : null,
    historyPanel(),
    h("button", { class: "link danger", "data-key": "leave", onclick: () => confirmLeave() }, t("leave")),
  );
}
