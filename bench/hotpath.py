"""One action's server-side work, counted in instructions (issue 19): a deterministic in-process benchmark.

Rooms of 4 play real games on the real server code, without sockets: each player is a fake ASGI socket
whose frames go through the WebSocket bridge (``Bridge.endpoint``: rate and size limits, ``parse_inbound``,
dispatch), the room (dispatch, table flow, publishing each member's view), the connection
(``Connection.send``, straight to the fake protocol's ``send_text_now``, which only counts) and the real
``Store`` on SQLite in a temporary folder (group commits through the fast path; the WAL checkpoints are
left out: they run in a process of their own in the server, on a timer of the wall clock).

Time is a ``ManualClock`` moved in steps of ``--step`` ms; in each step the room timers due fire, the
frames due are handed to their sockets, and the event loop (uvloop) runs until every room's commits are
done and delivered. The players act like the load test's bots
(``crisp_server.remote.loadplayers.RoomBots``): a room plays one move per beat (0.5 to 1.5 s, ``--pace 1``),
they say ``ready`` after each peek and round, the host asks for a rematch and starts it from the lobby. Every
``secrets`` draw (room codes, tokens, shuffles) comes from a seeded generator, so that a run is the same run
every time.

Two phases, so that the players' own work (parsing each view to decide) is not counted:

    python bench/hotpath.py record /tmp/hotpath.json      # play, and write every inbound frame and its time
    python bench/hotpath.py replay /tmp/hotpath.json      # feed the same frames; counts views

``measure`` does both and runs the replay under callgrind, counting only the played part (after the rooms
have joined and warmed up; a small C shim toggles callgrind's collection through its client request):

    python bench/hotpath.py measure [--rooms 200 --seconds 20 --warmup 5]

It prints the instructions per move (draw, swap, ... sent by a player, as the load test counts actions),
per inbound frame and per view (frame out). ``--section MODULE:QUALNAME`` counts only inside that function
(its inclusive cost, e.g. ``crisp_server.rooms.publishing:Publisher.publish``), ``--keep FILE`` keeps
callgrind's output for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import ctypes
import functools
import gc
import hashlib
import importlib
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED = 19
PLAYERS = 4
#: The moves a player sends, as the load test counts its actions.
MOVES = frozenset(("draw", "swap", "discard", "jack", "queen", "king", "crisp"))
CLOCKS = ("may_draw_in", "window_closes_in", "peek_ends_in", "next_round_in")

_SHIM = r"""
#include <valgrind/callgrind.h>
void crisp_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
"""


def seed_secrets(seed: int) -> None:
    """Every ``secrets`` draw of the server (codes, tokens, game ids, shuffles) from one seeded generator."""
    rng = random.Random(seed)

    def token_hex(nbytes: int | None = None) -> str:
        return rng.randbytes(32 if nbytes is None else nbytes).hex()

    def randbelow(exclusive_upper_bound: int) -> int:
        return rng.randrange(exclusive_upper_bound)

    secrets.token_bytes = lambda nbytes=None: rng.randbytes(32 if nbytes is None else nbytes)
    secrets.token_hex = token_hex
    secrets.token_urlsafe = token_hex
    secrets.randbelow = randbelow
    secrets.choice = rng.choice


class Toggle:
    """callgrind's collection on and off (a no-op unless ``CRISP_CALLGRIND_SHIM`` names the shim); or, with
    ``profile``, cProfile's (shares by Python function, in time: rough on a busy machine)."""

    def __init__(self, profile: cProfile.Profile | None = None) -> None:
        path = os.environ.get("CRISP_CALLGRIND_SHIM")
        self._fn: Callable[[], None] | None = ctypes.CDLL(path).crisp_toggle if path else None
        self.profile = profile
        self.on = False

    def __call__(self) -> None:
        self.on = not self.on
        if self._fn is not None:
            self._fn()
        if self.profile is not None:
            self.profile.enable() if self.on else self.profile.disable()


