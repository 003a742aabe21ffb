// The Crisp web client: connects, keeps the state the server sends, and draws the screen for it (each
// screen is its own module in screens/). Plain ES modules, no build step. The server is the authority:
// this page shows the state it is sent and sends what the player does.

import { getLang, t } from "./i18n.js";
import { eventLine } from "./lines.js";
import { Net, forgetSession, saveSession, sessionFor } from "./net.js";
import { SLOTS, actions, app, effects, hintMoment, mySeat, names, revealing } from "./state.js";
import { fly, flightsFor, positions } from "./motion.js";
import { leaveOutcome, renderAt, toast } from "./ui.js";
import { homeScreen } from "./screens/home.js";
import { lobbyScreen } from "./screens/lobby.js";
import { checkDeck } from "./screens/results.js";
import { openReplay, replayScreen } from "./screens/replay.js";
import { rememberGames } from "./games.js";
import { rulesScreen } from "./screens/rules.js";
import { tableScreen } from "./screens/table.js";
import { loadStandings } from "./standings.js";
import { learnRoom, startLesson } from "./lesson.js";
import { TV_REVEAL_MS, tvScreen, watchOnTv } from "./screens/tv.js";

const PEEK_SHOW_MS = 4000; // a Jack's or Queen's peek stays visible this long
const REVEAL_MS = 2200; // at a round's end every hand lies face up on the table this long before the results
// A look-up refused because this address looked up too many codes in vain (429) is asked again after these
// waits, the last one repeating: the allowance gives one more every two seconds (docs/protocol.md).
const LOOKUP_RETRY_MS = [2500, 5000, 10000, 20000];

const net = new Net({ onMessage, onStatus });
const root = document.getElementById("app");
const statusBar = document.getElementById("status");

// -- talking to the server ---------------------------------------------------------------------------

function enter(message) {
  app.busy = true;
  net.start({ ...message, lang: getLang() });
  render();
}

function send(message) {
  if (!net.send(message)) toast(t("reconnecting"));
}

/** The player picked another language: the server's texts follow it, now and after a reconnect. */
function langChanged(lang) {
  if (net.entry) net.entry = { ...net.entry, lang };
  if (net.inRoom) net.send({ type: "lang", lang });
}

function onStatus(status, code) {
  const changed = app.status !== status;
  app.status = status;
  if (status === "closed" && code === 1000 && app.screen === "room" && !app.notice) {
    goHome();
  }
  if (changed && app.screen === "room") render();
  else renderStatus();
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
    case "hint":
      onHint(msg);
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
    case "left": {
      // The seat stays this player's during a game (the game waits for them if nobody else is there) and
      // after it while others stay; given up in the lobby, and with the room when the last one goes.
      if (app.state?.you?.lesson) {
        // The tutorial is over (done or skipped): its room closes; on to what its last screen offered.
        const then = app.afterLesson;
        app.afterLesson = null;
        leaveRoom(null, false);
        then?.();
        break;
      }
      leaveRoom(null, !["watch", "lobby", "overLast"].includes(leaveOutcome(app.state)));
      break;
    }
    case "room_closed":
      net.stop();
      app.notice = t("roomGone");
      if (app.tv) tvClosed(t("roomGone"));
      else goHome();
      break;
    case "restarting":
      toast(t("restarting"));
      break;
    case "moved":
      // The room went to another server node: net.js reconnects at once and resumes; nothing to tell.
      break;
    case "unavailable":
      // The server cannot save right now: the table stays as it was, and the next update says it is back.
      app.unavailable = msg.message;
      render();
      break;
    default:
      break;
  }
}

