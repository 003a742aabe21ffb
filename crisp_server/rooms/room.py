"""One private room, the only writer of its state.

Joins, options, actions, disconnects and timer expiries are messages posted to the room and handled at
once, one at a time, on the event loop; no locks, no races, no task hop. What a message changed is handed
to the store's group commit, and what it caused is delivered only once that commit is done (in order:
the room goes on with the next message meanwhile). Nothing here awaits a socket: every outgoing message
goes to the recipient connection (``SeatDriver.send``), which never blocks the room.
Every message published to the room bumps the version ``v``, which never goes back, across restarts too
(``VERSION_BLOCK``); each recipient gets its own message built from the engine's view of its seat
(``crisp_server.engine.views``) and the events it may see.

Time: the room reads a monotonic ``Clock`` (real in the server, manual in tests). A round's engine
clock is "milliseconds since play started" (the peek is not counted).

The room is an actor that owns parts, one module each, none of which imports this one or another part: the
seats (``seating.py``), the table (``table.py``), the computer players (``computers.py``), the publisher
(``publishing.py``), the lesson of a lesson room (``lesson.py``) and recovery (``recovery.py``). They share the
room's data (``state.py``) and get what they need of each other through their constructors. The room keeps the
mailbox, the write-ahead and the timer (``actor.py``), and dispatches each message to the part that handles it
(the tables ``MESSAGES``, ``ANYONE`` and ``MEMBERS`` at the end of this module, built once for every room).
What drives a seat is a ``SeatDriver`` (``driver.py``)."""

from __future__ import annotations

import secrets
from abc import ABC
from collections.abc import Callable, Sequence
from typing import Any

from crisp_server.engine import Game, Options, Record
from crisp_server.settings import Settings
from crisp_server.store.reads import StoredRoom
from crisp_server.store.store import Store
from crisp_server.wire import protocol as p

from .actor import Actor
from .clock import Clock
from .computers import Computers
from .driver import SeatDriver
from .lesson import Lesson
from .messages import Abandon, Detach, Expire, Inbound, MoveAway, RoomError, RoomMessage, Shutdown, Tick
from .phase import Fairness, Phase
from .publishing import Publisher
from .recovery import Recovery
from .seating import Seating
from .seats import Seat
from .state import RoomState
from .table import Table

#: Handles an inbound message: (the room, the sender's connection, the message).
Command = Callable[["Room", SeatDriver, Any], None]
#: Handles a message posted to the room: (the room, the message).
Handler = Callable[["Room", Any], None]


