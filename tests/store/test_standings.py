"""A room's standings on each database: wins, ties, abandoned games, best rounds, later joiners, the cache."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from sqlalchemy import delete

from crisp_server.engine import Record, replay
from crisp_server.store import reads
from crisp_server.store.models import ActionRow, GameRow
from crisp_server.store.standings import GameTally, PlayerStanding, TallyCache, best_rounds, standings
from crisp_server.store.store import Store
from crisp_server.tools.simulate import play_random_game
from tests.store.games import OPTIONS, save_room, store_game


async def _store(store: Store, room_id: str, game_id: str, names: list[str], seed: int, *, end: str) -> Record:
    """A random game stored in ``room_id`` (its seats saved as they were for it); its record."""
    await save_room(store, room_id, "C" + room_id[-5:].upper(), names)
    return await store_game(store, room_id, game_id, names, seed, end=end)


def _played(names: list[str], seed: int) -> Record:
    _, record = play_random_game(len(names), OPTIONS, random.Random(seed))
    return replace(record, players=tuple(names))


def _expected_best(record: Record) -> list[int | None]:
    """Each seat's lowest round points, read from the engine's result object (``replay``)."""
    result = replay(record)
    ended = [r["points"] for r in result["rounds"] if r["ended"]]
    return [min(points[seat] for points in ended) if ended else None for seat in range(len(record.players))]


async def test_the_standings_sum_every_ended_game_of_the_room(store: Store) -> None:
    first = await _store(store, "roomaa", "g1", ["Ana", "Ben"], seed=1, end="won")
    # Cem joined later: two games, not three.
    second = await _store(store, "roomaa", "g2", ["Ana", "Ben", "Cem"], seed=2, end="won")
    third = await _store(store, "roomaa", "g3", ["Cem", "Ana", "Ben"], seed=3, end="abandoned")
    await _store(store, "roomaa", "g4", ["Ana", "Ben", "Cem"], seed=4, end="running")  # not counted
    await _store(store, "roombb", "g5", ["Ana", "Dora"], seed=5, end="won")  # another room

    got = await store.room_standings("roomaa")
    assert (got.games, got.abandoned) == (3, 1)

    want: dict[str, PlayerStanding] = {n: PlayerStanding(n) for n in ("Ana", "Ben", "Cem")}
    for record, won in ((first, True), (second, True), (third, False)):
        result = replay(record)
        totals = result["rounds"][-1]["totals"]
        for seat, name in enumerate(record.players):
            p = want[name]
            p.games += 1
            p.points += totals[seat]
            p.wins += won and seat in result["winners"]
            best = _expected_best(record)[seat]
            if best is not None and (p.best_round is None or best < p.best_round):
                p.best_round = best
    assert {p.name: p for p in got.players} == want
    assert want["Cem"].games == 2
    assert sum(p.wins for p in got.players) >= 2, "each won game has a winner"
    ranks = [(-p.wins, p.points) for p in got.players]
    assert ranks == sorted(ranks), "most wins first, then fewest points"

    assert (await store.room_standings("roombb")).games == 1
    empty = await store.room_standings("nosuchroom")
    assert (empty.games, empty.abandoned, empty.players) == (0, 0, [])


async def test_an_abandoned_game_counts_as_played_without_a_winner(store: Store) -> None:
    record = await _store(store, "roomcc", "g1", ["Ana", "Ben", "Cem"], seed=7, end="abandoned")
    got = await store.room_standings("roomcc")
    assert (got.games, got.abandoned) == (1, 1)
    points = replay(record)["rounds"][0]["points"]
    by_name = {p.name: p for p in got.players}
    for seat, name in enumerate(record.players):
        assert (by_name[name].games, by_name[name].wins) == (1, 0)
        assert by_name[name].points == points[seat]
        assert by_name[name].best_round == points[seat], "its one ended round is the best"


async def test_each_ended_game_is_replayed_once_then_read_from_the_cache(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    replayed: list[int] = []

    def counting(record: Record) -> tuple[int | None, ...]:
        replayed.append(len(record.rounds))
        return best_rounds(record)

    monkeypatch.setattr(reads, "best_rounds", counting)
    await _store(store, "roomdd", "g1", ["Ana", "Ben"], seed=11, end="won")
    first = await store.room_standings("roomdd")
    again = await store.room_standings("roomdd")
    assert again == first
    assert len(replayed) == 1
    await _store(store, "roomdd", "g2", ["Ana", "Ben"], seed=12, end="won")
    assert (await store.room_standings("roomdd")).games == 2
    assert len(replayed) == 2, "only the new game was replayed"


async def test_a_restarted_store_reads_the_same_standings(store: Store) -> None:
    await _store(store, "roomee", "g1", ["Ana", "Ben", "Cem", "Dan"], seed=13, end="won")
    await _store(store, "roomee", "g2", ["Ana", "Ben", "Cem", "Dan"], seed=14, end="abandoned")
    before = await store.room_standings("roomee")
    fresh = Store(store.url)
    await fresh.start()
    try:
        assert await fresh.room_standings("roomee") == before
    finally:
        await fresh.close()


# -- the sums alone, on games made up for the case -----------------------------------------------------


def _tally(players: str, totals: tuple[int, ...], winners: tuple[int, ...], best: tuple[int | None, ...]) -> GameTally:
    return GameTally(tuple(players.split()), totals, winners, False, best)


def test_a_tie_is_a_win_for_each_tied_player_and_ranks_break_on_points_then_name() -> None:
    got = standings(
        [
            _tally("Ana Ben Cem", (20, 20, 55), (0, 1), (0, 2, 5)),
            _tally("Ben Cem", (60, 12), (1,), (4, -5)),
            _tally("Cem Dora", (9, 9), (0, 1), (None, 3)),
        ]
    )
    assert (got.games, got.abandoned) == (3, 0)
    rows = [(p.name, p.games, p.wins, p.points, p.best_round) for p in got.players]
    assert rows == [
        ("Cem", 3, 2, 76, -5),
        ("Dora", 1, 1, 9, 3),
        ("Ana", 1, 1, 20, 0),
        ("Ben", 2, 1, 80, 2),
    ]


def test_equal_wins_and_points_are_ranked_by_name() -> None:
    got = standings([_tally("zoe Ana bob", (5, 5, 5), (0, 1, 2), (None, None, None))])
    assert [p.name for p in got.players] == ["Ana", "bob", "zoe"]
    assert all(p.best_round is None for p in got.players)


def test_an_abandoned_game_has_no_winner_even_if_listed() -> None:
    tally = replace(_tally("Ana Ben", (3, 8), (0,), (3, 8)), abandoned=True)
    got = standings([tally])
    assert (got.games, got.abandoned) == (1, 1)
    assert [p.wins for p in got.players] == [0, 0]


def test_the_best_round_is_the_lowest_points_of_an_ended_round() -> None:
    record = _played(["A", "B", "C"], seed=21)
    assert list(best_rounds(record)) == _expected_best(record)
    assert any(b is not None for b in best_rounds(record))


def test_the_cache_forgets_the_least_recently_used_past_its_capacity() -> None:
    cache = TallyCache(capacity=2)
    a, b, c = (_tally("Ana", (n,), (0,), (n,)) for n in (1, 2, 3))
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") == a  # now the most recent
    cache.put("c", c)
    assert len(cache) == 2
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (a, c)


async def test_a_game_that_does_not_replay_is_counted_without_its_rounds(store: Store) -> None:
    record = await _store(store, "roomff", "g1", ["Ana", "Ben"], seed=31, end="won")
    assert len(record.rounds) > 1
    async with store.sessions.begin() as session:  # the first round's moves lost: round 1 never ended
        await session.execute(delete(ActionRow).where(ActionRow.game_id == "g1", ActionRow.round_index == 0))
    got = await store.room_standings("roomff")
    assert got.games == 1
    assert [p.games for p in got.players] == [1, 1]
    assert [p.best_round for p in got.players] == [None, None]
    assert sum(p.wins for p in got.players) >= 1, "its result row still says who won"


async def test_the_games_read_together_are_the_records_read_one_by_one(store: Store) -> None:
    await _store(store, "roomgg", "g1", ["Ana", "Ben", "Cem"], seed=41, end="won")
    await _store(store, "roomgg", "g2", ["Ana", "Ben"], seed=42, end="abandoned")
    async with store.sessions() as session:
        games = [g for g in (await session.get(GameRow, "g1"), await session.get(GameRow, "g2")) if g is not None]
        together = await reads._game_documents(session, games)
    for game_id in ("g1", "g2"):
        alone = await store.game_record(game_id)
        assert alone is not None
        assert together[game_id] == alone[0]
