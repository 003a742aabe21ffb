// The one state object every screen reads, the server's clocks turned into page times, and the hooks the
// screens call to act (main.js fills them in: it owns the connection and the drawing).

import { Effects } from "./effects.js";

export const SLOTS = ["left", "middle", "right"];

export const app = {
  screen: "home",
  returnTo: "home",
  status: "idle",
  state: null,
  welcome: null,
  session: null, // {room, token, name, left} of the seat this page is in (net.js keeps every seat held)
  following: null, // the code of the room a link page follows live (a spectator's connection) before joining
  lines: [],
  peeks: {}, // slot -> {card, until, why}
  queen: null, // the Queen flow: {slot} once the own card is picked
  kingTurn: null, // the seat whose turn a King gave extra moves to (the move under way is one of them)
  touched: {}, // "seat-" -> {slot: true}: the slots a move just changed, highlighted for a moment
  receivedAt: 0,
  reactions: [], // {seat, emoji, until}
  fair: {}, // round -> "checking" | "ok" | "fail"
  notice: null,
  unavailable: null, // the server's text while the room cannot save (an "unavailable" message), else null
  joinCode: codeFromPath(),
  tv: tvFromPath(), // the room this page shows on a big screen (/tv/CODE), or ""
  tvGone: null, // {notice} once the big screen's room has closed (or never was): what the screen says instead
  crispFlash: null, // {seat, until}: a Crisp call just made, shown large on the big screen for a moment
  replayId: gameFromPath(), // the game whose replay this page shows (/g/GAME_ID), or ""
  roomInfo: null,
  busy: false,
  history: null, // {code, games} of the room's finished games
  standings: null, // {code, games, abandoned, players} of the room's ended games (standings.js)
  gone: null, // {room, token, games, loaded, refused} of a room found closed: its ended games, a seat token held there
  seatChecks: {}, // room -> {token, at, answer, asking}: what the server said of this device's seat there (home.js)
  linkGone: null, // {code, existed} when the room of the page's link (/r/CODE) closed (existed) or never was
  lookupRefused: "", // the link's code while the server refuses to look it up (429: too many look-ups in vain)
  newRoomFrom: "", // the closed room's code whose link page asked for a new room, until its welcome (or error)
  newBotLevel: "normal", // the level the host's next computer player gets
  hint: null, // {move, text, moment}: the hint shown for this moment of the game (see hintMoment)
  hintAsked: null, // the moment a hint was asked for, until the answer comes
  draftName: null, // the name field's text as typed (kept across redraws), null until typed in
  draftCode: "", // the room code field's text as typed
  revealUntil: 0, // page time until which a round's end shows every hand on the table, before the results
  lessonWrong: null, // {index, current, text}: why the last tap in a lesson was not taken (lesson.js)
  lessonRoom: "", // the room a tutorial was opened for (/learn?room=CODE): its end offers to join it
  afterLesson: null, // what the tutorial's last screen chose, done once its room is left
};

export const effects = new Effects();

/** What the screens may do; main.js sets these once the connection exists. */
export const actions = {
  render: () => {},
  send: (_message) => {},
  enter: (_message) => {},
  langChanged: (_lang) => {},
};

function codeFromPath() {
  const m = location.pathname.match(/^\/r\/([A-Za-z0-9]{4,8})\/?$/);
  return m ? m[1].toUpperCase() : "";
}

function tvFromPath() {
  const m = location.pathname.match(/^\/tv\/([A-Za-z0-9]{1,16})\/?$/);
  return m ? m[1].toUpperCase() : "";
}

function gameFromPath() {
  const m = location.pathname.match(/^\/g\/([A-Za-z0-9_-]{1,64})\/?$/);
  return m ? m[1] : "";
}

export function mySeat() {
  return app.state?.you?.seat ?? null;
}

export function names() {
  return app.state?.room?.seats?.map((s) => s.name) ?? [];
}

/** When the server's clock `key` runs out, in `performance.now()` time; null if it is not running. */
export function clockIn(key) {
  const left = app.state?.clock?.[key];
  if (left === null || left === undefined) return null;
  return app.receivedAt + left;
}

/** What a hint answers: the phase, the turn, the card held and the moves offered. A hint holds while this
 * stays the same and is dropped once the game moves on. */
export function hintMoment() {
  const s = app.state;
  const r = s?.table?.round;
  if (!s || !r) return null;
  return JSON.stringify([s.room.phase, r.index, r.turn, r.drawn ? r.drawn.card ?? "held" : null, r.extra_moves, r.discard.length, s.you.can]);
}

/** Whether the table shows the round's hands face up now, at a round's end (the results wait for it). */
export function revealing() {
  return app.revealUntil > performance.now();
}