class Room(ABC):  # noqa: B024 (see below: nothing is abstract)
    """A private room; :meth:`post` is the only way in, from any coroutine. It holds its data (``state``), its
    actor (the mailbox, the write-ahead, the timer) and its parts, and dispatches each message to them.

    (``ABC``, a base that is not compiled, gives the compiled class a ``__dict__``: a test may wrap one room's
    ``post``, as it may an interpreted one's. Nothing is abstract.)"""

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
        st = self.state = RoomState(
            code, link, room_id or secrets.token_hex(8), settings, clock, keeps=store is not None
        )
        self.store = store
        self._on_close = on_close
        #: Called when the room is suspended (the registry retries until the database answers).
        self.on_suspend: Callable[[Room], None] | None = None
        self.actor = Actor(
            st,
            store,
            room=self,
            handle=self.handle,
            wake_at=self._wake_at,
            left=self._left,
            suspended=self._suspended,
            tell_unavailable=lambda greeting, first: self.recovery.tell_unavailable(greeting, first=first),
        )
        # The parts, each given what it needs of the others (a lambda: of a part built below).
        self.publisher = Publisher(
            st,
            auto_timeout_at=lambda: self.table.auto_timeout_at(),  # noqa: PLW0108
            subject=self,
            lesson=lambda: self.lesson.view(),  # noqa: PLW0108
        )
        self.computers = Computers(st, self.publisher, room=self, remove_seat=lambda s: self.seating.remove_seat(s))  # noqa: PLW0108
        self.table = Table(st, self.publisher.publish, self.actor.close, self.computers)
        self.lesson = Lesson(st, self.table, self.publisher.publish, self.table.action)
        self.seating = Seating(
            st, self.publisher, self.table, room=self, close=self.actor.close, claimed=self.computers.claimed
        )
        self.recovery = Recovery(
            st,
            self.publisher,
            claim_seat=self.seating.claim_seat,
            unpause=self.table.unpause,
            seat_computers=self.computers.seat_computers,
            shutdown=self.actor.shutdown,
            move_away=self.actor.move_away,
            gone=self.actor.gone,
        )
        self.touched = clock.now()  # the last message handled (idle rooms are closed)

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
        clock. Its version goes on above every one it may have sent (saved before anyone hears from it).
        Its link follows this server's address, not the one it was created under (a backup restored on another
        server, a server that moved): ``CRISP_PUBLIC_URL`` if set, else the address its host's page comes back
        at (``Seating.resume``)."""
        public = settings.public_url
        link = f"{public}/r/{stored.code}" if public else stored.link
        room = cls(stored.code, link, settings, clock, on_close, store=store, room_id=stored.id)
        st = room.state
        room.recovery.load(stored)
        st.relink = not public
        if link != stored.link:
            st.save_room()
        room.computers.seat_computers()
        # Above every version a client may have seen: saved before anything is sent (Registry.restore).
        st.v = st.v_sent = stored.v
        room.publisher.next_version()
        return room

    # -- the dispatch: each message to the part that handles it (the tables are at the end of the module) ----

    def handle(self, message: RoomMessage) -> None:
        """Handle one message; what it sends goes out once what it changed is committed (:meth:`post`)."""
        st = self.state
        self.touched = st.clock.now()
        if st.suspended:
            self.recovery.while_suspended(message)
            return
        handler = MESSAGES.get(type(message))
        if handler is not None:
            handler(self, message)

    def _inbound(self, message: Inbound) -> None:
        st = self.state
        conn, msg = message.conn, message.message
        st.arrived = message.arrived
        try:
            command = ANYONE.get(type(msg))
            if command is None:
                if conn not in st.members:
                    raise RoomError(p.ProtocolCode.NOT_IN_ROOM)
                command = MEMBERS.get(type(msg))
                if command is None:
                    self.seating.seat_of(conn)  # a spectator's is refused as such
                    raise RoomError(p.ProtocolCode.BAD_MESSAGE)
            command(self, conn, msg)
        except RoomError as err:
            v = st.v if conn in st.members else 0  # a refused entry learns nothing of the room
            st.send(conn, p.error_message(v, err.code, conn.lang))
            if not st.seats and not st.members:  # a create that was refused: nobody will ever come
                self.actor.close()

    def _create(self, conn: SeatDriver, msg: p.Create) -> None:
        """The room's creator sits down; with computer players, they sit down too and the game starts. A lesson
        seats its two computer players and deals its own round."""
        if msg.lesson:
            self.state.lesson_step = 0
            self.seating.join(conn, msg.name)
            for _ in range(2):
                self.computers.add_bot("normal")
            self.table.start_game()
            return
        self.seating.join(conn, msg.name)
        if msg.bots:
            for _ in range(msg.bots):
                self.computers.add_bot(msg.level)
            self.table.start_game()

    def _tick(self) -> None:
        self.computers.stand_ins()
        self.table.tick()
        self.lesson.tick()

    def _wake_at(self) -> int | None:
        """The clock instant at which the table next needs a tick, if any."""
        return self.lesson.wake_at(self.computers.wake_at(self.table.wake_at()))

    def _expire(self) -> None:
        if not self.computers.people_here():
            self.actor.close()

    def _abandon(self) -> None:
        if self.state.paused:
            self.table.abandon()

    # -- the actor's ---------------------------------------------------------------------------------------

    def post(self, message: RoomMessage) -> None:
        """Handle ``message`` now (or right after the one being handled); what it sends goes out once what
        it changed is committed."""
        self.actor.post(message)

    async def flush(self) -> None:
        """Submit what is waiting, and wait until everything this room submitted is committed and sent."""
        await self.actor.flush()

    async def recover(self) -> bool:
        """Rebuild the room from the database and go on from there; whether it is back (its first commit
        went through). Raises if the database cannot be read yet."""
        return await self.actor.recover()

    def _left(self) -> None:
        if self._on_close is not None:
            self._on_close(self)

    def _suspended(self) -> None:
        if self.on_suspend is not None:
            self.on_suspend(self)

    def lose(self, also: Sequence[SeatDriver] = (), why: str = "another node holds it now") -> None:
        """Another node holds the room now: see ``Actor.lose``."""
        self.actor.lose(also, why)

    def people_here(self) -> bool:
        """Someone who is not a computer player is connected (a player or a spectator)."""
        return self.computers.people_here()

    def room_state(self) -> dict[str, Any]:
        """The lobby part of every message: public."""
        return self.publisher.room_state()

    def round_now(self) -> int:
        return self.table.round_now()

    # -- what the rest of the server reads -----------------------------------------------------------------

    @property
    def code(self) -> str:
        return self.state.code

    @property
    def room_id(self) -> str:
        return self.state.room_id

    @property
    def link(self) -> str:
        return self.state.link

    @property
    def relink(self) -> bool:
        return self.state.relink

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def clock(self) -> Clock:
        return self.state.clock

    @property
    def v(self) -> int:
        return self.state.v

    @property
    def v_reserved(self) -> int:
        return self.state.v_reserved

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def seats(self) -> list[Seat]:
        return self.state.seats

    @property
    def host(self) -> int:
        return self.state.host

    @property
    def members(self) -> dict[SeatDriver, Seat | None]:
        return self.state.members

    @property
    def options(self) -> Options:
        return self.state.options

    @property
    def stand_in(self) -> int | None:
        return self.state.stand_in

    @property
    def practice(self) -> bool:
        return self.state.practice

    @property
    def game(self) -> Game | None:
        return self.state.game

    @property
    def record(self) -> Record | None:
        return self.state.record

    @property
    def game_id(self) -> str | None:
        return self.state.game_id

    @property
    def fair(self) -> list[Fairness]:
        return self.state.fair

    @property
    def paused(self) -> bool:
        return self.state.paused

    @property
    def paused_at(self) -> int | None:
        return self.state.paused_at

    @property
    def closed(self) -> bool:
        return self.state.closed

    @property
    def suspended(self) -> bool:
        return self.state.suspended

    @property
    def lease(self) -> int | None:
        """In a cluster: the epoch of this node's lease of the room, checked by each of its commits."""
        return self.actor.lease

    @lease.setter
    def lease(self, epoch: int | None) -> None:
        self.actor.lease = epoch

    @property
    def lease_until(self) -> float:
        """In a cluster: until when (``time.monotonic()``) the lease is surely still this node's."""
        return self.actor.lease_until

    @lease_until.setter
    def lease_until(self, until: float) -> None:
        self.actor.lease_until = until

    @property
    def lost(self) -> bool:
        """In a cluster: another node took the room over; it stopped here and its members were sent there."""
        return self.actor.lost

    @property
    def observe_action(self) -> Callable[[float], None] | None:
        """Called with each accepted action's seconds from arrival to publication (metrics), if set."""
        return self.actor.observe_action

    @observe_action.setter
    def observe_action(self, call: Callable[[float], None] | None) -> None:
        self.actor.observe_action = call

    @property
    def _in_flight(self) -> int:
        """Submissions to the store not yet committed and delivered."""
        return self.actor.in_flight


