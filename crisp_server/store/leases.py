"""Room leases when several nodes share the rooms (``CRISP_CLUSTER``): which node owns which room.

A room has one owner node at a time: a row of ``room_owners`` (code, node, epoch, expires_at). A node
claims a room with an upsert that succeeds only when the lease is free (released), expired, or its own;
every claim adds one to the epoch, and a row is never deleted, so epochs only grow. The owner renews all
its leases in one statement every ``lease_renew_seconds``; every group commit checks, in its own
transaction, that the node still holds each room's epoch (``fence``, with ``FOR SHARE``, so a claim waits
for a commit under way and a commit after a claim sees it). A node paused or cut off past its lease can
therefore never write after another node took its room over. Every instant is the database's ``now()``:
the nodes' clocks do not matter.

A node that needs a room another live node owns asks it to let go with ``NOTIFY crisp_release`` (a few a
second at most, never per action); each node listens on its own connection (``Listener``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from crisp_server import tasks

log = logging.getLogger("crisp.leases")

#: The channel on which nodes ask each other to release a room: payload ``node<TAB>code``.
CHANNEL: Final = "crisp_release"

_CLAIM = text(
    """
    INSERT INTO room_owners (code, node, epoch, expires_at)
    VALUES (:code, :node, 1, now() + make_interval(secs => :lease))
    ON CONFLICT (code) DO UPDATE
      SET node = EXCLUDED.node, epoch = room_owners.epoch + 1, expires_at = EXCLUDED.expires_at
      WHERE room_owners.node IS NULL OR room_owners.expires_at < now() OR room_owners.node = EXCLUDED.node
    RETURNING epoch
    """
)
_RENEW = text(
    """
    UPDATE room_owners SET expires_at = now() + make_interval(secs => :lease)
    WHERE node = :node AND code = ANY(CAST(:codes AS text[]))
    RETURNING code, epoch
    """
)
_RELEASE = text(
    "UPDATE room_owners SET node = NULL, expires_at = now() WHERE code = :code AND node = :node AND epoch = :epoch"
)
_RELEASE_ANY_EPOCH = text("UPDATE room_owners SET node = NULL, expires_at = now() WHERE code = :code AND node = :node")
_RELEASE_ALL = text("UPDATE room_owners SET node = NULL, expires_at = now() WHERE node = :node")
_OWNER = text(
    "SELECT node, epoch, expires_at > now() AS live, EXTRACT(EPOCH FROM expires_at - now()) AS remaining "
    "FROM room_owners WHERE code = :code"
)
_OWNERS = text("SELECT code, node FROM room_owners WHERE node IS NOT NULL AND expires_at > now()")
_OWNERS_OF = text(
    "SELECT code, node FROM room_owners "
    "WHERE code = ANY(CAST(:codes AS text[])) AND node IS NOT NULL AND expires_at > now()"
)
_FENCE = text("SELECT code, epoch FROM room_owners WHERE code = ANY(CAST(:codes AS text[])) AND node = :node FOR SHARE")
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")
_UNOWNED_GAMES = text(
    """
    SELECT r.code FROM rooms r
    WHERE r.closed_at IS NULL AND r.phase <> 'lobby' AND r.updated_at < now() - make_interval(secs => :idle)
      AND NOT EXISTS (
        SELECT 1 FROM room_owners o WHERE o.code = r.code AND o.node IS NOT NULL AND o.expires_at > now()
      )
    ORDER BY r.updated_at LIMIT :most
    """
)


@dataclass(frozen=True, slots=True)
class Owner:
    node: str | None
    epoch: int
    live: bool
    #: Seconds until the lease expires (negative: expired).
    remaining: float


class Fenced(RuntimeError):
    """A room's commit was refused: this node no longer holds its lease (another node took it over)."""


