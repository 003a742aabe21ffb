"""The store on each database: migrations, the action log as a record, restart reads, history, retention."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from crisp_server.engine import Options, record_to_dict, replay
from crisp_server.store import reads
from crisp_server.store.migrate import HEAD, alembic_config, check, downgrade, revision, upgrade, upgrade_if_needed
from crisp_server.store.models import GameRow, RoomRow
from crisp_server.store.operations import (
    AddResume,
    AppendAction,
    CloseRoom,
    FinishGame,
    ReserveVersion,
    SaveRoom,
    SeatData,
    SetClock,
    StartGame,
    StartRound,
)
from crisp_server.store.store import Store
from crisp_server.tools.simulate import play_random_game


async def test_migrations_upgrade_downgrade_upgrade_and_no_drift(database_url: str) -> None:
    await asyncio.to_thread(upgrade, database_url)
    await asyncio.to_thread(check, database_url)  # raises if models and migrations differ
    await asyncio.to_thread(downgrade, database_url)
    await asyncio.to_thread(upgrade, database_url)
    await asyncio.to_thread(check, database_url)


def test_head_is_the_newest_migration() -> None:
    from alembic.script import ScriptDirectory

    assert ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head() == HEAD


async def test_a_start_migrates_only_a_database_that_is_not_current(database_url: str) -> None:
    store = Store(database_url)
    try:
        assert await revision(store.engine) is None  # a new database: no schema yet
        assert await upgrade_if_needed(store.engine, database_url) is True
        assert await revision(store.engine) == HEAD
        assert await upgrade_if_needed(store.engine, database_url) is False  # current: Alembic is not run
        await asyncio.to_thread(downgrade, database_url, None, "0003")
        assert await revision(store.engine) == "0003"
        assert await upgrade_if_needed(store.engine, database_url) is True
        assert await revision(store.engine) == HEAD
        await asyncio.to_thread(check, database_url)
    finally:
        await store.engine.dispose()


def test_a_server_start_on_a_current_database_does_not_load_alembic() -> None:
    """Importing Alembic costs a restart about a fifth of a second: the server's modules load it only to migrate."""
    code = (
        "import sys, crisp_server.serve, crisp_server.__main__; print(sorted(m for m in sys.modules if 'alembic' in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


async def test_upgrading_a_database_in_use_keeps_its_rooms_and_games(database_url: str) -> None:
    # A database made and written by the first release (revision 0001), with a game under way.
    await asyncio.to_thread(upgrade, database_url, None, "0001")
    old = Store(database_url)
    await old.start()
    try:
        game_id, played = await _store_game(old, seed=5, players=3, finish=False)
    finally:
        await old.close()

    await asyncio.to_thread(upgrade, database_url)
    store = Store(database_url)
    await store.start()
    try:
        (room,) = await store.open_rooms()
        assert room.v == 0, "a room saved before the version was stored starts from nothing known"
        assert room.game is not None
        rounds: Any = played["rounds"]
        assert [r["actions"] for r in record_to_dict(room.game.record)["rounds"]] == [r["actions"] for r in rounds]
        async with store.sessions() as session:
            game = await session.get(GameRow, game_id)
            assert game is not None
            assert game.abandoned is False
        await store.commit([ReserveVersion(room.id, 1001)])
        (room,) = await store.open_rooms()
        assert room.v == 1001
    finally:
        await store.close()


def _seats(names: list[str]) -> tuple[SeatData, ...]:
    return tuple(SeatData(n, f"{i:064x}", False, None) for i, n in enumerate(names))


async def _store_game(store: Store, seed: int, players: int, finish: bool) -> tuple[str, dict[str, object]]:
    """Play a random game and store it the way a room does; the game id and the game's own record."""
    game, record = play_random_game(players, Options(50, 30, True), random.Random(seed))
    room_id, game_id = f"room{seed}", f"game{seed}"
    names = list(record.players)
    o = record.options
    options = {"score_limit": o.score_limit, "turn_seconds": o.turn_seconds, "discard_draw": o.discard_draw}
    await store.commit(
        [
            SaveRoom(room_id, f"C{seed:05d}"[:6], "http://x/r/C", "play", 0, options, _seats(names)),
            StartGame(
                game_id,
                room_id,
                record.players,
                tuple(f"{i:064x}" for i in range(players)),
                options,
                record.first_dealer,
            ),
        ]
    )
    for k, rr in enumerate(record.rounds):
        await store.commit([StartRound(game_id, k, rr.deck, "ab" * 16)])
        # Several actions per commit, as a busy room's batch would be.
        ops = [AppendAction(game_id, k, i, timed) for i, timed in enumerate(rr.actions)]
        for start in range(0, len(ops), 7):
            await store.commit(ops[start : start + 7])
        r = game.rounds[k]
        if r.ended:
            assert r.end_at is not None
            await store.commit([SetClock(game_id, k, r.end_at, ended=True)])
    if finish:
        await store.commit([FinishGame(game_id, tuple(game.totals), game.winners)])
    return game_id, record_to_dict(record)


async def test_resumes_are_appended_in_order_and_the_round_keeps_its_latest_clock(store: Store) -> None:
    game_id, played = await _store_game(store, seed=4, players=2, finish=False)
    rounds: Any = played["rounds"]
    last = len(rounds) - 1
    n = len(rounds[last]["actions"])
    end = rounds[last].get("end_at", rounds[last]["actions"][-1]["at"])

    async def stored_round() -> dict[str, Any]:
        found = await store.game_record(game_id)
        assert found is not None
        return dict(found[0]["rounds"][last])

    # Two in one group commit (written with one statement, in their order): the clock keeps the later instant.
    await store.commit([AddResume(game_id, last, n, end + 500), AddResume(game_id, last, n, end + 300)])
    after_two = await stored_round()
    assert after_two["resumes"] == [{"after": n, "at": end + 500}, {"after": n, "at": end + 300}]
    assert after_two["end_at"] == end + 500
    # A clock set in the same group before a resume: the resume's later instant stands.
    await store.commit([SetClock(game_id, last, end + 700), AddResume(game_id, last, n, end + 900)])
    after_three = await stored_round()
    assert [r["at"] for r in after_three["resumes"]] == [end + 500, end + 300, end + 900]
    assert after_three["end_at"] == end + 900
    assert after_three["actions"] == rounds[last]["actions"]


async def test_a_stored_game_is_its_record_and_replays_to_the_same_result(store: Store) -> None:
    game_id, played = await _store_game(store, seed=3, players=4, finish=True)
    stored = await store.game_record(game_id)
    assert stored is not None
    document, hashes, finished = stored
    assert finished
    assert len(hashes) == 4
    for got, want in zip(document["rounds"], played["rounds"], strict=True):  # type: ignore[call-overload]
        assert got["deck"] == want["deck"]
        assert got["actions"] == want["actions"]
    # end_at only adds the instant the round ended at: the result is the same.
    from crisp_server.engine import parse_record

    assert replay(parse_record(document)) == replay(parse_record(played))


async def test_open_rooms_rebuild_the_running_game(store: Store) -> None:
    await _store_game(store, seed=5, players=3, finish=False)
    rooms = await store.open_rooms()
    assert [r.id for r in rooms] == ["room5"]
    room = rooms[0]
    assert [s.name for s in room.seats] == ["P0", "P1", "P2"]
    assert room.game is not None
    assert room.game.id == "game5"
    assert len(room.game.salts) == len(room.game.record.rounds)


async def test_open_rooms_read_in_parts_are_each_room_as_it_is_loaded_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rooms come back in parts of ROOMS_AT_ONCE (a few queries for each part, not a few for each room): every
    # room, in any part, is the same as when it is read alone, with its own seats and its latest game.
    monkeypatch.setattr(reads, "ROOMS_AT_ONCE", 2)
    for seed, players in ((11, 2), (12, 3), (13, 4)):
        await _store_game(store, seed=seed, players=players, finish=False)
    options = {"score_limit": 100, "turn_seconds": None, "discard_draw": False}
    await store.commit([SaveRoom("lobby", "LLLLLL", "l", "lobby", 0, options, _seats(["Ana", "Ben"]))])
    # A rematch: room12's newer game is the one that comes back.
    await store.commit(
        [StartGame("game12b", "room12", ("P0", "P1", "P2"), tuple(f"{i:064x}" for i in range(3)), options, 1)]
    )
    rooms = {r.id: r for r in await store.open_rooms()}
    assert set(rooms) == {"room11", "room12", "room13", "lobby"}
    for room_id, room in rooms.items():
        assert room == await store.load_room(room_id)
    assert [len(rooms[f"room{n}"].seats) for n in (11, 12, 13)] == [2, 3, 4]
    assert rooms["lobby"].game is None
    assert [s.name for s in rooms["lobby"].seats] == ["Ana", "Ben"]
    assert rooms["room11"].game is not None
    assert rooms["room11"].game.id == "game11"
    assert rooms["room12"].game is not None
    assert rooms["room12"].game.id == "game12b"
    assert rooms["room12"].game.record.rounds == []


async def test_history_lists_finished_games_only(store: Store) -> None:
    finished_id, _ = await _store_game(store, seed=7, players=2, finish=True)
    games = await store.past_games("room7")
    assert [g["id"] for g in games] == [finished_id]
    assert games[0]["players"] == ["P0", "P1"]
    assert min(games[0]["totals"]) == games[0]["totals"][games[0]["winners"][0]]
    # Whether anyone may open its replay (the link page of a closed room offers the public ones).
    assert games[0]["public"] is False
    assert await store.set_public(finished_id, True)
    assert [g["public"] for g in await store.past_games("room7")] == [True]


async def test_retention_closes_idle_lobbies_and_deletes_old_games(store: Store) -> None:
    options = {"score_limit": 100, "turn_seconds": None, "discard_draw": False}
    await store.commit([SaveRoom("idle", "AAAAAA", "l", "lobby", 0, options, _seats(["Ana"]))])
    await store.commit([SaveRoom("fresh", "CCCCCC", "l", "lobby", 0, options, _seats(["Cem"]))])
    old_id, _ = await _store_game(store, seed=9, players=2, finish=True)
    long_ago = datetime.now(UTC) - timedelta(days=40)
    async with store.sessions.begin() as session:
        await session.execute(update(RoomRow).where(RoomRow.id == "idle").values(updated_at=long_ago))
        await session.execute(update(GameRow).where(GameRow.id == old_id).values(finished_at=long_ago))
    closed, deleted = await store.purge(timedelta(hours=24), timedelta(days=30))
    assert (closed, deleted) == (1, 1)
    assert await store.game_record(old_id) is None
    open_ids = {r.id for r in await store.open_rooms()}
    assert "idle" not in open_ids
    assert "fresh" in open_ids


async def test_an_abandoned_game_is_listed_served_and_purged_like_a_finished_one(store: Store) -> None:
    game_id, _ = await _store_game(store, seed=11, players=3, finish=False)
    await store.commit([FinishGame(game_id, (12, 30, 7), (), abandoned=True), CloseRoom("room11")])
    (listed,) = await store.past_games("room11")
    assert (listed["id"], listed["totals"], listed["winners"], listed["abandoned"]) == (game_id, [12, 30, 7], [], True)
    assert await store.last_room_id("C00011") == "room11"
    stored = await store.game_record(game_id)
    assert stored is not None
    assert stored[2], "served as an ended game"
    assert await store.open_rooms() == [], "not rebuilt"
    # Kept as long as finished games, counted from when it was abandoned.
    _, deleted = await store.purge(timedelta(hours=24), timedelta(days=30))
    assert deleted == 0
    async with store.sessions.begin() as session:
        long_ago = datetime.now(UTC) - timedelta(days=31)
        await session.execute(update(GameRow).where(GameRow.id == game_id).values(finished_at=long_ago))
    _, deleted = await store.purge(timedelta(hours=24), timedelta(days=30))
    assert deleted == 1
    assert await store.game_record(game_id) is None


async def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        await store.commit([StartRound("no-such-game", 0, tuple("x" for _ in range(52)), "00")])
