// Phone habits: optional sounds and vibration (off by default, silent where unsupported) and keeping
// the screen awake during a game (Wake Lock, where the browser has it).

import { h } from "./dom.js";
import { t } from "./i18n.js";

const SOUND_KEY = "crisp.sound";
const BIG_SCREEN_SOUND_KEY = "crisp.tv.sound"; // a big screen's own switch: on unless turned off there
const VIBRATE_KEY = "crisp.vibrate";
const WARN_MS = 10000; // the own turn clock warns once at this much time left (the ring turns red then too)
const BACKLOG_S = 1; // sounds wait for the one before; a sound that would wait longer than this is dropped

/** Every sound the table makes, as notes: `freq` in Hz (gliding to `to` if given), `at` and `ms` its
 * start and length in milliseconds, `wave` an oscillator type, `peak` its loudness. All short (< 250 ms),
 * quiet and built from soft waves: a table full of players hears many of them. Each one's notes differ
 * from every other's, so that one can be told from another by its notes alone. */
export const SOUNDS = {
  on: [{ freq: 660, at: 0, ms: 90 }], // sound was just turned on: it works
  draw: [{ freq: 520, to: 780, at: 0, ms: 70, wave: "triangle" }], // a card lifted: a short rise
  swap: [
    { freq: 700, to: 560, at: 0, ms: 60, wave: "triangle" },
    { freq: 560.5, to: 700, at: 70, ms: 70, wave: "triangle" },
  ], // one card out, one in: down and back up
  discard: [{ freq: 440, to: 294, at: 0, ms: 110, wave: "triangle" }], // a card put down: a short fall
  turn: [
    { freq: 523.25, at: 0, ms: 110 },
    { freq: 784, at: 90, ms: 140 },
  ], // your turn: a rising chime (C5, G5)
  crisp: [
    { freq: 880, at: 0, ms: 90 },
    { freq: 1108.73, at: 70, ms: 90 },
    { freq: 1318.51, at: 140, ms: 100 },
  ], // a bright arpeggio (A5, C#6, E6)
  roundEnd: [
    { freq: 783.99, at: 0, ms: 80 },
    { freq: 659.25, at: 75, ms: 80 },
    { freq: 523.26, at: 150, ms: 95 },
  ], // a falling close (G5, E5, C5)
  warning: [
    { freq: 987.77, at: 0, ms: 60, wave: "triangle" },
    { freq: 987.76, at: 110, ms: 60, wave: "triangle" },
  ], // 10 s left: a double tick (B5), higher than the rest
};

/** What vibrates, when vibration is on: only what is about you (no buzz for the others' moves). */
const BUZZ = { turn: 50, crisp: [80, 60, 80], warning: 150 };

/** The move events of every player and the sound each makes. */
const MOVE_SOUNDS = { drew: "draw", swapped: "swap", discarded: "discard", timed_out: "discard" };

export class Effects {
  constructor() {
    this.soundKey = SOUND_KEY;
    this.sound = stored(SOUND_KEY);
    this.vibrate = stored(VIBRATE_KEY);
    this.audio = null;
    this.busyUntil = 0; // audio time at which the last sound scheduled ends
    this.clockKey = null; // the own move clock being watched (see watchClock)
    this.clockArmed = false;
    this.lock = null;
    this.wantLock = false;
    document.addEventListener("visibilitychange", () => {
      // The browser releases the lock when the page is hidden: take it again on return.
      if (document.visibilityState === "visible" && this.wantLock) this.keepAwake();
    });
    // Sound left on from an earlier visit: the audio a page makes before its first tap starts suspended
    // (autoplay rules), and a tap lets it play.
    const wake = () => {
      if (this.audio?.state === "suspended") this.audio.resume().then(() => this.onAudio?.(), () => {});
    };
    document.addEventListener("pointerdown", wake, true);
    document.addEventListener("keydown", wake, true);
  }

  /** A big screen plays the table's sounds unless turned off there (its own switch: a phone's is off by
   * default). `onAudio` is called when the browser lets the page's audio play (after a first key or tap). */
  bigScreen(onAudio) {
    this.soundKey = BIG_SCREEN_SOUND_KEY;
    this.sound = stored(BIG_SCREEN_SOUND_KEY, true);
    this.onAudio = onAudio;
    if (this.sound) this.openAudio();
  }

  /** Whether sound is on but the browser holds the page's audio until a first key press or tap. */
  audioHeld() {
    return this.sound && this.audio?.state === "suspended";
  }

  openAudio() {
    try {
      const Context = window.AudioContext ?? window.webkitAudioContext;
      if (Context) this.audio ??= new Context();
    } catch {
      /* no audio: stay silent */
    }
    return this.audio;
  }

  toggleSound() {
    this.sound = !this.sound;
    store(this.soundKey, this.sound);
    if (this.sound) this.play("on");
  }

  toggleVibration() {
    this.vibrate = !this.vibrate;
    store(VIBRATE_KEY, this.vibrate);
    if (this.vibrate) this.buzz(40);
  }

  buzz(pattern) {
    if (!navigator.vibrate) return;
    try {
      navigator.vibrate(pattern);
    } catch {
      /* not allowed here */
    }
  }

