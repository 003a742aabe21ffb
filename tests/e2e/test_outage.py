"""Real outages during real games: PostgreSQL stopped or cut off for 15 s during 30 games, a full SQLite disk
during 20.

The real server runs as a subprocess; two real clients per room play over real WebSockets as fast as the
rules let them. Midway the database fails (see each test), for 15 s, and comes back. Then:

* every game goes on without a restart and is played to its end;
* nothing acknowledged is lost and nothing unsaved was shown: each seat's state when its room comes back
  (the ``update`` with the event ``available``) is exactly the last one it saw before (``essentials``:
  hands, piles, turn, drawn card, scores), or, where the commit that failed was written after all (its
  answer lost with the connection), the state the record has a few actions later; and each finished game's
  stored record replays, with nothing refused, to the totals its players saw;
* every room was suspended (its players got ``unavailable``, and nobody lost the connection);
* ``/healthz`` answered 503 with a reason while the database was away, and 200 once the rooms were back.

PostgreSQL, two ways. Stopped: a cluster of the test's own (``initdb`` in a temporary folder, a free port)
is shut down with ``pg_ctl stop -m fast`` (sessions are ended, new connections refused) and started again;
stopping the suite's cluster would take the database away from every other test running at the same time.
As root the cluster runs as the ``postgres`` user (``tests.databases.Cluster``: PostgreSQL refuses root).
Unreachable: the server reaches the suite's PostgreSQL through a TCP proxy in this test, which the test cuts
(every connection reset, new ones refused) and reopens; it needs nothing but the database the suite already
has (``CRISP_TEST_DATABASE_URL``, or the run's own cluster).

SQLite, two ways. The WAL file made immutable (``chattr +i``: no write, not even through the server's open
descriptors; needs root) and writable again: a connection opened meanwhile opened it read-only, and is
closed at its first failed write, so the rooms come back without a restart. And a full disk: the database
lives on a tmpfs of a few megabytes, which a filler file fills to the last byte (``SQLITE_FULL``), and
deleting the filler frees; a reader holding a snapshot keeps the WAL from starting over meanwhile, so that
every commit must grow it (else commits come and go as checkpoints free WAL space). Mounting needs root (CI
runs as root); elsewhere the same failure is made with a file-size limit on the server process
(``RLIMIT_FSIZE``: writes past a file's first byte fail with ``EFBIG``), raised again to free the "disk".
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import resource
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from crisp_server.engine import parse_record, replay_game
from crisp_server.remote.client import CrispClient
from tests import storage_faults as faults
from tests.conftest import IN_CI
from tests.databases import PG_AVAILABLE, PG_PROBLEM, Cluster, database, own_cluster_problem
from tests.e2e.continuity import essentials, went_on_from
from tests.e2e.continuity import next_move as _move
from tests.e2e.procs import free_port, server_process

OUTAGE_SECONDS = 15.0
#: Every client comes from 127.0.0.1: the look-up limit per address is for strangers guessing codes.
ENV = {"CRISP_LOOKUP_BURST": "10000", "CRISP_LOOKUP_PER_MINUTE": "10000"}


@dataclass
class Seat:
    client: CrispClient
    token: str
    #: The seat's essentials when its room went unavailable, and when it came back.
    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)
    back_at: list[float] = field(default_factory=list)  # monotonic instants of the comebacks


async def play(seat: Seat) -> None:
    """Play until the game is over, through the outage."""
    c = seat.client
    while c.phase != "game_over":
        mark = len(c.messages)
        move = _move(c)
        if move is not None:
            await c.send(move)
        # Wait for the answer, or for anything new (the other seat's move, a clock), or poll the clocks.
        with contextlib.suppress(TimeoutError):
            await c.wait_for(functools.partial(_beyond, mark), timeout=0.3 if move is None else 30)
        _note_outage(seat, mark)
    assert c.closed is None


def _beyond(mark: int, c: CrispClient) -> bool:
    return len(c.messages) > mark


def _note_outage(seat: Seat, mark: int) -> None:
    """Keep what the seat saw just before each ``unavailable``, and what it got when the room came back."""
    c = seat.client
    for i in range(mark, len(c.messages)):
        m = c.messages[i]
        if m["type"] == "unavailable":
            last = next((x for x in reversed(c.messages[:i]) if x["type"] in ("update", "snapshot")), None)
            assert last is not None
            seat.before.append(essentials(last))
        elif m["type"] == "update" and {"type": "available"} in m["events"]:
            seat.after.append(essentials(m))
            seat.back_at.append(time.monotonic())


async def table(ws: str) -> tuple[str, list[Seat]]:
    """Two players in a started game (to 150 points, 30 s a move)."""
    stack = contextlib.AsyncExitStack()
    ana = await stack.enter_async_context(CrispClient.connect(ws))
    ben = await stack.enter_async_context(CrispClient.connect(ws))
    _STACKS.append(stack)
    code = await ana.create("Ana")
    await ben.join(code, "Ben")
    await ana.set_options(score_limit=150, turn_seconds=30, discard_draw=False)
    await ana.start()
    seats = []
    for c in (ana, ben):
        assert c.token is not None
        seats.append(Seat(c, c.token))
    return code, seats


_STACKS: list[contextlib.AsyncExitStack] = []


@contextlib.asynccontextmanager
async def games(ws: str, rooms: int) -> AsyncIterator[list[tuple[str, list[Seat]]]]:
    try:
        yield [await table(ws) for _ in range(rooms)]
    finally:
        while _STACKS:
            await _STACKS.pop().aclose()


class HealthLog:
    """``/healthz`` every quarter of a second: (instant, status code, body)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.seen: list[tuple[float, int, dict[str, Any]]] = []
        self._task = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=5) as http:
            while True:
                response = await http.get("/healthz")
                self.seen.append((time.monotonic(), response.status_code, response.json()))
                await asyncio.sleep(0.25)

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def between(self, start: float, end: float) -> list[tuple[int, dict[str, Any]]]:
        return [(status, body) for at, status, body in self.seen if start <= at <= end]


