"""Reads: the rooms to rebuild after a restart or an outage, a game's record, a room's past games and
standings, and retention (the purge of idle lobbies and old games).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crisp_server.engine import MalformedRecord, Record, parse_record, replay_game

from .models import ActionRow, GameRow, ResultRow, RoomRow, RoundRow, SeatRow
from .operations import SeatData, utc_now
from .standings import GameTally, Standings, TallyCache, best_rounds, standings

log = logging.getLogger("crisp.store")


@dataclass(slots=True)
class StoredGame:
    id: str
    record: Record
    token_hashes: list[str]
    salts: list[str]
    ended: list[bool]


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A stored game as the records and replays API reads it: its ``crisp-record/1`` document, its players'
    token hashes by seat, whether it has finished, the room's host seat when it started (``None`` for a game
    stored before hosts were) and whether its replay is public by link."""

    record: dict[str, Any]
    token_hashes: list[str]
    finished: bool
    host: int | None
    public: bool


@dataclass(slots=True)
class StoredRoom:
    id: str
    code: str
    link: str
    phase: str
    host: int
    options: dict[str, Any]
    seats: list[SeatData]
    game: StoredGame | None = None
    updated_at: datetime | None = None
    #: No version the room published is above this (``ReserveVersion``).
    v: int = 0


@dataclass(frozen=True, slots=True)
class RoomSummary:
    """What the lobby-wide reads (room info, QR code, games list) need of a room."""

    room_id: str
    code: str
    link: str
    phase: str
    players: list[str]