# -- the dispatch tables: message type -> the part's method that handles it ------------------------------------
# Built once, for every room: each entry takes the room (no closures per room).


def _by_host(act: Callable[[Room, Any], object]) -> Command:
    """A command only the host may give (``require_host`` refuses anyone else, a spectator as such)."""

    def command(room: Room, conn: SeatDriver, msg: Any) -> None:
        room.seating.require_host(room.seating.seat_of(conn))
        act(room, msg)

    return command


def _ping(room: Room, conn: SeatDriver, msg: p.Ping) -> None:
    """In order with what this room sent; ``v`` only for its members."""
    st = room.state
    st.send(conn, p.pong_message(st.v if conn in st.members else 0))


def _set_lang(room: Room, conn: SeatDriver, msg: p.SetLang) -> None:
    """The member's texts from now on in its language: nothing of the room changes, nothing is answered."""
    conn.lang = msg.lang


def _action(room: Room, conn: SeatDriver, msg: Any) -> None:
    seat = room.seating.seat_of(conn)
    _played(room, seat, msg, lambda: room.table.action(conn, seat, msg))


def _ready(room: Room, conn: SeatDriver, msg: p.Ready) -> None:
    seat = room.seating.seat_of(conn)
    _played(room, seat, msg, lambda: room.table.ready(seat))