#: Makes the database fail, or heals it.
Outage = Callable[[], Awaitable[None]]


async def outage_during_games(ws: str, base: str, rooms: int, fail: Outage, heal: Outage) -> dict[str, float]:
    """Play ``rooms`` games; after a few seconds ``fail()``, 15 s later ``heal()``; check everything the
    module says. The figures: seconds from ``heal()`` to the last room back, and to /healthz 200."""
    async with games(ws, rooms) as tables:
        health = HealthLog(base)
        players = [asyncio.ensure_future(play(seat)) for _, seats in tables for seat in seats]
        await asyncio.sleep(4)  # every table into its first rounds
        assert not any(p.done() for p in players), "a game ended before the outage: make them longer"
        failed_at = time.monotonic()
        await fail()
        await asyncio.sleep(OUTAGE_SECONDS)
        healed_at = time.monotonic()
        await heal()
        try:
            await asyncio.wait_for(asyncio.gather(*players), 240)
        except TimeoutError:
            stuck = [
                (code, seat.client.seat, seat.client.phase, seat.client.you, seat.client.messages[-3:])
                for code, seats in tables
                for seat in seats
                if seat.client.phase != "game_over"
            ]
            raise AssertionError(f"games did not end: {stuck}") from None
        await asyncio.sleep(0.5)
        await health.stop()

        for code, seats in tables:
            for seat in seats:
                kinds = [(m["type"], m.get("v"), m.get("code")) for m in seat.client.messages]
                assert seat.before, f"room {code}: the outage never reached it: {kinds}"
                assert len(seat.after) == len(seat.before), f"room {code}: it did not come back each time"
                assert seat.client.closed is None
                assert seat.client.gaps == 0
        # /healthz: 200 before, 503 with a reason while the database was away, 200 after the rooms came back.
        back = max(at for _, seats in tables for seat in seats for at in seat.back_at)
        assert {status for status, _ in health.between(0, failed_at)} == {200}
        # Once commits fail it says so, until the rooms are back. (SQLite's commits fail once the WAL must grow:
        # until then they reuse the space of frames already copied: 6 to 8.5 s in these 20 games, as much as
        # the WAL file had grown to before. At least the last 3 s of the outage are then checked below.)
        told = min(at for at, status, _ in health.seen if at > failed_at and status == 503)
        assert told - failed_at < OUTAGE_SECONDS - 3
        during = health.between(told, healed_at)
        assert all(status == 503 for status, _ in during), during
        assert all(body["status"] == "unavailable" and body["reason"] for _, body in during)
        after = health.between(back + 0.5, time.monotonic())
        assert after
        assert all(status == 200 for status, _ in after), after
        first_ok = min(at for at, status, _ in health.seen if at > healed_at and status == 200)

        # Every game ended, and its stored record replays to what its players saw. Each seat came back to
        # what it had seen: nothing acknowledged was lost, nothing unsaved was shown. Unless the commit that
        # failed was written after all (PostgreSQL's answer to a COMMIT lost with the connection): then the
        # room comes back with it, as the record has it (_went_on_from).
        uncertain = 0
        async with httpx.AsyncClient(base_url=base) as http:
            for code, seats in tables:
                finished = (await http.get(f"/api/rooms/{code}/games")).json()
                assert len(finished) == 1, code
                response = await http.get(
                    f"/api/games/{finished[0]['id']}/record", headers={"Authorization": f"Bearer {seats[0].token}"}
                )
                assert response.status_code == 200
                document = response.json()
                game, rejected = replay_game(parse_record(document))
                assert rejected == []
                assert game.game_over
                assert seats[0].client.table is not None
                assert list(game.totals) == seats[0].client.table["totals"]
                for seat in seats:
                    for saw, came_back in zip(seat.before, seat.after, strict=True):
                        if came_back != saw:
                            uncertain += 1
                            went_on_from(saw, came_back, document)
            metrics = (await http.get("/metrics")).text
        failures = next(
            float(x.split()[1]) for x in metrics.splitlines() if x.startswith("crisp_db_commit_failures_total")
        )
        assert failures >= 1
    return {
        "healthz_503_after_s": round(told - failed_at, 2),
        "rooms_back_s": round(back - healed_at, 2),
        "healthz_ok_s": round(first_ok - healed_at, 2),
        "commit_failures": failures,
        "comebacks_with_a_commit_whose_answer_was_lost": uncertain,
    }


