"""What a room knows, shared by its parts: who sits where, the phase, the options, the game and its record, the
round's timers, the version; and what the message being handled changed and caused (the write-ahead's
buffers: ``Room`` commits the changes, then delivers what they caused).

A plain object with no behaviour but filling those buffers: each part (``seating.py``, ``table.py``,
``computers.py``, ``publishing.py``, ``recovery.py``) reads and changes it, and the ``Room`` that holds them
all commits and sends what they left in it."""

from __future__ import annotations

from crisp_server.engine import Game, Options, Record
from crisp_server.settings import Settings
from crisp_server.store.operations import Op, SaveRoom, SeatData

from .clock import Clock
from .driver import SeatDriver
from .phase import Fairness, Phase
from .seats import Seat

#: What goes out to one connection: a frame, or a close (code, reason) after the frames before it.
Outgoing = tuple[SeatDriver, bytes | tuple[int, str]]


class RoomState:
    """One room's data; the parts hold the same one."""

    def __init__(self, code: str, link: str, room_id: str, settings: Settings, clock: Clock, *, keeps: bool) -> None:
        self.code = code
        self.room_id = room_id
        self.link = link
        #: A room rebuilt from the database without ``CRISP_PUBLIC_URL``: the first time its host's page comes
        #: back, the link takes that page's address (the server may have moved, or a backup was restored
        #: on another machine).
        self.relink = False
        self.settings = settings
        self.clock = clock
        #: The room has a store: its changes are written (else ``save`` keeps nothing).
        self.keeps = keeps
        self.v = 0
        self.v_reserved = 0  # the highest version the database allows (see ``publishing.VERSION_BLOCK``)
        self.v_sent = 0  # the version of the last message delivered: uncommitted versions are taken back
        self.phase = Phase.LOBBY
        self.seats: list[Seat] = []
        self.host = 0
        self.members: dict[SeatDriver, Seat | None] = {}  # None: a spectator
        self.options = Options()
        #: A computer player stands in for a person away this many seconds during a game (``None``: never).
        self.stand_in: int | None = None
        #: A big screen shows the table (``/tv/CODE``): the phones show a compact one. Changes no rule.
        self.big_screen = False
        #: Every seat but one is a computer player's: hints are offered to that one person.
        self.practice = False
        #: A lesson room (``lesson.py``): the learner's step in ``lesson_script.STEPS`` (``None``: not a lesson),
        #: the step shown (below it while an earlier one is read again), the computer players' moves of the step
        #: already played, the lesson's engine clock (round time: it stands still while the lesson waits for its
        #: learner) and when the computer players' next move is due (clock instant; ``None``: at once).
        self.lesson_step: int | None = None
        self.lesson_shown = 0
        self.lesson_done = 0
        self.lesson_now = 0
        self.lesson_due: int | None = None
        self.game: Game | None = None
        self.record: Record | None = None
        self.game_id: str | None = None
        self.fair: list[Fairness] = []
        self.round_zero: int | None = None  # clock instant of the current round's engine time 0
        self.peek_ends: int | None = None
        self.next_round_at: int | None = None
        #: A game with no player connected waits (peek, play or the pause between rounds): nothing times out
        #: for nobody to see, and the first player back resumes it.
        self.paused = False
        self.paused_at: int | None = None  # since when (clock instant): a game paused for long is abandoned
        self.closed = False
        #: The database has this room (one whose first save failed has nothing to go back to).
        self.saved = False
        #: A commit failed: the room shows what it last saved, changes nothing and waits for the database.
        self.suspended = False
        # The write-ahead: what changed waits in ``ops``, what it causes waits in ``outbox``, until the commit.
        self.ops: list[Op] = []
        self.outbox: list[Outgoing] = []
        #: Welcomes queued and not yet delivered: the frame, and whether it may be given again while the room
        #: is suspended (a resume or a watch: the seat is the database's; not a join, which may not be).
        self.greeting: dict[SeatDriver, tuple[bytes, bool]] = {}
        self.arrived = 0.0  # when the inbound message being handled arrived (``perf_counter``)
        self.accepted: list[float] = []  # the arrivals of the actions accepted, for the latency metric
        self.movers: list[SeatDriver] = []  # who made the accepted actions waiting for a commit

    def send(self, conn: SeatDriver, data: bytes) -> None:
        """Queue ``data`` for ``conn``: sent once what was changed before it is committed."""
        self.outbox.append((conn, data))

    def hang_up(self, conn: SeatDriver, code: int, reason: str) -> None:
        """Close ``conn`` after what is queued for it."""
        self.outbox.append((conn, (code, reason)))

    def save(self, *ops: Op) -> None:
        if self.keeps:
            self.ops.extend(ops)

    def save_room(self) -> None:
        """Save the lobby: the phase, the host, the options and the seats."""
        self.practice = len(self.seats) >= 2 and sum(1 for s in self.seats if s.bot is None) == 1
        options: dict[str, object] = {
            **self.options.as_dict(),
            "stand_in": self.stand_in,
            "big_screen": self.big_screen,
        }
        if self.lesson_step is not None:  # (in the room's options: nothing else has a place for it)
            options["lesson"] = {"step": self.lesson_step, "shown": self.lesson_shown, "done": self.lesson_done}
        self.save(
            SaveRoom(
                self.room_id,
                self.code,
                self.link,
                self.phase.value,
                self.host,
                options,
                tuple(SeatData(s.name, s.token_hash, s.left, s.connected_at, s.bot) for s in self.seats),
            )
        )
