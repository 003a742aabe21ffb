// The Crisp web client: home, lobby, table, round end, rules. Plain ES modules, no build step.
// The server is the authority: this page shows the state it is sent and sends what the player does.

import { cardFace, cardLabel, spoken } from "./cards.js";
import { h, svg } from "./dom.js";
import { cardName, ev, getLang, setLang, slotName, t } from "./i18n.js";
import { Net, loadSession, saveSession } from "./net.js";
import { rulesSection } from "./rules.js";
import { Effects } from "./effects.js";

const SLOTS = ["left", "middle", "right"];
const PEEK_SHOW_MS = 4000; // a Jack's or Queen's peek stays visible this long
const REACTIONS = ["👍", "👏", "😂", "😮", "😬", "🤔", "🔥", "🍀"];

const app = {
  screen: "home",
  returnTo: "home",
  status: "idle",
  state: null,
  welcome: null,
  session: loadSession(),
  lines: [],
  peeks: {}, // slot -> {card, until, why}
  queen: null, // the Queen flow: {slot} once the own card is picked
  receivedAt: 0,
  reactions: [], // {seat, emoji, until}
  fair: {}, // round -> "checking" | "ok" | "fail"
  notice: null,
  unavailable: null, // the server's text while the room cannot save (a "unavailable" message), else null
  joinCode: codeFromPath(),
  roomInfo: null,
  busy: false,
  history: null, // {code, games} of the room's finished games
};

const effects = new Effects();
const net = new Net({ onMessage, onStatus });
const root = document.getElementById("app");
const statusBar = document.getElementById("status");
const toastEl = document.getElementById("toast");

function codeFromPath() {
  const m = location.pathname.match(/^\/r\/([A-Za-z0-9]{4,8})\/?$/);
  return m ? m[1].toUpperCase() : "";
}

// -- talking to the server ---------------------------------------------------------------------------

function enter(message) {
  app.busy = true;
  net.start({ ...message, lang: getLang() });
  render();
}

function send(message) {
  if (!net.send(message)) toast(t("reconnecting"));
}

function onStatus(status, code) {
  app.status = status;
  if (status === "closed" && code === 1000 && app.screen === "room" && !app.notice) {
    goHome();
  }
  renderStatus();
}

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      onWelcome(msg);
      break;
    case "update":
    case "snapshot":
      onState(msg);
      break;
    case "error":
      onError(msg);
      break;
    case "kicked":
      leaveRoom(t("kicked"));
      break;
    case "replaced":
      net.stop();
      app.notice = t("replaced");
      app.status = "closed";
      render();
      break;
    case "left":
      leaveRoom(null);
      break;
    case "restarting":
      toast(t("restarting"));
      break;
    case "unavailable":
      // The server cannot save right now: the table stays as it was, and the next update says it is back.
      app.unavailable = msg.message;
      renderStatus();
      break;
    default:
      break;
  }
}

function onWelcome(msg) {
  app.busy = false;
  app.welcome = msg;
  app.notice = null;
  if (msg.token) {
    app.session = { room: msg.room, token: msg.token };
    saveSession(app.session);
  }
  // Reconnecting later: come back to the same seat (or watch again).
  net.entry =
    msg.seat === null
      ? { type: "watch", room: msg.room, lang: getLang() }
      : { type: "resume", room: msg.room, token: app.session?.token, lang: getLang() };
  if (location.pathname !== `/r/${msg.room}`) history.replaceState(null, "", `/r/${msg.room}`);
  app.screen = "room";
}

function onError(msg) {
  app.busy = false;
  const entryFailed = !app.welcome;
  if (entryFailed && (msg.code === "bad_token" || msg.code === "room_not_found")) {
    if (app.session && app.session.room === (app.joinCode || app.session.room)) {
      saveSession(null);
      app.session = null;
    }
    net.stop();
    app.notice = msg.code === "room_not_found" ? t("roomGone") : msg.message;
    app.screen = "home";
    render();
    return;
  }
  if (entryFailed) net.stop();
  toast(msg.message);
  render();
}

function leaveRoom(notice) {
  net.stop();
  saveSession(null);
  app.session = null;
  app.notice = notice;
  goHome();
}

function goHome() {
  app.state = null;
  app.welcome = null;
  app.screen = "home";
  app.lines = [];
  app.peeks = {};
  app.queen = null;
  history.replaceState(null, "", app.joinCode && !app.notice ? `/r/${app.joinCode}` : "/");
  effects.release();
  render();
}

