"""From a server's restart to every seat resumed: rooms of 4 playing, the server stopped (``kill -9`` or
SIGTERM) and started again on the same database, and each player reconnecting with ``resume`` at once.

    python bench/restart.py --rooms 200                       # SQLite, kill -9 and SIGTERM
    python bench/restart.py --rooms 200 --postgres postgresql+asyncpg://crisp:crisp@127.0.0.1:5432/postgres

The rooms play as the load test's bots do (``crisp_server.remote.loadtest``: ``RoomBots``, one action per room per
second with ``--pace 1``) for ``--play`` seconds once all of them play. Then the server is stopped: with
``kill`` by SIGKILL to its process group (its checkpoint process too), with ``term`` by SIGTERM (rooms tell
their players it restarts and close with 1012) and waited for. The players' own reconnects are switched off:
here every player reconnects as soon as the new server accepts connections (one probe every 20 ms until then;
8,000 players each trying every 20 ms would spend the players' core on refused connections), so that the
figure is the server's, not a back-off's. A seat counts as resumed when its ``welcome`` came (with
the seat it had) and the state after it.

Prints, per way of stopping, how long the old server took to stop (SIGTERM), the new one to accept
connections (it rebuilds every open room from the database first), and the time from starting the new
process to each seat resumed: p50, p99 and max over every seat, and the p99 counted from the moment it
accepted connections. The server runs pinned to ``--server-core``, this script (the players) to ``--load-core``.

With ``--postgres URL`` (a database the role may create databases in), a fresh database is made for each
run and dropped after it; else each run has a SQLite file of its own in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvloop
from picows import WSError, ws_connect
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crisp_server.collector import Collector  # noqa: E402
from crisp_server.remote.client import room_url  # noqa: E402
from crisp_server.remote.loadtest import Bot, Plan, RoomBots, Stats, _join  # noqa: E402

FILES = 20000  # 2,000 rooms of 4 need 8,000 sockets
JOINS_AT_ONCE = 200  # rooms joining at the same time, as the load test's first wave
STARTS_AT_ONCE = 200  # players whose connections the load's loop starts before it reads its sockets again
RETRY_S = 0.02  # how often a player tries again while the new server does not accept connections yet


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


@dataclass
class Seat:
    code: str
    token: str
    seat: int


class Server:
    """The server under test, started (and started again) on one database and port."""

    def __init__(self, port: int, env: dict[str, str], core: str, log: Path) -> None:
        self.port = port
        self.env = env
        self.core = core
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = log  # both runs' output

    def start(self) -> float:
        """Start it; return when (``time.perf_counter``) the process was started."""
        command = ["taskset", "-c", self.core, sys.executable, "-m", "crisp_server", "serve", "--port", str(self.port)]
        started = time.perf_counter()
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(command, env=self.env, stdout=log, stderr=log, start_new_session=True)
        return started

    def wait_listening(self, timeout: float = 120) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.output()}")
            if _accepts(self.port):
                return
            time.sleep(0.05)
        raise RuntimeError("the server did not start listening")

    def stop(self, how: str) -> float:
        """Stop it by ``kill`` (SIGKILL to its process group) or ``term`` (SIGTERM, then wait); the seconds
        until it was gone."""
        assert self.proc is not None
        started = time.perf_counter()
        if how == "kill":
            os.killpg(self.proc.pid, signal.SIGKILL)
        else:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise RuntimeError("the server did not stop within 60 s of SIGTERM") from None
        seconds = time.perf_counter() - started
        with contextlib.suppress(ProcessLookupError):  # a SIGTERM leaves no child behind; make sure of it
            os.killpg(self.proc.pid, signal.SIGKILL)
        return seconds

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


async def play(ws_url: str, rooms: int, pace: float, seconds: float, seed: int) -> tuple[list[Seat], Stats]:
    """Rooms join and play as the load test's do, for ``seconds`` once all of them play; then their bots let
    go (without a close: the server is stopped under them). The seats, with their rooms and tokens."""
    stats = Stats()
    plan = Plan(ws_url, rooms, 4, 1.0 / pace if pace > 0 else 0.0, 0.1, False)
    rng = random.Random(seed)
    joining = asyncio.Semaphore(JOINS_AT_ONCE)
    stop = asyncio.Event()
    tables: list[RoomBots] = []

    async def room() -> None:
        table = RoomBots(stats, random.Random(rng.random()), plan.crisp, ws_url)
        tables.append(table)
        async with joining:
            await _join(plan, table)
        stats.rooms_ready += 1
        await asyncio.sleep(table.rng.random() * max(plan.interval, 1.0))
        while not stop.is_set():
            beat = time.perf_counter()
            acted = await table.step()
            interval = plan.interval * table.rng.uniform(0.5, 1.5)
            wait = interval - (time.perf_counter() - beat) if acted else table.idle_wait()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await stop.wait()

    tasks = [asyncio.create_task(room()) for _ in range(rooms)]
    while stats.rooms_ready < rooms:
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        if failed:
            raise RuntimeError(f"{len(failed)} rooms could not join: {failed[0].exception()!r}")
        await asyncio.sleep(0.05)
    print(f"  {rooms} rooms playing; {seconds:g} s of play", file=sys.stderr, flush=True)
    await asyncio.sleep(seconds)
    stop.set()
    for table in tables:
        table.stopping = True  # no bot reconnects on its own: the players below do, at once
    await asyncio.gather(*tasks)
    seats = []
    for table in tables:
        for bot in table.bots:
            assert bot.code is not None
            assert bot.token is not None
            seats.append(Seat(bot.code, bot.token, int(bot.you["seat"])))
    return seats, stats


async def resume_all(
    ws_url: str, seats: list[Seat], started: float, alive: Callable[[], bool], accepting: asyncio.Event
) -> tuple[list[float], list[Bot], int]:
    """Every seat reconnects and resumes at once as soon as the server accepts connections (``accepting``),
    each trying again every ``RETRY_S`` if its connection is refused. The seconds from ``started`` to each seat
    resumed, the bots (to hang up), the errors."""
    stats = Stats()
    table = RoomBots(stats, random.Random(0), 0.0, ws_url)
    times: list[float] = []
    bots: list[Bot] = []

    async def one(seat: Seat) -> None:
        url = room_url(ws_url, seat.code)
        while True:
            bot = Bot(table)
            try:
                async with asyncio.timeout(30):
                    await ws_connect(lambda b=bot: b, url, websocket_handshake_timeout=30, max_frame_size=2**22)
            except (OSError, WSError, TimeoutError):
                if not alive():
                    raise RuntimeError("the restarted server exited") from None
                await asyncio.sleep(RETRY_S)
                continue
            bots.append(bot)
            bot.send({"type": "resume", "room": seat.code, "token": seat.token})
            async with asyncio.timeout(60):
                welcome = await bot.welcome
                await bot.fresh.wait()
            if welcome.get("seat") != seat.seat:
                raise RuntimeError(f"resumed in seat {welcome.get('seat')}, not {seat.seat}: {welcome}")
            times.append(time.perf_counter() - started)
            return

    await accepting.wait()
    # The players' own loop starts their connections a few hundred at a time, reading its sockets in between:
    # 8,000 phones connect each on its own, and each sends its handshake as soon as its connection is open.
    # Started all at once, this one process would first spend seconds opening sockets while the server waited
    # for their handshakes (the players' cost, not the server's).
    tasks = []
    for i, seat in enumerate(seats):
        tasks.append(asyncio.create_task(one(seat)))
        if i % STARTS_AT_ONCE == STARTS_AT_ONCE - 1:
            await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    return times, bots, stats.errors


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


@contextlib.contextmanager
def database(postgres: str | None, folder: Path, name: str) -> Iterator[str]:
    """A fresh database: a SQLite file in ``folder``, or a PostgreSQL database made (and then dropped)."""
    if postgres is None:
        yield f"sqlite+aiosqlite:///{folder / (name + '.sqlite3')}"
        return
    import asyncpg

    admin = make_url(postgres).set(drivername="postgresql")
    dsn = admin.render_as_string(hide_password=False)

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    db = f"crisp_restart_{os.getpid()}_{name}"
    asyncio.run(run(f'DROP DATABASE IF EXISTS "{db}"'))
    asyncio.run(run(f'CREATE DATABASE "{db}"'))
    try:
        yield make_url(postgres).set(database=db).render_as_string(hide_password=False)
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))


async def _run(server: Server, how: str, args: argparse.Namespace) -> tuple[float, float, list[float], Stats, int]:
    """Play, stop the server, start it again, resume every seat: all on one event loop, so that the players'
    sockets stay open until the server goes (and answer its closes while SIGTERM shuts it down)."""
    loop = asyncio.get_running_loop()
    port = server.port
    ws_url = f"ws://127.0.0.1:{port}/ws"
    seats, played = await play(ws_url, args.rooms, args.pace, args.play, args.seed)
    stopped = await loop.run_in_executor(None, server.stop, how)
    started = server.start()
    listening: list[float] = []

    accepting = asyncio.Event()

    async def watch() -> None:  # when the new server first accepts a connection
        while not await loop.run_in_executor(None, _accepts, port):
            if not server.alive():
                raise RuntimeError("the restarted server exited")
            await asyncio.sleep(RETRY_S)
        listening.append(time.perf_counter() - started)
        accepting.set()

    watcher = asyncio.create_task(watch())
    times, bots, errors = await resume_all(ws_url, seats, started, server.alive, accepting)
    await watcher
    for bot in bots:
        bot.hang_up()
    await asyncio.sleep(0.5)
    return stopped, listening[0], times, played, errors


def measure(how: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    port = _free_port()
    with database(args.postgres, folder, how) as url:
        env = {
            **os.environ,
            "CRISP_DATA_DIR": str(folder / how),
            "CRISP_DATABASE_URL": url,
            "CRISP_LOG_LEVEL": "warning",
            "CRISP_LOOKUP_BURST": "1000000",
            "CRISP_LOOKUP_PER_MINUTE": "1000000",
            "CRISP_CONNECTIONS_PER_ADDRESS": "0",
        }
        server = Server(port, env, args.server_core, folder / f"{how}.log")
        server.start()
        try:
            server.wait_listening()
            # The players run as the load test's do (``crisp-server loadtest``): on uvloop, with the cyclic
            # collector off (its passes over 8,000 bots' views cost their loop a third of its time).
            collector = Collector()
            collector.start()
            try:
                stopped, listening, times, played, errors = uvloop.run(_run(server, how, args))
            finally:
                collector.stop()
        except BaseException:
            print(server.output(), file=sys.stderr)
            raise
        finally:
            server.stop("kill")
    return {
        "how": how,
        "seats": len(times),
        "actions": played.actions,
        "stopped_s": stopped,
        "listening_s": listening,
        "p50_s": _pct(times, 0.5),
        "p99_s": _pct(times, 0.99),
        "max_s": max(times),
        "after_p99_s": _pct([t - listening for t in times], 0.99),
        "errors": played.errors + errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--pace", type=float, default=1.0, help="actions per room per second while they play")
    parser.add_argument("--play", type=float, default=10.0, help="seconds of play before the server is stopped")
    parser.add_argument("--stop", default="kill,term", help="kill (SIGKILL), term (SIGTERM) or both, in order")
    parser.add_argument("--postgres", help="a PostgreSQL URL (postgresql+asyncpg://...): a fresh database per run")
    parser.add_argument("--server-core", default="0")
    parser.add_argument("--load-core", default="1")
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    ways = args.stop.split(",")
    if args.rooms < 1 or not ways or any(how not in ("kill", "term") for how in ways):
        parser.error("--rooms is at least 1; --stop is kill, term or kill,term")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(FILES, hard), hard))
    with contextlib.suppress(OSError, ValueError):
        os.sched_setaffinity(0, {int(args.load_core)})
    where = "PostgreSQL" if args.postgres else "SQLite"
    results = []
    with tempfile.TemporaryDirectory(prefix="crisp-restart-") as tmp:
        for how in ways:
            print(f"{args.rooms} rooms x 4 on {where}, stopped by {how}", file=sys.stderr, flush=True)
            results.append(measure(how, args, Path(tmp)))
    load = os.getloadavg()
    print(f"{args.rooms} rooms x 4 on {where}; load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"{'stop':>5} {'seats':>6} {'stopped s':>9} {'listening s':>11} {'p50 s':>6} {'p99 s':>6} {'max s':>6} "
        f"{'p99 after listening s':>21} errors"
    )
    for r in results:
        print(
            f"{r['how']:>5} {r['seats']:>6} {r['stopped_s']:>9.2f} {r['listening_s']:>11.2f} {r['p50_s']:>6.2f} "
            f"{r['p99_s']:>6.2f} {r['max_s']:>6.2f} {r['after_p99_s']:>21.2f} {r['errors']:>6}"
        )
    return 0 if all(r["errors"] == 0 and r["seats"] == args.rooms * 4 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
