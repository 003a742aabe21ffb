"""The table alone: a game's phases and timers over the engine, with fakes of the publisher and the computer
players (no event loop, no store)."""

from __future__ import annotations

import pytest

from crisp_server.rooms.messages import RoomError
from crisp_server.rooms.phase import Phase
from crisp_server.rooms.table import Table
from crisp_server.store.operations import FinishGame
from crisp_server.wire import protocol as p

from .fakes import Hooks, Phone, Publisher, advance, seat, state


class Parts:
    def __init__(self, players: int = 2) -> None:
        self.st = state(keeps=True)
        self.phones = [Phone() for _ in range(players)]
        for i, phone in enumerate(self.phones):
            seat(self.st, f"P{i}", phone)
        self.publisher = Publisher(self.st)
        self.hooks = Hooks(self.st)
        self.closes = 0
        self.table = Table(self.st, self.publisher.publish, self._close, self.hooks)

    def _close(self) -> None:
        self.closes += 1


def test_a_game_starts_with_a_word_to_the_computer_players_first_and_deals_a_peek() -> None:
    parts = Parts()
    parts.table.start()
    st = parts.st
    assert parts.hooks.calls == [("starting", "lobby")]  # before anything of the game exists
    assert st.phase is Phase.PEEK
    assert st.game is not None
    assert st.game_id is not None
    assert st.peek_ends == st.clock.now() + int(st.settings.peek_seconds * 1000)
    assert parts.publisher.kinds() == ["peek"]
    assert [type(op).__name__ for op in st.ops] == ["StartGame", "StartRound", "SaveRoom"]


def test_the_peek_ends_at_its_tick_and_play_begins() -> None:
    parts = Parts()
    parts.table.start()
    st = parts.st
    assert parts.table.wake_at() == st.peek_ends
    parts.table.tick()  # too early: nothing
    assert st.phase is Phase.PEEK
    assert st.peek_ends is not None
    advance(st, st.peek_ends - st.clock.now())
    parts.table.tick()
    assert parts.st.phase is Phase.PLAY  # (read again: the tick changed it)
    assert st.round_zero == st.clock.now()
    assert parts.publisher.kinds()[-1] == "play"


def test_everyone_ready_ends_the_peek_and_a_second_ready_changes_nothing() -> None:
    parts = Parts()
    parts.table.start()
    first, second = parts.st.seats
    parts.table.ready(first)
    parts.table.ready(first)
    assert parts.publisher.kinds() == ["peek", "ready"]
    parts.table.ready(second)
    assert parts.st.phase is Phase.PLAY


def test_the_lobby_refuses_what_only_a_game_allows_and_the_game_what_only_the_lobby_does() -> None:
    parts = Parts(players=1)
    with pytest.raises(RoomError) as refused:
        parts.table.start()
    assert refused.value.code is p.ProtocolCode.NOT_ENOUGH_PLAYERS
    with pytest.raises(RoomError) as refused:
        parts.table.ready(parts.st.seats[0])
    assert refused.value.code is p.ProtocolCode.WRONG_PHASE
    with pytest.raises(RoomError) as refused:
        parts.table.ask_rematch()
    assert refused.value.code is p.ProtocolCode.WRONG_PHASE
    assert parts.hooks.calls == []
    assert parts.publisher.published == []


def test_a_paused_game_goes_on_with_a_word_to_the_computer_players_and_a_running_one_is_not_resumed() -> None:
    parts = Parts()
    parts.table.start()
    assert parts.table.unpause() == []  # not paused: nothing
    assert parts.hooks.calls == [("starting", "lobby")]
    parts.st.paused = True
    parts.st.paused_at = parts.st.clock.now()
    parts.table.unpause()
    assert not parts.st.paused
    assert parts.st.paused_at is None
    assert parts.hooks.calls[-1] == ("unpaused", "peek")
    assert parts.st.peek_ends == parts.st.clock.now() + int(parts.st.settings.peek_seconds * 1000)


def test_a_rematch_tells_the_computer_players_before_the_seats_go_back_to_the_lobby() -> None:
    parts = Parts(players=3)
    parts.table.start()
    parts.st.phase = Phase.GAME_OVER
    parts.st.seats[2].left = True
    parts.table.ask_rematch()
    assert parts.hooks.calls[-1] == ("rematching", "game_over")
    assert parts.st.phase is Phase.LOBBY
    assert [s.name for s in parts.st.seats] == ["P0", "P1"]
    assert parts.st.game is None
    assert parts.publisher.kinds()[-1] == "lobby"


def test_an_abandoned_game_is_finished_unfinished_and_closes_the_room() -> None:
    parts = Parts()
    parts.table.start()
    parts.table.abandon()
    assert parts.closes == 1
    finish = parts.st.ops[-1]
    assert isinstance(finish, FinishGame)
    assert finish.abandoned


def test_the_big_screen_is_set_at_any_time_and_the_rule_options_only_in_the_lobby() -> None:
    parts = Parts()
    st = parts.st
    parts.table.set_options(p.SetOptions(type="options", score_limit=50, turn_seconds=30, discard_draw=True))
    assert (st.options.score_limit, st.big_screen) == (50, False)
    parts.table.set_options(p.SetOptions(type="options", big_screen=True))
    assert (st.options.score_limit, st.options.turn_seconds, st.options.discard_draw) == (50, 30, True)
    assert st.big_screen
    parts.table.start()
    ops = len(st.ops)
    parts.table.set_options(p.SetOptions(type="options", big_screen=False))
    assert not st.big_screen
    assert st.phase is Phase.PEEK
    assert [type(op).__name__ for op in st.ops[ops:]] == ["SaveRoom"]  # saved: a restart keeps it
    assert parts.publisher.kinds()[-1] == "options_changed"
    for msg in (
        p.SetOptions(type="options", score_limit=100, turn_seconds=None, discard_draw=False, big_screen=True),
        p.SetOptions(type="options", stand_in=60, big_screen=True),
    ):
        with pytest.raises(RoomError) as refused:
            parts.table.set_options(msg)
        assert refused.value.code is p.ProtocolCode.GAME_RUNNING
    assert not st.big_screen  # a refused message changed nothing
    assert st.options.score_limit == 50
