// The connection to the server: one WebSocket, reconnects with back-off, resumes the seat with its
// token, asks for a snapshot after a gap in the room version or when the page becomes visible again.
// A socket can die without closing (a phone that lost its network): an application ping every
// PING_EVERY_MS finds it, since without an answer for DEAD_AFTER_MS the connection is given up and made
// again. That is within 5 s of the network going, where the browser itself may take minutes.

const SESSION_KEY = "crisp.session";
const PING_EVERY_MS = 1500;
const DEAD_AFTER_MS = 3500;

export function loadSession() {
  try {
    const raw = localStorage.getItem(SESSION_KEY);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  try {
    if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
    else localStorage.removeItem(SESSION_KEY);
  } catch {
    /* private mode: the seat is kept for this page only */
  }
}

export class Net {
  constructor({ onMessage, onStatus }) {
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.ws = null;
    this.v = 0;
    this.entry = null; // what to send on (re)connecting: resume when we have a token
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.heardAt = 0; // when the open socket last brought a message
    this.pingedAt = 0;
    this.inRoom = false; // ping only once the room answered (a ping before the entry is an error)
    setInterval(() => this.checkAlive(), 500);
    window.addEventListener("offline", () => this.checkAlive());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState !== "visible" || this.stopped) return;
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.send({ type: "sync" });
      else this.reconnectNow();
    });
    window.addEventListener("online", () => this.reconnectNow());
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/ws`;
  }

  /** Open the socket and send `entry` (create, join, resume or watch) once it is open. */
  start(entry) {
    this.entry = entry;
    this.stopped = false;
    this.open();
  }

  open() {
    clearTimeout(this.timer);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close();
    }
    this.onStatus(this.attempt === 0 ? "connecting" : "reconnecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.inRoom = false;
    ws.onopen = () => {
      this.attempt = 0;
      this.heardAt = performance.now();
      this.onStatus("online");
      if (this.entry) ws.send(JSON.stringify(this.entry));
    };
    ws.onmessage = (e) => {
      this.heardAt = performance.now();
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg.type === "update" && this.v && msg.v !== this.v + 1) {
        this.send({ type: "sync" }); // a gap: the snapshot will set things right
      }
      if (msg.type === "welcome") this.inRoom = true;
      if (msg.type === "pong") return;
      if (typeof msg.v === "number" && (msg.type === "update" || msg.type === "snapshot" || msg.type === "welcome")) {
        this.v = msg.v;
      }
      this.onMessage(msg);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      // Kicked, replaced by another tab, or left: do not come back on our own.
      if (this.stopped || e.code === 4003 || e.code === 4001 || e.code === 1000) {
        this.onStatus("closed", e.code);
        return;
      }
      this.scheduleReconnect();
    };
  }

  /** Ping an open socket that has been quiet; give it up when it has not answered for DEAD_AFTER_MS. */
  checkAlive() {
    const ws = this.ws;
    if (this.stopped || !ws || ws.readyState !== WebSocket.OPEN || !this.inRoom) return;
    const quiet = performance.now() - this.heardAt;
    if (quiet > DEAD_AFTER_MS || !navigator.onLine) {
      ws.onclose = null;
      ws.close();
      this.ws = null;
      this.scheduleReconnect();
    } else if (quiet > PING_EVERY_MS && performance.now() - this.pingedAt > PING_EVERY_MS) {
      this.pingedAt = performance.now();
      ws.send(JSON.stringify({ type: "ping" }));
    }
  }

  scheduleReconnect() {
    this.attempt += 1;
    const base = Math.min(10000, 500 * 2 ** Math.min(this.attempt, 5));
    const delay = base / 2 + Math.random() * (base / 2);
    this.onStatus("reconnecting");
    this.timer = setTimeout(() => this.open(), delay);
  }

  reconnectNow() {
    if (this.stopped || !this.entry) return;
    if (this.ws && (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)) return;
    this.attempt = Math.max(this.attempt, 1);
    this.open();
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  stop() {
    this.stopped = true;
    this.entry = null;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  }
}