def _played(room: Room, seat: Seat, msg: Any, play: Callable[[], None]) -> None:
    """Play a move (``ready`` too); in a lesson, the learner's only if it is the step's, which it ends."""
    lesson = room.lesson
    if not lesson.active or seat.bot is not None:
        play()
        return
    lesson.check(msg)
    play()
    lesson.moved()


def _lesson(room: Room, conn: SeatDriver) -> Lesson:
    room.seating.seat_of(conn)  # a spectator's is refused as such
    if not room.lesson.active:
        raise RoomError(p.ProtocolCode.NOT_A_LESSON)
    return room.lesson


#: What the room does with each message posted to it (a suspended room: ``Recovery.while_suspended``); a
#: message of another type (a ``Reload`` that comes late) is dropped.
MESSAGES: dict[type, Handler] = {
    Inbound: lambda room, m: room._inbound(m),
    Detach: lambda room, m: room.seating.detach(m.conn),
    Tick: lambda room, m: room._tick(),
    Expire: lambda room, m: room._expire(),
    Abandon: lambda room, m: room._abandon(),
    Shutdown: lambda room, m: room.actor.shutdown(),
    MoveAway: lambda room, m: room.actor.move_away(),
}

#: Inbound messages anyone may send: entering the room, a ping.
ANYONE: dict[type, Command] = {
    p.Create: lambda room, conn, msg: room._create(conn, msg),
    p.Join: lambda room, conn, msg: room.seating.join(conn, msg.name),
    p.Resume: lambda room, conn, msg: room.seating.resume(conn, msg.token),
    p.Watch: lambda room, conn, msg: room.seating.watch(conn),
    p.Ping: _ping,
}

#: Inbound messages of the room's members (``seat_of``: the sender's seat, refused to a spectator;
#: ``_by_host``: the same, refused to anyone but the host).
MEMBERS: dict[type, Command] = {
    p.Sync: lambda room, conn, msg: room.state.send(conn, room.publisher.message(conn, "snapshot", [])),
    p.SetLang: _set_lang,
    p.Leave: lambda room, conn, msg: room.seating.leave(conn),
    p.Sit: lambda room, conn, msg: room.seating.sit(conn, msg.name),  # a spectator's
    p.Ready: _ready,
    p.React: lambda room, conn, msg: room.table.react(room.seating.seat_of(conn), msg.emoji),
    p.Kick: lambda room, conn, msg: room.seating.kick(room.seating.seat_of(conn), msg.seat),
    p.SetOptions: _by_host(lambda room, msg: room.table.set_options(msg)),
    p.Start: _by_host(lambda room, msg: room.table.start()),
    p.Rematch: _by_host(lambda room, msg: room.table.ask_rematch()),
    p.AddBot: _by_host(lambda room, msg: room.computers.add_bot(msg.level)),
    p.RemoveBot: _by_host(lambda room, msg: room.computers.remove_bot(msg.seat)),
    p.SetBotLevel: _by_host(lambda room, msg: room.computers.set_bot_level(msg.seat, msg.level)),
    p.HintMsg: lambda room, conn, msg: room.computers.hint(conn, room.seating.seat_of(conn)),
    p.LessonNext: lambda room, conn, msg: _lesson(room, conn).next(),
    p.LessonBack: lambda room, conn, msg: _lesson(room, conn).back(),
    **dict.fromkeys(p.ACTION_MESSAGES, _action),
}