# -- PostgreSQL behind a proxy the test cuts -----------------------------------------------------------------


class Proxy:
    """Forwards a local port to PostgreSQL, from an event loop in a thread of its own (the test's loop is busy
    with the players, and blocks while the server starts); ``cut`` resets every connection and refuses new
    ones until ``open``."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pg proxy", daemon=True)
        self._thread.start()

    async def open(self) -> None:
        await self._in_thread(self._open())

    async def cut(self) -> None:
        await self._in_thread(self._cut())

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _in_thread(self, coro: Coroutine[Any, Any, None]) -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._link, "127.0.0.1", self.port, reuse_address=True)

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._links.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._links.difference_update((writer, up_writer))


@pytest.mark.slow
@pytest.mark.skipif(not PG_AVAILABLE and not IN_CI, reason=PG_PROBLEM or "")
async def test_postgresql_unreachable_for_15_s_during_30_games(tmp_path: Path) -> None:
    with database("postgresql", tmp_path) as url:
        real = make_url(url)
        proxy = Proxy((real.host or "127.0.0.1", real.port or 5432))
        try:
            await proxy.open()
            through = real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
            figures = await _postgresql_outage(tmp_path, through, proxy.cut, proxy.open)
        finally:
            proxy.close()
    print(f"PostgreSQL unreachable {OUTAGE_SECONDS:.0f} s during 30 games: {figures}")


@pytest.mark.slow
@pytest.mark.skipif(own_cluster_problem() is not None and not IN_CI, reason=own_cluster_problem() or "")
async def test_postgresql_stopped_for_15_s_during_30_games(tmp_path: Path) -> None:
    """The real thing: PostgreSQL shuts down (``pg_ctl stop -m fast``: sessions are ended) and starts again
    15 s later; the server's pool must notice its connections are gone."""
    cluster = Cluster()
    try:
        cluster.start()
        cluster.createdb("crisp")

        async def stop() -> None:
            await asyncio.to_thread(cluster.stop)

        async def start() -> None:
            await asyncio.to_thread(cluster.start)

        figures = await _postgresql_outage(tmp_path, cluster.url, stop, start)
    finally:
        cluster.remove()
    print(f"PostgreSQL stopped {OUTAGE_SECONDS:.0f} s during 30 games: {figures}")


async def _postgresql_outage(tmp_path: Path, url: str, fail: Outage, heal: Outage) -> dict[str, float]:
    log = tmp_path / "server.log"
    with server_process(tmp_path, {**ENV, "CRISP_DATABASE_URL": url}, log=log) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"
        figures = await outage_during_games(ws, base, 30, fail, heal)
    assert figures["rooms_back_s"] < 10, figures
    text = log.read_text()
    assert "the database cannot be written" in text
    assert "Traceback" not in text.split("the database answers again")[-1]
    return figures


# -- SQLite on a disk that fills up -----------------------------------------------------------------------------


