// The connection to the server: one WebSocket, reconnects with back-off, resumes the seat with its
// token, asks for a snapshot after a gap in the room version or when the page becomes visible again.
// A socket can die without closing (a phone that lost its network): an application ping every
// PING_EVERY_MS finds it, since without an answer for DEAD_AFTER_MS the connection is given up and made
// again. That is within 5 s of the network going, where the browser itself may take minutes.
// Several server nodes may share the rooms (docs/protocol.md, "Several servers"): every socket names its
// room in its URL (`/ws?room=CODE`, once the code is known) so that the proxy takes it to the node that
// owns the room, and a close with CLOSE_MOVED (the room went to another node) is followed at once.
// A socket that has not opened within OPEN_TIMEOUT_MS is given up and made again after the back-off: a frozen
// node (or one the network lost) takes the connection and never answers it, and the browser would wait for
// minutes, where the next try reaches a live node once the proxy has taken the frozen one out.

const SESSIONS_KEY = "crisp.sessions";
const LEGACY_SESSION_KEY = "crisp.session"; // one seat only, as older pages kept it
const MAX_SESSIONS = 6;
const PING_EVERY_MS = 1500;
const DEAD_AFTER_MS = 3500;
const OPEN_TIMEOUT_MS = 5000;
const CLOSE_MOVED = 4005; // after `moved` (or alone): the room now lives on another node

// The seats this device holds, newest first: {room, token, name, left}. `left`: the player tapped Leave
// during a game; the seat is still theirs (a computer or the time-outs play it) and the token takes it
// back, but the page does not do so on its own.

function readSessions() {
  try {
    const list = JSON.parse(localStorage.getItem(SESSIONS_KEY) || "[]");
    const sessions = Array.isArray(list) ? list.filter((s) => s && typeof s.room === "string" && typeof s.token === "string") : [];
    const legacy = JSON.parse(localStorage.getItem(LEGACY_SESSION_KEY) || "null");
    if (legacy && typeof legacy.room === "string" && typeof legacy.token === "string") {
      localStorage.removeItem(LEGACY_SESSION_KEY);
      if (!sessions.some((s) => s.room === legacy.room)) sessions.unshift({ room: legacy.room, token: legacy.token, name: null, left: false });
      writeSessions(sessions);
    }
    return sessions;
  } catch {
    return [];
  }
}

function writeSessions(sessions) {
  try {
    localStorage.setItem(SESSIONS_KEY, JSON.stringify(sessions.slice(0, MAX_SESSIONS)));
  } catch {
    /* private mode: the seats are kept for this page only */
  }
}

/** Every seat this device holds, newest first. */
export function loadSessions() {
  return readSessions();
}

/** The seat this device holds in `room`, or null. */
export function sessionFor(room) {
  return readSessions().find((s) => s.room === room) ?? null;
}

/** Keep (or update) the seat in `session.room`, as the newest. */
export function saveSession(session) {
  const rest = readSessions().filter((s) => s.room !== session.room);
  writeSessions([{ name: null, left: false, ...session }, ...rest]);
}

/** Forget the seat in `room` (given up, removed, or the room is gone). */
export function forgetSession(room) {
  writeSessions(readSessions().filter((s) => s.room !== room));
}

export class Net {
  constructor({ onMessage, onStatus }) {
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.ws = null;
    this.v = 0;
    this.entry = null; // what to send on (re)connecting: resume when we have a token
    this.room = null; // the room's code once known: in every socket's URL
    this.moving = false; // this socket was opened at once after a move: if it fails, back off as usual
    this.attempt = 0;
    this.timer = null;
    this.openTimer = null; // gives up the socket being opened after OPEN_TIMEOUT_MS
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

  /** The socket's address: `/ws?room=CODE` once the room is known (the proxy routes on it), else `/ws`. */
  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = this.room ? `?room=${encodeURIComponent(this.room)}` : "";
    return `${scheme}://${location.host}/ws${query}`;
  }

  /** Open the socket and send `entry` (create, join, resume or watch) once it is open. */
  start(entry) {
    this.entry = entry;
    // As the server reads a code (case and surrounding blanks ignored), so every socket of a room has the
    // same URL; a `create` has none yet: the welcome tells it.
    this.room = typeof entry?.room === "string" ? entry.room.trim().toUpperCase() || null : null;
    this.moving = false;
    this.stopped = false;
    this.open();
  }

  open(status = this.attempt === 0 ? "connecting" : "reconnecting") {
    clearTimeout(this.timer);
    clearTimeout(this.openTimer);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close();
    }
    this.onStatus(status);
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.inRoom = false;
    let moved = false; // this socket was told `moved`: its close (whatever its code) is the move's
    this.openTimer = setTimeout(() => {
      if (this.ws !== ws || ws.readyState !== WebSocket.CONNECTING) return;
      // No answer to the handshake: give it up (its close is not waited for) and try again after the back-off.
      ws.onopen = ws.onmessage = ws.onclose = null;
      ws.close();
      this.ws = null;
      this.scheduleReconnect();
    }, OPEN_TIMEOUT_MS);
    ws.onopen = () => {
      clearTimeout(this.openTimer);
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
      if (msg.type === "welcome") {
        this.inRoom = true;
        this.moving = false;
        if (typeof msg.room === "string" && msg.room) this.room = msg.room;
      }
      if (msg.type === "pong") return;
      if (msg.type === "moved") moved = true;
      if (typeof msg.v === "number" && (msg.type === "update" || msg.type === "snapshot" || msg.type === "welcome")) {
        this.v = msg.v;
      }
      this.onMessage(msg);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      clearTimeout(this.openTimer);
      this.ws = null;
      // Kicked, replaced by another tab, or left: do not come back on our own.
      if (this.stopped || e.code === 4003 || e.code === 4001 || e.code === 1000) {
        this.onStatus("closed", e.code);
        return;
      }
      // The room moved to another node: go there at once (same URL: the proxy now routes it there) and
      // resume as after a restart. Once only: a socket opened that way that fails before its welcome backs
      // off as usual.
      if ((e.code === CLOSE_MOVED || moved) && this.entry && this.room && !this.moving) {
        this.moving = true;
        this.open("reconnecting");
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
    this.room = null;
    this.moving = false;
    clearTimeout(this.timer);
    clearTimeout(this.openTimer);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  }
}
