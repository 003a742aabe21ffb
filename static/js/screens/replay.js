// A finished game's replay (/g/GAME_ID): step through it move by move and round by round, with everything
// open or as one player knew it. The server computes each point of view (GET /api/games/{id}/replay) from
// the engine's own views; this page only draws each step, with the live table's drawing (screens/table.js)
// and its flights, and tells each step in the live game's words (lines.js).

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { gameFor } from "../games.js";
import { replayLine } from "../lines.js";
import { fly, flightsFor, positions } from "../motion.js";
import { actions, effects } from "../state.js";
import { langPicker, renderAt, toast } from "../ui.js";
import { callerText } from "./results.js";
import { roundLabel, tableScreen } from "./table.js";

const PLAY_MS = 1000; // one step a second while playing

/** The replay on this page: its game, the token that opens it, each point of view fetched, where we are. */
const replay = {
  id: null,
  token: null,
  room: "",
  views: new Map(), // point of view (null: everything open, or a seat) -> crisp-replay/1 body
  pov: null,
  index: 0,
  playing: null, // the interval while playing
  error: null, // {status} (0: the network) of the last fetch that failed
  loading: false,
  saving: false, // the public switch's answer is awaited
  sharing: false, // the share panel is open
};

const render = () => actions.render();

/** Open the replay of game `id` (the page's path), everything open first, with the token this device keeps
 * for that game (none: the game may be public). */
export function openReplay(id) {
  const kept = gameFor(id);
  Object.assign(replay, { id, token: kept?.token ?? null, room: kept?.room ?? "", views: new Map(), index: 0, error: null });
  document.addEventListener("keydown", onKey);
  load(null);
}

async function load(pov) {
  replay.loading = true;
  replay.error = null;
  render();
  const query = pov === null ? "" : `?seat=${pov}`;
  try {
    const response = await fetch(`/api/games/${encodeURIComponent(replay.id)}/replay${query}`, {
      headers: replay.token ? { Authorization: `Bearer ${replay.token}` } : {},
    });
    if (!response.ok) {
      failed(response.status);
    } else {
      const body = await response.json();
      replay.views.set(pov, body);
      replay.pov = pov;
      replay.index = Math.min(replay.index, body.steps.length - 1);
    }
  } catch {
    failed(0);
  }
  replay.loading = false;
  render();
}

/** A fetch that failed: the page says why, or, while a point of view is shown already, a toast does and the
 * view stays. */
function failed(status) {
  if (replay.views.size) toast(errorText(status));
  else replay.error = { status };
}

/** The body of the point of view shown (null until the first one arrived). */
function shown() {
  return replay.views.get(replay.pov) ?? null;
}

// -- moving through the game --------------------------------------------------------------------------

/** Go to step `index`; one step forward is animated as live play would (and heard, if sound is on). */
export function goTo(index) {
  const data = shown();
  if (!data) return;
  const next = Math.max(0, Math.min(data.steps.length - 1, index));
  if (next === replay.index) return;
  const forward = next === replay.index + 1;
  replay.index = next;
  if (next === data.steps.length - 1) stop();
  if (!forward) return render();
  const step = data.steps[next];
  const where = positions();
  // A card drawn flies face up when this point of view can name it (`drawn_card`), whoever drew it.
  const holder = step.drawn_card ? step.table.round?.turn : replay.pov;
  const flights = flightsFor(step.events, holder ?? replay.pov, step.drawn_card);
  effects.hear(step.events, replay.pov, step.table.round?.ended ? "round_over" : "play");
  render();
  fly(flights, where);
  renderAt(performance.now() + 1600); // the slots a move touched are marked for a moment, as live
}

/** The steps where rounds start (the deals). */
function deals(data) {
  const out = [];
  data.steps.forEach((s, i) => {
    if (s.kind === "deal") out.push(i);
  });
  return out;
}

function previousRound() {
  const data = shown();
  const before = deals(data).filter((i) => i < replay.index);
  goTo(before.length ? before[before.length - 1] : 0);
}

function nextRound() {
  const data = shown();
  const after = deals(data).find((i) => i > replay.index);
  goTo(after ?? data.steps.length - 1);
}

function stop() {
  if (replay.playing !== null) clearInterval(replay.playing);
  replay.playing = null;
}

function togglePlay() {
  const data = shown();
  if (replay.playing !== null) stop();
  else {
    if (replay.index >= data.steps.length - 1) replay.index = 0;
    replay.playing = setInterval(() => goTo(replay.index + 1), PLAY_MS);
  }
  render();
}

