// Home: one name for every way in; play against computer players at once, make a room, join one. Opening
// /r/CODE (the link a host shares) puts that room first and follows it live: its players, whether it has
// started, and the seat this device may take back.

import { h } from "../dom.js";
import { levelName, listOf, t } from "../i18n.js";
import { recentGames, rememberGames } from "../games.js";
import { forgetSession, loadSessions } from "../net.js";
import { actions, app } from "../state.js";
import { LEVELS, askName, closedRoomGames, goneGamesPanel, nameField, topButtons } from "../ui.js";
import { learnHref, lessonDone, lt } from "../lesson.js";

const enter = (message) => actions.enter(message);

/** Back to a seat this device holds (after Leave, a closed tab, another room). */
function resumeSeat(session) {
  app.session = session;
  enter({ type: "resume", room: session.room, token: session.token });
}

/** How long what the server said of a seat is trusted before the home screen asks again. */
const SEAT_CHECK_MS = 30000;

/** What the server says of the seat `session` holds (`GET /api/rooms/{code}/seat`): {held, seat, left, phase,
 * joinable}, or null while unknown (not asked yet, offline). Asked once in a while; a room that closed is
 * forgotten, as a resume that finds no room forgets it, and its games are kept. */
function seatCheck(session) {
  const known = app.seatChecks[session.room];
  const fresh = known && known.token === session.token && performance.now() - known.at < SEAT_CHECK_MS;
  if (!fresh && !known?.asking) askSeat(session);
  return known && known.token === session.token ? known.answer : null;
}

async function askSeat(session) {
  const { room, token } = session;
  const previous = app.seatChecks[room]?.token === token ? app.seatChecks[room].answer : null;
  app.seatChecks[room] = { token, at: performance.now(), answer: previous, asking: true };
  let answer = previous;
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(room)}/seat`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout?.(3000),
    });
    if (response.status === 404) {
      if (room === app.joinCode) {
        // The link's own room: the link page's look-up forgets the seat and offers the room's games with its
        // token (main.js, lookUp); forgetting it here first would lose the token if this answer came first.
        app.seatChecks[room] = { token, at: performance.now(), answer: previous, asking: false };
        return;
      }
      // The room closed: its seat goes from the list, and its ended games join this device's finished games.
      forgetSession(room);
      delete app.seatChecks[room];
      await keepGames(session);
      actions.render();
      return;
    }
    if (response.ok) answer = await response.json();
  } catch {
    /* offline or slow: the list offers what it knew */
  }
  app.seatChecks[room] = { token, at: performance.now(), answer, asking: false };
  if (answer !== previous && app.screen === "home") actions.render();
}

/** The ended games of a room that closed, kept with the seat's token so that their replays stay readable. */
async function keepGames(session) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(session.room)}/games`);
    if (response.ok) rememberGames(session.room, await response.json(), session.name, session.token);
  } catch {
    /* offline: nothing more to keep */
  }
}

/** Join the lobby of a room whose seat a rematch dropped, with the name the seat had (else the one typed). */
function joinAgain(session) {
  const name = session.name || nameOrAsk();
  if (name) enter({ type: "join", room: session.room, name });
}

const PRACTICE_KEY = "crisp.practice";
const MAX_BOTS = 7;
const MAX_SEATS = 8;

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

/** The name typed in the one name field, or null after asking for one. */
function nameOrAsk() {
  return askName(document.getElementById("name"));
}

function nameCard() {
  return h(
    "div",
    { class: "card-panel name-panel" },
    h("label", { for: "name" }, t("yourName")),
    nameField(),
  );
}

/** The room this link names, as it is now: the live room while the page follows it, else what the page
 * was told when it opened. {players, phase, joinable} or null when unknown. */
function linkedRoom(code) {
  const live = app.following === code && app.state?.room?.code === code ? app.state.room : null;
  if (live) {
    const players = live.seats.map((s) => s.name);
    return { players, phase: live.phase, joinable: live.phase === "lobby" && players.length < MAX_SEATS, live: true };
  }
  const info = app.roomInfo && app.roomInfo.code === code ? app.roomInfo : null;
  return info ? { players: info.players, phase: info.phase, joinable: info.joinable, live: false } : null;
}

/** Watch the room this page follows (already a spectator: just show the table), or start watching it. */
function watchRoom(code) {
  if (app.following === code && app.welcome) {
    app.following = null;
    app.screen = "room";
    actions.render();
  } else enter({ type: "watch", room: code });
}