class Reads:
    """The store's reading part (``Store`` inherits it); ``sessions`` are its ``AsyncSession``s, ``_writing``
    the lock every write transaction holds (the purge writes)."""

    sessions: async_sessionmaker[AsyncSession]
    _writing: asyncio.Lock
    #: Ended games' standings tallies (they never change), so that a room's standings replay each game once.
    _tallies: TallyCache

    async def open_rooms(self) -> list[StoredRoom]:
        """Every room that was not closed, with its running game rebuilt as a record."""
        async with self.sessions() as session:
            rooms = (await session.scalars(select(RoomRow).where(RoomRow.closed_at.is_(None)))).all()
            return await _stored_rooms(session, rooms)

    async def load_room(self, room_id: str) -> StoredRoom | None:
        """One room as the database has it (after its commit failed), or ``None`` if it was never written
        or is closed."""
        async with self.sessions() as session:
            room = await session.get(RoomRow, room_id)
            if room is None or room.closed_at is not None:
                return None
            return (await _stored_rooms(session, [room]))[0]

    async def game_record(self, game_id: str) -> tuple[dict[str, Any], list[str], bool] | None:
        """The game's ``crisp-record/1``, its players' token hashes, and whether it has finished."""
        found = await self.stored_record(game_id)
        return None if found is None else (found.record, found.token_hashes, found.finished)

    async def stored_record(self, game_id: str) -> StoredRecord | None:
        """A stored game's record and who may read it (``StoredRecord``), or ``None`` if there is no such game."""
        async with self.sessions() as session:
            game = await session.get(GameRow, game_id)
            if game is None:
                return None
            document = (await _game_documents(session, [game]))[game.id]
            return StoredRecord(
                document, list(game.token_hashes), game.finished_at is not None, game.host, bool(game.public)
            )

    async def set_public(self, game_id: str, public: bool) -> bool:
        """Make a game's replay public by link, or not; whether the game exists."""
        async with self._writing, self.sessions.begin() as session:
            done = await session.execute(update(GameRow).where(GameRow.id == game_id).values(public=public))
            return bool(done.rowcount)  # type: ignore[attr-defined]

    async def open_room_id(self, code: str) -> str | None:
        """The id of the open room with this code, if any (in a cluster: it may live on another node)."""
        async with self.sessions() as session:
            found: str | None = await session.scalar(
                select(RoomRow.id)
                .where(RoomRow.code == code, RoomRow.closed_at.is_(None))
                .order_by(RoomRow.created_at.desc())
                .limit(1)
            )
            return found

    async def room_summary(self, code: str) -> RoomSummary | None:
        """An open room's public facts as last committed (a room another node of the cluster runs)."""
        async with self.sessions() as session:
            room = await session.scalar(
                select(RoomRow)
                .where(RoomRow.code == code, RoomRow.closed_at.is_(None))
                .order_by(RoomRow.created_at.desc())
                .limit(1)
            )
            if room is None:
                return None
            names = (
                await session.scalars(select(SeatRow.name).where(SeatRow.room_id == room.id).order_by(SeatRow.position))
            ).all()
            return RoomSummary(room.id, room.code, room.link, room.phase, list(names))

    async def room_seats(self, room_id: str) -> list[tuple[str, bool]]:
        """An open room's seats as last committed, in seat order: each one's token hash and whether its player
        left during a game (a room another node of the cluster runs)."""
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(SeatRow.token_hash, SeatRow.left)
                    .where(SeatRow.room_id == room_id)
                    .order_by(SeatRow.position)
                )
            ).all()
            return [(token_hash, bool(left)) for token_hash, left in rows]

    async def last_room_id(self, code: str) -> str | None:
        """The id of the newest room with this code, closed or not (a code is unique among open rooms only)."""
        async with self.sessions() as session:
            found: str | None = await session.scalar(
                select(RoomRow.id).where(RoomRow.code == code).order_by(RoomRow.created_at.desc()).limit(1)
            )
            return found

    async def past_games(self, room_id: str) -> list[dict[str, Any]]:
        """The room's ended games, newest first: players, totals, winners, whether it was abandoned, and
        whether its replay is public by link."""
        async with self.sessions() as session:
            rows = await _ended_games(session, room_id)
            return [
                {
                    "id": game.id,
                    "players": game.players,
                    "totals": result.totals,
                    "winners": result.winners,
                    "abandoned": game.abandoned,
                    "finished_at": result.finished_at.isoformat(),
                    "public": bool(game.public),
                }
                for game, result in rows
            ]

    async def room_standings(self, room_id: str) -> Standings:
        """The room's ended games (won or abandoned) summed per player name (``standings.py``)."""
        async with self.sessions() as session:
            rows = await _ended_games(session, room_id)
            rows.reverse()  # oldest first
            known = {game.id: self._tallies.get(game.id) for game, _ in rows}
            missing = [(game, result) for game, result in rows if known[game.id] is None]
            if missing:
                documents = await _game_documents(session, [game for game, _ in missing])
                for game, result in missing:
                    # A game's replay takes a millisecond or a few: the rooms run between two of them.
                    await asyncio.sleep(0)
                    try:
                        best = best_rounds(parse_record(documents[game.id]))
                    except MalformedRecord as e:  # never written so; counted still, without its rounds
                        log.error("game %s does not replay from its record: %s", game.id, e)
                        best = (None,) * len(game.players)
                    tally = GameTally(
                        tuple(game.players), tuple(result.totals), tuple(result.winners), game.abandoned, best
                    )
                    known[game.id] = tally
                    self._tallies.put(game.id, tally)
        return standings(t for t in known.values() if t is not None)

    async def end_stranded_games(self) -> int:
        """Games left running in a room that closed (a room closed when its last player left during a game,
        before such a room waited for its players): nothing can resume them, so each ends abandoned as a game
        nobody came back to does (the totals of its rounds played, no winner), as of its room's close. Then
        its record and replay are served, the room's games and standings list it, and retention purges it.
        How many were ended."""
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(GameRow, RoomRow.closed_at)
                    .join(RoomRow, RoomRow.id == GameRow.room_id)
                    .where(GameRow.finished_at.is_(None), RoomRow.closed_at.is_not(None))
                )
            ).all()
            if not rows:
                return 0
            documents = await _game_documents(session, [game for game, _ in rows])
        ended: list[tuple[str, list[int], datetime]] = []
        for game, closed_at in rows:
            await asyncio.sleep(0)  # a replay takes a millisecond or a few: the rooms run between two of them
            try:
                totals = list(replay_game(parse_record(documents[game.id]))[0].totals)
            except MalformedRecord as e:  # never written so; ended still, with no points
                log.error("game %s does not replay from its record: %s", game.id, e)
                totals = [0] * len(game.players)
            ended.append((game.id, totals, closed_at or utc_now()))  # (closed: never None, by the query)
        done = 0
        async with self._writing, self.sessions.begin() as session:
            for game_id, totals, at in ended:
                # Only if still running: another node of a cluster may have ended it meanwhile.
                changed = await session.execute(
                    update(GameRow)
                    .where(GameRow.id == game_id, GameRow.finished_at.is_(None))
                    .values(finished_at=at, abandoned=True)
                )
                if changed.rowcount:  # type: ignore[attr-defined]
                    session.add(ResultRow(game_id=game_id, totals=totals, winners=[], finished_at=at))
                    done += 1
        if done:
            log.info("games left running in closed rooms ended abandoned", extra={"games": done})
        return done

    async def purge(self, idle_lobby: timedelta, keep_finished: timedelta) -> tuple[int, int]:
        """Retention: close lobbies idle for ``idle_lobby``; delete games finished before ``keep_finished``,
        and closed rooms with no game left. The number of lobbies closed and games deleted."""
        now = utc_now()
        async with self._writing, self.sessions.begin() as session:
            closed = await session.execute(
                update(RoomRow)
                .where(RoomRow.closed_at.is_(None), RoomRow.phase == "lobby", RoomRow.updated_at < now - idle_lobby)
                .values(closed_at=now)
            )
            old = (await session.scalars(select(GameRow.id).where(GameRow.finished_at < now - keep_finished))).all()
            if old:
                await session.execute(delete(ActionRow).where(ActionRow.game_id.in_(old)))
                await session.execute(delete(RoundRow).where(RoundRow.game_id.in_(old)))
                await session.execute(delete(ResultRow).where(ResultRow.game_id.in_(old)))
                await session.execute(delete(GameRow).where(GameRow.id.in_(old)))
            gone = select(GameRow.id).where(GameRow.room_id == RoomRow.id).exists()
            await session.execute(
                delete(RoomRow).where(RoomRow.closed_at.is_not(None), RoomRow.closed_at < now - idle_lobby, ~gone)
            )
            return closed.rowcount or 0, len(old)  # type: ignore[attr-defined]


