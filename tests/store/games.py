"""Rooms and games written into a store the way a room writes them: games played at random by the engine,
stored round by round, then finished, abandoned or left running (the standings and replay tests and the
standings bench use them)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from crisp_server.engine import Options, Record, replay_game
from crisp_server.rooms.tokens import hash_token
from crisp_server.store.operations import (
    AppendAction,
    FinishGame,
    SaveRoom,
    SeatData,
    SetClock,
    StartGame,
    StartRound,
)
from crisp_server.store.store import Store
from crisp_server.tools.simulate import play_random_game

OPTIONS = Options(50, 30, True)


def _options(options: Options) -> dict[str, object]:
    o = options
    return {"score_limit": o.score_limit, "turn_seconds": o.turn_seconds, "discard_draw": o.discard_draw}


def _hashes(names: Sequence[str], token_hashes: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(token_hashes) if token_hashes is not None else tuple(f"{i:064x}" for i in range(len(names)))


async def save_room(
    store: Store,
    room_id: str,
    code: str,
    names: Sequence[str],
    *,
    phase: str = "play",
    options: Options = OPTIONS,
    token_hashes: Sequence[str] | None = None,
) -> None:
    """The room as its lobby was saved: its seats (``names``), ``phase`` and options."""
    seats = tuple(SeatData(n, h, False, None) for n, h in zip(names, _hashes(names, token_hashes), strict=True))
    room_options = {**_options(options), "stand_in": None}
    await store.commit([SaveRoom(room_id, code, f"http://127.0.0.1/r/{code}", phase, 0, room_options, seats)])


async def store_game(
    store: Store,
    room_id: str,
    game_id: str,
    names: Sequence[str],
    seed: int,
    *,
    end: str = "won",
    options: Options = OPTIONS,
    token_hashes: Sequence[str] | None = None,
) -> Record:
    """A game of ``names`` played at random (``seed``), stored in ``room_id`` action by action. ``end``: "won"
    (played to its end), "abandoned" (after its first round, no winner) or "running" (not finished). The
    record of what was stored."""
    game, record = play_random_game(len(names), options, random.Random(seed))
    record = replace(record, players=tuple(names))
    hashes = _hashes(names, token_hashes)
    await store.commit([StartGame(game_id, room_id, tuple(names), hashes, _options(options), record.first_dealer)])
    rounds = record.rounds[:1] if end == "abandoned" else record.rounds
    for k, rr in enumerate(rounds):
        await store.commit([StartRound(game_id, k, rr.deck, "ab" * 16)])
        await store.commit([AppendAction(game_id, k, i, timed) for i, timed in enumerate(rr.actions)])
        r = game.rounds[k]
        if r.ended:
            assert r.end_at is not None
            await store.commit([SetClock(game_id, k, r.end_at, ended=True)])
    if end == "won":
        await store.commit([FinishGame(game_id, tuple(game.totals), game.winners)])
    elif end == "abandoned":
        first = game.rounds[0].points
        assert first is not None
        await store.commit([FinishGame(game_id, first, (), abandoned=True)])
    return replace(record, rounds=list(rounds))


@dataclass
class StoredGame:
    """A game :func:`store_played` stored: its id, players, each seat's token, the room's code and host seat."""

    id: str
    players: list[str]
    tokens: list[str]
    room: str
    host: int | None


async def store_played(
    store: Store, seed: int, players: int, options: Options, *, finish: bool = True, host: int | None = 0
) -> StoredGame:
    """A random game (``seed``) stored the way a room stores one, its accepted actions only, in a room of its
    own: a token per seat (``token-SEED-SEAT``), ``host`` the game's host seat (``None``: a game stored before
    hosts were kept). ``finish=False`` leaves it running."""
    _, played = play_random_game(players, options, random.Random(seed))
    game, rejected = replay_game(played)
    drop = {(x["round"], x["index"]) for x in rejected}
    game_id, room_id, code = f"game{seed}", f"room{seed}", f"R{seed:05d}"[:6]
    tokens = [f"token-{seed}-{seat}" for seat in range(players)]
    hashes = tuple(hash_token(t) for t in tokens)
    room_options = played.options.as_dict()
    seats = tuple(SeatData(name, h, False, None) for name, h in zip(played.players, hashes, strict=True))
    await store.commit(
        [
            SaveRoom(room_id, code, f"http://x/r/{code}", "play", host or 0, room_options, seats),
            StartGame(game_id, room_id, played.players, hashes, room_options, played.first_dealer, host),
        ]
    )
    for k, rr in enumerate(played.rounds):
        kept = [t for i, t in enumerate(rr.actions) if (k, i) not in drop]
        ops: list[object] = [StartRound(game_id, k, rr.deck, "ab" * 16)]
        ops += [AppendAction(game_id, k, i, t) for i, t in enumerate(kept)]
        r = game.rounds[k]
        if r.ended:
            assert r.end_at is not None
            ops.append(SetClock(game_id, k, r.end_at, ended=True))
        await store.commit(ops)  # type: ignore[arg-type]
    if finish:
        await store.commit([FinishGame(game_id, tuple(game.totals), game.winners)])
    return StoredGame(game_id, list(played.players), tokens, code, host)