function onWelcome(msg) {
  app.busy = false;
  app.welcome = msg;
  app.notice = null;
  if (app.newRoomFrom) {
    // The room a closed room's link page made: its page from now on (leaving it comes back home, not to the
    // closed room's link).
    if (app.joinCode === app.newRoomFrom) {
      app.joinCode = "";
      app.linkGone = null;
    }
    app.newRoomFrom = null;
  }
  if (msg.token) {
    app.session = { room: msg.room, token: msg.token, name: null, left: false };
    saveSession(app.session);
  } else if (msg.seat !== null && app.session?.room === msg.room && app.session.left) {
    app.session = { ...app.session, left: false }; // the seat is taken back
    saveSession(app.session);
  }
  // Reconnecting later: come back to the same seat (or watch again).
  net.entry =
    msg.seat === null
      ? { type: "watch", room: msg.room, lang: getLang() }
      : { type: "resume", room: msg.room, token: app.session?.token, lang: getLang() };
  if (app.tv) {
    app.screen = "room";
    return; // the big screen keeps its own address (/tv/CODE): a reload shows the table again
  }
  if (location.pathname !== `/r/${msg.room}`) history.replaceState(null, "", `/r/${msg.room}`);
  // A link page that follows its room stays where it is until its reader joins (a seat) or taps Watch.
  if (app.following === msg.room && msg.seat === null) return;
  app.following = null;
  app.screen = "room";
}

/** A hint answers the moment it was asked in; one that comes after the game moved on is not shown. */
function onHint(msg) {
  const asked = app.hintAsked;
  app.hintAsked = null;
  if (asked !== hintMoment()) return render();
  app.hint = { move: msg.move ?? null, text: msg.text, moment: asked };
  render();
}

function onError(msg) {
  app.busy = false;
  app.hintAsked = null; // an error may be the hint's answer (no_hints, nothing_to_hint, wrong_phase)
  const entryFailed = !app.welcome;
  if (entryFailed) app.newRoomFrom = null; // no new room: the closed room's link page stays as it was
  if (entryFailed && app.tv) {
    // The big screen's room is not there (closed since, or a mistyped code): it says so, in large.
    tvClosed(msg.code === "room_not_found" ? t("roomGone") : msg.message);
    return;
  }
  if (entryFailed && (msg.code === "bad_token" || msg.code === "room_not_found")) {
    const room = net.room;
    const held = room ? sessionFor(room) : null;
    if (held) {
      // Its games may still be listed (an abandoned game ends its room): offer their records.
      if (msg.code === "room_not_found") loadGoneGames(held);
      forgetSession(room);
    }
    // The link's room closed since the page asked (or a seat held there found it closed): no Join button,
    // its games instead.
    if (msg.code === "room_not_found" && room && room === app.joinCode) {
      app.linkGone = { code: room, existed: true };
      if (!held) loadGoneGames({ room, token: null, name: null });
    }
    app.session = null;
    app.following = null;
    net.stop();
    app.notice = msg.code === "room_not_found" ? t("roomGone") : held ? t("seatGone") : msg.message;
    app.screen = "home";
    render();
    return;
  }
  if (entryFailed) net.stop();
  if (entryFailed && app.following) {
    app.following = null; // the link page stays as it was: joining will say what is wrong
    render();
    return;
  }
  toast(msg.message);
  render();
}

/** Out of the room: kicked (the seat is gone), or left. A seat left during a game stays this player's,
 * played by a computer or the time-outs: the device keeps its token so that the link page and the home
 * screen offer to take it back. One left in the lobby is given up. */
function leaveRoom(notice, kept = false) {
  const session = app.session;
  net.stop();
  if (session && kept) saveSession({ ...session, left: true });
  else if (session) forgetSession(session.room);
  app.session = null;
  app.notice = notice;
  goHome();
  // Back on the room's page with the way back to the seat: the room as it is now, followed live as a link
  // opened afresh would be (not the players it had when the page first opened).
  const code = session && kept ? app.joinCode : null;
  if (code)
    lookUp(code).then(() => {
      if (app.screen === "home" && !app.state && app.joinCode === code) showLink(code); // (not gone elsewhere)
    });
}

