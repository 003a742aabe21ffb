// "Learn to play": the lesson's panel over the table of a lesson room (the server runs the lesson: its steps,
// the computer players' moves and every rule; see docs/protocol.md, "Lessons"). This module shows the step the
// server sends in you.lesson: its prompt, the one place to tap marked with a ring, Back, Next and "Skip the
// tutorial", the progress; a tap elsewhere on the table is explained and not sent. The last step offers a game.
// Finishing is remembered on this device.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import en from "./lang/en.js";
import { forgetSession } from "./net.js";
import { actions, app } from "./state.js";
import { confirmDialog, savedName } from "./ui.js";

const DONE_KEY = "crisp.lessonDone";

/** A text of the lesson's catalog section (English's where the language has none yet). */
export function lt(key, ...args) {
  const value = t("lesson")?.[key] ?? en.lesson[key];
  return typeof value === "function" ? value(...args) : value;
}

function stepText(id, names) {
  const fn = t("lesson")?.steps?.[id] ?? en.lesson.steps[id];
  return fn ? fn(names) : "";
}

/** Whether this device finished the tutorial once. */
export function lessonDone() {
  try {
    return localStorage.getItem(DONE_KEY) === "1";
  } catch {
    return false;
  }
}

function markDone() {
  try {
    localStorage.setItem(DONE_KEY, "1");
  } catch {
    /* no storage: offered as new next time */
  }
}

/** The page that starts the tutorial: /learn, or /learn?room=CODE to offer that room at its end. */
export function learnHref(code = null) {
  return code ? `/learn?room=${encodeURIComponent(code)}` : "/learn";
}

const ROOM_KEY = "crisp.lessonRoom";

/** The room a /learn page was opened for (its end offers to join it), or "": kept for this tab, so that a
 * reload in the tutorial (at /r/ its own room's code) still offers it. */
export function learnRoom() {
  const raw = new URLSearchParams(location.search).get("room") ?? "";
  const code = /^[A-Za-z0-9]{4,8}$/.test(raw) ? raw.toUpperCase() : "";
  try {
    sessionStorage.setItem(ROOM_KEY, code);
  } catch {
    /* no storage: only this page offers it */
  }
  return code;
}

function offeredRoom() {
  try {
    return app.lessonRoom || sessionStorage.getItem(ROOM_KEY) || "";
  } catch {
    return app.lessonRoom;
  }
}

/** Start the tutorial: a lesson room for the name this device used last (or "You"). */
export function startLesson() {
  const name = savedName() || lt("you");
  actions.enter({ type: "create", name, lesson: true });
}

/** The lesson as the server sent it, in a lesson room, else null. */
export function currentLesson() {
  return app.screen === "room" ? (app.state?.you?.lesson ?? null) : null;
}

function names() {
  const seats = app.state?.room?.seats ?? [];
  return { a: seats[1]?.name ?? "", b: seats[2]?.name ?? "" };
}

function isLast(lesson) {
  return lesson.index === lesson.count - 1;
}

/** The data-key of the one place the step points at, or null (nothing to tap: the computer players move). */
function targetKey(lesson) {
  if (isLast(lesson)) return null;
  if (lesson.wait === "next") return "lesson-next";
  if (lesson.wait !== "move" || !lesson.move) return null;
  const m = lesson.move;
  switch (m.type) {
    case "ready":
      return "ready";
    case "draw":
      return m.from === "discard" ? "discard-pile" : "draw-pile";
    case "swap":
      return `slot-${m.slot}`;
    case "discard":
      return "act-discard";
    case "jack":
    case "king":
      return `act-${m.type}`;
    case "queen":
      // The Queen's button first; once pressed, your card, then the other player's.
      return app.queen?.slot ? `target-${m.target}-${m.target_slot}` : app.queen ? `slot-${m.slot}` : "act-queen";
    case "crisp":
      return "crisp";
    default:
      return null;
  }
}

/** Mark the step's place to tap on the screen just drawn (a ring, and its name for screen readers). */
export function markTarget(screen) {
  const lesson = currentLesson();
  if (!lesson) return;
  const key = targetKey(lesson);
  const el = key ? screen.querySelector(`[data-key="${CSS.escape(key)}"]`) : null;
  if (el) {
    el.classList.add("lesson-target");
    el.setAttribute("aria-describedby", "lesson-prompt");
  }
}

// -- the prompt, announced -----------------------------------------------------------------------------

let announced = "";

/** One live region outside the screen (which is drawn anew at each change): each new prompt is read once. */
function announce(text) {
  let live = document.getElementById("lesson-live");
  if (!live) {
    live = h("div", { id: "lesson-live", class: "sr-only", "aria-live": "polite", "aria-atomic": "true" });
    document.body.append(live);
  }
  if (text !== announced) {
    announced = text;
    live.textContent = text;
  }
}

// -- the panel -------------------------------------------------------------------------------------------