@pytest.mark.slow
async def test_sqlite_disk_full_during_20_games(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    with faults.small_disk(disk) as mounted:
        env = {**ENV, "CRISP_DATABASE_URL": f"sqlite+aiosqlite:///{disk / 'crisp.sqlite3'}"}
        log = tmp_path / "server.log"
        with server_process(tmp_path, env, log=log) as (base, proc):
            ws = base.replace("http", "ws") + "/ws"
            filler: list[Path] = []
            # A reader that keeps its snapshot (as a long backup would) holds the WAL back: every commit must
            # then grow it, and none can while the disk is full (without it, commits reuse the WAL's space
            # whenever a checkpoint let it start over, and the outage comes and goes).
            reader = sqlite3.connect(disk / "crisp.sqlite3", isolation_level=None)

            async def fail() -> None:
                reader.execute("BEGIN")
                reader.execute("SELECT count(*) FROM actions").fetchone()
                if mounted:
                    filler.append(faults.fill(disk))
                else:  # no mount here: the server may not write past a file's first byte now (EFBIG)
                    resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))

            async def heal() -> None:
                reader.execute("COMMIT")
                if mounted:
                    filler.pop().unlink()
                else:
                    resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

            try:
                figures = await outage_during_games(ws, base, 20, fail, heal)
            finally:
                reader.close()
    print(
        f"SQLite disk full {OUTAGE_SECONDS:.0f} s during 20 games ({'tmpfs' if mounted else 'RLIMIT_FSIZE'}): {figures}"
    )
    assert figures["rooms_back_s"] < 10, figures
    if mounted:  # (under the file-size limit, the server's log could not be written either)
        assert "database or disk is full" in log.read_text()


@pytest.mark.slow
@pytest.mark.skipif(not faults.can_chattr() and not IN_CI, reason="chattr +i needs root and chattr")
async def test_sqlite_wal_immutable_during_20_games(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**ENV, "CRISP_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'crisp.sqlite3'}"}
    wal = data / "crisp.sqlite3-wal"
    log = tmp_path / "server.log"
    with server_process(tmp_path, env, log=log) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"

        async def fail() -> None:
            faults.chattr(wal, True)

        async def heal() -> None:
            faults.chattr(wal, False)

        try:
            figures = await outage_during_games(ws, base, 20, fail, heal)
        finally:
            faults.chattr(wal, False)
    print(f"SQLite WAL immutable {OUTAGE_SECONDS:.0f} s during 20 games: {figures}")
    assert figures["rooms_back_s"] < 10, figures
    text = log.read_text()
    assert "attempt to write a readonly database" in text or "disk I/O error" in text
    assert "Traceback" not in text


@pytest.mark.slow
@pytest.mark.skipif(not faults.can_chattr() and not IN_CI, reason="chattr +i needs root and chattr")
async def test_sqlite_database_file_immutable_during_20_games(tmp_path: Path) -> None:
    """The database file immutable: commits still land in the WAL, but no checkpoint can copy it. ``/healthz``
    says so at once (200 ``degraded``, the reason), ``/metrics`` counts the failed checkpoints; once the WAL is
    over ``CRISP_WAL_LIMIT_MB`` the rooms are suspended as in any outage (503), so that it grows no more. Once
    the file is writable, a checkpoint copies the WAL and every game goes on, nothing lost."""
    data = tmp_path / "data"
    env = {**ENV, "CRISP_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'crisp.sqlite3'}", "CRISP_WAL_LIMIT_MB": "1"}
    main = data / "crisp.sqlite3"
    wal = data / "crisp.sqlite3-wal"
    log = tmp_path / "server.log"
    sizes: list[int] = []
    degraded: list[tuple[float, dict[str, Any]]] = []
    watching: list[asyncio.Task[None]] = []
    with server_process(tmp_path, env, log=log) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"

        async def watch() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=5) as http:
                while True:
                    sizes.append(wal.stat().st_size)
                    response = await http.get("/healthz")
                    if response.status_code == 200 and response.json()["status"] == "degraded":
                        degraded.append((time.monotonic(), response.json()))
                    await asyncio.sleep(0.1)

        async def fail() -> None:
            faults.chattr(main, True)
            watching.append(asyncio.get_running_loop().create_task(watch()))

        async def heal() -> None:
            faults.chattr(main, False)

        try:
            figures = await outage_during_games(ws, base, 20, fail, heal)
            async with httpx.AsyncClient(base_url=base) as http:
                metrics = (await http.get("/metrics")).text
                health = (await http.get("/healthz")).json()
        finally:
            faults.chattr(main, False)
            for task in watching:
                task.cancel()
    print(f"SQLite database file immutable {OUTAGE_SECONDS:.0f} s during 20 games: {figures}, WAL at most {max(sizes)}")
    assert figures["rooms_back_s"] < 10, figures
    # Degraded first: the checkpoints' error, the WAL's size and its limit.
    assert degraded, "/healthz never said degraded"
    reason = degraded[0][1]["reason"]
    assert reason.startswith("WAL checkpoints fail ("), reason
    assert "at 1.0 MB writes wait for them" in reason
    assert health["status"] == "ok"
    # The WAL grew to its limit and one group commit's frames past it (measured after each), no further.
    assert 2**20 < max(sizes) < 2**20 + 128 * 1024, max(sizes)
    failures = next(
        float(x.split()[1]) for x in metrics.splitlines() if x.startswith("crisp_db_checkpoint_failures_total")
    )
    assert failures >= 3
    assert any(x.startswith("crisp_db_wal_bytes ") for x in metrics.splitlines())
    text = log.read_text()
    assert "a WAL checkpoint failed (" in text
    assert "writes wait: the WAL holds" in text
    assert "the database cannot be written: WalOverLimit: the WAL holds" in text
    assert "WAL checkpoints work again after" in text
    assert "Traceback" not in text


