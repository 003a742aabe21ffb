"""The table, a part of a room: a game's phases (deal, peek, play, round over, game over) over the engine, its
timers, and the pause while no player is connected. A round's engine clock is milliseconds since play started
(the peek is not counted).

It reads and changes the room's ``RoomState``; what it causes goes out through ``publish`` (the publisher's),
and the computer players hear of a game starting, a rematch and the end of a pause through ``TableHooks``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from crisp_server.engine import (
    FULL_DECK,
    Event,
    Game,
    Options,
    Record,
    RecordRound,
    Resume,
    Timed,
    TimeOut,
    redone_by_resume,
)
from crisp_server.engine import Code as RuleCode
from crisp_server.store.operations import AddResume, AppendAction, FinishGame, SetClock, StartGame, StartRound
from crisp_server.wire import protocol as p

from . import lesson_script, luck
from .driver import SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Fairness, Phase
from .seats import MAX_SEATS, Seat
from .state import RoomState

log = logging.getLogger("crisp.room")


class TableHooks(Protocol):
    """What the table tells the computer players (``Computers``) before it acts on the seats."""

    def starting(self) -> None:
        """A game is about to be dealt."""

    def rematching(self) -> None:
        """The game is over and the table goes back to the lobby (or deals again)."""

    def unpaused(self) -> None:
        """A game that waited for its players goes on."""


#: Publish the engine's events and the room's: version the change and send each member its own message.
Publish = Callable[[Sequence[Event], list[dict[str, Any]]], None]


class Table:
    """The game's flow at the table: deal, peek, play, round over, game over; the round clock, timing out
    players who are away, pausing while nobody is there and resuming, rematch (back to the lobby) and abandon.
    ``close``: the room's, when an abandoned game ends it."""

    def __init__(self, state: RoomState, publish: Publish, close: Callable[[], None], hooks: TableHooks) -> None:
        self.state = state
        self._publish = publish
        self._close = close
        self._hooks = hooks

    # -- time ------------------------------------------------------------------------------------------

    def round_now(self) -> int:
        st = self.state
        if st.lesson_step is not None:
            return st.lesson_now  # a lesson's clock: it stands still while the lesson waits for its learner
        assert st.round_zero is not None
        return st.clock.now() - st.round_zero

    def auto_timeout_at(self) -> int | None:
        """Round time at which the current move is timed out for a player who is away, if any."""
        st = self.state
        game = st.game
        r = game.round if game else None
        if game is None or r is None or r.ended:
            return None
        seat = st.seats[r.turn]
        if seat.left and seat.conn is None and st.stand_in is None:  # (else one stands in at once)
            # Nobody is coming back: play on at once, but leave the previous player their crisp window.
            return max(r.move_start, r.window_closes) if r.window_seat is not None else r.move_start
        if seat.conn is None and game.move_limit_ms is None:
            return r.move_start + int(st.settings.disconnect_timeout_seconds * 1000)
        return None

    def wake_at(self) -> int | None:
        st = self.state
        if st.paused or st.suspended:
            return None  # nobody is there to see it, or the database is down: no move times out
        if st.lesson_step is not None:
            return None  # a lesson moves its own clock (``Lesson``): nothing falls due by itself
        if st.phase is Phase.PEEK:
            return st.peek_ends
        if st.phase is Phase.ROUND_OVER:
            return st.next_round_at
        if st.phase is Phase.PLAY and st.game is not None and st.round_zero is not None:
            times = [t for t in (st.game.next_deadline(), self.auto_timeout_at()) if t is not None]
            return st.round_zero + min(times) if times else None
        return None

    def tick(self) -> None:
        st = self.state
        now = st.clock.now()
        if st.phase is Phase.PEEK and st.peek_ends is not None and now >= st.peek_ends:
            self._begin_play()
        elif st.phase is Phase.ROUND_OVER and st.next_round_at is not None and now >= st.next_round_at:
            self._deal()
        elif st.phase is Phase.PLAY:
            events = self.advance()
            if events:
                self.after_play(events, [])

    def advance(self) -> list[Event]:
        """Advance the engine to now, timing out players who are away; the events."""
        st = self.state
        game = st.game
        assert game is not None
        now = self.round_now()
        events = game.advance(now)
        due = self.auto_timeout_at()
        while due is not None and due <= now and game.round is not None and not game.round.ended:
            # Time out at the instant it fell due (a record replays the same), then catch up to now.
            events.extend(game.advance(max(due, game.round.now)))
            if game.round.ended:
                break
            action = TimeOut(game.round.turn)
            self._log_action(Timed(game.round.now, action))
            events.extend(game.apply(action))
            events.extend(game.advance(now))
            due = self.auto_timeout_at()
        if events and game.round is not None and st.game_id is not None and not redone_by_resume(events):
            # Timers changed the game: keep the instant, so that a replay reproduces it. (A crisp window that
            # closed and a move that started need not be kept: a resume after an interruption does both.)
            st.save(SetClock(st.game_id, game.round.index, game.round.now, ended=game.round.ended))
        return events

    # -- waiting for the players -----------------------------------------------------------------------

    def unpause(self) -> list[Event]:
        """The first player is back in a waiting game. A peek or a pause between rounds starts over in
        full; a round goes on from where it stopped, as after a restart (the absence counts against
        nobody; see ``Game.resume``), and the record keeps the instant. The events of the round resumed."""
        if not self.state.paused:
            return []
        events = self._go_on()
        self._hooks.unpaused()
        return events

    def _go_on(self) -> list[Event]:
        st = self.state
        st.paused = False
        st.paused_at = None
        now = st.clock.now()
        if st.phase is Phase.PEEK:
            st.peek_ends = now + int(st.settings.peek_seconds * 1000)
            return []
        if st.phase is Phase.ROUND_OVER:
            st.next_round_at = now + int(st.settings.next_round_seconds * 1000)
            return []
        game, record = st.game, st.record
        assert game is not None
        assert record is not None
        assert st.game_id is not None
        r = game.round
        assert r is not None
        st.round_zero = now - r.now
        if st.lesson_step is not None:
            return []  # a lesson's clock stood still meanwhile: its move, its crisp window go on as they were
        events = game.resume()
        rr = record.rounds[-1]
        resume = Resume(len(rr.actions), r.now)
        rr.resumes.append(resume)
        st.save(AddResume(st.game_id, r.index, resume.after, resume.at))
        return events

    def wait_if_deserted(self) -> None:
        """No player is connected any more: bring a round in play up to now, then let the game wait for
        them, whatever its phase (a peek or a pause between rounds would otherwise deal and time out moves
        for nobody, for ever)."""
        st = self.state
        if st.paused or st.phase not in GAME_PHASES or any(s.person_here for s in st.seats):
            return
        if st.phase is Phase.PLAY:
            events = self.advance()
            if events:
                self.after_play(events, [])
        st.paused = st.phase in GAME_PHASES
        if st.paused:
            st.paused_at = st.clock.now()
            st.save_room()  # the time it was saved is when its players went, should the server restart

    # -- the game flow ---------------------------------------------------------------------------------

    def set_options(self, msg: p.SetOptions) -> None:
        """The host sets the options: those sent, the others stay. The rule options and ``stand_in`` in the
        lobby only; ``big_screen`` at any time (it changes no rule: a big screen may be turned on mid-game)."""
        st = self.state
        given = msg.model_fields_set
        rules = "score_limit" in given  # (the three go together: ``SetOptions`` checks it)
        if st.phase is not Phase.LOBBY and (rules or "stand_in" in given):
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if rules:
            st.options = Options(msg.score_limit, msg.turn_seconds, msg.discard_draw)
        if "stand_in" in given:
            st.stand_in = msg.stand_in
        if "big_screen" in given:
            st.big_screen = msg.big_screen
        st.save_room()
        self._publish([], [{"type": "options_changed"}])

    def start(self) -> None:
        """The host starts the game, from the lobby, with 2 to ``MAX_SEATS`` seats taken."""
        st = self.state
        if st.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 2 <= len(st.seats) <= MAX_SEATS:
            raise RoomError(p.ProtocolCode.NOT_ENOUGH_PLAYERS)
        self.start_game()

    def start_game(self) -> None:
        self._hooks.starting()
        st = self.state
        names = [s.name for s in st.seats]
        lesson = st.lesson_step is not None
        first_dealer = lesson_script.FIRST_DEALER if lesson else luck.LUCK.randbelow(len(names))
        st.game = Game(names, st.options, first_dealer)
        st.record = Record(st.options, tuple(names), first_dealer, [])
        st.game_id = luck.LUCK.token_hex(8)
        st.fair = []
        st.save(
            StartGame(
                st.game_id,
                st.room_id,
                tuple(names),
                tuple(s.token_hash for s in st.seats),
                st.options.as_dict(),
                first_dealer,
                st.host,
            )
        )
        self._deal()

    def ask_rematch(self) -> None:
        """The host asks for another game, once this one is over."""
        if self.state.phase is not Phase.GAME_OVER:
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        self.rematch()

    def rematch(self) -> None:
        """Back to the lobby with the same seats (those who left are dropped) and options: spectators may sit
        down there, and the host starts when ready. A practice game nobody watches deals again at once: a
        person alone against the computer has nobody to wait for."""
        self._hooks.rematching()
        st = self.state
        staying = [s for s in st.seats if not s.left]
        host_seat = st.seats[st.host]
        st.seats = staying
        st.host = st.seats.index(host_seat) if host_seat in staying else 0
        st.game = None  # the finished game's table goes with it: the lobby shows none (``table`` is null)
        st.record = None
        st.game_id = None
        st.fair = []
        people = sum(1 for s in staying if s.bot is None)
        watched = None in st.members.values()
        if len(staying) >= 2 and people == 1 and not watched:
            self.start_game()
            return
        st.phase = Phase.LOBBY
        for s in staying:
            s.ready = False
        st.save_room()
        self._publish([], [{"type": "lobby"}])

    def _deal(self) -> None:
        st = self.state
        assert st.game is not None
        assert st.record is not None
        deck = list(FULL_DECK)
        luck.LUCK.shuffle(deck)
        if st.lesson_step is not None:
            deck = list(lesson_script.DECK)  # a lesson's deal is its own (still committed to, as any)
        fair = Fairness(luck.LUCK.token_hex(16), tuple(deck))
        st.fair.append(fair)
        st.record.rounds.append(RecordRound(fair.deck))
        events = st.game.start_round(deck)
        st.phase = Phase.PEEK
        st.round_zero = None
        st.next_round_at = None
        st.peek_ends = st.clock.now() + int(st.settings.peek_seconds * 1000)
        for s in st.seats:
            s.ready = s.left or (st.lesson_step is not None and s.bot is not None)  # a lesson's computers wait
        assert st.game_id is not None
        st.save(StartRound(st.game_id, len(st.fair) - 1, fair.deck, fair.salt))
        st.save_room()
        self._publish(events, [{"type": "peek", "commitment": fair.commitment}])

    def _begin_play(self) -> None:
        st = self.state
        st.phase = Phase.PLAY
        st.peek_ends = None
        st.round_zero = st.clock.now()
        st.save_room()
        events = self.advance()  # a player who left is played on at once
        self.after_play(events, [{"type": "play"}])

    def ready(self, seat: Seat) -> None:
        st = self.state
        if st.phase not in (Phase.PEEK, Phase.ROUND_OVER):
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        if seat.ready:
            return
        seat.ready = True
        self._publish([], [{"type": "ready", "seat": st.seats.index(seat)}])
        self.maybe_all_ready()

    def maybe_all_ready(self) -> None:
        st = self.state
        present = [s for s in st.seats if not s.left and s.conn is not None]
        if st.paused or not any(s.person_here for s in present) or not all(s.ready for s in present):
            return
        if st.phase is Phase.PEEK:
            self._begin_play()
        elif st.phase is Phase.ROUND_OVER:
            self._deal()

    def action(self, conn: SeatDriver, seat: Seat, msg: Any) -> None:
        st = self.state
        if st.phase is Phase.PEEK:
            raise RoomError(RuleCode.TOO_EARLY)
        if st.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
            raise RoomError(RuleCode.ROUND_OVER)
        if st.phase is not Phase.PLAY or st.paused:  # a computer player never plays on alone
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        game = st.game
        assert game is not None
        index = st.seats.index(seat)
        action = p.to_action(index, msg)
        events = self.advance()
        rejected: RuleCode | None = None
        if game.round is not None and not game.round.ended:
            try:
                events.extend(game.apply(action))
                self._log_action(Timed(game.round.now, action))
                st.accepted.append(st.arrived)
                st.movers.append(conn)
            except ValueError as exc:  # Rejected: nothing changed
                rejected = getattr(exc, "code", RuleCode.NOT_YOUR_TURN)
        else:
            rejected = RuleCode.ROUND_OVER
        if events:
            self.after_play(events, [])
        if rejected is not None:
            raise RoomError(rejected)

    def _log_action(self, timed: Timed) -> None:
        st = self.state
        assert st.record is not None
        assert st.game_id is not None
        actions = st.record.rounds[-1].actions
        st.save(AppendAction(st.game_id, len(st.record.rounds) - 1, len(actions), timed))
        actions.append(timed)

    def after_play(self, events: list[Event], room_events: list[dict[str, Any]]) -> None:
        """Publish the engine's events; move on to the round's end if it ended."""
        st = self.state
        game = st.game
        assert game is not None
        r = game.round
        assert r is not None
        extra = list(room_events)
        if r.ended and st.phase is Phase.PLAY:
            assert st.record is not None
            st.record.rounds[-1].end_at = r.end_at
            fair = st.fair[-1]
            extra.append({"type": "deck_revealed", "salt": fair.salt, "deck": list(fair.deck)})
            st.round_zero = None
            for s in st.seats:
                s.ready = s.left
            assert st.game_id is not None
            assert r.end_at is not None
            st.save(SetClock(st.game_id, r.index, r.end_at, ended=True))
            if game.game_over:
                st.phase = Phase.GAME_OVER
                st.save(FinishGame(st.game_id, tuple(game.totals), game.winners))
            else:
                st.phase = Phase.ROUND_OVER
                st.next_round_at = st.clock.now() + int(st.settings.next_round_seconds * 1000)
            st.save_room()
        self._publish(events, extra)

    def react(self, seat: Seat, emoji: str) -> None:
        st = self.state
        if emoji not in p.REACTIONS:
            raise RoomError(p.ProtocolCode.BAD_REACTION)
        if not seat.reactions.take(st.clock.now()):
            raise RoomError(p.ProtocolCode.RATE_LIMITED)
        self._publish([], [{"type": "reaction", "seat": st.seats.index(seat), "emoji": emoji}])

    def abandon(self) -> None:
        """No player came back for ``idle_game_hours``: the game ends unfinished, with the totals of the rounds
        played and no winner; its record stays (listed with the room's games, served to its players, kept
        as long as finished games), and the room closes."""
        st = self.state
        game = st.game
        assert game is not None
        assert st.game_id is not None
        st.save(FinishGame(st.game_id, tuple(game.totals), (), abandoned=True))
        log.info("game abandoned", extra={"room": st.code})
        self._close()
