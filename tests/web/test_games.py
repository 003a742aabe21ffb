"""Whole games over the wire: every host option, the round flow, the end of a game, a rematch, the fair shuffle.

Bots play through the protocol; :mod:`tests.web.audit` replays what every member was sent against each
round's revealed deck. Tests that need particular hands deal them with :func:`tests.web.bots.rig`.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import AsyncIterator
from typing import Any, Final

import httpx
import pytest

from crisp_server.remote.client import ProtocolError
from tests.web.audit import audit
from tests.web.bots import OPEN_LIMITS, Bots, Style, card_codes, dealt_hands, events, rig, stacked_deck
from tests.web.harness import Harness, running_server

#: The phases a room may go through from one message to the next (docs/protocol.md, "Playing").
NEXT_PHASES: Final = {
    "lobby": {"lobby", "peek"},
    "peek": {"peek", "play"},
    "play": {"play", "round_over", "game_over"},
    "round_over": {"round_over", "peek"},
    "game_over": {"game_over", "peek", "lobby"},
}
PASSIVE: Final = Style(crisp=0.0, passive=True)


@pytest.fixture
async def wire() -> AsyncIterator[Harness]:
    async with running_server(**OPEN_LIMITS) as harness:
        yield harness


def options(score_limit: int = 100, turn_seconds: int | None = None, discard_draw: bool = False) -> dict[str, Any]:
    return {"score_limit": score_limit, "turn_seconds": turn_seconds, "discard_draw": discard_draw}


# -- full games ------------------------------------------------------------------------------------------

#: Every value of every host option, 2, 4 and 8 players, 8 players twice. The players of the first call
#: Crisp only once the draw pile has been turned over.
FULL_GAMES: Final = [
    pytest.param(2, 50, None, True, True, id="2p-50-untimed-discard_draw"),
    pytest.param(4, 100, 30, False, False, id="4p-100-30s"),
    pytest.param(8, 150, 45, True, False, id="8p-150-45s-discard_draw"),
    pytest.param(8, 50, 60, False, False, id="8p-50-60s"),
    pytest.param(4, 150, None, False, False, id="4p-150-untimed"),
]


@pytest.mark.parametrize(("n", "score_limit", "turn_seconds", "discard_draw", "patient"), FULL_GAMES)
async def test_full_game(
    wire: Harness,
    monkeypatch: pytest.MonkeyPatch,
    n: int,
    score_limit: int,
    turn_seconds: int | None,
    *,
    discard_draw: bool,
    patient: bool,
) -> None:
    seed = f"full game {n} {score_limit} {turn_seconds} {discard_draw}"
    rig(monkeypatch, seed=seed)  # seeded decks and dealer: a failure can be replayed
    rng = random.Random(seed)
    style = Style(crisp=0.15, patient=patient, idle=0.05 if turn_seconds else 0.0, ready=0.5)
    chosen = options(score_limit, turn_seconds, discard_draw)
    bots = await Bots.start(wire, n, rng, style=style, options=chosen, spectators=1)
    await bots.play_game()

    final = bots.state
    assert final["room"]["phase"] == "game_over"
    assert final["room"]["options"] == {**chosen, "stand_in": None, "big_screen": False}
    table = final["table"]
    assert table["options"] == chosen
    assert table["game_over"]
    assert max(table["totals"]) >= score_limit
    low = min(table["totals"])
    assert table["winners"] == [s for s, t in enumerate(table["totals"]) if t == low]
    assert len(table["scores"]) == table["round"]["index"] + 1
    for p in bots.players:
        assert p.client is not None
        assert p.client.you["can"] == []

    # Every member was sent a consistent game: the audit follows each round from its revealed deck.
    reports = [audit(p.connections[0].messages, p.seat, score_limit) for p in bots.players]
    spectator = audit(bots.spectators[0].messages, None, score_limit)
    rounds = table["round"]["index"] + 1
    for report in reports:
        assert report.rounds == rounds
        assert [g["winners"] for g in report.games] == [table["winners"]]
    assert spectator.rounds >= rounds - 1  # it came in during the first peek, after the deal
    assert spectator.games == reports[0].games
    assert all(caller is not None for caller in reports[0].callers), "a round ended without a call"
    if turn_seconds is not None:
        assert reports[0].timeouts > 0, "no move ran out of time: the idle bots did not test the clock"
    if patient:
        assert reports[0].pile_turned > 0, "the long rounds never turned the discard pile over"

    phases = [m["room"]["phase"] for m in bots.players[0].connections[0].messages if m["type"] == "update"]
    for before, after in itertools.pairwise(phases):
        assert after in NEXT_PHASES[before], f"{before} -> {after}"
    assert phases.count("game_over") >= 1
    assert sum(1 for a, b in itertools.pairwise(phases) if a == "peek" and b == "play") == rounds


# -- the round flow --------------------------------------------------------------------------------------


async def test_play_starts_when_every_connected_player_is_ready(wire: Harness) -> None:
    bots = await Bots.start(wire, 3, random.Random(1), style=PASSIVE)
    state = bots.state
    assert state["clock"]["peek_ends_in"] == 10_000
    starter = state["table"]["round"]["starter"]
    for p in bots.players:
        assert p.client is not None
        shown = events(p.client, kind="card_shown")
        assert [(e["seat"], e["slot"], e["why"]) for e in shown] == [
            (p.seat, "left", "deal"),
            (p.seat, "right", "deal"),
        ]
        assert p.client.you["can"] == [], "nobody moves while the cards are being looked at"
    mover = bots.connected(starter)
    assert mover is not None
    assert await bots.send(mover, {"type": "draw", "from": "deck"}) == "too_early"

    for p in bots.players[:-1]:
        await bots.do(p.seat, {"type": "ready"})
        assert bots.phase == "peek"
        assert bots.state["room"]["seats"][p.seat]["ready"]
    await bots.do(bots.players[-1].seat, {"type": "ready"})
    state = bots.state
    assert state["room"]["phase"] == "play"
    assert [e["type"] for e in state["events"]][-1] == "play"
    assert state["table"]["round"]["now"] == 0
    assert state["clock"]["peek_ends_in"] is None
    assert state["clock"]["may_draw_in"] == 0
    assert mover.you["can"] == ["draw_deck"]


async def test_play_starts_after_ten_seconds_of_peeking(wire: Harness) -> None:
    bots = await Bots.start(wire, 2, random.Random(2), style=PASSIVE)
    await bots.do(0, {"type": "ready"})
    await bots.advance(9_999)
    assert bots.phase == "peek"
    assert (await bots.snapshot())["clock"]["peek_ends_in"] == 1
    await bots.advance(1)
    assert bots.phase == "play"
    assert bots.state["table"]["round"]["now"] == 0


async def test_a_player_away_does_not_hold_up_the_peek(wire: Harness) -> None:
    bots = await Bots.start(wire, 3, random.Random(3), style=PASSIVE)
    await bots.disconnect(2)
    await bots.do(0, {"type": "ready"})
    await bots.do(1, {"type": "ready"})
    assert bots.phase == "play"


async def test_the_last_unready_player_leaving_the_peek_by_disconnecting_starts_play(wire: Harness) -> None:
    bots = await Bots.start(wire, 3, random.Random(4), style=PASSIVE)
    await bots.do(0, {"type": "ready"})
    await bots.do(1, {"type": "ready"})
    assert bots.phase == "peek"
    await bots.disconnect(2)  # now every connected player is ready
    assert bots.phase == "play"


async def test_a_player_who_left_does_not_hold_up_the_next_round(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig(monkeypatch, first_dealer=2, seed=5)
    bots = await Bots.start(wire, 3, random.Random(5), style=PASSIVE)
    await bots.ready_all()
    await bots.play_turn()
    await bots.call_crisp(0)
    await bots.play_round()
    await bots.do(0, {"type": "ready"})
    await bots.leave(2)
    assert bots.phase == "round_over"
    assert bots.state["room"]["seats"][2]["ready"], "a seat that left counts as ready at once"
    await bots.do(1, {"type": "ready"})
    assert bots.phase == "peek"
    assert bots.state["room"]["seats"][2] == {
        "name": "P2",
        "connected": False,
        "left": True,
        "ready": True,
        "bot": None,
        "stand_in": False,
    }


async def test_a_player_who_leaves_in_the_peek_counts_as_ready(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    rig(monkeypatch, first_dealer=2, seed=5)
    bots = await Bots.start(wire, 3, random.Random(5), style=PASSIVE)
    assert bots.phase == "peek"
    await bots.leave(0)
    seats = bots.state["room"]["seats"]
    assert (seats[0]["left"], seats[0]["ready"]) == (True, True)
    assert not seats[1]["ready"]
    await bots.do(1, {"type": "ready"})
    await bots.do(2, {"type": "ready"})
    assert bots.phase == "play"


A0: Final = ("AS", "2S", "3S")  # 6
B0: Final = ("9H", "9D", "9C")  # 27
C0: Final = ("KH", "KD", "KC")  # 30: a King is a 10 in a hand
LOW_PILE: Final = ("4H", "5H", "6H", "7H", "8H", "4D", "5D", "6D", "7D", "8D")


async def test_round_end_reveals_every_hand_and_scores_the_caller(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Round 0: seat 0 calls with the lowest sum, alone (-5). Round 1: seat 1 calls with a sum equal to
    # seat 0's (+5: a tie is not alone).
    round0 = stacked_deck(2, [A0, B0, C0], LOW_PILE)
    round1 = stacked_deck(0, [("5S", "5H", "5D"), ("TC", "2C", "3C"), C0], ("4C", "6C", "7C", "8C", "9S", "6S"))
    rig(monkeypatch, first_dealer=2, decks=[round0, round1])
    bots = await Bots.start(wire, 3, random.Random(6), style=PASSIVE, options=options(score_limit=100))
    await bots.ready_all()
    assert bots.round["starter"] == 0
    await bots.play_turn()  # seat 0 draws 4H and discards it
    await bots.call_crisp(0)
    assert bots.round["caller"] == 0
    assert bots.round["final_turns_left"] == 2
    await bots.play_round()

    state = bots.state
    assert state["room"]["phase"] == "round_over"
    r = state["table"]["round"]
    assert r["ended"]
    assert r["turn"] is None
    assert r["hands"] == [list(A0), list(B0), list(C0)]
    assert r["sums"] == [6, 27, 30]
    assert r["points"] == [1, 27, 30]
    assert state["table"]["totals"] == [1, 27, 30]
    assert state["table"]["scores"] == [[1, 27, 30]]
    assert r["discard"] == ["4H", "5H", "6H"]
    ended = [e for e in state["events"] if e["type"] == "round_ended"]
    assert ended == [
        {
            "type": "round_ended",
            "round": 0,
            "at": 0,  # no time passed: the call ended the block, and final turns have no window
            "caller": 0,
            "hands": [list(A0), list(B0), list(C0)],
            "sums": [6, 27, 30],
            "points": [1, 27, 30],
            "totals": [1, 27, 30],
        }
    ]
    assert state["clock"]["next_round_in"] == 20_000
    for p in bots.players:
        assert p.client is not None
        assert p.client.you["can"] == []
        assert p.client.you["drawn_card"] is None

    await bots.ready_all()
    r = bots.round
    assert r["index"] == 1
    assert r["dealer"] == 0
    await bots.ready_all()
    assert bots.round["turn"] == 1
    await bots.play_turn()
    await bots.call_crisp(1)
    await bots.play_round()
    state = bots.state
    assert state["table"]["round"]["sums"] == [15, 15, 30]
    assert state["table"]["round"]["points"] == [15, 20, 30]
    assert state["table"]["totals"] == [16, 47, 60]
    assert state["table"]["scores"] == [[1, 27, 30], [15, 20, 30]]
    assert state["room"]["phase"] == "round_over"  # nobody has 100 yet


async def test_next_round_deals_after_twenty_seconds(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    rig(monkeypatch, first_dealer=1, seed=7)
    bots = await Bots.start(wire, 2, random.Random(7), style=PASSIVE)
    await bots.ready_all()
    await bots.play_turn()
    await bots.call_crisp(0)
    await bots.play_round()
    assert bots.phase == "round_over"
    await bots.do(0, {"type": "ready"})  # one of two is not enough
    await bots.advance(19_999)
    assert bots.phase == "round_over"
    assert (await bots.snapshot())["clock"]["next_round_in"] == 1
    await bots.advance(1)
    state = bots.state
    assert state["room"]["phase"] == "peek"
    assert state["table"]["round"]["index"] == 1
    assert state["table"]["round"]["dealer"] == 0
    assert state["room"]["fair"]["round"] == 1
    assert "salt" not in state["room"]["fair"]
    assert all(not s["ready"] for s in state["room"]["seats"])


async def test_the_game_ends_with_a_shared_win(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = ("2S", "3S", "4S"), ("4H", "3H", "2H"), C0  # 9, 9, 30
    pile = ("5C", "6C", "7C", "8C", "9S", "5D", "6D", "7D")
    rig(monkeypatch, first_dealer=2, decks=[stacked_deck(2, [a, b, c], pile), stacked_deck(0, [a, b, c], pile)])
    bots = await Bots.start(wire, 3, random.Random(8), style=PASSIVE, options=options(score_limit=50))
    for starter in (0, 1):
        while bots.phase != "play":
            await bots.ready_all()
        assert bots.round["turn"] == starter
        for _ in range(3):  # to the end of seat 2's turn
            if bots.round["window"] is not None and bots.round["window"]["seat"] == 2:
                break
            await bots.play_turn()
        assert bots.round["window"] == {"seat": 2, "closes_at": bots.round["now"] + 3000}
        await bots.call_crisp(2)  # seat 2 calls with the highest sum: +5
        await bots.play_round()
    state = bots.state
    assert state["room"]["phase"] == "game_over"
    assert state["table"]["totals"] == [18, 18, 70]
    assert state["table"]["game_over"]
    assert state["table"]["winners"] == [0, 1]
    ended = [e for e in state["events"] if e["type"] == "game_ended"]
    assert ended == [{"type": "game_ended", "totals": [18, 18, 70], "winners": [0, 1]}]
    assert state["clock"]["next_round_in"] is None
    # The game is over: nothing is dealt however long everyone waits.
    await bots.advance(60_000)
    assert bots.phase == "game_over"
    player = bots.connected(0)
    assert player is not None
    assert await bots.send(player, {"type": "ready"}) == "wrong_phase"


async def _play_to_game_over(bots: Bots, caller: int) -> None:
    """Passive players to the end of a rigged game: ``caller`` calls Crisp at its first chance in every round."""
    for _ in range(1000):
        if bots.phase == "game_over":
            return
        if bots.phase in ("peek", "round_over"):
            await bots.ready_all()
            continue
        window = bots.round["window"]
        if window is not None and window["seat"] == caller and bots.round["caller"] is None:
            await bots.call_crisp(caller)
        await bots.step()
    raise AssertionError("the game did not end")


async def test_rematch_in_the_same_room_with_the_same_seats(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    high, low = C0, ("AS", "2S", "3S")  # 30 and 6: two rounds of 30 + 5 end a game to 50
    decks = [stacked_deck(d, [high, low], LOW_PILE) for d in (1, 0)]
    rig(monkeypatch, first_dealer=1, decks=decks, seed=9)
    bots = await Bots.start(wire, 2, random.Random(9), style=PASSIVE, options=options(score_limit=50, turn_seconds=45))
    host, guest = bots.connected(0), bots.connected(1)
    assert host is not None
    assert guest is not None
    assert await bots.send(host, {"type": "rematch"}) == "wrong_phase"
    await _play_to_game_over(bots, caller=0)
    assert bots.state["table"]["totals"] == [70, 12]
    assert bots.state["table"]["winners"] == [1]

    assert await bots.send(guest, {"type": "rematch"}) == "not_host"
    assert await bots.send(host, {"type": "rematch"}) is None
    # Back to the lobby, with the same seats and options, and nothing of the finished game.
    state = bots.state
    assert state["room"]["code"] == bots.code
    assert state["room"]["phase"] == "lobby"
    assert [s["name"] for s in state["room"]["seats"]] == ["P0", "P1"]
    assert [s["ready"] for s in state["room"]["seats"]] == [False, False]
    assert state["room"]["host"] == 0
    assert state["room"]["options"] == {
        **options(score_limit=50, turn_seconds=45),
        "stand_in": None,
        "big_screen": False,
    }
    assert state["room"]["fair"] is None
    assert state["table"] is None
    assert state["events"] == [{"type": "lobby"}]
    assert await bots.send(host, {"type": "rematch"}) == "wrong_phase"
    assert await bots.send(guest, {"type": "start"}) == "not_host"
    assert await bots.send(host, {"type": "start"}) is None
    state = bots.state
    assert state["room"]["phase"] == "peek"
    assert state["room"]["fair"]["round"] == 0
    table = state["table"]
    assert table["totals"] == [0, 0]
    assert table["scores"] == []
    assert not table["game_over"]
    assert table["winners"] == []
    assert table["round"]["index"] == 0
    assert state["events"][0]["type"] == "round_started"
    assert host.you["seat"] == 0
    assert guest.you["seat"] == 1
    assert host.you["host"]
    assert not guest.you["host"]
    # The same seats play the new game, and keep their tokens.
    await bots.disconnect(1)
    again = await bots.resume(1)
    assert again.you["seat"] == 1
    await bots.ready_all()
    await bots.play_turn()
    assert bots.state["table"]["round"]["turn"] == 1


async def test_rematch_drops_the_players_who_left(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = C0, ("QS", "QH", "QD"), ("AS", "2S", "3S")
    decks = [stacked_deck(d, [a, b, c], LOW_PILE) for d in (2, 0)]
    rig(monkeypatch, first_dealer=2, decks=decks, seed=10)
    bots = await Bots.start(wire, 3, random.Random(10), style=PASSIVE, options=options(score_limit=50))
    await bots.ready_all()
    await bots.leave(1)  # seat 1 leaves for good; the others play on
    await _play_to_game_over(bots, caller=0)
    assert bots.state["room"]["seats"][1]["left"]

    host, last = bots.connected(0), bots.connected(2)
    assert host is not None
    assert last is not None
    assert await bots.send(host, {"type": "rematch"}) is None
    assert [s["name"] for s in bots.state["room"]["seats"]] == ["P0", "P2"]
    assert bots.state["room"]["phase"] == "lobby"
    # The seat that left is gone for good: its token finds nothing.
    stranger = await wire.client()
    with pytest.raises(ProtocolError) as refused:
        await stranger.resume(bots.code, bots.players[1].token)
    assert refused.value.code == "bad_token"
    assert await bots.send(host, {"type": "start"}) is None
    state = bots.state
    assert [s["name"] for s in state["room"]["seats"]] == ["P0", "P2"]
    assert state["table"]["players"] == ["P0", "P2"]
    assert last.you["seat"] == 1
    assert last.seat == 1, "the client must follow its seat when the seats before it are dropped"
    await bots.ready_all()
    turn = bots.round["turn"]
    assert (host, last)[turn].my_turn()
    assert not (host, last)[1 - turn].my_turn()


async def test_a_device_asks_whether_its_token_still_holds_a_seat(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GET /api/rooms/{code}/seat`` (docs/protocol.md): a seat kept after Leave, then dropped by the rematch,
    whose lobby the device may join again; about its own token only."""
    a, b, c = C0, ("QS", "QH", "QD"), ("AS", "2S", "3S")
    rig(monkeypatch, first_dealer=2, decks=[stacked_deck(2, [a, b, c], LOW_PILE)], seed=10)
    bots = await Bots.start(wire, 3, random.Random(10), style=PASSIVE, options=options(score_limit=50))
    await bots.ready_all()
    await bots.leave(1)
    tokens = [p.token for p in bots.players]
    assert all(tokens)

    async def check(http: httpx.AsyncClient, token: str | None, code: str = bots.code) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        answer = await http.get(f"/api/rooms/{code}/seat", headers=headers)
        return answer.status_code, answer.json()

    async with httpx.AsyncClient(base_url=wire.http) as http:
        playing = {"phase": "play", "joinable": False}
        assert await check(http, tokens[1]) == (200, {"held": True, "seat": 1, "left": True, **playing})
        assert await check(http, tokens[2]) == (200, {"held": True, "seat": 2, "left": False, **playing})
        assert await check(http, "not-a-token") == (200, {"held": False, "seat": None, "left": False, **playing})
        status, body = await check(http, None)
        assert (status, body["detail"]) == (401, "no seat token: send it as Authorization: Bearer <token>")
        assert (await http.get(f"/api/rooms/{bots.code}/seat", headers={"Authorization": "Basic x"})).status_code == 401
        assert await check(http, tokens[0], "ACDEFG") == (404, {"detail": "no room with that code", "existed": False})

        await _play_to_game_over(bots, caller=0)
        host = bots.connected(0)
        assert host is not None
        assert await bots.send(host, {"type": "rematch"}) is None
        # The seat that left is gone, and the lobby is open: the device is told so (and may join again).
        lobby = {"phase": "lobby", "joinable": True}
        assert await check(http, tokens[1]) == (200, {"held": False, "seat": None, "left": False, **lobby})
        assert await check(http, tokens[2]) == (200, {"held": True, "seat": 1, "left": False, **lobby})
        assert await check(http, tokens[0].lower()) == (200, {"held": False, "seat": None, "left": False, **lobby})