@pytest.mark.skipif(not faults.can_chattr() and not IN_CI, reason="chattr +i needs root and chattr")
async def test_sqlite_shm_immutable_ends_the_server_and_a_restart_loses_nothing(tmp_path: Path) -> None:
    """SQLite maps ``crisp.sqlite3-shm`` into memory: once it cannot be written, the next commit's write to it
    ends the process with SIGBUS (nothing the server can catch). It says so on stderr (faulthandler), and a
    restart on the same database, once the file is writable, brings back every seat as it last saw it (or
    a few actions later, if the commit under way reached the WAL before the signal)."""
    data = tmp_path / "data"
    env = {**ENV, "CRISP_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'crisp.sqlite3'}"}
    shm = data / "crisp.sqlite3-shm"
    log = tmp_path / "server.log"
    port = free_port()
    before: dict[str, dict[str, Any]] = {}  # per token: what its seat last saw
    try:
        with server_process(tmp_path, env, port, log=log) as (base, proc):
            ws = base.replace("http", "ws") + "/ws"
            code, seats = await table(ws)
            try:
                for seat in seats:  # into play, a few moves
                    await seat.client.wait_for(lambda c: c.phase == "peek", what="the deal")
                    await seat.client.ready()
                for _ in range(6):
                    for seat in seats:
                        move = _move(seat.client)
                        if move is not None:
                            await seat.client.send(move)
                    for seat in seats:
                        await seat.client.request({"type": "ping"})  # every update sent so far is in
                for seat in seats:
                    assert seat.client.state is not None
                    before[seat.token] = essentials(seat.client.state)
                faults.chattr(shm, True)
                deadline = time.monotonic() + 20
                while proc.poll() is None and time.monotonic() < deadline:
                    for seat in seats:  # moves, and so commits, until the process ends
                        move = _move(seat.client)
                        if move is not None and seat.client.closed is None:
                            with contextlib.suppress(Exception):
                                await seat.client.send(move)
                    await asyncio.sleep(0.2)
            finally:
                while _STACKS:
                    await _STACKS.pop().aclose()
            assert proc.poll() == -signal.SIGBUS, proc.returncode
    finally:
        faults.chattr(shm, False)
    assert "Fatal Python error: Bus error" in log.read_text()

    with server_process(tmp_path, env, port) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"
        for token, saw in before.items():
            async with CrispClient.connect(ws) as c:
                await c.resume(code, token)
                await c.request({"type": "ping"})
                assert c.state is not None
                came_back = essentials(c.state)
                if came_back != saw:
                    db = sqlite3.connect(data / "crisp.sqlite3")
                    try:
                        (game_id,) = db.execute("SELECT id FROM games").fetchone()  # the one game
                    finally:
                        db.close()
                    async with httpx.AsyncClient(base_url=base) as http:
                        response = await http.get(
                            f"/api/games/{game_id}/record", headers={"Authorization": f"Bearer {token}"}
                        )
                    went_on_from(saw, came_back, response.json())