// -- what the server tells us ------------------------------------------------------------------------

function mySeat() {
  return app.state?.you?.seat ?? null;
}

function names() {
  return app.state?.room?.seats?.map((s) => s.name) ?? [];
}

function onState(msg) {
  const before = app.state;
  app.state = msg;
  app.unavailable = null; // nothing is published while the room is unavailable: a state means it is back
  app.receivedAt = performance.now();
  const phase = msg.room.phase;
  if (!before || before.room.phase !== phase) {
    if (phase === "lobby" || phase === "game_over") loadHistory(msg.room.code);
  }
  if (before && before.room.phase !== phase) {
    app.queen = null;
    if (phase !== "peek") dropDealPeeks();
    if (phase === "round_over" || phase === "game_over") checkDeck(msg.room.fair);
  }
  if (!msg.you.can.includes("queen")) app.queen = null;
  for (const e of msg.events || []) onEvent(e, before);
  if (phase !== "lobby") effects.keepAwake();
  else effects.release();
  if (!before && (phase === "round_over" || phase === "game_over")) checkDeck(msg.room.fair);
  render();
}

function dropDealPeeks() {
  for (const slot of SLOTS) if (app.peeks[slot]?.why === "deal") delete app.peeks[slot];
}

function onEvent(e, before) {
  const me = mySeat();
  const who = (seat) => names()[seat] ?? "?";
  let line = null;
  switch (e.type) {
    case "card_shown":
      if (e.seat === me && e.slot) {
        const until = e.why === "deal" ? Infinity : performance.now() + PEEK_SHOW_MS;
        app.peeks[e.slot] = { card: e.card, until, why: e.why };
      }
      break;
    case "drew":
      line = e.source === "discard" ? ev("drewDiscard", who(e.seat), cardName(e.card)) : ev("drewDeck", who(e.seat));
      break;
    case "swapped":
      if (e.seat === me) delete app.peeks[e.slot];
      line = ev("swapped", who(e.seat), slotName(e.slot), cardName(e.discarded));
      break;
    case "discarded":
      line = ev("discarded", who(e.seat), cardName(e.card));
      break;
    case "jack_used":
      line = ev("jack", who(e.seat));
      break;
    case "queen_used":
      // The cards that moved are no longer the ones peeked at; a card_shown for the new one follows.
      if (e.seat === me) delete app.peeks[e.slot];
      if (e.target === me) delete app.peeks[e.target_slot];
      line = ev("queen", who(e.seat), slotName(e.slot), who(e.target), slotName(e.target_slot));
      break;
    case "king_used":
      line = ev("king", who(e.seat), 2);
      break;
    case "timed_out":
      line = ev("timedOut", who(e.seat), cardName(e.discarded));
      break;
    case "pile_turned":
      line = ev("pileTurned");
      break;
    case "crisp_called":
      line = ev("crisp", who(e.seat));
      effects.signal("crisp");
      break;
    case "turn_started":
      if (e.seat === me && app.state.room.phase === "play") effects.signal("turn");
      break;
    case "round_ended":
      line = ev("roundEnded");
      app.peeks = {};
      break;
    case "joined":
      line = ev("joined", e.name);
      break;
    case "left":
      line = before ? ev("left", before.room.seats[e.seat]?.name ?? "?") : null;
      break;
    case "disconnected":
      line = ev("disconnected", who(e.seat));
      break;
    case "connected":
      if (e.seat !== me) line = ev("connected", who(e.seat));
      break;
    case "reaction":
      app.reactions.push({ seat: e.seat, emoji: e.emoji, until: performance.now() + 2500 });
      break;
    default:
      break;
  }
  if (line) {
    app.lines.push(line);
    if (app.lines.length > 30) app.lines.shift();
  }
}

async function loadHistory(code) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(code)}/games`);
    if (!response.ok) return;
    app.history = { code, games: await response.json() };
    render();
  } catch {
    /* offline: the list comes next time */
  }
}

async function downloadRecord(gameId) {
  try {
    const response = await fetch(`/api/games/${encodeURIComponent(gameId)}/record`, {
      headers: { Authorization: `Bearer ${app.session?.token ?? ""}` },
    });
    if (!response.ok) throw new Error(String(response.status));
    const url = URL.createObjectURL(await response.blob());
    const a = h("a", { href: url, download: `crisp-${gameId}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch {
    toast(t("recordUnavailable"));
  }
}