class FakeSocket:
    """The ASGI side of one WebSocket, as uvicorn's protocol offers it: ``receive`` from a queue, ``send`` for
    the handshake and closes, and ``send_text_now``, the direct text path, which counts (and, recording,
    keeps the last frame)."""

    def __init__(self, keep: bool) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.inbox.put_nowait({"type": "websocket.connect"})
        self.keep = keep
        self.last: bytes | None = None
        self.welcome: bytes | None = None

    async def receive(self) -> dict[str, Any]:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":  # (not taken: send_text_now always takes the frame)
            self.send_text_now(message["text"].encode())

    def send_text_now(self, data: bytes) -> bool:
        if DIGEST is not None:
            DIGEST.update(data)
        COUNT[0] += 1
        COUNT[1] += len(data)
        if data.startswith(b'{"type":"error"'):
            COUNT[2] += 1
        if self.keep:
            if data.startswith(b'{"type":"welcome"'):
                self.welcome = data
            elif data.startswith((b'{"type":"update"', b'{"type":"snapshot"')):
                self.last = data
        return True

    def close_now(self, code: int, reason: str) -> None:
        pass


COUNT = [0, 0, 0]  # frames out, their bytes, errors
#: ``replay --digest``: every frame out hashed, to see that a change of the server left them as they were.
DIGEST: Any = None


class Player:
    """A load test bot's decisions (``loadplayers.Bot`` and ``RoomBots.choose``), from the last state it got."""

    def __init__(self, sock: FakeSocket) -> None:
        self.sock = sock
        self.readied: tuple[str, int] | None = None
        self.parsed: bytes | None = None
        self.state: dict[str, Any] = {}

    def view(self) -> dict[str, Any]:
        if self.sock.last is not None and self.sock.last is not self.parsed:
            self.parsed = self.sock.last
            self.state = orjson.loads(self.parsed)
        return self.state


class Bench:
    def __init__(self, rooms: int, step: int, folder: Path, keep: bool) -> None:
        self.rooms = rooms
        self.step = step
        self.folder = folder
        self.keep = keep
        self.sockets: list[FakeSocket] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.fed: list[asyncio.Queue[dict[str, Any]]] = []

    async def start(self) -> None:
        from crisp_server.rooms.clock import ManualClock
        from crisp_server.settings import Settings
        from crisp_server.store.migrate import upgrade
        from crisp_server.web.app import build_services
        from crisp_server.web.bridge import Bridge

        url = f"sqlite+aiosqlite:///{self.folder / 'crisp.db'}"
        settings = Settings(
            database_url=url,
            rate_burst=1_000_000,  # the clock is a manual one: the bridge's rate limits read the real one
            lookup_burst=1_000_000,
            public_url="http://bench.test",
            # Commits as soon as the loop has run once more: with an interval (the server's 4 ms of the wall
            # clock), ``settle`` would spin until it passed, and the harness's spinning would be counted.
            # The commits are the same: each step's frames are settled before the next step.
            commit_interval_ms=0,
        )
        await asyncio.to_thread(upgrade, url)
        self.clock = ManualClock()
        self.services = build_services(settings, self.clock, persist=True)
        store = self.services.store
        assert store is not None
        store._sqlite_path = None  # no WAL checkpoints: a process and a thread on the wall clock's timer
        await store.start()
        self.store = store
        self.registry = self.services.registry
        self.bridge = Bridge(self.services)

    def connect(self) -> FakeSocket:
        sock = FakeSocket(self.keep)
        websocket = SimpleNamespace(
            headers={"host": "bench.test"},
            url=SimpleNamespace(scheme="ws"),
            client=SimpleNamespace(host="127.0.0.1"),
        )
        coro = self.bridge.endpoint(websocket, sock.receive, sock.send)  # type: ignore[arg-type]
        self.tasks.append(asyncio.get_running_loop().create_task(coro))
        self.sockets.append(sock)
        return sock

    def feed(self, index: int, text: str) -> None:
        inbox = self.sockets[index].inbox
        inbox.put_nowait({"type": "websocket.receive", "text": text})
        self.fed.append(inbox)

    async def settle(self) -> None:
        """Run the loop until every frame handed in is read and every room's commits are delivered: the
        sockets fed are empty and the store's writer waits for more (it commits and tells each room without
        suspending once it took a batch). Cheap: the harness is counted too."""
        fed = self.fed
        store = self.store
        while True:
            await asyncio.sleep(0)
            if fed:
                if any(inbox.qsize() for inbox in fed):
                    continue
                fed.clear()
            if store._pending or store._wakeup is None:
                continue
            return


