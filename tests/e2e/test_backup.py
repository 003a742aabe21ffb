"""``crisp-server backup`` of a server while it plays, and ``crisp-server restore`` of that copy: a server
started on the restored database has the same rooms, seats and game, and every stored game replays. A restore
is refused while a server runs on the database, and the database is left as it was."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from crisp_server.engine import replay
from crisp_server.remote.client import CrispClient
from crisp_server.settings import Settings
from crisp_server.store.store import Store
from tests.e2e.procs import server_process
from tests.e2e.test_restart import essentials, settle, two_player_game


def crisp(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m crisp_server ARGS`` with its database in ``data_dir``."""
    env = {**os.environ, "CRISP_DATA_DIR": str(data_dir)}
    env.pop("CRISP_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "crisp_server", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def seat_view(state: dict[str, Any]) -> dict[str, Any]:
    """What a seat sees of the game, less what it may do now: a resumed round closes a Crisp window that
    was open (docs/protocol.md), whichever server it resumes on."""
    view = essentials(state)
    view["you"].pop("can")
    return view


async def stored_games(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every open room's game in the database, replayed: its result by room code."""
    store = Store(Settings(data_dir=data_dir).resolved_database_url())
    try:
        return {room.code: replay(room.game.record) for room in await store.open_rooms() if room.game is not None}
    finally:
        await store.engine.dispose()


async def test_a_backup_taken_during_play_restores_the_same_rooms_and_game(tmp_path: Path) -> None:
    first, second, copy = tmp_path / "first", tmp_path / "second", tmp_path / "backup.sqlite3"
    with server_process(first) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"
        async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
            code = await two_player_game(ana, ben)
            mover = ana if ana.my_turn() else ben
            await mover.draw()
            await mover.play_drawn()  # a drawn King must be used: the room is then in the middle of a turn
            async with CrispClient.connect(ws) as cleo:
                lobby_code = await cleo.create("Cleo")
                await settle(ana, ben, cleo)
            seen = [seat_view(c.state) for c in (ana, ben) if c.state is not None]
            tokens = (ana.token, ben.token)

            # While the server runs, with its players connected.
            made = await asyncio.to_thread(crisp, first, "backup", str(copy))
            assert made.returncode == 0, made.stderr
            assert "integrity check ok" in made.stdout
            assert copy.is_file()
            assert not copy.with_name(copy.name + ".partial").exists()

            refused = await asyncio.to_thread(crisp, first, "restore", str(copy))
            assert refused.returncode == 3, refused.stdout + refused.stderr
            assert "a server (or a restore) uses" in refused.stderr
            assert not list(first.glob("*.before-restore-*"))
            await settle(ana, ben)  # the server plays on

    restored = await asyncio.to_thread(crisp, second, "restore", str(copy))
    assert restored.returncode == 0, restored.stderr
    assert (await stored_games(second)).keys() == {code}
    assert await stored_games(second) == await stored_games(first)

    with server_process(second) as (base, _proc):
        async with httpx.AsyncClient(base_url=base) as http:
            room = (await http.get(f"/api/rooms/{code}")).json()
            assert room["players"] == ["Ana", "Ben"]
            assert room["phase"] == "play"
            assert (await http.get(f"/api/rooms/{lobby_code}")).json()["players"] == ["Cleo"]
        ws = base.replace("http", "ws") + "/ws"
        async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
            assert tokens[0] is not None
            assert tokens[1] is not None
            await ana.resume(code, tokens[0])
            await ben.resume(code, tokens[1])
            await settle(ana, ben)
            assert [seat_view(c.state) for c in (ana, ben) if c.state is not None] == seen


def test_a_second_server_on_the_same_database_is_refused(tmp_path: Path) -> None:
    with server_process(tmp_path):
        second = subprocess.run(
            [sys.executable, "-m", "crisp_server", "serve", "--port", "0"],
            env={**os.environ, "CRISP_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert second.returncode == 1
    assert "crisp.sqlite3.lock is locked" in second.stderr
