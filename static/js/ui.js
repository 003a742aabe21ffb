// Small rendering helpers the screens share: the toast, the clock ring, the top buttons, the past games,
// a computer player's robot.

import { h, svg } from "./dom.js";
import { LANGUAGES, getLang, levelName, setLang, t } from "./i18n.js";
import { gameFor } from "./games.js";
import { actions, app, effects } from "./state.js";

const toastEl = document.getElementById("toast");
let toastTimer = 0;

export function toast(text) {
  toastEl.textContent = text;
  toastEl.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => toastEl.classList.remove("show"), 3500);
}

/** A countdown ring that `tick` in main.js winds down: `endsAt` in page time, `total` in ms. */
export function ring(endsAt, total, label) {
  const r = 16;
  const c = 2 * Math.PI * r;
  const circle = svg("circle", { cx: 20, cy: 20, r, class: "ring-fg", "stroke-dasharray": c.toFixed(2) });
  const el = svg("svg", { viewBox: "0 0 40 40", class: "ring", "aria-hidden": "true" }, svg("circle", { cx: 20, cy: 20, r, class: "ring-bg" }), circle);
  const text = h("span", { class: "ring-text countdown", dataset: { ends: String(endsAt) } });
  return h("span", { class: "clock", role: "timer", "aria-label": label, dataset: { ends: String(endsAt), total: String(total) } }, el, text);
}

/** The levels of computer players, easiest first (the protocol's names). */
export const LEVELS = ["easy", "normal", "hard"];

/** The robot that marks a computer player's seat ("🤖", or "🤖 Hard" as a badge with `withLevel`); its
 * level is always said to screen readers. */
export function robot(seat, withLevel = false) {
  const label = t("botLabel", levelName(seat.bot));
  return h(
    "span",
    { class: withLevel ? "badge bot" : "robot", role: "img", "aria-label": label, title: label },
    withLevel ? `🤖 ${levelName(seat.bot)}` : "🤖",
  );
}

const wakeups = new Set();

/** Draw again at page time `when` (a wait that ends, a button that arms), once per instant. */
export function renderAt(when) {
  const key = Math.round(when);
  if (wakeups.has(key)) return;
  wakeups.add(key);
  setTimeout(() => {
    wakeups.delete(key);
    actions.render();
  }, Math.max(0, when - performance.now()) + 20);
}

export async function switchLang(next) {
  await setLang(next);
  actions.langChanged(getLang());
  actions.render();
}

/** The rules screen, at its top or at the section with the id `anchor`. */
export function openRules(anchor = null) {
  if (app.screen !== "rules") {
    app.returnTo = app.screen;
    // An entry in the tab's history, so that the phone's Back (button or gesture) closes the rules rather
    // than leaving the game's page.
    history.pushState({ ...history.state, rules: true }, "");
  }
  app.screen = "rules";
  actions.render();
  const section = anchor ? document.getElementById(anchor) : null;
  if (section) section.scrollIntoView();
  else window.scrollTo(0, 0);
}

/** Back from the rules to the screen they were opened from: through the tab's history when they made an
 * entry in it (the popstate below closes them), else at once. */
export function closeRules() {
  if (history.state?.rules) history.back();
  else leaveRules();
}

function leaveRules() {
  app.screen = app.returnTo === "rules" ? "home" : app.returnTo;
  actions.render();
}

window.addEventListener("popstate", () => {
  if (app.screen === "rules") leaveRules();
});

const NAME_KEY = "crisp.name";

/** The name this device used last ("" the first time). */
export function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch {
    return "";
  }
}

/** The name typed in `input`, remembered for next time; or null once the field has asked for one. */
export function askName(input) {
  const name = input ? input.value.trim() : "";
  if (!name) {
    input?.setCustomValidity(t("nameNeeded"));
    input?.reportValidity();
    input?.focus();
    return null;
  }
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    /* no storage */
  }
  return name;
}

/** A name field: one per screen, id "name"; it asks again once the player types. What is typed is kept
 * in `app.draftName`: a screen that follows a room live is drawn anew on every update. */
export function nameField() {
  return h("input", {
    id: "name",
    name: "name",
    autocomplete: "nickname",
    maxlength: 20,
    "data-key": "name",
    value: app.draftName ?? savedName(),
    oninput: (e) => {
      e.target.setCustomValidity("");
      app.draftName = e.target.value;
    },
  });
}

