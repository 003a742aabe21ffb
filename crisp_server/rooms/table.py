"""The table flow: a game's phases (deal, peek, play, round over, game over), its timers, and the pause while
no player is connected. A round's engine clock is milliseconds since play started (the peek is not counted)."""

from __future__ import annotations

import logging
from typing import Any

from crisp_server.engine import (
    FULL_DECK,
    Event,
    Game,
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

from . import luck
from .driver import SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Fairness, Phase
from .publishing import Publishing
from .seats import Seat

log = logging.getLogger("crisp.room")


class TableFlow(Publishing):
    """The game's flow at the table: deal, peek, play, round over, game over; the round clock, timing out
    players who are away, pausing while nobody is there and resuming, rematch (back to the lobby) and abandon."""

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
        if seat.left and seat.conn is None and self.stand_in is None:  # (else one stands in at once)
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
        if events and game.round is not None and self.game_id is not None and not redone_by_resume(events):
            # Timers changed the game: keep the instant, so that a replay reproduces it. (A crisp window that
            # closed and a move that started need not be kept: a resume after an interruption does both.)
            self._save(SetClock(self.game_id, game.round.index, game.round.now, ended=game.round.ended))
        return events

    # -- waiting for the players -----------------------------------------------------------------------

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

    def _wait_if_deserted(self) -> None:
        """No player is connected any more: bring a round in play up to now, then let the game wait for
        them, whatever its phase (a peek or a pause between rounds would otherwise deal and time out moves
        for nobody, for ever)."""
        if self.paused or self.phase not in GAME_PHASES or any(s.person_here for s in self.seats):
            return
        if self.phase is Phase.PLAY:
            events = self._advance()
            if events:
                self._after_play(events, [])
        self.paused = self.phase in GAME_PHASES
        if self.paused:
            self.paused_at = self.clock.now()
            self._save_room()  # the time it was saved is when its players went, should the server restart

    # -- the game flow ---------------------------------------------------------------------------------

    def _start_game(self) -> None:
        names = [s.name for s in self.seats]
        first_dealer = luck.LUCK.randbelow(len(names))
        self.game = Game(names, self.options, first_dealer)
        self.record = Record(self.options, tuple(names), first_dealer, [])
        self.game_id = luck.LUCK.token_hex(8)
        self.fair = []
        self._save(
            StartGame(
                self.game_id,
                self.room_id,
                tuple(names),
                tuple(s.token_hash for s in self.seats),
                self.options.as_dict(),
                first_dealer,
                self.host,
            )
        )
        self._deal()

    def _rematch(self) -> None:
        """Back to the lobby with the same seats (those who left are dropped) and options: spectators may sit
        down there, and the host starts when ready. A practice game nobody watches deals again at once: a
        person alone against the computer has nobody to wait for."""
        staying = [s for s in self.seats if not s.left]
        host_seat = self.seats[self.host]
        self.seats = staying
        self.host = self.seats.index(host_seat) if host_seat in staying else 0
        self.game = None  # the finished game's table goes with it: the lobby shows none (``table`` is null)
        self.record = None
        self.game_id = None
        self.fair = []
        people = sum(1 for s in staying if s.bot is None)
        watched = None in self.members.values()
        if len(staying) >= 2 and people == 1 and not watched:
            self._start_game()
            return
        self.phase = Phase.LOBBY
        for s in staying:
            s.ready = False
        self._save_room()
        self._publish([], [{"type": "lobby"}])

    def _deal(self) -> None:
        assert self.game is not None
        assert self.record is not None
        deck = list(FULL_DECK)
        luck.LUCK.shuffle(deck)
        fair = Fairness(luck.LUCK.token_hex(16), tuple(deck))
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
        if self.paused or not any(s.person_here for s in present) or not all(s.ready for s in present):
            return
        if self.phase is Phase.PEEK:
            self._begin_play()
        elif self.phase is Phase.ROUND_OVER:
            self._deal()

    def _action(self, conn: SeatDriver, seat: Seat, msg: Any) -> None:
        if self.phase is Phase.PEEK:
            raise RoomError(RuleCode.TOO_EARLY)
        if self.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
            raise RoomError(RuleCode.ROUND_OVER)
        if self.phase is not Phase.PLAY or self.paused:  # a computer player never plays on alone
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        game = self.game
        assert game is not None
        index = self.seats.index(seat)
        action = p.to_action(index, msg)
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