/** The linked room first: join it, take your seat back, or watch it once it has started or is full. */
function linkCard(code, mine) {
  const room = linkedRoom(code);
  const busy = app.busy;
  let body;
  if (app.lookupRefused === code && !mine) {
    body = null; // the server has not said yet whether the room is there: the notice says why (main.js lookUp)
  } else if (mine) {
    // This device holds a seat here that its player left: a computer or the time-outs play it meanwhile, or
    // the game waits for its players (everyone left).
    body = [
      h("p", { class: "late" }, t("seatHeld")),
      h(
        "button",
        { class: "primary big", type: "button", "data-key": "take-back", disabled: busy, onclick: () => resumeSeat(mine) },
        t("takeSeatBack"),
      ),
      h("button", { class: "secondary", type: "button", "data-key": "watch", disabled: busy, onclick: () => watchRoom(code) }, t("watch")),
    ];
  } else if (!room || room.joinable) {
    body = h(
      "button",
      {
        class: "primary big",
        type: "button",
        "data-key": "join",
        disabled: busy,
        onclick: () => {
          const name = nameOrAsk();
          if (!name) return;
          // Following the room already: the same connection takes the seat.
          if (app.following === code && app.welcome) actions.send({ type: "sit", name });
          else enter({ type: "join", room: code, name });
        },
      },
      t("join"),
    );
  } else {
    body = [
      h("p", { class: "late" }, room.phase === "lobby" ? t("roomFullLate") : t("gameStartedLate")),
      h("button", { class: "primary big", type: "button", "data-key": "watch", disabled: busy, onclick: () => watchRoom(code) }, t("watch")),
    ];
  }
  return h(
    "div",
    { class: "card-panel link-room", "aria-live": "polite" },
    h("h2", {}, t("roomTitle", code)),
    room && room.players.length
      ? h("p", { class: "muted" }, t("roomPlayers", room.players.length, MAX_SEATS, listOf(room.players)))
      : null,
    body,
    // Before joining: the tutorial, whose end offers this room.
    mine ? null : h("a", { class: "learn-first", href: learnHref(code), "data-key": "learn-first" }, lt("learnFirst")),
  );
}

/** The linked room closed (an old link) or never was (a typo): no seat to take there, so what is left: the
 * games it ended (their replays where this device may open them), a new room, the home screen. */
function goneCard(code, gone) {
  const kept = gone.existed && app.gone?.room === code && app.gone.loaded ? app.gone : null;
  return h(
    "div",
    { class: "card-panel link-room link-gone" },
    h("h2", {}, t("roomTitle", code)),
    kept
      ? kept.games.length
        ? [h("p", { class: "muted" }, t("goneRoomGames")), closedRoomGames(kept.games, kept.token)]
        : h("p", { class: "muted" }, t("goneRoomNoGames"))
      : gone.existed && app.gone?.room === code && app.gone.refused
        ? h("p", { class: "muted" }, t("lookupsRefused")) // asked again shortly (main.js, loadGoneGames)
        : null,
    h(
      "div",
      { class: "gone-actions" },
      h(
        "button",
        {
          class: "primary big",
          type: "button",
          "data-key": "create-new",
          disabled: app.busy,
          onclick: () => {
            const name = nameOrAsk();
            if (!name) return;
            // The new room's page once it is made (main.js, onWelcome); refused, this page stays as it is.
            app.newRoomFrom = code;
            enter({ type: "create", name });
          },
        },
        t("goneCreate"),
      ),
      h("a", { class: "button secondary big", href: "/", "data-key": "home" }, t("goneHome")),
    ),
  );
}

/** Make a room for friends, or (without a link) join one by its code. */
function friendsCard(code) {
  return h(
    "form",
    {
      class: "card-panel friends",
      onsubmit: (e) => {
        e.preventDefault();
        const room = e.target.elements.code.value.trim().toUpperCase();
        const name = nameOrAsk();
        if (name && room) enter({ type: "join", room, name });
      },
    },
    h("h2", {}, t("withFriends")),
    h(
      "button",
      {
        class: "primary big",
        type: "button",
        "data-key": "create",
        disabled: app.busy,
        onclick: () => {
          const name = nameOrAsk();
          if (name) enter({ type: "create", name });
        },
      },
      t("createRoom"),
    ),
    code ? null : h("label", { for: "join-code" }, t("orJoinCode")),
    code
      ? null
      : h(
      "div",
      { class: "row join-row" },
      h("input", {
        id: "join-code",
        name: "code",
        autocomplete: "off",
        autocapitalize: "characters",
        spellcheck: "false",
        maxlength: 8,
        required: true,
        "data-key": "join-code",
        class: "code",
        value: app.draftCode,
        oninput: (e) => {
          app.draftCode = e.target.value;
        },
      }),
      h("button", { class: "secondary", type: "submit", "data-key": "join-by-code", disabled: app.busy }, t("join")),
    ),
  );
}

/** "Learn to play": the tutorial (/learn), first for a device that never finished it. */
function learnCard() {
  const done = lessonDone();
  if (!done) {
    // A newcomer's card, above the practice game: its line and its button side by side, so that "Play now"
    // stays in sight on a 360x640 phone.
    return h(
      "div",
      { class: "card-panel learn newcomer" },
      h("p", { class: "small-print" }, lt("learnHint")),
      h("a", { class: "button primary", href: learnHref(), "data-key": "learn" }, lt("learn")),
    );
  }
  return h(
    "div",
    { class: `card-panel learn${done ? " done" : ""}` },
    h("h2", {}, lt("learn")),
    h("p", { class: "muted small-print" }, done ? lt("learnDone") : lt("learnHint")),
    h("a", { class: `button big ${done ? "secondary" : "primary"}`, href: learnHref(), "data-key": "learn" }, lt("learn")),
  );
}