/** The big screen's room is gone (`notice` says why): nothing to follow any more, nothing to keep awake. */
function tvClosed(notice) {
  net.stop();
  app.state = null;
  app.welcome = null;
  app.tvGone = { notice };
  effects.release();
  render();
}

function goHome() {
  app.following = null;
  app.state = null;
  app.welcome = null;
  app.screen = "home";
  app.lines = [];
  app.peeks = {};
  app.queen = null;
  app.hint = null;
  app.hintAsked = null;
  history.replaceState(null, "", app.joinCode && !app.notice ? `/r/${app.joinCode}` : "/");
  effects.release();
  render();
}

function onState(msg) {
  const before = app.state;
  app.state = msg;
  const seat = msg.you.seat;
  const name = seat !== null ? msg.room.seats[seat]?.name : null;
  if (app.session && app.session.room === msg.room.code && name && app.session.name !== name) {
    app.session = { ...app.session, name }; // the home screen lists the seat by its name
    saveSession(app.session);
  }
  app.unavailable = null; // nothing is published while the room is unavailable: a state means it is back
  app.receivedAt = performance.now();
  const phase = msg.room.phase;
  if (!before || before.room.phase !== phase) {
    if (phase === "lobby" || phase === "game_over") {
      loadHistory(msg.room.code);
      loadStandings(msg.room.code);
    }
  }
  if (before && before.room.phase !== phase) {
    app.queen = null;
    if (phase !== "peek") dropDealPeeks();
    if (phase === "round_over" || phase === "game_over") checkDeck(msg.room.fair);
    // The round's last moves were just seen: every hand turns face up on the table before the results.
    if (before.room.phase === "play" && (phase === "round_over" || phase === "game_over")) {
      app.revealUntil = performance.now() + (app.tv ? TV_REVEAL_MS : REVEAL_MS);
      renderAt(app.revealUntil);
    }
    // A deal starts the table's story over: the lobby's comings and goings, or the last round's moves and
    // its end, are not this round's.
    if (phase === "peek") app.lines = [];
  }
  if (phase !== "round_over" && phase !== "game_over") app.revealUntil = 0;
  if (!msg.you.can.includes("queen")) app.queen = null;
  if (app.hint && app.hint.moment !== hintMoment()) app.hint = null;
  for (const e of msg.events || []) onEvent(e, before);
  effects.hear(msg.events || [], msg.you.seat, phase);
  const where = positions(); // the cards as they are on screen before this update is drawn
  const flights = flightsFor(msg.events || [], msg.you.seat, msg.you.drawn_card);
  if ((phase !== "lobby" || app.tv) && app.screen === "room") effects.keepAwake();
  else effects.release();
  if (!before && (phase === "round_over" || phase === "game_over")) checkDeck(msg.room.fair);
  render();
  if (phase === "play" || revealing()) fly(flights, where); // the results cover the table after the reveal
  if (flights.length || Object.keys(app.touched).length) renderAt(performance.now() + 1600); // the marks fade
}

function dropDealPeeks() {
  for (const slot of SLOTS) if (app.peeks[slot]?.why === "deal") delete app.peeks[slot];
}