function historyPanel() {
  const games = app.history && app.state && app.history.code === app.state.room.code ? app.history.games : [];
  if (!games.length) return null;
  const myName = app.state.you.seat !== null ? app.state.room.seats[app.state.you.seat]?.name : null;
  return h(
    "div",
    { class: "card-panel history" },
    h("h2", {}, t("pastGames")),
    h(
      "ol",
      { class: "past-games" },
      games.map((g) =>
        h(
          "li",
          {},
          h(
            "span",
            { class: "past-scores" },
            g.players.map((name, i) =>
              h("span", { class: g.winners.includes(i) ? "winner" : "" }, `${g.winners.includes(i) ? "★ " : ""}${name} ${g.totals[i]}`),
            ),
          ),
          myName && g.players.includes(myName)
            ? h("button", { class: "small", "data-key": `record-${g.id}`, onclick: () => downloadRecord(g.id) }, t("downloadRecord"))
            : null,
        ),
      ),
    ),
  );
}

async function checkDeck(fair) {
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
  render();
}

// -- rendering ---------------------------------------------------------------------------------------

function toast(text) {
  toastEl.textContent = text;
  toastEl.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => toastEl.classList.remove("show"), 3500);
}

function renderStatus() {
  const s = app.status;
  const offline = s === "reconnecting" || s === "connecting";
  const show = app.screen === "room" && (offline || Boolean(app.unavailable));
  statusBar.textContent = show ? (offline ? t(s) : app.unavailable) : "";
  statusBar.classList.toggle("show", show);
  document.body.classList.toggle("offline", show);
}

function render() {
  const focusKey = document.activeElement?.dataset?.key;
  root.replaceChildren(screen());
  document.title = app.state?.room ? `Crisp · ${app.state.room.code}` : "Crisp";
  renderStatus();
  if (focusKey) root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
  tick();
}

function screen() {
  if (app.screen === "rules") return rulesScreen();
  if (app.screen === "room" && app.state) {
    return app.state.room.phase === "lobby" ? lobbyScreen() : tableScreen();
  }
  return homeScreen();
}

function topButtons() {
  return h(
    "div",
    { class: "top-buttons" },
    h("button", { class: "link", "data-key": "rules", onclick: () => openRules() }, t("howToPlay")),
    h(
      "button",
      { class: "link", "data-key": "lang", "aria-label": t("languageLabel"), onclick: () => switchLang() },
      t("language"),
    ),
    h(
      "button",
      {
        class: "link",
        "data-key": "sound",
        "aria-pressed": effects.sound ? "true" : "false",
        onclick: () => {
          effects.toggleSound();
          render();
        },
      },
      `${t("sound")}: ${effects.sound ? t("on") : t("off")}`,
    ),
    "vibrate" in navigator
      ? h(
          "button",
          {
            class: "link",
            "data-key": "vibrate",
            "aria-pressed": effects.vibrate ? "true" : "false",
            onclick: () => {
              effects.toggleVibration();
              render();
            },
          },
          `${t("vibration")}: ${effects.vibrate ? t("on") : t("off")}`,
        )
      : null,
  );
}

function switchLang() {
  setLang(getLang() === "de" ? "en" : "de");
  render();
}

function openRules() {
  app.returnTo = app.screen;
  app.screen = "rules";
  render();
  window.scrollTo(0, 0);
}

function rulesScreen() {
  return h(
    "section",
    { class: "screen rules" },
    h(
      "div",
      { class: "bar" },
      h(
        "button",
        {
          class: "link",
          "data-key": "back",
          onclick: () => {
            app.screen = app.returnTo === "rules" ? "home" : app.returnTo;
            render();
          },
        },
        `← ${t("back")}`,
      ),
      h("button", { class: "link", "data-key": "lang", "aria-label": t("languageLabel"), onclick: () => switchLang() }, t("language")),
    ),
    rulesSection(getLang()),
  );
}

// Home: create a room, or join one (opening /r/CODE fills the code in).

