"""``GET /api/rooms/{code}/standings`` over HTTP: the room's ended games summed per player, a running game left
out, the same answer after a restart, and the refusals (an unknown code, a malformed one), as documented."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from tests.openapi import assert_documented
from tests.web.bots import OPEN_LIMITS, Bots, Style, rig
from tests.web.harness import Harness, running_server

ROUTE = "/api/rooms/{code}/standings"
STYLE = Style(crisp=0.3, ready=1.0)


async def _standings(server: Harness, code: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.http) as http:
        response = await http.get(f"/api/rooms/{code}/standings")
    assert response.status_code == 200, response.text
    assert_documented(server.app, ROUTE, response, code=code)
    body: dict[str, Any] = response.json()
    return body


def _add(tally: dict[str, dict[str, Any]], table: dict[str, Any]) -> None:
    """Count a finished game the way a player reads it on the results screen: its names, totals and winners."""
    for seat, name in enumerate(table["players"]):
        row = tally.setdefault(name, {"name": name, "games": 0, "wins": 0, "points": 0})
        row["games"] += 1
        row["wins"] += seat in table["winners"]
        row["points"] += table["totals"][seat]


def _best_rounds(table: dict[str, Any]) -> list[int]:
    """Each seat's fewest points in one round, from the results screen's per-round scores."""
    return [min(scores[seat] for scores in table["scores"]) for seat in range(len(table["players"]))]


async def test_the_standings_count_each_ended_game_and_survive_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig(monkeypatch, seed="standings")
    settings: dict[str, Any] = {"persist": True, "data_dir": tmp_path, **OPEN_LIMITS}
    tally: dict[str, dict[str, Any]] = {}
    best: dict[str, int] = {}
    async with running_server(**settings) as server:
        options = {"score_limit": 50, "turn_seconds": None, "discard_draw": False}
        bots = await Bots.start(server, 3, random.Random(1), style=STYLE, options=options)
        code = bots.code
        assert await _standings(server, code) == {"games": 0, "abandoned": 0, "players": []}, "nothing ended yet"
        await bots.play_game()
        first = bots.state["table"]
        _add(tally, first)
        for name, low in zip(first["players"], _best_rounds(first), strict=True):
            best[name] = low
        got = await _standings(server, code)
        assert got["games"] == 1
        assert got["abandoned"] == 0
        assert {p["name"]: {k: v for k, v in p.items() if k != "best_round"} for p in got["players"]} == tally
        assert {p["name"]: p["best_round"] for p in got["players"]} == best

        # A rematch: while it runs, its rounds are not counted (nothing of a running game is told).
        host = bots.connected(0)
        assert host is not None
        assert await bots.send(host, {"type": "rematch"}) is None
        assert await bots.send(host, {"type": "start"}) is None
        await bots.settle()
        await bots.play_round()
        assert bots.phase == "round_over", "the seeded rematch goes on after its first round"
        assert await _standings(server, code) == got
        await bots.play_game()
        second = bots.state["table"]
        _add(tally, second)
        for name, low in zip(second["players"], _best_rounds(second), strict=True):
            best[name] = min(best[name], low)
        got = await _standings(server, code)
        assert got["games"] == 2
        assert {p["name"]: {k: v for k, v in p.items() if k != "best_round"} for p in got["players"]} == tally
        assert {p["name"]: p["best_round"] for p in got["players"]} == best
        ranks = [(-p["wins"], p["points"]) for p in got["players"]]
        assert ranks == sorted(ranks)
        # Any case and blanks, as a code is typed.
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get(f"/api/rooms/%20{code.lower()}%20/standings")).json() == got

    async with running_server(**settings) as server:
        assert await _standings(server, code) == got, "the same standings after a restart"


async def test_unknown_and_malformed_codes_are_refused_clearly(tmp_path: Path) -> None:
    async with (
        running_server(persist=True, data_dir=tmp_path, **OPEN_LIMITS) as server,
        httpx.AsyncClient(base_url=server.http) as http,
    ):
        unknown = await http.get("/api/rooms/ACDEFG/standings")
        assert unknown.status_code == 404
        assert unknown.json() == {"detail": "no room with that code", "existed": False}
        assert_documented(server.app, ROUTE, unknown, code="ACDEFG")
        for bad in ("ABC", "ACDEFGH", "BBBBBB", "AC-DEF"):  # too short, too long, not of the alphabet
            malformed = await http.get(f"/api/rooms/{bad}/standings")
            assert malformed.status_code == 422, bad
            assert "not a room code" in malformed.json()["detail"]
            assert_documented(server.app, ROUTE, malformed, code=bad)


async def test_a_server_without_a_database_has_no_ended_games_to_count(tmp_path: Path) -> None:
    async with running_server(**OPEN_LIMITS) as server:
        code, _ = await server.lobby(["Ana", "Ben"])
        assert await _standings(server, code) == {"games": 0, "abandoned": 0, "players": []}


async def test_the_look_up_limit_applies(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path, lookup_burst=1, lookup_per_minute=1), persist=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
        statuses = [(await http.get("/api/rooms/ACDEFG/standings")).status_code for _ in range(2)]
        limited = await http.get("/api/rooms/ACDEFG/standings")
    assert statuses == [404, 429]
    assert limited.status_code == 429
    assert_documented(app, ROUTE, limited, code="ACDEFG")