#: Rooms read at once by ``_stored_rooms`` (each query binds one parameter per room: well inside SQLite's and
#: PostgreSQL's limits).
ROOMS_AT_ONCE: Final = 500


async def _ended_games(session: AsyncSession, room_id: str) -> list[tuple[GameRow, ResultRow]]:
    """The room's ended games (won or abandoned) with their results, newest first."""
    rows = await session.execute(
        select(GameRow, ResultRow)
        .join(ResultRow, ResultRow.game_id == GameRow.id)
        .where(GameRow.room_id == room_id)
        .order_by(ResultRow.finished_at.desc())
    )
    return [(game, result) for game, result in rows.all()]


async def _stored_rooms(session: AsyncSession, rooms: Sequence[RoomRow]) -> list[StoredRoom]:
    """Rooms with their seats and latest game (running, or just finished: a room at its game's end shows the
    result), in a few queries for all of them: after a restart thousands of rooms come back at once."""
    out: list[StoredRoom] = []
    for start in range(0, len(rooms), ROOMS_AT_ONCE):
        part = rooms[start : start + ROOMS_AT_ONCE]
        ids = [room.id for room in part]
        seats: dict[str, list[SeatData]] = {}
        for s in await session.scalars(
            select(SeatRow).where(SeatRow.room_id.in_(ids)).order_by(SeatRow.room_id, SeatRow.position)
        ):
            seats.setdefault(s.room_id, []).append(SeatData(s.name, s.token_hash, s.left, s.connected_at, s.bot))
        latest: dict[str, GameRow] = {}
        for row in await session.scalars(
            select(GameRow).where(GameRow.room_id.in_(ids)).order_by(GameRow.room_id, GameRow.started_at.desc())
        ):
            latest.setdefault(row.room_id, row)
        games = list(latest.values())
        documents, rounds = await _game_documents_and_rounds(session, games)
        for room in part:
            stored = StoredRoom(
                room.id,
                room.code,
                room.link,
                room.phase,
                room.host,
                dict(room.options),
                seats.get(room.id, []),
                updated_at=room.updated_at,
                v=room.v,
            )
            game = latest.get(room.id)
            if game is not None:
                its_rounds = rounds.get(game.id, [])
                stored.game = StoredGame(
                    game.id,
                    parse_record(documents[game.id]),
                    list(game.token_hashes),
                    [r.salt for r in its_rounds],
                    [r.ended for r in its_rounds],
                )
            out.append(stored)
    return out