async def test_a_rematch_goes_through_the_lobby_where_a_spectator_sits_and_plays(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    high, low = C0, ("AS", "2S", "3S")
    third = [("4C", "5C", "6C"), ("7C", "8C", "9C"), ("2H", "3H", "AH")]
    # Two rounds end the first game; the rematch (3 players, dealer 1) starts with seat 2, the newcomer.
    decks = [stacked_deck(1, [high, low], LOW_PILE), stacked_deck(0, [high, low], LOW_PILE)]
    decks.append(stacked_deck(1, third, LOW_PILE))
    rig(monkeypatch, first_dealer=1, decks=decks, seed=11)
    bots = await Bots.start(wire, 2, random.Random(11), style=PASSIVE, options=options(score_limit=50), spectators=1)
    await _play_to_game_over(bots, caller=0)
    host = bots.connected(0)
    assert host is not None
    dee = bots.spectators[0]
    assert await bots.send(host, {"type": "rematch"}) is None
    # Every member is in the lobby, and nothing of the finished game is in what it was sent there.
    for member in bots.members():
        assert member.phase == "lobby"
        lobby = member.state
        assert lobby is not None
        assert lobby["type"] == "update"
        assert lobby["events"] == [{"type": "lobby"}]
        assert lobby["table"] is None
        assert lobby["room"]["fair"] is None
        assert lobby["room"]["spectators"] == 1
        assert card_codes(lobby) == set()
        assert card_codes(await member.sync()) == set()
    assert events(dee, "spectator_left") == []  # the spectator stayed

    welcome = await dee.sit("Dee")
    assert welcome["seat"] == 2
    await bots.settle()
    assert [s["name"] for s in bots.state["room"]["seats"]] == ["P0", "P1", "Dee"]
    assert bots.state["room"]["spectators"] == 0
    assert await bots.send(host, {"type": "start"}) is None
    assert bots.state["table"]["players"] == ["P0", "P1", "Dee"]
    shown = [e for e in events(dee, "card_shown") if e["why"] == "deal"]
    assert [(e["seat"], e["slot"], e["card"]) for e in shown] == [(2, "left", "2H"), (2, "right", "AH")]
    for seat in (0, 1):
        await bots.do(seat, {"type": "ready"})
    await dee.ready()
    await bots.settle()
    assert bots.phase == "play"
    assert dee.my_turn()
    drawn = await dee.draw()
    assert drawn["you"]["drawn_card"] == "4H"
    await dee.discard()
    await bots.settle()
    assert bots.round["discard"] == ["4H"]
    assert bots.round["turn"] == 0


# -- the fair shuffle ------------------------------------------------------------------------------------


async def test_the_deck_is_committed_before_the_deal_and_revealed_after(wire: Harness) -> None:
    # The real shuffle (no rigging). Passive players only discard, so every hand at the end is the dealt
    # one, and the discard pile is the draw pile in deck order.
    n = 4
    bots = await Bots.start(wire, n, random.Random(11), style=PASSIVE)
    deal = bots.state
    fair = deal["room"]["fair"]
    assert set(fair) == {"round", "commitment"}
    peek = [e for e in deal["events"] if e["type"] == "peek"]
    assert peek == [{"type": "peek", "commitment": fair["commitment"]}]
    shown = {p.seat: events(p.connections[0], kind="card_shown") for p in bots.players}
    await bots.ready_all()
    for _ in range(2 * n):
        assert "salt" not in bots.state["room"]["fair"]
        await bots.play_turn()
    caller = (bots.round["turn"] - 1) % n
    await bots.call_crisp(caller)
    await bots.play_round()

    end = bots.state
    revealed = [e for e in end["events"] if e["type"] == "deck_revealed"]
    assert len(revealed) == 1
    salt, deck = revealed[0]["salt"], revealed[0]["deck"]
    assert end["room"]["fair"] == {"round": 0, "commitment": fair["commitment"], "salt": salt, "deck": deck}
    assert len(salt) == 32
    assert int(salt, 16) >= 0
    assert hashlib.sha256((salt + "".join(deck)).encode()).hexdigest() == fair["commitment"]
    r = end["table"]["round"]
    hands = dealt_hands(deck, n, r["dealer"])
    assert r["hands"] == hands
    assert r["discard"] == deck[3 * n : 3 * n + len(r["discard"])]
    for seat, cards in shown.items():
        assert [e["card"] for e in cards] == [hands[seat][0], hands[seat][2]]
