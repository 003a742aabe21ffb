"""An upgrade from the oldest schema: a database made by the first migration (0001), with games stored in it
the way that revision stored them, is migrated to the newest with ``crisp-server migrate``; every stored game
then replays to the result it had, and a server starts on it with the open room and the finished game."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from crisp_server.engine import Options, Record, parse_record, record_to_dict, replay
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from crisp_server.tools.simulate import play_random_game
from tests.e2e.procs import server_process

#: Now, as SQLAlchemy stored a DateTime on SQLite (a game saved long ago would be closed as abandoned at start).
WHEN = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def store_game(db: sqlite3.Connection, code: str, record: Record, *, finished: bool) -> str:
    """A room with ``record``'s game, in revision 0001's tables (no rooms.v, games.abandoned, seats.bot): a
    finished game in a closed room with its result, or a game under way in an open room."""
    room_id, game_id = f"room{code}", f"game{code}"
    doc = record_to_dict(record)
    players = doc["players"]
    options = json.dumps(doc["options"])
    db.execute(
        "INSERT INTO rooms (id, code, link, phase, host, options, created_at, updated_at, closed_at) "
        "VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?)",
        (room_id, code, f"http://127.0.0.1/r/{code}", "game_over" if finished else "play", options, WHEN, WHEN)
        + ((WHEN,) if finished else (None,)),
    )
    db.executemany(
        'INSERT INTO seats (room_id, position, name, token_hash, "left", connected_at) VALUES (?, ?, ?, ?, 0, NULL)',
        [(room_id, i, name, f"{i:064x}") for i, name in enumerate(players)],
    )
    db.execute(
        "INSERT INTO games (id, room_id, players, token_hashes, options, first_dealer, started_at, finished_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            game_id,
            room_id,
            json.dumps(players),
            json.dumps([f"{i:064x}" for i in range(len(players))]),
            options,
            doc["first_dealer"],
            WHEN,
            WHEN if finished else None,
        ),
    )
    for index, rnd in enumerate(doc["rounds"]):
        last = index == len(doc["rounds"]) - 1
        db.execute(
            'INSERT INTO rounds (game_id, "index", deck, salt, end_at, resumes, ended) VALUES (?, ?, ?, ?, ?, ?, ?)',
            (game_id, index, json.dumps(rnd["deck"]), "5" * 64, rnd.get("end_at"), "[]", finished or not last),
        )
        db.executemany(
            'INSERT INTO actions (game_id, round_index, seq, "at", seat, "do", data) VALUES (?, ?, ?, ?, ?, ?, ?)',
            [
                (game_id, index, seq, a["at"], a["seat"], a["do"], json.dumps(_fields(a)))
                for seq, a in enumerate(rnd["actions"])
            ],
        )
    if finished:
        result = replay(record)
        totals = next(r["totals"] for r in reversed(result["rounds"]) if r.get("totals") is not None)
        db.execute(
            "INSERT INTO results (game_id, totals, winners, finished_at) VALUES (?, ?, ?, ?)",
            (game_id, json.dumps(totals), json.dumps(result["winners"]), WHEN),
        )
    return game_id


def _fields(action: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if k not in ("at", "seat", "do")}


def under_way(record: Record) -> Record:
    """The game as it stood in the middle of its second round."""
    second = record.rounds[1]
    cut = type(second)(second.deck, second.actions[: len(second.actions) // 2])
    return Record(record.options, record.players, record.first_dealer, [record.rounds[0], cut])


async def test_a_database_of_the_first_schema_upgrades_and_every_game_replays(tmp_path: Path) -> None:
    data = tmp_path / "data"
    url = Settings(data_dir=data).resolved_database_url()
    await asyncio.to_thread(upgrade, url, None, "0001")  # Alembic runs its own loop
    rng = random.Random(36)
    finished = [play_random_game(n, Options(score_limit=50), rng)[1] for n in (2, 3, 4)]
    running = under_way(play_random_game(4, Options(score_limit=200, turn_seconds=30), rng)[1])
    assert len(running.rounds) == 2
    with sqlite3.connect(data / "crisp.sqlite3") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == ("0001",)
        games = {
            store_game(db, code, r, finished=True): r
            for code, r in zip(("FACE33", "FACE34", "FACE36"), finished, strict=True)
        }
        games[store_game(db, "RUNWAY", running, finished=False)] = running

    migrate = subprocess.run(
        [sys.executable, "-m", "crisp_server", "migrate"],
        env={"PATH": "/usr/bin:/bin", "CRISP_DATA_DIR": str(data)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert migrate.returncode == 0, migrate.stderr

    store = Store(url)
    try:
        for game_id, record in games.items():
            stored = await store.game_record(game_id)
            assert stored is not None
            document, _hashes, done = stored
            assert done == (record is not running)
            assert replay(parse_record(document)) == replay(record)
        (room,) = await store.open_rooms()
        assert room.code == "RUNWAY"
        assert room.v == 0
        assert [seat.bot for seat in room.seats] == [None] * 4
        assert room.game is not None
        assert replay(room.game.record) == replay(running)
    finally:
        await store.engine.dispose()

    with server_process(data) as (base, _proc):
        async with httpx.AsyncClient(base_url=base) as http:
            info = (await http.get("/api/rooms/RUNWAY")).json()
            assert info["phase"] == "play"
            assert info["players"] == list(running.players)
            (past,) = (await http.get("/api/rooms/FACE33/games")).json()
            assert past["abandoned"] is False
            assert past["winners"] == replay(finished[0])["winners"]