async def record(args: argparse.Namespace) -> dict[str, Any]:
    """Play, and note every inbound frame with its step."""
    seed_secrets(SEED)
    rng = random.Random(SEED + 1)
    script: list[tuple[int, int, str]] = []  # step, socket, text
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(args.rooms, args.step, Path(tmp), keep=True)
        await bench.start()
        step = 0

        def say(index: int, message: dict[str, Any]) -> None:
            text = orjson.dumps(message).decode()
            script.append((step, index, text))
            bench.feed(index, text)

        players: list[list[Player]] = []
        for _ in range(args.rooms):  # joins: one room after the other, each one at its own step
            host = bench.connect()
            seats = [Player(host)]
            await bench.settle()
            say(len(bench.sockets) - 1, {"type": "create", "name": "Bot 1"})
            await bench.settle()
            assert host.welcome is not None
            code = orjson.loads(host.welcome)["room"]
            for k in range(2, PLAYERS + 1):
                sock = bench.connect()
                seats.append(Player(sock))
                await bench.settle()
                say(len(bench.sockets) - 1, {"type": "join", "room": code, "name": f"Bot {k}"})
            first = len(bench.sockets) - PLAYERS
            say(first, {"type": "options", "score_limit": 50, "turn_seconds": None, "discard_draw": True})
            say(first, {"type": "start"})
            await bench.settle()
            players.append(seats)
        joined = step = 1
        bench.clock.advance(args.step)
        # Each room's beats, spread over the first second.
        beats = [int(rng.random() * 1000) for _ in range(args.rooms)]
        rematched = [-1] * args.rooms
        total_steps = (args.warmup + args.seconds) * 1000 // args.step
        moves = 0
        warm_step = joined + args.warmup * 1000 // args.step
        views = 0
        for step in range(joined + 1, joined + 1 + total_steps):
            if step == warm_step + 1:
                views = COUNT[0]
            bench.clock.advance(args.step)
            now = (step - joined) * args.step
            for r in range(args.rooms):
                if beats[r] > now:
                    continue
                seats = players[r]
                base = r * PLAYERS
                host_view = seats[0].view()
                phase = host_view.get("room", {}).get("phase")
                acted = False
                if phase in ("peek", "round_over"):
                    for k, pl in enumerate(seats):
                        fair = pl.view()["room"]["fair"]
                        key = (phase, fair["round"] if fair else -1)
                        if pl.readied != key:
                            pl.readied = key
                            say(base + k, {"type": "ready"})
                elif phase == "game_over":
                    v = host_view["v"]
                    if host_view["you"].get("host") and rematched[r] != v:
                        rematched[r] = v
                        say(base, {"type": "rematch"})  # back to the lobby; the start right after deals
                        say(base, {"type": "start"})
                elif phase == "play":
                    for k in rng.sample(range(PLAYERS), PLAYERS):
                        action = choose(seats[k].view()["you"], rng)
                        if action is not None:
                            say(base + k, action)
                            acted = True
                            if step > warm_step:
                                moves += 1
                            break
                if acted:
                    beats[r] = now + int(1000 * rng.uniform(0.5, 1.5))
                else:
                    beats[r] = now + idle_wait(host_view)
            await bench.settle()
        errors = COUNT[2]
        views = COUNT[0] - views
        await bench.services.registry.shutdown()
        store = bench.services.store
        assert store is not None
        await store.close()
    return {
        "rooms": args.rooms,
        "step": args.step,
        "joined": joined,
        "warm_step": warm_step,
        "last_step": step,
        "moves": moves,
        "views": views,
        "errors": errors,
        "frames": script,
    }