function onEvent(e, before) {
  const me = mySeat();
  // The side effects here; the sentence is lines.js's (the replay tells the same moves in the same words).
  switch (e.type) {
    case "card_shown":
      if (e.seat === me && e.slot) {
        const until = e.why === "deal" ? Infinity : performance.now() + PEEK_SHOW_MS;
        app.peeks[e.slot] = { card: e.card, until, why: e.why };
      }
      break;
    case "swapped":
      if (e.seat === me) delete app.peeks[e.slot];
      break;
    case "queen_used":
      // The cards that moved are no longer the ones peeked at; a card_shown for the new one follows.
      if (e.seat === me) delete app.peeks[e.slot];
      if (e.target === me) delete app.peeks[e.target_slot];
      break;
    case "king_used":
      app.kingTurn = e.seat; // the moves of this turn from now on are the King's extra moves
      break;
    case "turn_started":
      app.kingTurn = null;
      break;
    case "round_ended":
      app.peeks = {};
      break;
    case "crisp_called":
      app.crispFlash = { seat: e.seat, until: performance.now() + 3000 };
      break;
    case "reaction":
      app.reactions.push({ seat: e.seat, emoji: e.emoji, until: performance.now() + 2500 });
      break;
    default:
      break;
  }
  const seated = names(); // as they are now: a later departure from the lobby moves the seats
  const who = (seat) => seated[seat] ?? "?";
  const left = before?.room.seats.map((s) => s.name) ?? []; // the names only: the line is kept, not the state
  const whoBefore = (seat) => left[seat] ?? "?";
  // A departure seen in the first state has no name to tell.
  if ((e.type === "left" || e.type === "bot_removed") && !before) return;
  // A line is told again at each drawing, so that it follows a switch of the language.
  const line = () => eventLine(e, me, who, whoBefore);
  if (line()) {
    app.lines.push(line);
    if (app.lines.length > 30) app.lines.shift();
  }
}

async function loadHistory(code) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(code)}/games`);
    if (!response.ok) return;
    app.history = { code, games: await response.json() };
    // The games this seat played stay openable (their replays) after the room closes.
    const seat = app.state?.you?.seat;
    const name = seat !== null && seat !== undefined ? app.state.room.seats[seat]?.name : null;
    if (app.session?.room === code) rememberGames(code, app.history.games, name, app.session.token);
    render();
  } catch {
    /* offline: the list comes next time */
  }
}

async function loadGoneGames(session) {
  app.gone = { room: session.room, token: session.token, games: [], loaded: false, refused: false };
  await fetchGoneGames(session, 0);
}

async function fetchGoneGames(session, attempt) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(session.room)}/games`);
    if (app.gone?.room !== session.room) return;
    if (response.status === 429) {
      // Too many look-ups from this address just now: the card says so, and asks again a little later.
      app.gone.refused = true;
      setTimeout(() => {
        if (app.gone?.room === session.room && !app.gone.loaded) fetchGoneGames(session, attempt + 1);
      }, retryDelay(attempt));
      render();
      return;
    }
    if (!response.ok) return;
    app.gone.games = await response.json();
    app.gone.loaded = true;
    app.gone.refused = false;
    rememberGames(session.room, app.gone.games, session.name, session.token);
    render();
  } catch {
    /* offline: nothing to offer */
  }
}

function retryDelay(attempt) {
  return LOOKUP_RETRY_MS[Math.min(attempt, LOOKUP_RETRY_MS.length - 1)];
}

// -- rendering ---------------------------------------------------------------------------------------

function renderStatus() {
  const s = app.status;
  const offline = s === "reconnecting" || s === "connecting";
  const show = (app.screen === "room" || Boolean(app.tv && !app.tvGone)) && (offline || Boolean(app.unavailable));
  statusBar.textContent = show ? (offline ? t(s) : app.unavailable) : "";
  statusBar.classList.toggle("show", show);
  document.body.classList.toggle("offline", show);
}

function render() {
  const focusKey = document.activeElement?.dataset?.key;
  root.replaceChildren(screen());
  if (app.screen === "room" && (app.status !== "online" || app.unavailable)) {
    // Nothing sent now would arrive (or be accepted, while the server cannot save): every control that
    // talks to the server waits for the connection and the room.
    for (const el of root.querySelectorAll("button:not([data-local]), select:not([data-local])")) el.disabled = true;
  }
  document.title = app.state?.room ? `Crisp · ${app.state.room.code}` : "Crisp";
  renderStatus();
  if (focusKey) root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
  tick();
}

