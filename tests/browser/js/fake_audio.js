// An init script: WebAudio and navigator.vibrate replaced by recorders, so that a test can tell which
// sounds the page played and which vibrations it asked for (without any hook in the page's own code).
// Every oscillator started is logged in window.__notes (its first frequency), every vibration asked for
// in window.__buzzes.
(() => {
  const notes = [];
  const buzzes = [];
  window.__notes = notes;
  window.__buzzes = buzzes;
  Object.defineProperty(Navigator.prototype, "vibrate", {
    configurable: true,
    writable: true,
    value(pattern) {
      buzzes.push(pattern);
      return true;
    },
  });
  class Param {
    constructor(value) {
      this.value = value;
      this.first = null;
    }
    setValueAtTime(value) {
      if (this.first === null) this.first = value;
      this.value = value;
      return this;
    }
    linearRampToValueAtTime() {
      return this;
    }
    exponentialRampToValueAtTime() {
      return this;
    }
    setTargetAtTime() {
      return this;
    }
    cancelScheduledValues() {
      return this;
    }
  }
  class Node {
    connect(next) {
      return next;
    }
    disconnect() {}
  }
  class Oscillator extends Node {
    constructor() {
      super();
      this.type = "sine";
      this.frequency = new Param(440);
      this.detune = new Param(0);
    }
    start(when = 0) {
      notes.push({ freq: this.frequency.first ?? this.frequency.value, type: this.type, when });
    }
    stop() {}
  }
  class Gain extends Node {
    constructor() {
      super();
      this.gain = new Param(1);
    }
  }
  class FakeAudioContext {
    constructor() {
      this.state = "running";
      this.destination = new Node();
      this.born = performance.now();
    }
    get currentTime() {
      return (performance.now() - this.born) / 1000;
    }
    createOscillator() {
      return new Oscillator();
    }
    createGain() {
      return new Gain();
    }
    resume() {
      return Promise.resolve();
    }
    close() {
      return Promise.resolve();
    }
  }
  window.AudioContext = FakeAudioContext;
  window.webkitAudioContext = FakeAudioContext;
})();