let openDialog = null;

/** Ask before something that cannot be undone by a tap: an in-page dialog (outside #app, which is drawn
 * anew on every update) with Cancel first; resolves true if `confirm` was chosen. Escape cancels. */
export function confirmDialog(question, detail, confirm) {
  openDialog?.close();
  return new Promise((resolve) => {
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": "confirm-question", "aria-describedby": detail ? "confirm-detail" : null },
      h("p", { id: "confirm-question", class: "confirm-question" }, question),
      detail ? h("p", { id: "confirm-detail", class: "muted" }, detail) : null,
      h(
        "div",
        { class: "row confirm-buttons" },
        h("button", { class: "secondary", "data-key": "confirm-cancel", onclick: () => dialog.close("cancel") }, t("cancel")),
        h("button", { class: "primary danger-fill", "data-key": "confirm-ok", onclick: () => dialog.close("ok") }, confirm),
      ),
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (openDialog === dialog) openDialog = null;
      resolve(dialog.returnValue === "ok");
    });
    document.body.append(dialog);
    openDialog = dialog;
    dialog.showModal();
  });
}

/** What Leave does now, as the server will do it: "watch" (a spectator goes), "lobby" (the seat is given
 * up); during a game "standIn" or "timeout" (other players stay: a computer, or the time-outs, play the seat),
 * "last" or "practice" (nobody else is at the table: the game waits for the idle-game time); after it, "over"
 * (others stay: the seat is kept until a rematch) or "overLast" (the room closes). */
export function leaveOutcome(s) {
  if (!s || s.you.seat === null) return "watch";
  const { phase, seats, options } = s.room;
  if (phase === "lobby") return "lobby";
  const others = seats.filter((seat, i) => i !== s.you.seat && !seat.bot);
  const othersStay = others.some((seat) => !seat.left);
  if (phase === "game_over") return othersStay ? "over" : "overLast";
  if (othersStay) return options.stand_in ? "standIn" : "timeout";
  return others.length ? "last" : "practice";
}

/** Leave, once the player knows exactly what happens to their seat and the game (``leaveOutcome``). */
export async function confirmLeave() {
  const outcome = leaveOutcome(app.state);
  const time = t("waitTime", app.welcome?.idle_game_hours); // the server's CRISP_IDLE_GAME_HOURS
  const detail = {
    watch: null,
    lobby: t("leaveLobbyDetail"),
    standIn: t("leaveStandInDetail"),
    timeout: t("leaveTimeoutDetail"),
    last: t("leaveLastDetail", time),
    practice: t("leavePracticeDetail", time),
    over: t("leaveOverDetail"),
    overLast: t("leaveOverLastDetail"),
  }[outcome];
  const title = outcome === "watch" ? t("stopWatchingConfirm") : t("leaveConfirm");
  // A tutorial left ends (its room closes): said as its own Skip says it.
  const said = app.state?.you?.lesson ? t("lesson").skipDetail : detail;
  if (await confirmDialog(title, said, t("leave"))) actions.send({ type: "leave" });
}

function toggleButton(key, text, pressed, toggle) {
  return h(
    "button",
    {
      class: "link",
      "data-key": key,
      "data-local": true,
      "aria-pressed": pressed ? "true" : "false",
      onclick: () => {
        toggle();
        actions.render();
      },
    },
    text,
  );
}

/** A globe, the sign of a language picker (the stroke in the text's colour). */
function globe() {
  const line = (d) => svg("path", { d });
  return svg(
    "svg",
    { class: "globe", viewBox: "0 0 24 24", "aria-hidden": "true", focusable: "false" },
    svg("circle", { cx: 12, cy: 12, r: 9.5 }),
    line("M2.5 12h19M12 2.5c-3.2 3.4-3.2 15.6 0 19M12 2.5c3.2 3.4 3.2 15.6 0 19"),
  );
}

/** The big-screen address of the room whose join link is `link` (…/r/CODE): …/tv/CODE, on the same base
 * (docs/protocol.md; the server's TV QR code encodes the same). */
export function tvLink(link) {
  return link.replace(/\/r\/([^/]+)$/, "/tv/$1");
}