function homeScreen() {
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
  const joinForm = h(
    "form",
    {
      class: "card-panel",
      onsubmit: (e) => {
        e.preventDefault();
        const name = remember(e.target);
        const room = e.target.elements.code.value.trim().toUpperCase();
        if (name && room) enter({ type: "join", room, name });
      },
    },
    h("h2", {}, t("joinRoom")),
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
    h("label", { for: "join-name" }, t("yourName")),
    nameField("join-name"),
    h("button", { class: "primary big", type: "submit", "data-key": "join", disabled: app.busy }, t("join")),
    info && info.watchable
      ? h(
          "button",
          { class: "secondary", type: "button", "data-key": "watch", onclick: () => enter({ type: "watch", room: code }) },
          t("watch"),
        )
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
    back,
    code ? [joinForm, createForm] : [createForm, joinForm],
  );
}

// Lobby: the link to share, the seats, the host's options.

function lobbyScreen() {
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
          onclick: () => navigator.share({ title: "Crisp", url: room.link }).catch(() => {}),
        },
        t("share"),
      )
    : null;
  const opt = room.options;
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
          onchange: (e) => {
            const next = { ...opt };
            const raw = e.target.value;
            next[key] = key === "discard_draw" ? raw === "on" : raw === "none" ? null : Number(raw);
            send({ type: "options", ...next });
          },
        },
        values.map((v) =>
          h(
            "option",
            { value: String(v ?? "none"), selected: (key === "discard_draw" ? (opt[key] ? "on" : "off") : opt[key] ?? "none") === (v ?? "none") },
            fmt(v),
          ),
        ),
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
        h("button", { class: "secondary", "data-key": "copy", onclick: copy }, t("copyLink")),
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

function confirmLeave() {
  if (window.confirm(t("leaveConfirm"))) send({ type: "leave" });
}

// The table.

function clockIn(key) {
  const left = app.state?.clock?.[key];
  if (left === null || left === undefined) return null;
  return app.receivedAt + left;
}

function ring(endsAt, total, label) {
  const r = 16;
  const c = 2 * Math.PI * r;
  const circle = svg("circle", { cx: 20, cy: 20, r, class: "ring-fg", "stroke-dasharray": c.toFixed(2) });
  const el = svg("svg", { viewBox: "0 0 40 40", class: "ring", "aria-hidden": "true" }, svg("circle", { cx: 20, cy: 20, r, class: "ring-bg" }), circle);
  const text = h("span", { class: "ring-text countdown", dataset: { ends: String(endsAt) } });
  return h("span", { class: "clock", role: "timer", "aria-label": label, dataset: { ends: String(endsAt), total: String(total) } }, el, text);
}

function tableScreen() {
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
    h("button", { class: "link", "data-key": "lang", "aria-label": t("languageLabel"), onclick: () => switchLang() }, getLang() === "de" ? "EN" : "DE"),
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

function roundOverlay() {
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

// -- clocks ------------------------------------------------------------------------------------------

function tick() {
  const now = performance.now();
  for (const el of root.querySelectorAll(".countdown[data-ends]")) {
    const secs = Math.max(0, Math.ceil((Number(el.dataset.ends) - now) / 1000));
    el.textContent = el.dataset.format === "next" ? t("nextRoundIn", secs) : `${secs}`;
  }
  for (const el of root.querySelectorAll(".clock[data-ends]")) {
    const left = Math.max(0, Number(el.dataset.ends) - now);
    const frac = Math.min(1, left / Number(el.dataset.total || 1));
    const circle = el.querySelector(".ring-fg");
    if (circle) {
      const c = Number(circle.getAttribute("stroke-dasharray"));
      circle.setAttribute("stroke-dashoffset", String(c * (1 - frac)));
    }
    el.classList.toggle("low", left < 10000);
  }
  // Peeks and reactions that ran out: draw again without them.
  const expired =
    Object.values(app.peeks).some((p) => p.until <= now) || app.reactions.some((x) => x.until <= now);
  if (expired) {
    for (const slot of SLOTS) if (app.peeks[slot] && app.peeks[slot].until <= now) delete app.peeks[slot];
    app.reactions = app.reactions.filter((x) => x.until > now);
    render();
  }
}

setInterval(tick, 250);

// -- start -------------------------------------------------------------------------------------------

async function start() {
  const code = app.joinCode;
  if (code && app.session && app.session.room === code) {
    enter({ type: "resume", room: code, token: app.session.token });
    return;
  }
  render();
  if (code) {
    try {
      const response = await fetch(`/api/rooms/${encodeURIComponent(code)}`);
      if (response.ok) app.roomInfo = await response.json();
      else if (response.status === 404) app.notice = t("roomGone");
    } catch {
      /* offline: the join will say so */
    }
    render();
  }
}

start();