/** A room with computer players only besides you: the game starts as soon as the room is made. */
function practiceCard() {
  const choice = practiceChoice();
  return h(
    "form",
    {
      class: "card-panel practice",
      // Kept as it is chosen: the home screen is drawn again when the language changes.
      onchange: (e) => savePracticeChoice(chosen(e.currentTarget)),
      onsubmit: (e) => {
        e.preventDefault();
        const name = nameOrAsk();
        if (name) enter({ type: "create", name, ...chosen(e.target) });
      },
    },
    h("h2", {}, t("playComputer")),
    h(
      "div",
      { class: "practice-choice" },
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
    ),
    h("button", { class: "primary big", type: "submit", "data-key": "practice", disabled: app.busy }, t("playNow")),
    h("p", { class: "muted small-print" }, t("playComputerHint")),
  );
}

/** One room of "Your rooms": back to the table, the seat taken back after Leave, or, once the server said the
 * seat is gone (a rematch dropped it), the lobby joined again while it is open. */
function roomRow(s) {
  const check = seatCheck(s);
  const gone = check !== null && !check.held;
  const left = check?.held ? check.left : s.left;
  let note = left ? h("span", { class: "muted" }, ` · ${t("youLeft")}`) : null;
  let button = h(
    "button",
    { class: left ? "secondary" : "primary", "data-key": `resume-${s.room}`, disabled: app.busy, onclick: () => resumeSeat(s) },
    left ? t("takeSeatBack") : t("backToTable"),
  );
  if (gone) {
    note = h("span", { class: "muted" }, ` · ${t("seatGoneShort")}`);
    button = check.joinable
      ? h("button", { class: "primary", "data-key": `join-again-${s.room}`, disabled: app.busy, onclick: () => joinAgain(s) }, t("joinAgain"))
      : h("button", { class: "secondary", "data-key": `watch-${s.room}`, disabled: app.busy, onclick: () => enter({ type: "watch", room: s.room }) }, t("watch"));
  }
  return h("li", {}, h("span", {}, h("span", { class: "code-badge small" }, s.room), s.name ? ` ${s.name}` : null, note), button);
}

/** The other rooms this device holds a seat in (or held one, until the server says the room is gone). */
function yourRooms(code, held) {
  const sessions = held.filter((s) => s.room !== code);
  if (!sessions.length || app.notice) return null;
  return h(
    "div",
    { class: "card-panel your-rooms" },
    h("h2", {}, t("yourRooms")),
    h("ul", { class: "room-list" }, sessions.map(roomRow)),
  );
}

/** The finished games this device played: each opens its replay. */
function recentGamesPanel() {
  const games = recentGames();
  if (!games.length) return null;
  return h(
    "div",
    { class: "card-panel history recent-games" },
    h("h2", {}, t("recentGames")),
    h(
      "ol",
      { class: "past-games" },
      games.map((g) =>
        h(
          "li",
          {},
          h("span", { class: "past-scores" }, g.room ? h("span", { class: "code-badge small" }, g.room) : null, ` ${g.players.join(", ")}`),
          h("a", { class: "button small", href: `/g/${encodeURIComponent(g.id)}`, "data-key": `replay-${g.id}` }, t("replayShort")),
        ),
      ),
    ),
  );
}

export function homeScreen() {
  const code = app.joinCode;
  // The seats this device holds, read once per drawing (a followed room draws this screen on every update).
  const held = loadSessions();
  let mine = code ? (held.find((s) => s.room === code) ?? null) : null;
  // A seat the server says is gone (a rematch dropped it) is not offered back: the link offers what anyone gets.
  if (mine && seatCheck(mine)?.held === false) mine = null;
  const gone = code && app.linkGone?.code === code ? app.linkGone : null;
  // A look-up of the link's room the server refused says why the page knows nothing of the room yet.
  const notice = code && app.lookupRefused === code ? t("lookupsRefused") : app.notice;
  return h(
    "section",
    { class: `screen home${code ? " with-link" : ""}` },
    topButtons(),
    h("header", { class: "hero" }, h("h1", { class: "logo" }, "Crisp"), h("p", { class: "tagline" }, t("tagline"))),
    notice ? h("p", { class: "notice", role: "alert" }, notice) : null,
    gone ? null : goneGamesPanel(), // the link's closed room shows its games in its own card
    yourRooms(code, held),
    // A seat this device holds in the linked room needs no name: the way back comes first.
    mine && !gone ? [linkCard(code, mine), nameCard()] : [nameCard(), gone ? goneCard(code, gone) : code ? linkCard(code, null) : null],
    lessonDone() || code ? null : learnCard(), // a newcomer's first way in (a link's room card offers it too)
    practiceCard(),
    gone ? null : friendsCard(code), // the closed room's card offers a new room, and Home the code field
    recentGamesPanel(),
    lessonDone() || code ? learnCard() : null,
  );
}
