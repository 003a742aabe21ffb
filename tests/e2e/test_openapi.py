"""The HTTP API answers only what its OpenAPI document says: schemathesis against the started server.

The real server runs as a subprocess (rigged decks, so that a game can be played to its end in seconds),
with a lobby, a finished game and a rematch under way in it. ``schemathesis run /openapi.json --checks all``
then fuzzes every route: no undocumented status, content type or body, and no server error. Its generated
room codes, game ids and tokens are mixed with the real ones (schemathesis "dictionaries"), so that the
success paths are exercised too, and its HAR report shows they were. The room look-up limit is raised for
the run: its 429 is checked on its own (``test_the_look_up_limit_is_documented``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.remote.client import CrispClient
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from tests.e2e.procs import server_process
from tests.e2e.test_restart import ROUND_1, ROUND_2, settle, two_player_game, two_rounds_ben_wins
from tests.openapi import assert_documented

#: schemathesis's command line, run by this Python (whether or not its script is on PATH).
SCHEMATHESIS = [sys.executable, "-c", "import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())"]


async def play_a_game(ws: str) -> tuple[str, str, str, str]:
    """A room with one finished game and a rematch under way; its code, the finished game's id, a player's
    token and the host's."""
    async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
        code = await two_player_game(ana, ben)
        await two_rounds_ben_wins(ana, ben)
        await ana.request({"type": "rematch"})
        await settle(ana, ben)
        assert ana.phase == "lobby"
        await ana.start()
        await settle(ana, ben)
        assert ana.phase == "peek"
        assert ben.token is not None
        assert ana.token is not None
        token, host = ben.token, ana.token
    async with httpx.AsyncClient() as http:
        games = (await http.get(ws.replace("ws://", "http://").removesuffix("/ws") + f"/api/rooms/{code}/games")).json()
    return code, games[0]["id"], token, host


def config(rooms: list[str], games: list[str], tokens: list[str]) -> str:
    """schemathesis.toml: half of the generated values of each parameter are real ones."""

    def values(items: list[str]) -> str:
        return json.dumps(items)

    return f"""
[dictionaries.rooms]
values = {values(rooms)}
[dictionaries.games]
values = {values(games)}
[dictionaries.tokens]
values = {values(tokens)}

[parameters]
"path.code" = {{ dictionary = "rooms", probability = 0.5 }}
"path.game_id" = {{ dictionary = "games", probability = 0.5 }}
"header.authorization" = {{ dictionary = "tokens", probability = 0.5 }}
"""


def answered(har: dict[str, Any], path: str, status: int) -> int:
    """How many requests for ``path`` the server answered with ``status`` (from a HAR report)."""
    return sum(
        1
        for entry in har["log"]["entries"]
        if httpx.URL(entry["request"]["url"]).path == path and entry["response"]["status"] == status
    )


@pytest.mark.slow
async def test_schemathesis_finds_nothing_undocumented(tmp_path: Path) -> None:
    env = {
        "CRISP_TEST_DECKS": json.dumps([ROUND_1, ROUND_2]),
        "CRISP_LOOKUP_BURST": "1000000",
        "CRISP_LOOKUP_PER_MINUTE": "1000000",
        "CRISP_LOG_LEVEL": "warning",  # the server's output goes to a pipe nobody reads while it runs
    }
    with server_process(tmp_path / "data", env, rigged=True) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"
        code, game_id, token, host = await play_a_game(ws)
        async with CrispClient.connect(ws) as carl:
            lobby = await carl.create("Carl")
            (tmp_path / "schemathesis.toml").write_text(
                config([code, lobby, code.lower()], [game_id], [f"Bearer {token}", f"Bearer {host}", "Bearer nobody"])
            )
            har_path = tmp_path / "run.har"
            run = subprocess.run(
                [
                    *SCHEMATHESIS,
                    "--config-file",
                    str(tmp_path / "schemathesis.toml"),
                    "run",
                    f"{base}/openapi.json",
                    "--checks",
                    "all",
                    "--max-examples",
                    "60",
                    "--seed",
                    "1",
                    "--workers",
                    "1",
                    "--generation-database",
                    "none",
                    "--no-color",
                    "--report",
                    "har",
                    "--report-har-path",
                    str(har_path),
                ],
                check=False,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    har = json.loads(har_path.read_text())
    # The success paths were taken, not only the refusals.
    for path in (
        f"/api/rooms/{code}",
        f"/api/rooms/{lobby}",
        f"/api/rooms/{code}/qr.svg",
        f"/api/rooms/{code}/games",
        f"/api/rooms/{code}/standings",
        f"/api/rooms/{code}/seat",
    ):
        assert answered(har, path, 200) > 0, path
    record = f"/api/games/{game_id}/record"
    assert answered(har, record, 200) > 0
    assert answered(har, record, 403) > 0
    replay = f"/api/games/{game_id}/replay"
    assert answered(har, replay, 200) > 0
    assert answered(har, replay, 403) + answered(har, replay, 404) > 0  # 403 unless the fuzzing made it public


async def test_the_look_up_limit_is_documented(tmp_path: Path) -> None:
    """The 429 after the room look-up limit conforms to the document (the fuzzing run raises the limit)."""
    app = create_app(Settings(data_dir=tmp_path, lookup_burst=2, lookup_per_minute=1), persist=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
        statuses = []
        for _ in range(3):
            response = await http.get("/api/rooms/ACDEFG")
            statuses.append(response.status_code)
            assert_documented(app, "/api/rooms/{code}", response, code="ACDEFG")
            if response.status_code == 404:
                assert response.json() == {"detail": "no room with that code", "existed": False}
    assert statuses == [404, 404, 429]