def choose(you: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """``RoomBots.choose``, with crisp called one time in ten when it may be."""
    can: list[str] = you.get("can", [])
    if not can:
        return None
    if "crisp" in can and rng.random() < 0.1:
        return {"type": "crisp"}
    moves = [c for c in can if c != "crisp"]
    if not moves:
        return None
    move = rng.choice(moves)
    if move.startswith("draw_"):
        return {"type": "draw", "from": move[5:]}
    if move in ("swap", "queen"):
        slot = rng.choice(("left", "middle", "right"))
        if move == "swap":
            return {"type": "swap", "slot": slot}
        others = [i for i in range(PLAYERS) if i != you["seat"]]
        target_slot = rng.choice(("left", "middle", "right"))
        return {"type": "queen", "slot": slot, "target": rng.choice(others), "target_slot": target_slot}
    return {"type": move}


def idle_wait(view: dict[str, Any]) -> int:
    """``RoomBots.idle_wait`` in ms: until the room's clocks say it may go on, or a short poll."""
    clock = view.get("clock")
    if not clock:
        return 100
    ahead = [ms for key in CLOCKS if (ms := clock.get(key))]
    return min(1000, max(10, min(ahead))) if ahead else 50


def install_section(spec: str, toggle: Toggle) -> None:
    """Count only inside ``MODULE:QUALNAME`` (outermost calls: nested ones do not toggle again)."""
    module_name, qualname = spec.split(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    inner = getattr(owner, name)
    depth = [0]

    if asyncio.iscoroutinefunction(inner):
        raise SystemExit("--section: a plain function or method")

    @functools.wraps(inner)
    def counted(*a: Any, **k: Any) -> Any:
        depth[0] += 1
        if depth[0] == 1:
            toggle()
        try:
            return inner(*a, **k)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                toggle()

    setattr(owner, name, counted)


async def replay(script: dict[str, Any], section: str | None, toggle: Toggle) -> dict[str, Any]:
    seed_secrets(SEED)
    frames: list[list[Any]] = script["frames"]
    by_step: dict[int, list[tuple[int, str]]] = {}
    moves: dict[int, int] = {}
    for step, index, text in frames:
        by_step.setdefault(step, []).append((index, text))
        moves[step] = moves.get(step, 0) + (orjson.loads(text)["type"] in MOVES)
    warm = script["warm_step"]
    measured = [0, 0]  # inbound frames, moves
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(script["rooms"], script["step"], Path(tmp), keep=False)
        await bench.start()
        # The joins, as recorded: each socket opens just before its first frame.
        opened: set[int] = set()
        for step in range(script["joined"]):
            for index, text in by_step.get(step, ()):
                while index not in opened:
                    opened.add(len(bench.sockets))
                    bench.connect()
                    await bench.settle()
                bench.feed(index, text)
                await bench.settle()
        gc.collect()
        gc.freeze()
        gc.disable()  # as the server runs (crisp_server/collector.py)
        bench.clock.advance(script["step"])
        views_before = 0
        for step in range(script["joined"] + 1, script["last_step"] + 1):
            if step == warm + 1:
                views_before = COUNT[0]
                if section is None:
                    toggle()
                else:
                    install_section(section, toggle)
            bench.clock.advance(script["step"])
            due = by_step.get(step, ())
            for index, text in due:
                bench.feed(index, text)
            if step > warm:
                measured[0] += len(due)
                measured[1] += moves.get(step, 0)
            await bench.settle()
        if section is None:
            toggle()
        views = COUNT[0] - views_before
        errors = COUNT[2]
        gc.enable()
        await bench.services.registry.shutdown()
        store = bench.services.store
        assert store is not None
        await store.close()
    if (views, errors) != (script["views"], script["errors"]):
        print(
            f"not the recorded run: {views} views, {errors} errors; recorded {script['views']}, {script['errors']}",
            file=sys.stderr,
        )
    return {"inbound": measured[0], "moves": measured[1], "views": views, "errors": errors}


def run(coro: Any) -> Any:
    import uvloop

    return uvloop.run(coro)


def measure(args: argparse.Namespace) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed: apt-get install -y valgrind")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shim = folder / "shim.so"
        (folder / "shim.c").write_text(_SHIM)
        subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(shim), str(folder / "shim.c")], check=True)
        script_path = Path(args.script) if args.script else folder / "script.json"
        if not script_path.exists():
            script = run(record(args))
            script_path.write_bytes(orjson.dumps(script))
            print(
                f"recorded: {len(script['frames'])} frames, {script['moves']} moves measured, "
                f"{script['errors']} errors",
                file=sys.stderr,
            )
        out = folder / "callgrind.out"
        env = {**os.environ, "CRISP_CALLGRIND_SHIM": str(shim), "PYTHONHASHSEED": "0"}
        command = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}",
            sys.executable, __file__, "replay", str(script_path), "--json",
        ]  # fmt: skip
        if args.section:
            command += ["--section", args.section]
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        figures = orjson.loads(done.stdout.strip().splitlines()[-1])
        total = 0
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
        if args.keep:
            shutil.copy(out, args.keep)
        what = args.section or "everything"
        print(
            f"{what}: {total:,} instructions; {figures['moves']} moves, {figures['inbound']} inbound frames, "
            f"{figures['views']} views: {total / figures['moves']:,.0f} per move, "
            f"{total / figures['inbound']:,.0f} per inbound frame, {total / figures['views']:,.0f} per view "
            f"({time.monotonic() - started:.0f} s under callgrind)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("record", "measure"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--rooms", type=int, default=200)
        cmd.add_argument("--seconds", type=int, default=10, help="measured seconds of play (clock time)")
        cmd.add_argument("--warmup", type=int, default=3, help="seconds of play before measuring")
        cmd.add_argument("--step", type=int, default=10, help="ms of clock time per step of the loop")
    sub.choices["record"].add_argument("out")
    sub.choices["measure"].add_argument("--script", help="the recorded script (recorded first if missing)")
    sub.choices["measure"].add_argument("--section", help="count only inside MODULE:QUALNAME")
    sub.choices["measure"].add_argument("--keep", help="copy callgrind's output here")
    cmd = sub.add_parser("replay")
    cmd.add_argument("script")
    cmd.add_argument("--section")
    cmd.add_argument("--json", action="store_true")
    cmd.add_argument("--digest", action="store_true", help="print a hash of every frame sent (not for counting)")
    cmd.add_argument("--cprofile", help="write cProfile's statistics of the measured part here (pstats)")
    args = parser.parse_args()
    if args.command == "record":
        script = run(record(args))
        Path(args.out).write_bytes(orjson.dumps(script))
        print(
            f"{len(script['frames'])} frames, {script['moves']} moves and {script['views']} views measured, "
            f"{script['errors']} errors"
        )
    elif args.command == "replay":
        started = time.perf_counter()
        global DIGEST  # noqa: PLW0603
        if args.digest:
            DIGEST = hashlib.blake2b()
        toggle = Toggle(cProfile.Profile() if args.cprofile else None)
        figures = run(replay(orjson.loads(Path(args.script).read_bytes()), args.section, toggle))
        if toggle.profile is not None:
            toggle.profile.dump_stats(args.cprofile)
        if DIGEST is not None:
            figures["digest"] = DIGEST.hexdigest()[:32]
        if args.json:
            print(orjson.dumps(figures).decode())
        else:
            print(f"{figures} in {time.perf_counter() - started:.1f} s")
    else:
        measure(args)


if __name__ == "__main__":
    main()
