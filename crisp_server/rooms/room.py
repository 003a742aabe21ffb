"""One private room, the only writer of its state.

Joins, options, actions, disconnects and timer expiries are messages posted to the room and handled at
once, one at a time, on the event loop; no locks, no races, no task hop. What a message changed is handed
to the store's group commit, and what it caused is delivered only once that commit is done (in order:
the room goes on with the next message meanwhile). Nothing here awaits a socket: every outgoing message
goes to the recipient connection (``Member.send``), which never blocks the room.
Every message published to the room bumps the version ``v``, which never goes back, across restarts too
(``VERSION_BLOCK``); each recipient gets its own message built from the engine's view of its seat
(``crisp_server.engine.views``) and the events it may see.

Time: the room reads a monotonic ``Clock`` (real in the server, manual in tests). A round's engine
clock is "milliseconds since play started" (the peek phase is not counted).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, Protocol

import orjson

from crisp_server import protocol as p
from crisp_server.engine import (
    FULL_DECK,
    Action,
    CallCrisp,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Record,
    RecordRound,
    Resume,
    Slot,
    Source,
    Swap,
    Timed,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
    event_to_dict,
    replay_game,
    visible_to,
)
from crisp_server.engine import Code as RuleCode
from crisp_server.engine.views import private_view, table_view
from crisp_server.settings import Settings
from crisp_server.store.operations import (
    AddResume,
    AppendAction,
    CloseRoom,
    FinishGame,
    Op,
    ReserveVersion,
    SaveRoom,
    SeatData,
    SetClock,
    StartGame,
    StartRound,
)
from crisp_server.store.reads import StoredRoom
from crisp_server.store.store import Store

from .clock import Clock, TimerHandle
from .tokens import hash_token, new_token, shuffle, token_matches

log = logging.getLogger("crisp.room")

MAX_SEATS: Final = 8
MAX_NAME: Final = 20

#: Room versions are reserved in the database this many at a time (one small write per block of messages):
#: a room rebuilt after a restart goes on above every version it may have published.
VERSION_BLOCK: Final = 1000

#: WebSocket close codes the room uses.
CLOSE_KICKED: Final = 4003
CLOSE_REPLACED: Final = 4001
CLOSE_LEFT: Final = 1000
CLOSE_RESTART: Final = 1012


class Phase(Enum):
    LOBBY = "lobby"
    """Players join; the host sets the options and starts."""
    PEEK = "peek"
    """A round was dealt: players look at their left and right card."""
    PLAY = "play"
    ROUND_OVER = "round_over"
    """Hands are shown; the next round deals when all are ready or after a pause."""
    GAME_OVER = "game_over"


#: The phases of a game under way: they wait while no player is connected.
GAME_PHASES: Final = frozenset({Phase.PEEK, Phase.PLAY, Phase.ROUND_OVER})


class Member(Protocol):
    """A connection as the room sees it (the web layer's object)."""

    lang: str
    room: Room | None

    def send(self, data: bytes) -> None:
        """Queue a text frame; never blocks (a connection that falls too far behind is dropped)."""
        ...

    def close(self, code: int, reason: str = "") -> None:
        """Close after the frames already queued."""
        ...


class TokenBucket:
    """``burst`` at once, then one per ``1/rate`` seconds; time is given in milliseconds."""

    __slots__ = ("burst", "per_ms", "stamp", "tokens")

    def __init__(self, burst: int, per_second: float, now: int) -> None:
        self.burst = float(burst)
        self.per_ms = per_second / 1000
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: int) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_ms)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass(eq=False)
class Seat:
    name: str
    token_hash: str
    reactions: TokenBucket
    conn: Member | None = None
    left: bool = False
    ready: bool = False
    connected_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Fairness:
    """The commitment to a round's deck: ``sha256(salt + deck)`` before the deal, salt and deck after."""

    salt: str
    deck: tuple[str, ...]
    commitment: str = field(init=False)  # in every room state: hashed once

    def __post_init__(self) -> None:
        object.__setattr__(self, "commitment", deck_commitment(self.salt, self.deck))


def deck_commitment(salt: str, deck: Sequence[str]) -> str:
    """Hex SHA-256 of the UTF-8 text ``salt`` followed by the 52 codes joined without separator."""
    return hashlib.sha256((salt + "".join(deck)).encode()).hexdigest()


def clean_name(raw: str) -> str | None:
    """The name as shown (trimmed, NFC), or ``None`` if it is empty, too long or has control characters."""
    name = unicodedata.normalize("NFC", raw.strip())
    if not 1 <= len(name) <= MAX_NAME:
        return None
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in name):
        return None
    return name


# -- messages ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Inbound:
    conn: Member
    message: Any  # a protocol.Inbound model
    arrived: float = field(default_factory=time.perf_counter)  # for the action-to-publish latency


@dataclass(frozen=True, slots=True)
class Detach:
    conn: Member


@dataclass(frozen=True, slots=True)
class Tick:
    pass


@dataclass(frozen=True, slots=True)
class Shutdown:
    pass