  /** Something about you that you should notice: "turn", "crisp" or "warning" (sound and buzz). */
  signal(kind) {
    this.play(kind);
    if (this.vibrate && BUZZ[kind]) this.buzz(BUZZ[kind]);
  }

  /** The sounds of a state's events: every player's moves, a Crisp call, the round's end, your turn.
   * `me` is your seat (null when watching), `phase` the room's phase after them. */
  hear(events, me, phase) {
    for (const e of events) {
      if (MOVE_SOUNDS[e.type]) this.play(MOVE_SOUNDS[e.type]);
      else if (e.type === "crisp_called") this.signal("crisp");
      else if (e.type === "round_ended") this.play("roundEnd");
      else if (e.type === "turn_started" && e.seat === me && phase === "play") this.signal("turn");
    }
  }

  /** Called on every clock tick (`now` in page time): warns once when your own move clock (the turn
   * timer, or the time-out of a player away) passes WARN_MS, never for another player's. A clock seen
   * first with less left (the page opened late in the move) does not warn: it only just met it. */
  watchClock(app, now) {
    const s = app.state;
    const r = s?.table?.round;
    const left = s?.clock?.deadline_in ?? s?.clock?.auto_timeout_in;
    const mine = s && r && !r.ended && s.room.phase === "play" && s.you.seat !== null && r.turn === s.you.seat;
    if (!mine || left === null || left === undefined) {
      this.clockKey = null;
      return;
    }
    // One clock per move: a King's extra move starts a new one (and may warn again).
    const key = `${s.room.code}:${r.index}:${r.turn}:${r.may_draw_at}`;
    const remaining = app.receivedAt + left - now;
    if (key !== this.clockKey) {
      this.clockKey = key;
      this.clockArmed = remaining >= WARN_MS;
    }
    if (this.clockArmed && remaining < WARN_MS) {
      this.clockArmed = false;
      this.signal("warning");
    }
  }

  /** Play one of SOUNDS (when sound is on), after the one still playing. */
  play(name) {
    if (!this.sound) return;
    try {
      const ctx = this.openAudio();
      if (!ctx) return;
      const start = Math.max(ctx.currentTime + 0.01, this.busyUntil);
      if (start - ctx.currentTime > BACKLOG_S) return; // a burst of moves: no sounds long after them
      let end = start;
      for (const note of SOUNDS[name]) end = Math.max(end, this.note(ctx, start, note));
      this.busyUntil = end + 0.03;
    } catch {
      /* no audio: stay silent */
    }
  }

  /** One note at `start` (audio time): a quick rise and a soft fall, no click. Returns when it ends. */
  note(ctx, start, { freq, to, at, ms, wave = "sine", peak = 0.08 }) {
    const t0 = start + at / 1000;
    const t1 = t0 + ms / 1000;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = wave;
    osc.frequency.setValueAtTime(freq, t0);
    if (to) osc.frequency.exponentialRampToValueAtTime(to, t1);
    gain.gain.setValueAtTime(0.0001, t0);
    gain.gain.linearRampToValueAtTime(peak, t0 + 0.008);
    gain.gain.exponentialRampToValueAtTime(0.0001, t1);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0);
    osc.stop(t1 + 0.01);
    return t1;
  }

  async keepAwake() {
    this.wantLock = true;
    if (this.lock || !("wakeLock" in navigator) || document.visibilityState !== "visible") return;
    try {
      this.lock = await navigator.wakeLock.request("screen");
      this.lock.addEventListener("release", () => {
        this.lock = null;
      });
    } catch {
      this.lock = null; /* not allowed (battery saver, no user gesture yet): fine */
    }
  }

  release() {
    this.wantLock = false;
    if (this.lock) this.lock.release().catch(() => {});
    this.lock = null;
  }
}

/** The table bar's switches: sound (🔊, or the crossed-out 🔇 when off) and, where the phone can vibrate,
 * vibration (📳, crossed out when off). Icons to fit the bar; the name says the state in words, the same
 * words as the home screen's and the lobby's switches. `after` draws the screen again. */
export function effectSwitches(effects, after) {
  const button = (key, on, label, icon, toggle) =>
    h(
      "button",
      {
        class: "link effect-switch",
        "data-key": key,
        "data-local": true,
        "aria-label": label,
        title: label,
        "aria-pressed": on ? "true" : "false",
        onclick: () => {
          toggle();
          after();
        },
      },
      icon,
    );
  return [
    button("sound", effects.sound, t("soundState", effects.sound), effects.sound ? "🔊" : "🔇", () => effects.toggleSound()),
    "vibrate" in navigator
      ? button(
          "vibrate",
          effects.vibrate,
          t("vibrationState", effects.vibrate),
          h("span", { class: effects.vibrate ? "icon" : "icon crossed", "aria-hidden": "true" }, "📳"),
          () => effects.toggleVibration(),
        )
      : null,
  ];
}

function stored(key, byDefault = false) {
  try {
    const value = localStorage.getItem(key);
    return value === null ? byDefault : value === "on";
  } catch {
    return byDefault; // no storage: as by default
  }
}

function store(key, on) {
  try {
    localStorage.setItem(key, on ? "on" : "off");
  } catch {
    /* no storage */
  }
}