function leaveLesson(then) {
  const code = app.state?.room?.code;
  if (code) forgetSession(code); // nothing to come back to: the room closes when its learner goes
  app.afterLesson = then;
  actions.send({ type: "leave" });
}

async function skip() {
  if (await confirmDialog(lt("skip"), lt("skipDetail"), lt("skip"))) leaveLesson(null);
}

function finish(then) {
  markDone();
  leaveLesson(then);
}

/** What the last step offers: a game against the computer, a room with friends, the room the page came from. */
function endButtons() {
  const code = offeredRoom();
  const name = () => savedName() || app.state?.room?.seats?.[0]?.name || lt("you");
  return h(
    "div",
    { class: "lesson-end" },
    code
      ? h("button", { class: "primary", "data-key": "lesson-join", onclick: () => finish(() => location.assign(`/r/${code}`)) }, lt("joinRoom", code))
      : null,
    h(
      "button",
      { class: code ? "secondary" : "primary", "data-key": "lesson-practice", onclick: () => finish(() => actions.enter({ type: "create", name: name(), bots: 3, level: "normal" })) },
      lt("practice"),
    ),
    h("button", { class: "secondary", "data-key": "lesson-friends", onclick: () => finish(() => actions.enter({ type: "create", name: name() })) }, lt("friends")),
    h("button", { class: "link", "data-key": "lesson-home", onclick: () => finish(null) }, lt("home")),
  );
}

/** Back or Next: the explanation of a tap goes with the step it was about. */
function go(type) {
  app.lessonWrong = null;
  actions.send({ type });
}

/** The lesson's panel: progress, the prompt (and why a tap was not taken), Back, Next, Skip; at the end, the
 * ways on. */
export function lessonPanel() {
  const lesson = currentLesson();
  if (!lesson) return null;
  const last = isLast(lesson);
  const reviewing = lesson.index < lesson.current;
  const prompt = stepText(lesson.step, names());
  const wrong = app.lessonWrong && app.lessonWrong.index === lesson.index && app.lessonWrong.current === lesson.current ? app.lessonWrong.text : null;
  announce(wrong ? `${wrong} ${prompt}` : prompt);
  const next = lesson.wait === "next" || reviewing;
  return h(
    "section",
    { class: `lesson-panel${last ? " last" : ""}`, "aria-label": lt("title") },
    h(
      "div",
      { class: "lesson-head" },
      h("span", { id: "lesson-progress", class: "lesson-progress" }, lt("progress", lesson.index + 1, lesson.count)),
      h("button", { class: "link lesson-back", "data-key": "lesson-back", disabled: !lesson.back, onclick: () => go("lesson_back") }, lt("back")),
      // The last step's own buttons end the tutorial.
      last ? null : h("button", { class: "link lesson-skip", "data-key": "lesson-skip", "data-local": true, onclick: () => skip() }, lt("skip")),
    ),
    reviewing ? h("p", { class: "lesson-note" }, lt("reviewing")) : null,
    h("p", { id: "lesson-prompt", class: "lesson-prompt" }, prompt),
    wrong ? h("p", { class: "lesson-wrong" }, wrong) : null,
    lesson.wait === "computers" && !reviewing ? h("p", { class: "lesson-note" }, lt("watching", names())) : null,
    last
      ? endButtons()
      : next
        ? h("button", { class: "primary lesson-next", "data-key": "lesson-next", onclick: () => go("lesson_next") }, lt("next"))
        : null,
  );
}

// -- a tap elsewhere: explained, not sent --------------------------------------------------------------------

/** The parts of the table a tap may hit: one that is not the step's place is explained instead of sent. */
const PLAY_AREAS = ".opponents, .center, .my-hand, .actions, .peek-panel, .reactions, .results";

function wrongText(lesson) {
  if (lesson.index < lesson.current) return lt("wrongReview");
  if (lesson.wait === "next") return lt("wrongRead");
  if (lesson.wait === "computers") return lt("wrongWait");
  return lt("wrongMove");
}

/** The lesson, if a tap on `target` is one to explain: in a play area, not on the lesson's panel nor on the
 * place the step points at. */
function wrongTap(target) {
  const lesson = currentLesson();
  if (!lesson || !(target instanceof Element) || !target.closest(PLAY_AREAS) || target.closest(".lesson-panel")) return null;
  return target.closest(".lesson-target") ? null : lesson;
}

function explain(lesson) {
  app.lessonWrong = { index: lesson.index, current: lesson.current, text: wrongText(lesson) };
  actions.render();
}

// Before any control's own handler (capture on the document): the control never sees the tap.
document.addEventListener(
  "click",
  (e) => {
    const lesson = wrongTap(e.target);
    if (!lesson) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    explain(lesson);
  },
  true,
);

// A control that cannot be used now (the draw pile once drawn) gets no click: its tap is explained too.
document.addEventListener(
  "pointerup",
  (e) => {
    const control = e.target instanceof Element ? e.target.closest("button:disabled") : null;
    const lesson = control ? wrongTap(control) : null;
    if (lesson) explain(lesson);
  },
  true,
);