function choosePov(value) {
  const pov = value === "all" ? null : Number(value);
  if (replay.views.has(pov)) {
    replay.pov = pov;
    render();
  } else load(pov);
}

function onKey(e) {
  if (!shown() || e.altKey || e.ctrlKey || e.metaKey) return;
  const target = e.target;
  // The slider and the point-of-view list answer their own keys.
  if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement) return;
  const moves = {
    ArrowLeft: () => goTo(replay.index - 1),
    ArrowRight: () => goTo(replay.index + 1),
    ArrowUp: previousRound,
    PageUp: previousRound,
    ArrowDown: nextRound,
    PageDown: nextRound,
    Home: () => goTo(0),
    End: () => goTo(Infinity),
  };
  const move = moves[e.key];
  if (!move || !document.querySelector(".screen.replay")) return;
  e.preventDefault();
  stop();
  move();
}

// -- the host's switch and the link -------------------------------------------------------------------

async function setPublic(on) {
  replay.saving = true;
  render();
  try {
    const response = await fetch(`/api/games/${encodeURIComponent(replay.id)}/public`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${replay.token ?? ""}`, "Content-Type": "application/json" },
      body: JSON.stringify({ public: on }),
    });
    if (!response.ok) throw new Error(String(response.status));
    const answer = await response.json();
    for (const body of replay.views.values()) body.public = answer.public;
  } catch {
    toast(t("replayPublicFailed"));
  }
  replay.saving = false;
  render();
}

async function copyLink() {
  const link = `${location.origin}/g/${replay.id}`;
  try {
    await navigator.clipboard.writeText(link);
    toast(t("linkCopied"));
  } catch {
    toast(link); // no clipboard here (an insecure page, or refused): the link to copy by hand
  }
}

// -- drawing ------------------------------------------------------------------------------------------

/** The table's scene for `step`: the live table's state, with the hands as this point of view knew them. */
export function sceneFor(data, step, pov) {
  const r = step.table.round;
  let round = null;
  if (r) {
    // The card held: face up where this point of view saw it (everything open: always).
    const drawn = r.drawn && step.drawn_card ? { ...r.drawn, card: step.drawn_card } : r.drawn;
    round = { ...r, hands: step.hands, drawn };
  }
  const table = { ...step.table, round };
  const phase = !r ? "lobby" : r.ended ? (step.table.game_over ? "game_over" : "round_over") : "play";
  const seats = data.players.map((name) => ({ name, connected: true, left: false, bot: false, stand_in: false, ready: false }));
  return {
    state: {
      room: { code: replay.room, phase, seats, host: data.host, options: data.options, fair: null },
      table,
      you: { seat: pov, can: [], drawn_card: pov !== null && r?.turn === pov ? step.drawn_card : null, hints: false, host: false },
      clock: {},
      events: [],
    },
    lines: [],
    peeks: {},
    reveal: Boolean(r?.ended),
    live: false,
    bar: replayBar(data, r),
    foot: controls(data, step),
  };
}

/** The step in words: its events, the refused move, the restart, the round's result. */
export function stepLines(data, step) {
  const who = (seat) => data.players[seat] ?? "?";
  // The watcher's own point of view reads as their own: "You looked at your left card".
  const me = data.seat !== null && data.seat === data.you ? data.seat : null;
  const lines = [];
  if (step.kind === "resume") lines.push(t("replayResumed"));
  if (step.rejected && step.action) lines.push(t("replayRejected", who(step.action.seat)));
  const results = [];
  for (const e of step.events) {
    if (e.type === "card_shown" && e.why === "deal" && replayLinesSkipDeal(step)) continue;
    if (e.type === "round_ended") {
      // The round's result instead of "the round is over" (the table says that): the caller's ±5 in the
      // results screen's words, and every player's points.
      const seats = data.players.map((name) => ({ name }));
      const why = callerText(e, seats);
      if (why) results.push(why);
      results.push(t("replayPoints", e.points.map((p, i) => `${who(i)} ${p}`).join(", ")));
      continue;
    }
    const line = replayLine(e, who, me);
    if (line && e.type === "game_ended") results.unshift(line);
    else if (line) lines.push(line);
  }
  lines.push(...results);
  if (!lines.length && step.kind === "clock") lines.push(t("replayClock"));
  return lines;
}

/** Everything open at a deal shows every peek: the cards face up say it better than 16 sentences. */
function replayLinesSkipDeal(step) {
  return step.kind === "deal" && replay.pov === null;
}

function replayBar(data, r) {
  return h(
    "header",
    { class: "bar" },
    h("span", { class: "replay-badge" }, t("replayTitle")),
    roundLabel(r),
    h("span", { class: "spacer" }),
    sharePanel(data),
    langPicker("code"),
    h("a", { class: "link", href: "/", "data-key": "home" }, t("replayHome")),
  );
}

/** Sharing, folded into the bar: the link to copy, and for the host the switch that opens it to anyone. */
function sharePanel(data) {
  const canHost = data.host !== null && data.you !== null && data.you === data.host && replay.token;
  return h(
    "details",
    {
      class: "share",
      open: replay.sharing,
      ontoggle: (e) => {
        replay.sharing = e.currentTarget.open;
      },
    },
    h("summary", { class: "link", "data-key": "share" }, t("share")),
    h(
      "div",
      { class: "share-panel" },
      canHost
        ? h(
            "label",
            { class: "switch" },
            h("input", {
              type: "checkbox",
              role: "switch",
              "data-key": "public",
              checked: data.public,
              disabled: replay.saving,
              onchange: (e) => setPublic(e.target.checked),
            }),
            h("span", {}, t("replayPublic")),
          )
        : h("p", { class: "share-note" }, data.public ? t("replayIsPublic") : t("replayIsPrivate")),
      h("button", { class: "secondary", "data-key": "copy-link", onclick: copyLink }, t("copyLink")),
    ),
  );
}

function button(key, symbol, label, onclick, disabled = false) {
  return h(
    "button",
    { class: "secondary step-button", "data-key": key, "aria-label": label, title: label, disabled, onclick },
    h("span", { "aria-hidden": "true" }, symbol),
  );
}

function controls(data, step) {
  const last = data.steps.length - 1;
  const i = replay.index;
  const playing = replay.playing !== null;
  const lines = stepLines(data, step);
  return h(
    "div",
    { class: "replay-foot" },
    h("p", { class: "replay-lines", "aria-live": "polite", "data-step": String(i), tabindex: 0 }, lines.map((l) => h("span", {}, l))),
    h(
      "div",
      { class: "replay-controls", role: "group", "aria-label": t("replayControls") },
      button("prev-round", "«", t("prevRound"), () => (stop(), previousRound()), i === 0),
      button("step-back", "‹", t("stepBack"), () => (stop(), goTo(i - 1)), i === 0),
      button("play", playing ? "❚❚" : "▶", playing ? t("pause") : t("play"), togglePlay),
      button("step", "›", t("stepForward"), () => (stop(), goTo(i + 1)), i === last),
      button("next-round", "»", t("nextRound"), () => (stop(), nextRound()), i === last),
    ),
    h(
      "div",
      { class: "replay-where" },
      h("input", {
        type: "range",
        class: "step-slider",
        "data-key": "slider",
        min: 0,
        max: last,
        value: i,
        "aria-label": t("stepSlider"),
        "aria-valuetext": t("stepOf", i + 1, last + 1),
        oninput: (e) => {
          stop();
          goTo(Number(e.target.value));
        },
      }),
      h(
        "select",
        {
          class: "pov",
          "data-key": "pov",
          "aria-label": t("povLabel"),
          disabled: replay.loading,
          onchange: (e) => choosePov(e.target.value),
        },
        h("option", { value: "all", selected: replay.pov === null }, t("povAll")),
        data.players.map((name, seat) => h("option", { value: String(seat), selected: replay.pov === seat }, t("povSeat", name))),
      ),
    ),
  );
}

function errorText(status) {
  if (status === 403) return t("replayForbidden");
  if (status === 404) return t("replayNotFound");
  if (status === 409) return t("replayRunning");
  if (status === 0) return t("replayOffline");
  return t("replayFailed", status);
}

function messageScreen(text, retry) {
  return h(
    "section",
    { class: "screen replay replay-message" },
    h("div", { class: "top-buttons" }, langPicker()),
    h("header", { class: "hero" }, h("h1", { class: "logo" }, "Crisp"), h("p", { class: "tagline" }, t("replayTitle"))),
    h("p", { class: replay.loading ? "muted" : "notice", role: replay.loading ? "status" : "alert" }, text),
    retry ? h("button", { class: "primary big", "data-key": "retry", onclick: () => load(replay.pov) }, t("retry")) : null,
    h("a", { class: "secondary big home-link", href: "/", "data-key": "home" }, t("replayHome")),
  );
}

export function replayScreen() {
  const data = shown();
  if (replay.error) return messageScreen(errorText(replay.error.status), replay.error.status === 0 || replay.error.status >= 500);
  if (!data) return messageScreen(t("replayLoading"), false);
  const step = data.steps[replay.index];
  const screen = tableScreen(sceneFor(data, step, replay.pov));
  screen.classList.add("replay");
  return screen;
}