function screen() {
  if (app.tv) return tvScreen();
  if (app.screen === "rules") return rulesScreen();
  if (app.screen === "replay") return replayScreen();
  if (app.screen === "room" && app.state) {
    return app.state.room.phase === "lobby" ? lobbyScreen() : tableScreen();
  }
  return homeScreen();
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
  effects.watchClock(app, now);
  // Peeks and reactions that ran out: draw again without them.
  const expired =
    Object.values(app.peeks).some((p) => p.until <= now) ||
    app.reactions.some((x) => x.until <= now) ||
    (app.crispFlash !== null && app.crispFlash.until <= now);
  if (expired) {
    if (app.crispFlash && app.crispFlash.until <= now) app.crispFlash = null;
    for (const slot of SLOTS) if (app.peeks[slot] && app.peeks[slot].until <= now) delete app.peeks[slot];
    app.reactions = app.reactions.filter((x) => x.until > now);
    render();
  }
}

actions.render = render;
actions.send = send;
actions.enter = enter;
actions.langChanged = langChanged;
setInterval(tick, 250);

// -- start -------------------------------------------------------------------------------------------

async function start() {
  if (app.tv) {
    watchOnTv();
    enter({ type: "watch", room: app.tv });
    return;
  }
  if (location.pathname === "/learn") {
    app.lessonRoom = learnRoom();
    startLesson();
    return;
  }
  if (app.replayId) {
    app.screen = "replay";
    openReplay(app.replayId);
    return;
  }
  const code = app.joinCode;
  const held = code ? sessionFor(code) : null;
  if (held && !held.left) {
    app.session = held;
    enter({ type: "resume", room: code, token: held.token });
    return;
  }
  // Asked before the first render: the players' names, Watch and "room gone" arriving later would move the
  // join screen under the reader's eyes (and finger).
  if (code) await lookUp(code);
  showLink(code);
}

/** The page as it is, following the linked room live if there is one. */
function showLink(code) {
  render();
  if (code && app.roomInfo?.code === code) follow(code);
}

/** The linked room as it is now (app.roomInfo), or the notice that it is gone. A look-up the server refused
 * (this address looked up too many codes in vain: 429) tells nothing of the room: the page says so, offers
 * nothing that answer would change (no Join button for a room that may have closed), and asks again a little
 * later. */
async function lookUp(code, attempt = 0) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(code)}`, { signal: AbortSignal.timeout?.(3000) });
    if (response.status === 429) {
      app.lookupRefused = code;
      setTimeout(() => lookUpAgain(code, attempt + 1), retryDelay(attempt));
      return;
    }
    if (app.lookupRefused === code) app.lookupRefused = null;
    if (response.ok) app.roomInfo = await response.json();
    else if (response.status === 404) {
      // A room that closed (an old link), or a code no room had (a typo): the answer says which. A closed
      // room's ended games are still kept a while: the page offers them, with the seat token held there.
      const { existed } = await response.json();
      app.notice = t(existed ? "roomGone" : "noSuchRoom");
      app.linkGone = { code, existed: Boolean(existed) };
      if (existed) {
        const held = sessionFor(code);
        if (held) forgetSession(code); // a seat left there cannot be taken back any more
        await loadGoneGames({ room: code, token: held?.token ?? null, name: held?.name ?? null });
      }
    }
  } catch {
    /* offline or slow: the join will say so */
  }
}

/** The refused look-up of the link's room, asked again while the page still shows that link. */
async function lookUpAgain(code, attempt) {
  const onLink = () => app.screen === "home" && !app.state && app.joinCode === code && app.following !== code;
  if (app.lookupRefused !== code || !onLink()) return;
  await lookUp(code, attempt);
  if (onLink()) showLink(code);
}

/** Follow the linked room live (as a spectator the room counts) until its reader joins, watches or leaves
 * the page: the players who sit down, the game that starts, the seats that open again. */
function follow(code) {
  app.following = code;
  app.session = sessionFor(code);
  net.start({ type: "watch", room: code, lang: getLang() });
}

start();