async def _game_documents(session: AsyncSession, games: Sequence[GameRow]) -> dict[str, dict[str, Any]]:
    """Several stored games as ``crisp-record/1`` documents by id, read in two queries for all of them."""
    documents, _ = await _game_documents_and_rounds(session, games)
    return documents


async def _game_documents_and_rounds(
    session: AsyncSession, games: Sequence[GameRow]
) -> tuple[dict[str, dict[str, Any]], dict[str, list[RoundRow]]]:
    """Several stored games as ``crisp-record/1`` documents by id, and their round rows by id, read in two
    queries for all of them."""
    ids = [g.id for g in games]
    if not ids:
        return {}, {}
    rounds: dict[str, list[RoundRow]] = {}
    for r in await session.scalars(select(RoundRow).where(RoundRow.game_id.in_(ids)).order_by(RoundRow.index)):
        rounds.setdefault(r.game_id, []).append(r)
    actions: dict[str, dict[int, list[dict[str, Any]]]] = {}
    # Plain rows, not ORM objects: a room's evening is thousands of actions, read once.
    found = await session.execute(
        select(ActionRow.game_id, ActionRow.round_index, ActionRow.at, ActionRow.seat, ActionRow.do, ActionRow.data)
        .where(ActionRow.game_id.in_(ids))
        .order_by(ActionRow.game_id, ActionRow.round_index, ActionRow.seq)
    )
    for a in found:
        by_round = actions.setdefault(a.game_id, {}).setdefault(a.round_index, [])
        by_round.append({"at": a.at, "seat": a.seat, "do": a.do, **a.data})
    documents = {g.id: record_document(g, rounds.get(g.id, []), actions.get(g.id, {})) for g in games}
    return documents, rounds


def record_document(
    game: GameRow, rounds: Sequence[RoundRow], actions: dict[int, list[dict[str, Any]]]
) -> dict[str, Any]:
    """A stored game as a ``crisp-record/1`` document."""
    out_rounds: list[dict[str, Any]] = []
    for r in rounds:
        done = actions.get(r.index, [])
        item: dict[str, Any] = {"deck": list(r.deck), "actions": done}
        # The clock stands at the last action, or later where a timer fired or the server resumed since.
        clocks = [t for t in (r.end_at, done[-1]["at"] if done else None) if t is not None]
        if clocks:
            item["end_at"] = max(clocks)
        if r.resumes:
            item["resumes"] = list(r.resumes)
        out_rounds.append(item)
    return {
        "format": "crisp-record/1",
        "options": dict(game.options),
        "players": list(game.players),
        "first_dealer": game.first_dealer,
        "rounds": out_rounds,
    }