@dataclass(frozen=True, slots=True)
class Expire:
    """Nobody has been here for long: close the room if that is still so."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """No player has been connected to the game for long: end it unfinished if that is still so."""


@dataclass(frozen=True, slots=True)
class Reload:
    """The database answers again: go on from what it has of the room (``None``: it has no open room)."""

    stored: StoredRoom | None


RoomMessage = Inbound | Detach | Tick | Shutdown | Expire | Abandon | Reload


class RoomError(Exception):
    """A request refused by the room: answered to its sender only, nothing changed."""

    def __init__(self, code: p.ErrorCode) -> None:
        super().__init__(code.value)
        self.code = code


class Room:
    """A private room; :meth:`post` is the only way in, from any coroutine."""

    def __init__(
        self,
        code: str,
        link: str,
        settings: Settings,
        clock: Clock,
        on_close: Callable[[Room], None] | None = None,
        *,
        store: Store | None = None,
        room_id: str | None = None,
    ) -> None:
        self.code = code
        self.room_id = room_id or secrets.token_hex(8)
        self.store = store
        self.link = link
        self.settings = settings
        self.clock = clock
        self._on_close = on_close
        self._pending: deque[RoomMessage] = deque()  # posted while a message is being handled
        self._handling = False
        self._in_flight = 0  # submissions to the store not yet committed and delivered
        self._drained = asyncio.Event()
        self._drained.set()
        #: A commit failed: the room shows what it last saved, changes nothing and waits for the database
        #: (see ``_suspend``); ``recover`` rebuilds it from the database's record.
        self.suspended = False
        #: Called when the room is suspended (the registry retries until the database answers).
        self.on_suspend: Callable[[Room], None] | None = None
        # Bumped when a commit fails: what the room submitted before is dropped, and not delivered.
        self._epoch = 0
        self._saved = False  # the database has this room (one whose first save failed has nothing to go back to)
        self._notified = False  # members were told ``unavailable`` and not yet that it is over
        self.v = 0
        self.v_reserved = 0  # the highest version the database allows (see VERSION_BLOCK)
        self._v_sent = 0  # the version of the last message delivered: uncommitted versions are taken back
        self.phase = Phase.LOBBY
        self.seats: list[Seat] = []
        self.host = 0
        self.members: dict[Member, Seat | None] = {}  # None: a spectator
        self.options = Options()
        self.game: Game | None = None
        self.record: Record | None = None
        self.game_id: str | None = None
        self.fair: list[Fairness] = []
        self.round_zero: int | None = None  # clock instant of the current round's engine time 0
        self.peek_ends: int | None = None
        self.next_round_at: int | None = None
        self.closed = False
        self._timer: TimerHandle | None = None
        self._timer_at: int | None = None
        self.touched = clock.now()  # the last message handled (idle rooms are closed)
        #: A game with no player connected waits (peek, play or the pause between rounds): nothing times out
        #: for nobody to see, and the first player back resumes it.
        self.paused = False
        self.paused_at: int | None = None  # since when (clock instant): a game paused for long is abandoned
        # Write-ahead: what changed waits in _ops, what it causes waits in _outbox, until the commit.
        self._ops: list[Op] = []
        self._outbox: list[tuple[Member, bytes | tuple[int, str]]] = []
        #: Called with each accepted action's seconds from arrival to publication (metrics), if set.
        self.observe_action: Callable[[float], None] | None = None
        self._arrived = 0.0
        self._accepted: list[float] = []
        self._movers: list[Member] = []  # who made the accepted actions waiting for a commit

    @classmethod
    def restore(
        cls,
        stored: StoredRoom,
        settings: Settings,
        clock: Clock,
        store: Store | None,
        on_close: Callable[[Room], None] | None = None,
    ) -> Room:
        """Rebuild a room after a restart from what the database has: the lobby, and the game by
        replaying its record. Nobody is connected yet: a game waits for its first player back (the downtime
        counts towards abandoning it); then the round clock goes on from the last stored instant (the
        downtime counts against nobody), an open crisp window closes and the current move gets a fresh full
        clock. Its version goes on above every one it may have sent (saved before anyone hears from it)."""
        room = cls(stored.code, stored.link, settings, clock, on_close, store=store, room_id=stored.id)
        room._load(stored)
        # Above every version a client may have seen: saved before anything is sent (Registry.restore).
        room.v = room._v_sent = stored.v
        room._next_version()
        return room

    def _load(self, stored: StoredRoom) -> None:
        """Take the lobby and the game from what the database has (``restore``, and ``_reload`` after a
        failed commit). The versions reserved are the database's: a reserve whose commit failed is not."""
        settings = self.settings
        self._saved = True
        self.options = Options(**stored.options)
        self.host = stored.host
        self.v_reserved = stored.v
        now = self.clock.now()
        self.seats = [
            Seat(
                s.name,
                s.token_hash,
                TokenBucket(settings.reaction_burst, 1 / settings.reaction_seconds, now),
                left=s.left,
                connected_at=s.connected_at,
            )
            for s in stored.seats
        ]
        self.game, self.record, self.game_id, self.fair = None, None, None, []
        self.round_zero = self.peek_ends = self.next_round_at = None
        self.paused = False
        phase = Phase(stored.phase)
        sg = stored.game
        if sg is not None and phase is not Phase.LOBBY:
            game, _ = replay_game(sg.record)  # the log holds accepted actions only: nothing is refused
            self.game, self.record, self.game_id = game, sg.record, sg.id
            self.fair = [Fairness(salt, rr.deck) for salt, rr in zip(sg.salts, sg.record.rounds, strict=True)]
            r = game.round
            if r is None or r.ended:
                phase = Phase.GAME_OVER if game.game_over else Phase.ROUND_OVER
            elif phase not in (Phase.PEEK, Phase.PLAY):
                phase = Phase.PLAY
        elif phase is not Phase.LOBBY:
            phase = Phase.LOBBY  # a game that was never saved: back to the lobby, nothing was played
        self.phase = phase
        for seat in self.seats:
            seat.ready = seat.left
        # Nobody is connected yet: the game waits, and the first player back resumes it (_unpause; after a
        # failed commit, _reload does so at once for the members still there).
        self.paused = phase in GAME_PHASES
        if self.paused:
            # Waiting since the room was last saved (when its last player went, or just before a crash):
            # the downtime counts towards abandoning it.
            self.paused_at = now - _ms_since(stored.updated_at)

    # -- running ---------------------------------------------------------------------------------------

    def post(self, message: RoomMessage) -> None:
        """Handle ``message`` now (or right after the one being handled); what it sends goes out once what
        it changed is committed."""
        self._pending.append(message)
        if self._handling:
            return
        self._handling = True
        try:
            while self._pending:
                message = self._pending.popleft()
                if self.closed:
                    continue
                try:
                    self.handle(message)
                except Exception:  # a bug must not take the whole room down with it
                    log.exception("room %s: error handling %s", self.code, type(message).__name__)
            self._submit()
        finally:
            self._handling = False
        self._schedule()

    def _submit(self) -> None:
        """Commit what changed, then send what it caused: nobody hears of a change the database lacks.
        Frames that follow a change still being committed wait behind it, so everything keeps its order."""
        ops, out, accepted, movers = self._ops, self._outbox, self._accepted, self._movers
        self._ops, self._outbox, self._accepted, self._movers = [], [], [], []
        if not ops and not out:
            return
        if self.suspended:
            # Nothing changes while suspended (``_while_suspended``): what goes out are answers and notices
            # about what was last saved, and the changes submitted before are dropped: nothing to wait for.
            assert not ops, "a suspended room changed"
            _deliver(out)
            return
        if self.store is None or (not ops and self._in_flight == 0):
            self._published(out, accepted, self.v)
            return
        self._in_flight += 1
        self._drained.clear()
        epoch, v = self._epoch, self.v

        def done(error: BaseException | None) -> None:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._drained.set()
            if error is not None and epoch == self._epoch and not self.closed:
                self._suspend(error)
            if error is not None and not self.closed:
                for conn in movers:  # their move was not made: they may make it again when the game goes on
                    conn.send(p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            if epoch != self._epoch:
                return
            # A closed room's goodbyes go out even if its close was not saved: it has left memory regardless.
            if ops and error is None:
                self._saved = True
            self._published(out, accepted, v)

        self.store.submit(ops, done, skip=lambda: epoch != self._epoch)

    def _published(self, out: list[tuple[Member, bytes | tuple[int, str]]], accepted: list[float], v: int) -> None:
        self._v_sent = max(self._v_sent, v)
        self._notified = False
        _deliver(out)
        if accepted and self.observe_action is not None:
            done = time.perf_counter()
            for arrived in accepted:
                self.observe_action(done - arrived)

    async def flush(self) -> None:
        """Submit what is waiting, and wait until everything this room submitted is committed and sent."""
        self._submit()
        await self._drained.wait()

    def _suspend(self, error: BaseException) -> None:
        """Saving failed: what players were not told never happened for them. The room takes back what it
        did not save (it is rebuilt from the database when that answers, ``recover``), tells its members
        it is ``unavailable`` and changes nothing meanwhile; the connections stay open."""
        self._epoch += 1  # what it submitted after the failed change followed from it: dropped
        self._ops, self._outbox, self._accepted, self._movers = [], [], [], []
        self.v = self._v_sent  # nobody saw the versions that were not saved
        if not self._saved:
            # Its first save failed: there is nothing to go back to. Its creator is told to try again.
            log.warning("room %s: its creation could not be saved; it is closed", self.code)
            for conn in self.members:
                conn.room = None
                conn.send(p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            self.members.clear()
            self.closed = True
            if self._on_close is not None:
                self._on_close(self)
        else:
            self.suspended = True
            if not self._notified:  # once per outage, not at every failed try to come back
                self._notified = True
                log.warning("room %s: a change could not be saved; the room waits for the database", self.code)
                for conn in self.members:
                    conn.send(p.unavailable_message(self.v, conn.lang))
        self._schedule()  # no timer runs while suspended
        if self.on_suspend is not None:  # the registry tries the database again until it answers
            self.on_suspend(self)

    async def recover(self) -> bool:
        """Rebuild the room from the database and go on from there; whether it is back (its first commit
        went through). Raises if the database cannot be read yet."""
        if not self.suspended or self.closed:
            return True
        assert self.store is not None
        stored = await self.store.load_room(self.room_id)
        self.post(Reload(stored))
        await self.flush()
        return not self.suspended

    def _while_suspended(self, message: RoomMessage) -> None:
        """A message for a suspended room: nothing changes; members come and go, and are answered."""
        if isinstance(message, Inbound):
            conn, msg = message.conn, message.message
            try:
                if isinstance(msg, p.Resume):
                    index = self.seats.index(self._claim_seat(conn, msg.token))
                    self._send(conn, self._welcome(index, None))
                    self._send(conn, p.unavailable_message(self.v, conn.lang))
                elif isinstance(msg, p.Ping) and conn in self.members:
                    self._send(conn, orjson.dumps({"type": "pong", "v": self.v}))
                elif isinstance(msg, p.Sync) and conn in self.members:
                    self._send(conn, p.unavailable_message(self.v, conn.lang))
                else:
                    raise RoomError(p.ProtocolCode.UNAVAILABLE)
            except RoomError as err:
                self._send(conn, p.error_message(self.v, err.code, conn.lang))
        elif isinstance(message, Detach):
            seat = self.members.pop(message.conn, None)
            message.conn.room = None
            if seat is not None and seat.conn is message.conn:
                seat.conn = None
        elif isinstance(message, Reload):
            self._reload(message.stored)
        elif isinstance(message, Shutdown):
            self._shutdown()
        # Tick and Expire: no clock runs and nothing closes while suspended.

    def _reload(self, stored: StoredRoom | None) -> None:
        """Go on from what the database has: every member gets it (an ``update`` with the event
        ``available``); the current move gets a fresh clock, as after a restart."""
        self.suspended = False
        if stored is None:  # closed meanwhile (its close was saved just before the failure)
            self._send_away("room_closed", CLOSE_LEFT, "the room closed", leave_registry=True)
            return
        members = list(self.members.items())
        self._load(stored)
        seats = {s.token_hash: s for s in self.seats}
        self.members = {}
        for conn, before in members:
            seat = seats.get(before.token_hash) if before is not None else None
            if before is not None and seat is None:
                # Seated by a change that was not saved: their join did not happen.
                conn.room = None
                self._send(conn, p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
                continue
            if seat is not None:
                seat.conn = conn
            self.members[conn] = seat
        events = self._unpause() if any(s.conn is not None for s in self.seats) else []
        self._save_room()
        self._publish(events, [{"type": "available"}])

    def _send(self, conn: Member, data: bytes) -> None:
        self._outbox.append((conn, data))

    def _hang_up(self, conn: Member, code: int, reason: str) -> None:
        self._outbox.append((conn, (code, reason)))

    def _save(self, *ops: Op) -> None:
        if self.store is not None:
            self._ops.extend(ops)

    def _save_room(self) -> None:
        self._save(
            SaveRoom(
                self.room_id,
                self.code,
                self.link,
                self.phase.value,
                self.host,
                self.options.as_dict(),
                tuple(SeatData(s.name, s.token_hash, s.left, s.connected_at) for s in self.seats),
            )
        )

    def handle(self, message: RoomMessage) -> None:
        """Handle one message; what it sends goes out once what it changed is committed (:meth:`post`)."""
        self.touched = self.clock.now()
        if self.suspended:
            self._while_suspended(message)
        elif isinstance(message, Inbound):
            self._arrived = message.arrived
            self._inbound(message.conn, message.message)
        elif isinstance(message, Detach):
            self._detach(message.conn)
        elif isinstance(message, Tick):
            self._tick()
        elif isinstance(message, Expire):
            if not self.members:
                self._close()
        elif isinstance(message, Abandon):
            if self.paused:
                self._abandon()
        elif isinstance(message, Shutdown):
            self._shutdown()
        # Reload: only for a suspended room.

    # -- time ------------------------------------------------------------------------------------------

    def round_now(self) -> int:
        assert self.round_zero is not None
        return self.clock.now() - self.round_zero

    def _auto_timeout_at(self) -> int | None:
        """Round time at which the current move is timed out for a player who is away, if any."""
        game = self.game
        r = game.round if game else None
        if game is None or r is None or r.ended:
            return None
        seat = self.seats[r.turn]
        if seat.left:
            # Nobody is coming back: play on at once, but leave the previous player their crisp window.
            return max(r.move_start, r.window_closes) if r.window_seat is not None else r.move_start
        if seat.conn is None and game.move_limit_ms is None:
            return r.move_start + int(self.settings.disconnect_timeout_seconds * 1000)
        return None

    def _wake_at(self) -> int | None:
        if self.paused or self.suspended:
            return None  # nobody is there to see it, or the database is down: no move times out
        if self.phase is Phase.PEEK:
            return self.peek_ends
        if self.phase is Phase.ROUND_OVER:
            return self.next_round_at
        if self.phase is Phase.PLAY and self.game is not None and self.round_zero is not None:
            times = [t for t in (self.game.next_deadline(), self._auto_timeout_at()) if t is not None]
            return self.round_zero + min(times) if times else None
        return None

    def _schedule(self) -> None:
        when = None if self.closed else self._wake_at()
        if when == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = when
        if when is not None:
            self._timer = self.clock.call_at(when, self._wake)

    def _wake(self) -> None:
        self._timer = None
        self._timer_at = None
        if not self.closed:
            self.post(Tick())

    def _tick(self) -> None:
        now = self.clock.now()
        if self.phase is Phase.PEEK and self.peek_ends is not None and now >= self.peek_ends:
            self._begin_play()
        elif self.phase is Phase.ROUND_OVER and self.next_round_at is not None and now >= self.next_round_at:
            self._deal()
        elif self.phase is Phase.PLAY:
            events = self._advance()
            if events:
                self._after_play(events, [])

    def _advance(self) -> list[Event]:
        """Advance the engine to now, timing out players who are away; the events."""
        game = self.game
        assert game is not None
        now = self.round_now()
        events = game.advance(now)
        due = self._auto_timeout_at()
        while due is not None and due <= now and game.round is not None and not game.round.ended:
            # Time out at the instant it fell due (a record replays the same), then catch up to now.
            events.extend(game.advance(max(due, game.round.now)))
            if game.round.ended:
                break
            action = TimeOut(game.round.turn)
            self._log_action(Timed(game.round.now, action))
            events.extend(game.apply(action))
            events.extend(game.advance(now))
            due = self._auto_timeout_at()
        if events and game.round is not None and self.game_id is not None:
            # Timers changed the game: keep the instant, so that a replay reproduces it.
            self._save(SetClock(self.game_id, game.round.index, game.round.now, ended=game.round.ended))
        return events

    # -- inbound ---------------------------------------------------------------------------------------

    def _inbound(self, conn: Member, msg: Any) -> None:
        try:
            if isinstance(msg, p.Create | p.Join):
                self._join(conn, msg.name)
            elif isinstance(msg, p.Resume):
                self._resume(conn, msg.token)
            elif isinstance(msg, p.Watch):
                self._watch(conn)
            elif isinstance(msg, p.Ping):  # in order with what this room sent; v only for its members
                self._send(conn, p.pong_message(self.v if conn in self.members else 0))
            elif conn not in self.members:
                raise RoomError(p.ProtocolCode.NOT_IN_ROOM)
            elif isinstance(msg, p.Sync):
                self._send(conn, self._message(conn, "snapshot", []))
            else:
                self._seated_command(conn, msg)
        except RoomError as err:
            v = self.v if conn in self.members else 0  # a refused entry learns nothing of the room
            self._send(conn, p.error_message(v, err.code, conn.lang))
            if not self.seats and not self.members:  # a create that was refused: nobody will ever come
                self._close()

    def _seat_of(self, conn: Member) -> Seat:
        seat = self.members.get(conn)
        if seat is None:
            raise RoomError(p.ProtocolCode.NOT_SEATED)
        return seat

    def _require_host(self, seat: Seat) -> None:
        if self.seats.index(seat) != self.host:
            raise RoomError(p.ProtocolCode.NOT_HOST)

    def _seated_command(self, conn: Member, msg: Any) -> None:
        if isinstance(msg, p.Leave):
            self._leave(conn)
            return
        seat = self._seat_of(conn)
        if isinstance(msg, p.ACTION_MESSAGES):
            self._action(conn, seat, msg)
        elif isinstance(msg, p.Ready):
            self._ready(seat)
        elif isinstance(msg, p.React):
            self._react(seat, msg.emoji)
        elif isinstance(msg, p.Kick):
            self._kick(seat, msg.seat)
        elif isinstance(msg, p.SetOptions):
            self._require_host(seat)
            if self.phase is not Phase.LOBBY:
                raise RoomError(p.ProtocolCode.GAME_RUNNING)
            self.options = Options(msg.score_limit, msg.turn_seconds, msg.discard_draw)
            self._save_room()
            self._publish([], [{"type": "options_changed"}])
        elif isinstance(msg, p.Start):
            self._require_host(seat)
            if self.phase is not Phase.LOBBY:
                raise RoomError(p.ProtocolCode.GAME_RUNNING)
            if not 2 <= len(self.seats) <= MAX_SEATS:
                raise RoomError(p.ProtocolCode.NOT_ENOUGH_PLAYERS)
            self._start_game()
        elif isinstance(msg, p.Rematch):
            self._require_host(seat)
            if self.phase is not Phase.GAME_OVER:
                raise RoomError(p.ProtocolCode.WRONG_PHASE)
            self._rematch()
        else:
            raise RoomError(p.ProtocolCode.BAD_MESSAGE)

    # -- membership ------------------------------------------------------------------------------------

    def _admit(self, conn: Member) -> None:
        if conn.room is not None:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        conn.room = self

    def _join(self, conn: Member, raw_name: str) -> None:
        name = clean_name(raw_name)
        if name is None:
            raise RoomError(p.ProtocolCode.BAD_NAME)
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if len(self.seats) >= MAX_SEATS:
            raise RoomError(p.ProtocolCode.ROOM_FULL)
        if any(s.name.casefold() == name.casefold() for s in self.seats):
            raise RoomError(p.ProtocolCode.NAME_TAKEN)
        self._admit(conn)
        token = new_token()
        seat = Seat(
            name,
            hash_token(token),
            TokenBucket(self.settings.reaction_burst, 1 / self.settings.reaction_seconds, self.clock.now()),
            conn,
            connected_at=datetime.now(UTC),
        )
        self.seats.append(seat)
        self.members[conn] = seat
        index = len(self.seats) - 1
        self._save_room()
        self._send(conn, self._welcome(index, token))
        self._publish([], [{"type": "joined", "seat": index, "name": name}])

    def _claim_seat(self, conn: Member, token: str) -> Seat:
        """The seat of ``token``, now on ``conn`` (an older connection of the same player is replaced)."""
        seat = next((s for s in self.seats if token_matches(token, s.token_hash)), None)
        if seat is None:
            raise RoomError(p.ProtocolCode.BAD_TOKEN)
        if conn.room is not None and conn is not seat.conn:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        old = seat.conn
        if old is not None and old is not conn:
            # The same player on a new connection (a reload, another tab): the new one wins.
            self.members.pop(old, None)
            old.room = None
            self._send(old, orjson.dumps({"type": "replaced", "v": self.v}))
            self._hang_up(old, CLOSE_REPLACED, "replaced by a newer connection")
        conn.room = self
        seat.conn = conn
        self.members[conn] = seat
        return seat

    def _resume(self, conn: Member, token: str) -> None:
        seat = self._claim_seat(conn, token)
        seat.left = False
        seat.connected_at = datetime.now(UTC)
        index = self.seats.index(seat)
        self._save_room()
        self._send(conn, self._welcome(index, None))
        events = self._unpause()
        self._publish(events, [{"type": "connected", "seat": index}])

    def _unpause(self) -> list[Event]:
        """The first player is back in a waiting game. A peek or a pause between rounds starts over in
        full; a round goes on from where it stopped, as after a restart (the absence counts against
        nobody; see ``Game.resume``), and the record keeps the instant."""
        if not self.paused:
            return []
        self.paused = False
        self.paused_at = None
        now = self.clock.now()
        if self.phase is Phase.PEEK:
            self.peek_ends = now + int(self.settings.peek_seconds * 1000)
            return []
        if self.phase is Phase.ROUND_OVER:
            self.next_round_at = now + int(self.settings.next_round_seconds * 1000)
            return []
        game, record = self.game, self.record
        assert game is not None
        assert record is not None
        assert self.game_id is not None
        r = game.round
        assert r is not None
        self.round_zero = now - r.now
        events = game.resume()
        rr = record.rounds[-1]
        resume = Resume(len(rr.actions), r.now)
        rr.resumes.append(resume)
        self._save(AddResume(self.game_id, r.index, resume.after, resume.at))
        return events

    def _watch(self, conn: Member) -> None:
        if self.phase is Phase.LOBBY and len(self.seats) < MAX_SEATS:
            raise RoomError(p.ProtocolCode.NOT_WATCHABLE)
        self._admit(conn)
        self.members[conn] = None
        self._send(conn, self._welcome(None, None))
        self._publish([], [{"type": "spectator_joined"}])

    def _detach(self, conn: Member) -> None:
        if conn not in self.members:
            return
        seat = self.members.pop(conn)
        conn.room = None
        if seat is None:
            self._publish([], [{"type": "spectator_left"}])
            return
        if seat.conn is conn:
            seat.conn = None
            self._publish([], [{"type": "disconnected", "seat": self.seats.index(seat)}])
            # Only connected players are waited for: if this one was the last not ready, nobody is now.
            self._maybe_all_ready()
            self._wait_if_deserted()

    def _wait_if_deserted(self) -> None:
        """No player is connected any more: bring a round in play up to now, then let the game wait for
        them, whatever its phase (a peek or a pause between rounds would otherwise deal and time out moves
        for nobody, for ever)."""
        if self.paused or self.phase not in GAME_PHASES or any(s.conn is not None for s in self.seats):
            return
        if self.phase is Phase.PLAY:
            events = self._advance()
            if events:
                self._after_play(events, [])
        self.paused = self.phase in GAME_PHASES
        if self.paused:
            self.paused_at = self.clock.now()
            self._save_room()  # the time it was saved is when its players went, should the server restart

    def _remove_seat(self, seat: Seat) -> int:
        """Take a seat out of the lobby; the host passes on if it was theirs. The old index."""
        index = self.seats.index(seat)
        self.seats.pop(index)
        if index < self.host:
            self.host -= 1
        elif index == self.host:
            self.host = index % len(self.seats) if self.seats else 0
        return index

    def _leave(self, conn: Member) -> None:
        seat = self.members.pop(conn, None)
        conn.room = None
        self._send(conn, orjson.dumps({"type": "left", "v": self.v}))
        self._hang_up(conn, CLOSE_LEFT, "left the room")
        if seat is None:
            self._publish([], [{"type": "spectator_left"}])
            return
        seat.conn = None
        if self.phase is Phase.LOBBY:
            index = self._remove_seat(seat)
            if not self.seats:
                self._close()
                return
            self._save_room()
            self._publish([], [{"type": "left", "seat": index, "host": self.host}])
            return
        index = self.seats.index(seat)
        seat.left = True
        if index == self.host:
            self._pass_host(index)
        if all(s.left for s in self.seats):
            self._close()
            return
        self._save_room()
        if self.phase is Phase.PLAY:
            events = self._advance()  # if it is their move, it is played on now
            self._after_play(events, [{"type": "left", "seat": index, "host": self.host}])
        else:
            self._publish([], [{"type": "left", "seat": index, "host": self.host}])
            self._maybe_all_ready()
        self._wait_if_deserted()

    def _pass_host(self, index: int) -> None:
        n = len(self.seats)
        for k in range(1, n + 1):
            if not self.seats[(index + k) % n].left:
                self.host = (index + k) % n
                return

    def _kick(self, seat: Seat, target: int) -> None:
        self._require_host(seat)
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 0 <= target < len(self.seats) or target == self.host:
            raise RoomError(p.ProtocolCode.NO_SUCH_SEAT)
        victim = self.seats[target]
        self._remove_seat(victim)
        if victim.conn is not None:
            conn = victim.conn
            self.members.pop(conn, None)
            conn.room = None
            self._send(conn, orjson.dumps({"type": "kicked", "v": self.v}))
            self._hang_up(conn, CLOSE_KICKED, "removed by the host")
        self._save_room()
        self._publish([], [{"type": "kicked", "seat": target}])

    # -- the game flow ---------------------------------------------------------------------------------

    def _start_game(self) -> None:
        names = [s.name for s in self.seats]
        first_dealer = secrets.randbelow(len(names))
        self.game = Game(names, self.options, first_dealer)
        self.record = Record(self.options, tuple(names), first_dealer, [])
        self.game_id = secrets.token_hex(8)
        self.fair = []
        self._save(
            StartGame(
                self.game_id,
                self.room_id,
                tuple(names),
                tuple(s.token_hash for s in self.seats),
                self.options.as_dict(),
                first_dealer,
            )
        )
        self._deal()

    def _rematch(self) -> None:
        staying = [s for s in self.seats if not s.left]
        host_seat = self.seats[self.host]
        self.seats = staying
        self.host = self.seats.index(host_seat) if host_seat in staying else 0
        self.game = None
        self.record = None
        self.game_id = None
        if len(self.seats) >= 2:
            self._start_game()
        else:
            self.phase = Phase.LOBBY
            self._save_room()
            self._publish([], [{"type": "lobby"}])

    def _deal(self) -> None:
        assert self.game is not None
        assert self.record is not None
        deck = list(FULL_DECK)
        shuffle(deck)
        fair = Fairness(secrets.token_hex(16), tuple(deck))
        self.fair.append(fair)
        self.record.rounds.append(RecordRound(fair.deck))
        events = self.game.start_round(deck)
        self.phase = Phase.PEEK
        self.round_zero = None
        self.next_round_at = None
        self.peek_ends = self.clock.now() + int(self.settings.peek_seconds * 1000)
        for s in self.seats:
            s.ready = s.left
        assert self.game_id is not None
        self._save(StartRound(self.game_id, len(self.fair) - 1, fair.deck, fair.salt))
        self._save_room()
        self._publish(events, [{"type": "peek", "commitment": fair.commitment}])

    def _begin_play(self) -> None:
        self.phase = Phase.PLAY
        self.peek_ends = None
        self.round_zero = self.clock.now()
        self._save_room()
        events = self._advance()  # a player who left is played on at once
        self._after_play(events, [{"type": "play"}])

    def _ready(self, seat: Seat) -> None:
        if self.phase not in (Phase.PEEK, Phase.ROUND_OVER):
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        if seat.ready:
            return
        seat.ready = True
        self._publish([], [{"type": "ready", "seat": self.seats.index(seat)}])
        self._maybe_all_ready()

    def _maybe_all_ready(self) -> None:
        present = [s for s in self.seats if not s.left and s.conn is not None]
        if not present or not all(s.ready for s in present):
            return
        if self.phase is Phase.PEEK:
            self._begin_play()
        elif self.phase is Phase.ROUND_OVER:
            self._deal()

    def _action(self, conn: Member, seat: Seat, msg: Any) -> None:
        if self.phase is Phase.PEEK:
            raise RoomError(RuleCode.TOO_EARLY)
        if self.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
            raise RoomError(RuleCode.ROUND_OVER)
        if self.phase is not Phase.PLAY:
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        game = self.game
        assert game is not None
        index = self.seats.index(seat)
        action = _to_action(index, msg)
        events = self._advance()
        rejected: RuleCode | None = None
        if game.round is not None and not game.round.ended:
            try:
                events.extend(game.apply(action))
                self._log_action(Timed(game.round.now, action))
                self._accepted.append(self._arrived)
                self._movers.append(conn)
            except ValueError as exc:  # Rejected: nothing changed
                rejected = getattr(exc, "code", RuleCode.NOT_YOUR_TURN)
        else:
            rejected = RuleCode.ROUND_OVER
        if events:
            self._after_play(events, [])
        if rejected is not None:
            raise RoomError(rejected)

    def _log_action(self, timed: Timed) -> None:
        assert self.record is not None
        assert self.game_id is not None
        actions = self.record.rounds[-1].actions
        self._save(AppendAction(self.game_id, len(self.record.rounds) - 1, len(actions), timed))
        actions.append(timed)

    def _after_play(self, events: list[Event], room_events: list[dict[str, Any]]) -> None:
        """Publish the engine's events; move on to the round's end if it ended."""
        game = self.game
        assert game is not None
        r = game.round
        assert r is not None
        extra = list(room_events)
        if r.ended and self.phase is Phase.PLAY:
            assert self.record is not None
            self.record.rounds[-1].end_at = r.end_at
            fair = self.fair[-1]
            extra.append({"type": "deck_revealed", "salt": fair.salt, "deck": list(fair.deck)})
            self.round_zero = None
            for s in self.seats:
                s.ready = s.left
            assert self.game_id is not None
            assert r.end_at is not None
            self._save(SetClock(self.game_id, r.index, r.end_at, ended=True))
            if game.game_over:
                self.phase = Phase.GAME_OVER
                self._save(FinishGame(self.game_id, tuple(game.totals), game.winners))
            else:
                self.phase = Phase.ROUND_OVER
                self.next_round_at = self.clock.now() + int(self.settings.next_round_seconds * 1000)
            self._save_room()
        self._publish(events, extra)

    def _react(self, seat: Seat, emoji: str) -> None:
        if emoji not in p.REACTIONS:
            raise RoomError(p.ProtocolCode.BAD_REACTION)
        if not seat.reactions.take(self.clock.now()):
            raise RoomError(p.ProtocolCode.RATE_LIMITED)
        self._publish([], [{"type": "reaction", "seat": self.seats.index(seat), "emoji": emoji}])

    # -- closing ---------------------------------------------------------------------------------------

    def _close(self) -> None:
        """The last player left: let the spectators go, and leave the registry."""
        self._save(CloseRoom(self.room_id))
        self._send_away("room_closed", CLOSE_LEFT, "the room closed", leave_registry=True)

    def _abandon(self) -> None:
        """No player came back for ``idle_game_hours``: the game ends unfinished, with the totals of the rounds
        played and no winner; its record stays (listed with the room's games, served to its players, kept
        as long as finished games), and the room closes."""
        game = self.game
        assert game is not None
        assert self.game_id is not None
        self._save(FinishGame(self.game_id, tuple(game.totals), (), abandoned=True))
        log.info("game abandoned", extra={"room": self.code})
        self._close()

    def _shutdown(self) -> None:
        """The server stops: tell everyone to come back in a moment, and close."""
        self._send_away("restarting", CLOSE_RESTART, "server restarting", leave_registry=False)

    def _send_away(self, kind: str, code: int, reason: str, *, leave_registry: bool) -> None:
        """Tell every member ``kind``, close their sockets after it, and stop the room."""
        data = orjson.dumps({"type": kind, "v": self.v})
        for conn in list(self.members):
            self._send(conn, data)
            self._hang_up(conn, code, reason)
            conn.room = None
        self.members.clear()
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
        if leave_registry and self._on_close is not None:
            self._on_close(self)

    # -- outbound --------------------------------------------------------------------------------------

    def room_state(self) -> dict[str, Any]:
        """The lobby part of every message: public."""
        fair: dict[str, Any] | None = None
        if self.fair:
            last = self.fair[-1]
            fair = {"round": len(self.fair) - 1, "commitment": last.commitment}
            if self.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
                fair["salt"] = last.salt
                fair["deck"] = list(last.deck)
        return {
            "code": self.code,
            "link": self.link,
            "phase": self.phase.value,
            "host": self.host,
            "seats": [
                {"name": s.name, "connected": s.conn is not None, "left": s.left, "ready": s.ready} for s in self.seats
            ],
            "options": self.options.as_dict(),
            "spectators": sum(1 for s in self.members.values() if s is None),
            "fair": fair,
        }

    def _clocks(self) -> dict[str, int | None]:
        """What runs, as milliseconds left: phones' clocks are not trusted. Nothing runs while the game
        waits for its players."""
        now = self.clock.now()

        def left(at: int | None) -> int | None:
            return None if at is None or self.paused else max(0, at - now)

        out: dict[str, int | None] = {
            "peek_ends_in": left(self.peek_ends) if self.phase is Phase.PEEK else None,
            "next_round_in": left(self.next_round_at) if self.phase is Phase.ROUND_OVER else None,
            "deadline_in": None,
            "may_draw_in": None,
            "window_closes_in": None,
            "auto_timeout_in": None,
        }
        game = self.game
        r = game.round if game is not None else None
        if self.phase is Phase.PLAY and game is not None and r is not None and self.round_zero is not None:
            zero = self.round_zero
            deadline = game.deadline()
            out["deadline_in"] = left(zero + deadline) if deadline is not None else None
            out["may_draw_in"] = left(zero + r.move_start)
            out["window_closes_in"] = left(zero + r.window_closes) if r.window_seat is not None else None
            auto = self._auto_timeout_at()
            out["auto_timeout_in"] = left(zero + auto) if auto is not None else None
        return out

    def _shared(self) -> bytes:
        """The part of a message that is the same for every recipient, encoded once."""
        table = table_view(self.game) if self.game is not None else None
        return orjson.dumps({"room": self.room_state(), "table": table, "clock": self._clocks()})[1:-1]

    def _you(self, seat: Seat | None) -> dict[str, Any]:
        if seat is None or self.game is None:
            index = self.seats.index(seat) if seat is not None else None
            you: dict[str, Any] = {"seat": index, "drawn_card": None, "can": []}
        else:
            index = self.seats.index(seat)
            you = private_view(self.game, index)
            if self.phase is not Phase.PLAY:
                you["can"] = []
        you["spectator"] = seat is None
        you["host"] = seat is not None and index == self.host
        return you

    def _message(self, conn: Member, kind: str, events: list[Any]) -> bytes:
        return self._public_part(kind) + self._private_part(self.members.get(conn), orjson.dumps(events))

    def _public_part(self, kind: str) -> bytes:
        """The start of a message: its type and version, then what every recipient sees."""
        return b'{"type":"%s","v":%d,' % (kind.encode(), self.v) + self._shared()

    def _private_part(self, seat: Seat | None, events: bytes) -> bytes:
        """The end of a message: what only this member sees, then the events (already encoded)."""
        return b',"you":' + orjson.dumps(self._you(seat)) + b',"events":' + events + b"}"

    def _welcome(self, index: int | None, token: str | None) -> bytes:
        return orjson.dumps(
            {"type": "welcome", "v": self.v, "room": self.code, "seat": index, "token": token, "link": self.link}
        )

    def _next_version(self) -> None:
        """Bump ``v``; past the versions reserved, reserve more in the commit that carries this message."""
        self.v += 1
        if self.v > self.v_reserved:
            self.v_reserved = self.v + VERSION_BLOCK
            self._save(ReserveVersion(self.room_id, self.v_reserved))

    def _publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None:
        """Version the change and send each member its own message."""
        self._next_version()
        # Encoded once: the head and the public part; the events too unless some are addressed to a seat.
        start = self._public_part("update")
        dicts = [event_to_dict(e) for e in events]
        private = any(e.to is not None for e in events)
        public = b""
        if not private:
            public = orjson.dumps(dicts + room_events)
        for conn, seat in self.members.items():
            encoded = public
            if private:
                index = self.seats.index(seat) if seat is not None else None
                visible = [d for e, d in zip(events, dicts, strict=True) if visible_to(e, index)] + room_events
                encoded = orjson.dumps(visible)
            self._send(conn, start + self._private_part(seat, encoded))


def _ms_since(instant: datetime | None) -> int:
    """Milliseconds from a stored instant to now (none if unknown; SQLite gives back instants without zone: UTC)."""
    if instant is None:
        return 0
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return max(0, int((datetime.now(UTC) - instant).total_seconds() * 1000))


def _deliver(items: Sequence[tuple[Member, bytes | tuple[int, str]]]) -> None:
    """Hand queued frames and closes to their connections, in order."""
    for conn, item in items:
        if isinstance(item, tuple):
            conn.close(*item)
        else:
            conn.send(item)


def _to_action(seat: int, msg: Any) -> Action:
    if isinstance(msg, p.DrawMsg):
        return Draw(seat, Source(msg.source))
    if isinstance(msg, p.SwapMsg):
        return Swap(seat, Slot.parse(msg.slot))
    if isinstance(msg, p.DiscardMsg):
        return Discard(seat)
    if isinstance(msg, p.JackMsg):
        return UseJack(seat)
    if isinstance(msg, p.QueenMsg):
        return UseQueen(seat, Slot.parse(msg.slot), msg.target, Slot.parse(msg.target_slot))
    if isinstance(msg, p.KingMsg):
        return UseKing(seat)
    return CallCrisp(seat)