class Leases:
    """This node's side of the ``room_owners`` table, through the store's engine (PostgreSQL)."""

    def __init__(self, engine: AsyncEngine, node: str, lease_seconds: float) -> None:
        self.engine = engine
        self.node = node
        self.lease_seconds = lease_seconds
        #: Statements run (tests check that one node alone runs none).
        self.statements = 0

    async def _run(self, statement: Any, params: dict[str, Any]) -> list[Any]:
        self.statements += 1
        async with self.engine.begin() as conn:
            result = await conn.execute(statement, params)
            return list(result.fetchall()) if result.returns_rows else []

    async def claim(self, code: str) -> int | None:
        """Take the room's lease if it is free, expired or this node's: its new epoch, or ``None``."""
        rows = await self._run(_CLAIM, {"code": code, "node": self.node, "lease": self.lease_seconds})
        return int(rows[0][0]) if rows else None

    async def renew(self, codes: Sequence[str]) -> dict[str, int]:
        """Renew this node's leases of ``codes``; the ones it still holds, with their epochs."""
        if not codes:
            return {}
        rows = await self._run(_RENEW, {"codes": list(codes), "node": self.node, "lease": self.lease_seconds})
        return {str(code): int(epoch) for code, epoch in rows}

    async def release(self, code: str, epoch: int | None = None) -> None:
        """Let the room go (after its last commit): the next claim succeeds at once."""
        if epoch is None:
            await self._run(_RELEASE_ANY_EPOCH, {"code": code, "node": self.node})
        else:
            await self._run(_RELEASE, {"code": code, "node": self.node, "epoch": epoch})

    async def release_all(self) -> None:
        """Let go of every lease this node's name holds: at start, those of its previous life."""
        await self._run(_RELEASE_ALL, {"node": self.node})

    async def owner(self, code: str) -> Owner | None:
        rows = await self._run(_OWNER, {"code": code})
        if not rows:
            return None
        node, epoch, live, remaining = rows[0]
        return Owner(node, int(epoch), bool(live), float(remaining))

    async def owners(self) -> dict[str, str]:
        """Every live lease: room code to node."""
        return {str(code): str(node) for code, node in await self._run(_OWNERS, {})}

    async def owners_of(self, codes: Sequence[str]) -> dict[str, str]:
        """The live leases of ``codes``: room code to node."""
        return {str(code): str(node) for code, node in await self._run(_OWNERS_OF, {"codes": list(codes)})}

    async def unowned_games(self, idle_seconds: float, most: int = 100) -> list[str]:
        """Open rooms with a game that no node holds and nothing happened in for ``idle_seconds``: their
        players went and never came back to any node (their game is to be abandoned)."""
        rows = await self._run(_UNOWNED_GAMES, {"idle": idle_seconds, "most": most})
        return [str(row[0]) for row in rows]

    async def ask_release(self, node: str, code: str) -> None:
        """Ask ``node`` to hand the room over (it commits, sends its players to reconnect, releases)."""
        await self._run(_NOTIFY, {"channel": CHANNEL, "payload": f"{node}\t{code}"})

    def fence(self, conn: Connection, held: set[tuple[str, int]]) -> set[tuple[str, int]]:
        """Inside a group commit's transaction: which of the (code, epoch) leases this node still holds.
        The rows stay locked against a claim until the transaction ends."""
        codes = sorted({code for code, _ in held})
        rows = conn.execute(_FENCE, {"codes": codes, "node": self.node}).fetchall()
        now_held = {(str(row[0]), int(row[1])) for row in rows}
        return held & now_held


def asyncpg_dsn(url: str) -> str:
    """The plain ``postgresql://`` address asyncpg takes, from the store's SQLAlchemy URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class Listener:
    """Listens on ``CHANNEL`` on a connection of its own (asyncpg), and calls ``on_release(code)`` for each
    request addressed to this node; reconnects with back-off when the connection is lost."""

    def __init__(self, url: str, node: str, on_release: Callable[[str], None]) -> None:
        self.dsn = asyncpg_dsn(url)
        self.node = node
        self.on_release = on_release
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="lease listener")

    async def stop(self) -> None:
        if self._task is not None:
            await tasks.stop(self._task)
            self._task = None

    def _notified(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        node, _, code = payload.partition("\t")
        if node == self.node and code:
            self.on_release(code)

    async def _run(self) -> None:
        import asyncpg

        delay = 0.25
        while True:
            conn = None
            try:
                conn = await asyncpg.connect(self.dsn, timeout=5)
                await conn.add_listener(CHANNEL, self._notified)
                self.connected.set()
                delay = 0.25
                while not conn.is_closed():
                    await asyncio.sleep(1)
                    with contextlib.suppress(Exception):
                        await conn.execute("SELECT 1")  # notices a dead connection
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("the lease listener lost the database (%s); trying again", exc)
            finally:
                self.connected.clear()
                if conn is not None and not conn.is_closed():
                    with contextlib.suppress(Exception):
                        async with asyncio.timeout(2):
                            await conn.close()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
