"""kill -9 in the middle of a round: the server comes back with every seat's state, and the game plays on.

The real server runs as a subprocess with known decks (rigged_server.py). Two players get into the
middle of a move: a King's extra moves pending and a card drawn but not yet played. The server is killed
with SIGKILL, started again on the same database, and both players resume with their tokens: each sees
exactly what it saw before. The game is then played to its end, and the record the server stores replays
with ``python -m crisp_server replay`` to the result the players saw. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.engine import FULL_DECK
from crisp_server.remote.client import CrispClient
from tests.databases import BACKENDS, database
from tests.e2e.procs import free_port, server_process


def rigged_deck(first: list[str]) -> list[str]:
    return first + [c for c in FULL_DECK if c not in first]


# Two players, seat 0 deals the first round (the rigged server's first dealer), so seat 1 starts. The deal
# goes seat 1, seat 0, three passes; then the draw pile from index 6: a King, then 5, 6, 7 of hearts.
ROUND_1 = rigged_deck(["2S", "TS", "3S", "TH", "4S", "TD", "KS", "5H", "6H", "7H"])
# Round 2: seat 1 deals, seat 0 starts and is dealt first.
ROUND_2 = rigged_deck(["TS", "2S", "TH", "3S", "TD", "4S", "5H", "6H", "7H"])


def essentials(state: dict[str, Any]) -> dict[str, Any]:
    """What a seat sees, without the instants and versions that a restart may move."""
    table, room, you = state["table"], state["room"], state["you"]
    r = table["round"]
    keys = ("index", "dealer", "starter", "turn", "drawn", "extra_moves", "caller", "final_turns_left")
    return {
        "players": table["players"],
        "totals": table["totals"],
        "scores": table["scores"],
        "round": {k: r[k] for k in (*keys, "draw_pile", "discard", "hands", "ended")},
        "you": {k: you[k] for k in ("seat", "drawn_card", "can", "host")},
        "room": {k: room[k] for k in ("code", "phase", "host", "options", "fair")},
        "seats": [(s["name"], s["left"]) for s in room["seats"]],
    }


async def settle(*clients: CrispClient) -> None:
    """Every client has every update sent so far (a ping is answered after them)."""
    for c in clients:
        await c.request({"type": "ping"})


async def into_play(*clients: CrispClient) -> None:
    for c in clients:
        await c.wait_for(lambda c: c.phase == "peek", what="the deal")
    for c in clients:
        await c.ready()
    for c in clients:
        await c.wait_for(lambda c: c.phase == "play", what="play")


async def two_player_game(ana: CrispClient, ben: CrispClient) -> str:
    """Ana creates a room, Ben joins, the game (score limit 50, 60-second turns) starts and play begins; the
    room code. With the rigged decks above, Ben moves first and draws the King of spades."""
    code = await ana.create("Ana")
    await ben.join(code, "Ben")
    await ana.set_options(score_limit=50, turn_seconds=60, discard_draw=False)
    await ana.start()
    await into_play(ana, ben)
    return code


async def two_rounds_ben_wins(ana: CrispClient, ben: CrispClient) -> None:
    """The moves of this file's game without the restart, from the first move to the game's end: two rounds,
    Ben's Crisp in the first (-5), Ana's bluff in the second (+5); Ben wins."""
    await ben.draw()
    await ben.king()
    for _ in range(2):
        await ben.draw()
        await ben.discard()
    await ben.crisp()
    await ana.draw()
    await ana.discard()
    for c in (ana, ben):
        await c.wait_for(lambda c: c.phase == "round_over", what="round over")
        await c.ready()
    await into_play(ana, ben)
    await ana.draw()
    await ana.discard()
    await ana.crisp()
    await ben.draw()
    await ben.discard()
    for c in (ana, ben):
        await c.wait_for(lambda c: c.phase == "game_over", what="game over")


@pytest.mark.parametrize("kind", BACKENDS)
async def test_kill_9_mid_move_then_resume_and_finish(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        env = {"CRISP_DATABASE_URL": url, "CRISP_TEST_DECKS": json.dumps([ROUND_1, ROUND_2])}
        port = free_port()
        with server_process(tmp_path, env, port, rigged=True) as (base, proc):
            ws = base.replace("http", "ws") + "/ws"
            async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
                code = await two_player_game(ana, ben)
                assert ben.my_turn()
                await ben.draw()
                assert ben.you["drawn_card"] == "KS"
                await ben.king()
                await ben.draw()  # the first extra move: a 5 in hand, one more extra move to come
                await settle(ana, ben)
                before = {"ana": essentials(ana.state or {}), "ben": essentials(ben.state or {})}
                tokens = {"ana": ana.token, "ben": ben.token}
                assert before["ben"]["you"]["drawn_card"] == "5H"
                assert before["ben"]["round"]["extra_moves"] == 1
                assert before["ana"]["you"]["drawn_card"] is None
                proc.kill()  # SIGKILL: no goodbye, no flush
                proc.wait(10)

        with server_process(tmp_path, {**env, "CRISP_TEST_DECKS": json.dumps([ROUND_2])}, port, rigged=True) as (
            base,
            _proc,
        ):
            async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
                assert tokens["ana"] is not None
                assert tokens["ben"] is not None
                await ana.resume(code, tokens["ana"])
                await ben.resume(code, tokens["ben"])
                await settle(ana, ben)
                assert essentials(ana.state or {}) == before["ana"]
                assert essentials(ben.state or {}) == before["ben"]
                # The move under way got a fresh full clock; the downtime counted against nobody.
                assert ben.state is not None
                assert ben.state["clock"]["deadline_in"] > 55_000

                # Play on: discard the 5, use the last extra move, call Crisp at once (no waiting).
                await ben.discard()
                await ben.draw()
                await ben.discard()
                await ben.crisp()
                await ana.draw()
                await ana.discard()  # the last final turn: the round ends
                for c in (ana, ben):
                    await c.wait_for(lambda c: c.phase == "round_over", what="round over")
                assert ana.table is not None
                assert ana.table["totals"] == [30, 9 - 5]
                for c in (ana, ben):
                    await c.ready()
                await into_play(ana, ben)
                assert ana.my_turn()
                await ana.draw()
                await ana.discard()
                await ana.crisp()  # a bluff: 30 is not the lowest sum, +5
                await ben.draw()
                await ben.discard()
                for c in (ana, ben):
                    await c.wait_for(lambda c: c.phase == "game_over", what="game over")
                seen = ana.table
                assert seen is not None
                assert seen["totals"] == [65, 13]
                assert seen["winners"] == [1]

                async with httpx.AsyncClient(base_url=base) as http:
                    games = (await http.get(f"/api/rooms/{code}/games")).json()
                    assert [(g["totals"], g["winners"]) for g in games] == [([65, 13], [1])]
                    game_id = games[0]["id"]
                    denied = await http.get(f"/api/games/{game_id}/record")
                    assert denied.status_code == 403
                    response = await http.get(
                        f"/api/games/{game_id}/record", headers={"Authorization": f"Bearer {tokens['ben']}"}
                    )
                    assert response.status_code == 200
                    record = response.json()

        assert record["rounds"][0]["resumes"] == [{"after": 3, "at": record["rounds"][0]["actions"][2]["at"]}]
        path = tmp_path / "record.json"
        path.write_text(json.dumps(record))
        run = subprocess.run(
            [sys.executable, "-m", "crisp_server", "replay", str(path)], capture_output=True, text=True, check=True
        )
        result = json.loads(run.stdout)
        assert result["rejected"] == []
        assert result["game_over"] is True
        assert result["winners"] == seen["winners"]
        assert result["rounds"][-1]["totals"] == seen["totals"]
        assert [r["hands"] for r in result["rounds"]] == [
            [["TS", "TH", "TD"], ["2S", "3S", "4S"]],
            [["TS", "TH", "TD"], ["2S", "3S", "4S"]],
        ]


@pytest.mark.parametrize("kind", BACKENDS)
async def test_the_room_version_goes_on_above_what_clients_saw_after_kill_9(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        env = {"CRISP_DATABASE_URL": url}
        port = free_port()
        with server_process(tmp_path, env, port) as (base, proc):
            ws = base.replace("http", "ws") + "/ws"
            async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
                code = await ana.create("Ana")
                await ben.join(code, "Ben")
                for limit in (50, 100, 150, 50):
                    await ana.set_options(score_limit=limit, turn_seconds=None, discard_draw=False)
                await ana.start()
                await into_play(ana, ben)
                await settle(ana, ben)
                seen = max(m["v"] for c in (ana, ben) for m in c.messages if "v" in m)
                tokens = (ana.token, ben.token)
                proc.kill()  # SIGKILL: nothing more is written
                proc.wait(10)

        with server_process(tmp_path, env, port) as (base, _proc):
            async with CrispClient.connect(ws) as ana:
                assert tokens[0] is not None
                welcome = await ana.resume(code, tokens[0])
                await settle(ana)
                assert welcome["v"] > seen, f"v went back: {seen} before the restart, {welcome['v']} after"
                assert ana.state is not None
                assert ana.state["v"] > welcome["v"]
