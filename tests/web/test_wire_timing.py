"""Time over the wire, to the millisecond, with the server's manual clock: the crisp window, the turn timer,
players who are away or who left, coming back in the middle of a move, and a second connection taking over.

Three players, P0 to P2; P2 deals, so P0 starts. Round time 0 is when play starts; the draw pile is rigged
so that the cards drawn are known.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import pytest

from crisp_server.remote.client import CrispClient
from tests.web.bots import OPEN_LIMITS, Bots, Style, card_codes, events, rig, stacked_deck
from tests.web.harness import Harness, running_server

HANDS: Final = (("AS", "2S", "3S"), ("9H", "9D", "9C"), ("TH", "TD", "TC"))
PILE: Final = ("7C", "4H", "5H", "6H", "4D", "5D", "6D", "2C", "3C", "8C")
DRAW: Final = {"type": "draw", "from": "deck"}
DISCARD: Final = {"type": "discard"}
CRISP: Final = {"type": "crisp"}


@pytest.fixture
async def wire() -> AsyncIterator[Harness]:
    async with running_server(**OPEN_LIMITS) as harness:
        yield harness


async def three(
    wire: Harness, monkeypatch: pytest.MonkeyPatch, turn_seconds: int | None = None, pile: Sequence[str] = PILE
) -> Bots:
    """Three players in play at round time 0, P0 to move."""
    rig(monkeypatch, first_dealer=2, decks=[stacked_deck(2, HANDS, pile)])
    opts = {"score_limit": 100, "turn_seconds": turn_seconds, "discard_draw": False}
    bots = await Bots.start(wire, 3, random.Random(0), style=Style(passive=True), options=opts)
    await bots.ready_all()
    assert bots.round["turn"] == 0
    assert bots.round["now"] == 0
    return bots


def client(bots: Bots, seat: int) -> CrispClient:
    c = bots.connected(seat)
    assert c is not None
    return c


def last_events(bots: Bots) -> list[dict[str, Any]]:
    """The events of the last update (everyone connected has it after a settle)."""
    events: list[dict[str, Any]] = bots.state["events"]
    return events


async def end_turn_normally(bots: Bots, seat: int) -> None:
    """``seat`` draws and discards: its turn ends now, and its crisp window opens."""
    await bots.do(seat, DRAW)
    await bots.do(seat, DISCARD)


# -- the crisp window ------------------------------------------------------------------------------------


async def test_a_call_inside_the_window_and_the_next_player_draws_at_once(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)  # T = 0
    state = bots.state
    assert state["table"]["round"]["window"] == {"seat": 0, "closes_at": 3000}
    assert state["table"]["round"]["may_draw_at"] == 2000
    assert state["clock"]["window_closes_in"] == 3000
    assert state["clock"]["may_draw_in"] == 2000
    assert client(bots, 0).you["can"] == ["crisp"]
    assert client(bots, 1).you["can"] == []

    await bots.advance(1000)
    await bots.do(0, CRISP)
    assert last_events(bots) == [
        {"type": "crisp_called", "seat": 0, "at": 1000, "final_turns": 2},
        {"type": "move_started", "seat": 1, "at": 1000, "deadline": None, "extra_moves": 0},
    ]
    r = bots.round
    assert r["caller"] == 0
    assert r["final_turns_left"] == 2
    assert r["window"] is None
    assert bots.state["clock"]["may_draw_in"] == 0
    assert client(bots, 1).you["can"] == ["draw_deck"]
    await bots.do(1, DRAW)  # still T + 1000: the call ended the two-second block


async def test_a_call_at_the_windows_last_millisecond_counts(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)
    await bots.advance(2999)
    assert client(bots, 0).you["can"] == ["crisp"]
    await bots.do(0, CRISP)
    assert bots.round["caller"] == 0


async def test_a_late_call_is_refused(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)
    await bots.advance(3000)
    assert {"type": "window_closed", "seat": 0, "at": 3000} in last_events(bots)
    assert bots.round["window"] is None
    assert client(bots, 0).you["can"] == []
    assert await bots.send(client(bots, 0), CRISP) == "crisp_not_allowed"
    assert bots.round["caller"] is None


async def test_the_next_player_may_not_draw_before_the_block_ends(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)
    await bots.advance(1999)
    assert await bots.send(client(bots, 1), DRAW) == "too_early"
    assert bots.round["drawn"] is None
    await bots.advance(1)
    assert last_events(bots) == [{"type": "move_started", "seat": 1, "at": 2000, "deadline": None, "extra_moves": 0}]
    assert client(bots, 1).you["can"] == ["draw_deck"]
    await bots.do(1, DRAW)
    assert client(bots, 1).you["drawn_card"] == "4H"


async def test_a_call_after_the_next_player_started_makes_their_turn_the_first_final_turn(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)
    await bots.advance(2000)
    await bots.do(1, DRAW)  # P1's turn is under way
    await bots.advance(500)
    await bots.do(0, CRISP)
    assert last_events(bots) == [{"type": "crisp_called", "seat": 0, "at": 2500, "final_turns": 2}]
    assert bots.round["final_turns_left"] == 2
    assert bots.round["turn"] == 1

    await bots.do(1, DISCARD)  # the first final turn ends: no window in the final turns, P2 goes at once
    assert last_events(bots) == [
        {"type": "discarded", "seat": 1, "card": "4H"},
        {"type": "turn_started", "seat": 2, "at": 2500, "may_draw_at": 2500, "final_turn": True},
        {"type": "move_started", "seat": 2, "at": 2500, "deadline": None, "extra_moves": 0},
    ]
    assert bots.round["final_turns_left"] == 1
    assert client(bots, 1).you["can"] == []
    await end_turn_normally(bots, 2)  # the last final turn: the caller does not play again
    assert bots.phase == "round_over"
    ended = next(e for e in last_events(bots) if e["type"] == "round_ended")
    assert ended["caller"] == 0
    assert ended["at"] == 2500
    assert ended["points"] == [1, 27, 30]
    assert not [e for e in events(client(bots, 2), kind="turn_started") if e["seat"] == 0 and e["at"] > 0]


async def test_the_window_closes_when_the_next_turn_ends(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = await three(wire, monkeypatch)
    await end_turn_normally(bots, 0)
    await bots.advance(2000)
    await end_turn_normally(bots, 1)
    assert last_events(bots)[:2] == [
        {"type": "discarded", "seat": 1, "card": "4H"},
        {"type": "window_closed", "seat": 0, "at": 2000},
    ]
    assert bots.round["window"] == {"seat": 1, "closes_at": 5000}
    assert await bots.send(client(bots, 0), CRISP) == "crisp_not_allowed"
    await bots.do(1, CRISP)


# -- the turn timer --------------------------------------------------------------------------------------


async def test_a_move_times_out_at_its_deadline_and_the_next_player_starts(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch, turn_seconds=30)
    assert bots.state["clock"]["deadline_in"] == 30_000
    assert bots.round["deadline"] == 30_000
    await bots.advance(29_999)
    snapshot = await bots.snapshot()
    assert snapshot["clock"]["deadline_in"] == 1
    assert client(bots, 0).you["can"] == ["draw_deck"]
    await bots.advance(1)
    assert last_events(bots) == [
        {"type": "timed_out", "seat": 0, "at": 30_000, "discarded": "7C", "drew_for_player": True},
        {"type": "turn_started", "seat": 1, "at": 30_000, "may_draw_at": 30_000, "final_turn": False},
        {"type": "move_started", "seat": 1, "at": 30_000, "deadline": 60_000, "extra_moves": 0},
    ]
    state = bots.state
    assert state["table"]["round"]["window"] is None, "no crisp window after a time-out"
    assert state["table"]["round"]["discard"] == ["7C"]
    assert state["clock"]["may_draw_in"] == 0
    assert state["clock"]["deadline_in"] == 30_000
    assert client(bots, 0).you["can"] == []
    assert await bots.send(client(bots, 0), DRAW) == "not_your_turn"
    await bots.do(1, DRAW)


async def test_a_drawn_card_is_discarded_unused_at_the_deadline(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = await three(wire, monkeypatch, turn_seconds=45, pile=("QS", *PILE))
    await bots.advance(10_000)
    await bots.do(0, DRAW)
    assert client(bots, 0).you["drawn_card"] == "QS"
    assert "queen" in client(bots, 0).you["can"]
    await bots.advance(35_000)
    assert last_events(bots)[0] == {
        "type": "timed_out",
        "seat": 0,
        "at": 45_000,
        "discarded": "QS",
        "drew_for_player": False,
    }
    assert not events(client(bots, 1), kind="queen_used")
    assert bots.round["turn"] == 1
    assert bots.round["discard"] == ["QS"]
    assert client(bots, 0).you["drawn_card"] is None


async def test_every_move_of_a_king_turn_has_a_full_clock_and_a_time_out_ends_the_turn(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch, turn_seconds=30, pile=("KS", "KH", *PILE))
    await bots.advance(10_000)
    await bots.do(0, DRAW)
    await bots.do(0, {"type": "king"})
    assert last_events(bots) == [
        {"type": "king_used", "seat": 0, "card": "KS", "extra_moves": 2},
        {"type": "move_started", "seat": 0, "at": 10_000, "deadline": 40_000, "extra_moves": 1},
    ]
    assert bots.state["clock"]["deadline_in"] == 30_000
    await bots.advance(10_000)
    await bots.do(0, DRAW)
    await bots.do(0, {"type": "king"})  # a King in an extra move: two more
    assert last_events(bots)[-1] == {
        "type": "move_started",
        "seat": 0,
        "at": 20_000,
        "deadline": 50_000,
        "extra_moves": 2,
    }
    await bots.advance(29_999)
    assert bots.round["turn"] == 0
    await bots.advance(1)
    assert last_events(bots)[:2] == [
        {"type": "timed_out", "seat": 0, "at": 50_000, "discarded": "7C", "drew_for_player": True},
        {"type": "turn_started", "seat": 1, "at": 50_000, "may_draw_at": 50_000, "final_turn": False},
    ]
    assert bots.round["extra_moves"] == 0, "the extra moves left lapse with the time-out"


# -- players who are away --------------------------------------------------------------------------------


async def test_a_disconnected_players_move_times_out_sixty_seconds_after_it_started(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await bots.advance(5_000)
    await bots.disconnect(0)
    state = bots.state
    assert state["room"]["seats"][0]["connected"] is False
    assert state["clock"]["auto_timeout_in"] == 55_000
    assert state["clock"]["deadline_in"] is None
    await bots.advance(54_999)
    assert bots.round["turn"] == 0
    assert (await bots.snapshot())["clock"]["auto_timeout_in"] == 1
    await bots.advance(1)
    assert last_events(bots)[:2] == [
        {"type": "timed_out", "seat": 0, "at": 60_000, "discarded": "7C", "drew_for_player": True},
        {"type": "turn_started", "seat": 1, "at": 60_000, "may_draw_at": 60_000, "final_turn": False},
    ]
    assert bots.state["clock"]["auto_timeout_in"] is None
    await bots.do(1, DRAW)


async def test_a_drawn_card_of_a_player_who_went_away_is_discarded_after_sixty_seconds(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await bots.do(0, DRAW)
    await bots.disconnect(0)
    await bots.advance(59_999)
    assert bots.round["turn"] == 0
    await bots.advance(1)
    assert last_events(bots)[0] == {
        "type": "timed_out",
        "seat": 0,
        "at": 60_000,
        "discarded": "7C",
        "drew_for_player": False,
    }


async def test_the_sixty_seconds_count_from_when_the_move_may_start(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await bots.disconnect(1)
    await end_turn_normally(bots, 0)  # T = 0: P1's move starts at 2000, after P0's block
    assert bots.state["clock"]["auto_timeout_in"] == 62_000
    await bots.advance(61_999)
    assert bots.round["turn"] == 1
    await bots.advance(1)
    assert last_events(bots)[0] == {
        "type": "timed_out",
        "seat": 1,
        "at": 62_000,
        "discarded": "4H",
        "drew_for_player": True,
    }
    assert bots.round["turn"] == 2


async def test_with_a_turn_timer_a_disconnected_player_has_the_usual_clock(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch, turn_seconds=30)
    await bots.disconnect(0)
    assert bots.state["clock"]["auto_timeout_in"] is None
    assert bots.state["clock"]["deadline_in"] == 30_000
    await bots.advance(30_000)
    assert last_events(bots)[0]["type"] == "timed_out"
    assert last_events(bots)[0]["at"] == 30_000


async def test_a_player_who_leaves_on_their_move_is_played_on_at_once(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    leaver = client(bots, 0)
    await bots.advance(5_000)
    await bots.do(0, DRAW)
    await bots.leave(0)
    assert leaver.messages[-1] == {"type": "left", "v": bots.state["v"] - 1}
    with pytest.raises(ConnectionError):  # the server closed the socket: waiting on it ends at once
        await leaver.wait_for(lambda c: False, timeout=2, what="nothing")
    assert leaver.closed is not None
    assert leaver.closed.rcvd is not None
    assert leaver.closed.rcvd.code == 1000

    assert last_events(bots) == [
        {"type": "timed_out", "seat": 0, "at": 5_000, "discarded": "7C", "drew_for_player": False},
        {"type": "turn_started", "seat": 1, "at": 5_000, "may_draw_at": 5_000, "final_turn": False},
        {"type": "move_started", "seat": 1, "at": 5_000, "deadline": None, "extra_moves": 0},
        {"type": "left", "seat": 0, "host": 1},
    ]
    state = bots.state
    assert state["room"]["seats"][0]["connected"] is False
    assert state["room"]["seats"][0]["left"] is True
    assert state["room"]["host"] == 1
    assert client(bots, 1).you["host"]
    await bots.do(1, DRAW)


@pytest.mark.parametrize("turn_seconds", [None, 60])
async def test_a_player_who_left_is_played_on_once_the_crisp_window_closes(
    wire: Harness, monkeypatch: pytest.MonkeyPatch, turn_seconds: int | None
) -> None:
    bots = await three(wire, monkeypatch, turn_seconds=turn_seconds)
    await bots.leave(2)
    await end_turn_normally(bots, 0)
    await bots.advance(2000)
    await end_turn_normally(bots, 1)  # T = 2000: P2's move could start at 4000, P1 may call until 5000
    assert bots.state["clock"]["auto_timeout_in"] == 3000
    await bots.advance(2999)
    assert bots.round["turn"] == 2
    await bots.advance(1)
    assert last_events(bots)[:3] == [
        {"type": "window_closed", "seat": 1, "at": 5000},
        {"type": "timed_out", "seat": 2, "at": 5000, "discarded": "5H", "drew_for_player": True},
        {"type": "turn_started", "seat": 0, "at": 5000, "may_draw_at": 5000, "final_turn": False},
    ]
    await bots.do(0, DRAW)


async def test_a_player_who_left_can_come_back_to_the_seat(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = await three(wire, monkeypatch)
    await bots.leave(1)
    assert bots.state["room"]["seats"][1]["left"]
    player = bots.players[1]
    player.left = False
    again = await bots.resume(1)
    assert again.seat == 1
    assert bots.state["room"]["seats"][1] == {
        "name": "P1",
        "connected": True,
        "left": False,
        "ready": True,
        "bot": None,
        "stand_in": False,
    }
    await end_turn_normally(bots, 0)  # P1 is back: its move waits for it, no time-out
    await bots.advance(2000)
    assert bots.round["turn"] == 1
    assert bots.state["clock"]["auto_timeout_in"] is None
    await end_turn_normally(bots, 1)


# -- coming back -----------------------------------------------------------------------------------------


async def test_a_player_who_comes_back_in_the_middle_of_a_move_holds_the_same_card(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    await bots.do(0, DRAW)
    assert client(bots, 0).you["drawn_card"] == "7C"
    await bots.advance(20_000)
    await bots.disconnect(0)
    assert bots.state["clock"]["auto_timeout_in"] == 40_000
    await bots.advance(20_000)

    again = await bots.resume(0)
    assert again.welcome is not None
    assert again.welcome["seat"] == 0
    assert again.welcome["token"] is None, "the token is only ever sent once"
    you = again.you
    assert you["seat"] == 0
    assert you["drawn_card"] == "7C"
    assert you["can"] == ["swap", "discard"]
    assert bots.state["room"]["seats"][0]["connected"]
    assert bots.state["clock"]["auto_timeout_in"] is None
    assert {"type": "connected", "seat": 0} in last_events(bots)
    # What came back is the drawn card alone: the dealt cards are not shown again.
    assert card_codes(again.messages) == {"7C"}

    await bots.do(0, {"type": "swap", "slot": "left"})
    assert last_events(bots)[0] == {"type": "swapped", "seat": 0, "slot": "left", "discarded": "AS", "card": None}
    await bots.advance(60_000)  # no time-out is left over for the move that was finished
    assert not events(again, kind="timed_out")


async def test_a_second_connection_with_the_same_token_takes_over(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = await three(wire, monkeypatch)
    first = client(bots, 0)
    await bots.do(0, DRAW)
    player = bots.players[0]
    second = await wire.client()
    await second.resume(bots.code, player.token)
    await first.wait_for(lambda c: c.closed is not None, what="the old connection closed")
    player.client = second
    player.connections.append(second)
    await bots.settle()

    assert first.messages[-1]["type"] == "replaced"
    assert first.closed is not None
    assert first.closed.rcvd is not None
    assert first.closed.rcvd.code == 4001
    assert second.seat == 0
    assert second.you["drawn_card"] == "7C"
    watcher = client(bots, 1)
    seen = [e for e in events(watcher) if e["type"] in ("connected", "disconnected")]
    assert seen == [{"type": "connected", "seat": 0}], "a takeover is not a disconnect"
    assert bots.state["room"]["seats"][0]["connected"]
    await bots.do(0, DISCARD)
    assert bots.round["turn"] == 1
