"""The database tables (SQLAlchemy 2). Changed only through Alembic migrations in ``migrations/``.

A game is stored as its ``crisp-record/1``: the game row holds the options, seats and first dealer, each
round row its deck order and the last instant its clock reached (``end_at``), and ``actions`` is the
append-only log of accepted actions. Replaying that record rebuilds the game exactly.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names, so that migrations can refer to them on every database.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: An autoincrementing 64-bit key on PostgreSQL; SQLite only autoincrements INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        list[Any]: JSON,
        datetime: DateTime(timezone=True),
    }


class RoomRow(Base):
    __tablename__ = "rooms"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    code: Mapped[str] = mapped_column(String(6), index=True)
    link: Mapped[str] = mapped_column(String(400))
    phase: Mapped[str] = mapped_column(String(16))
    host: Mapped[int] = mapped_column(Integer)
    options: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    closed_at: Mapped[datetime | None] = mapped_column(default=None)
    #: No version ``v`` the room published is above this: it is reserved ahead, a block at a time, in the
    #: commit that carries the first message past it. A room rebuilt after a restart goes on above it.
    v: Mapped[int] = mapped_column(BigInteger, server_default="0")

    __table_args__ = (Index("ix_rooms_open", "closed_at"),)


class SeatRow(Base):
    __tablename__ = "seats"

    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    token_hash: Mapped[str] = mapped_column(String(64))
    left: Mapped[bool] = mapped_column(Boolean, default=False)
    # When its player took the seat (joined, or took it back after leaving); a reconnect is not written.
    connected_at: Mapped[datetime | None] = mapped_column(default=None)
    bot: Mapped[str | None] = mapped_column(String(8), default=None)  # a computer player's level


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"), index=True)
    players: Mapped[list[Any]]
    #: The SHA-256 of each player's seat token, by seat: who may fetch the finished game's record.
    token_hashes: Mapped[list[Any]]
    options: Mapped[dict[str, Any]]
    first_dealer: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    #: Closed unfinished, after nobody was connected for ``CRISP_IDLE_GAME_HOURS`` (``finished_at`` is then).
    abandoned: Mapped[bool] = mapped_column(Boolean, server_default=false())
    #: The room's host seat when the game started: who may make its replay public (unknown for older games).
    host: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    #: Anyone with the link may watch the finished game's replay (the host's choice, off by default).
    public: Mapped[bool] = mapped_column(Boolean, server_default=false())


class RoundRow(Base):
    __tablename__ = "rounds"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    deck: Mapped[list[Any]]
    #: The fair-shuffle salt: with the deck it gives the commitment sent at the deal.
    salt: Mapped[str] = mapped_column(String(64))
    #: The last instant (round ms) the clock reached by an action or a timer: a replay advances to it.
    end_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    #: Server restarts during the round: [{"after": number of actions, "at": instant}].
    resumes: Mapped[list[Any]] = mapped_column(default=list)
    ended: Mapped[bool] = mapped_column(Boolean, default=False)


class ActionRow(Base):
    """One accepted action, in the ``crisp-record/1`` form (``at``, ``seat``, ``do`` and its fields)."""

    __tablename__ = "actions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(32))
    round_index: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(Integer)
    at: Mapped[int] = mapped_column(BigInteger)
    seat: Mapped[int] = mapped_column(Integer)
    do: Mapped[str] = mapped_column(String(16))
    data: Mapped[dict[str, Any]]

    __table_args__ = (
        ForeignKeyConstraint(["game_id", "round_index"], ["rounds.game_id", "rounds.index"], ondelete="CASCADE"),
        Index("uq_actions_round_seq", "game_id", "round_index", "seq", unique=True),
    )


class ResultRow(Base):
    __tablename__ = "results"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    totals: Mapped[list[Any]]
    winners: Mapped[list[Any]]
    finished_at: Mapped[datetime]


class RoomOwnerRow(Base):
    """Which node owns a room, in a cluster (``CRISP_CLUSTER``): a lease, claimed when it is free or expired
    (``epoch`` + 1), renewed by its node and checked by every group commit of the room (fencing). ``node`` is
    NULL once released. A row is never deleted: its epoch only grows, so an old owner can never pass the fence."""

    __tablename__ = "room_owners"

    code: Mapped[str] = mapped_column(String(6), primary_key=True)
    node: Mapped[str | None] = mapped_column(String(64), nullable=True)
    epoch: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[datetime]