/** The language picker: the current language as a link's word over a native list of every language of
 * LANGUAGES (each named in itself, "Français"), which the phone shows its own way. `form`: "name" (the
 * language's name: where a row has room), "globe" (a globe and its code, "FR": the home screen's and the
 * lobby's row) or "code" (the code alone: the table's bar). Screen readers hear "Language" and the current
 * one; a pick draws the screen again in it. */
export function langPicker(form = "name") {
  const current = getLang();
  const select = h(
    "select",
    {
      class: "lang-select",
      "data-key": "lang",
      "data-local": true,
      "aria-label": t("languagePicker"),
      title: t("languagePicker"),
      onchange: (e) => switchLang(e.target.value),
    },
    Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code, lang: code, selected: code === current }, name)),
  );
  select.value = current;
  return h(
    "span",
    { class: `link lang-picker ${form}` },
    form === "globe" ? globe() : null,
    h("span", { class: "lang-shown", lang: current, "aria-hidden": "true" }, form === "name" ? LANGUAGES[current] : current.toUpperCase()),
    select,
  );
}

/** Rules, language, sound and vibration: the home screen's and the lobby's top row. */
export function topButtons() {
  return h(
    "div",
    { class: "top-buttons" },
    h("button", { class: "link", "data-key": "rules", "data-local": true, onclick: () => openRules() }, t("howToPlay")),
    langPicker("globe"),
    toggleButton("sound", t("soundState", effects.sound), effects.sound, () => effects.toggleSound()),
    "vibrate" in navigator ? toggleButton("vibrate", t("vibrationState", effects.vibrate), effects.vibrate, () => effects.toggleVibration()) : null,
  );
}

async function downloadRecord(gameId, token = app.session?.token) {
  try {
    const response = await fetch(`/api/games/${encodeURIComponent(gameId)}/record`, {
      headers: { Authorization: `Bearer ${token ?? ""}` },
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

/** The room's finished games (lobby and game end), with a record download for their players. */
export function historyPanel() {
  const games = app.history && app.state && app.history.code === app.state.room.code ? app.history.games : [];
  if (!games.length) return null;
  const myName = app.state.you.seat !== null ? app.state.room.seats[app.state.you.seat]?.name : null;
  return gamesPanel(t("pastGames"), games, (g) => myName && g.players.includes(myName), app.session?.token);
}

/** The games of the room this device had a seat in, found closed (an abandoned game ends its room): the
 * records are served to the game's players only, and the seat token says who that is. */
export function goneGamesPanel() {
  const gone = app.gone;
  if (!gone || !gone.games.length) return null;
  return gamesPanel(t("goneGames", gone.room), gone.games, () => true, gone.token);
}

function gamesPanel(title, games, mine, token) {
  return h(
    "div",
    { class: "card-panel history" },
    h("h2", {}, title),
    gameList(games, (g) => (mine(g) ? { replay: true, token } : { replay: false, token: null })),
  );
}

/** The games of a room whose link was opened after the room closed: each one's result, its replay where
 * this device may open it (a game it played and kept, or one its host made public), its record where this
 * device holds a token of the room (`token`) or of the game. */
export function closedRoomGames(games, token) {
  return gameList(games, (g) => {
    const kept = gameFor(g.id);
    return { replay: Boolean(kept) || g.public === true, token: kept?.token ?? token ?? null };
  });
}

/** Ended games as a list: the scores (the winners starred), and the links `opens(g)` allows: {replay, token}. */
function gameList(games, opens) {
  return h(
    "ol",
    { class: "past-games" },
    games.map((g) => {
      const { replay, token } = opens(g);
      return h(
        "li",
        {},
        h(
          "span",
          { class: "past-scores" },
          g.players.map((name, i) =>
            h("span", { class: g.winners.includes(i) ? "winner" : "" }, `${g.winners.includes(i) ? "★ " : ""}${name} ${g.totals[i]}`),
          ),
          g.abandoned ? h("span", { class: "muted" }, t("abandoned")) : null,
        ),
        replay || token
          ? h(
              "span",
              { class: "game-links" },
              replay ? h("a", { class: "button small", href: `/g/${encodeURIComponent(g.id)}`, "data-key": `replay-${g.id}` }, t("replayShort")) : null,
              token ? h("button", { class: "small", "data-key": `record-${g.id}`, onclick: () => downloadRecord(g.id, token) }, t("downloadRecord")) : null,
            )
          : null,
      );
    }),
  );
}
