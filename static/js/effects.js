// Phone habits: optional sounds and vibration (off by default, silent where unsupported) and keeping
// the screen awake during a game (Wake Lock, where the browser has it).

const SOUND_KEY = "crisp.sound";
const VIBRATE_KEY = "crisp.vibrate";

export class Effects {
  constructor() {
    this.sound = localStorage.getItem(SOUND_KEY) === "on";
    this.vibrate = localStorage.getItem(VIBRATE_KEY) === "on";
    this.audio = null;
    this.lock = null;
    this.wantLock = false;
    document.addEventListener("visibilitychange", () => {
      // The browser releases the lock when the page is hidden: take it again on return.
      if (document.visibilityState === "visible" && this.wantLock) this.keepAwake();
    });
  }

  toggleSound() {
    this.sound = !this.sound;
    try {
      localStorage.setItem(SOUND_KEY, this.sound ? "on" : "off");
    } catch {
      /* no storage */
    }
    if (this.sound) this.beep(660, 0.08);
  }

  toggleVibration() {
    this.vibrate = !this.vibrate;
    try {
      localStorage.setItem(VIBRATE_KEY, this.vibrate ? "on" : "off");
    } catch {
      /* no storage */
    }
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

  /** Something happened that the player should notice: "turn" or "crisp". */
  signal(kind) {
    if (this.sound) {
      if (kind === "crisp") {
        this.beep(880, 0.12);
        setTimeout(() => this.beep(1175, 0.16), 130);
      } else this.beep(587, 0.1);
    }
    if (this.vibrate) this.buzz(kind === "crisp" ? [80, 60, 80] : 60);
  }

  beep(freq, seconds) {
    try {
      this.audio ??= new AudioContext();
      const ctx = this.audio;
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.15, ctx.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + seconds);
      osc.connect(gain).connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + seconds);
    } catch {
      /* no audio: stay silent */
    }
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
