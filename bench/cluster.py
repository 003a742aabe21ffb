"""Several Crisp nodes behind HAProxy: what the leases and the fence cost, and how fast rooms come back.

Every run starts its own nodes and HAProxy (``tests/cluster/harness.py``: the shipped ``deploy/haproxy.cfg``)
on a throwaway PostgreSQL database (``tests/databases.py``), dropped afterwards. The nodes are pinned to
core 0, HAProxy, the load test and this script to core 1 (``--node-cores``, ``--load-cores``, ``--no-pin``).

``cpu``: ``crisp-server loadtest`` through HAProxy against one node without ``CRISP_CLUSTER`` (the
baseline; also through HAProxy, so that both see the same path) and against 1, 2 and 3 cluster nodes, in
turn, ``--repeat`` times (baseline, 1, 2, 3, baseline, 1, ...). Per run: actions/s, views/s, p50/p99 of the
action-to-last-view latency, and the server CPU seconds per 1,000 actions (utime+stime from ``/proc`` of
every node, summed, over the load test's measured window); then the medians, and each setup's CPU per
action against the baseline's. The goal (docs/cluster.md, "Figures"): the 1-node cluster within 10% of the baseline.

``failover``: three nodes; ``--tables`` two-player games (``tests/cluster/games.py``: their seats reconnect
and resume as the web client does) and ``--rooms`` load-test rooms of ``--players`` play for
``--duration`` s; then the node with the most rooms is killed (SIGKILL). For each of its games: the
seconds from the kill until every seat has resumed, and until the next action is accepted there. Goal:
p99 under 15 s with a 10 s lease.

``drain``: the same, but the node gets SIGTERM (it drains): per game handed over, the seconds from its
``moved`` until every seat has resumed on the new node, and until the next action. Goal: p99 under 2 s.

    python bench/cluster.py cpu --rooms 500 --duration 30 --repeat 3
    python bench/cluster.py failover --tables 40 --rooms 200 --repeat 3
    python bench/cluster.py drain --tables 40 --rooms 200 --repeat 3

``load`` is what the others run as the load generator: ``crisp-server loadtest`` with the server CPU and
memory summed over several processes (``--pids``), arguments after ``--``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import httpx
import orjson

# tests/ is not installed: its harness and game driver come from this checkout.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crisp_server.__main__ import main as crisp_main
from crisp_server.remote import loadtest
from crisp_server.remote.client import CrispClient
from tests import databases
from tests.cluster.games import Cut, Table, play
from tests.cluster.harness import Cluster, _popen, haproxy_binary

FILES = 20000  # 2,000 rooms of 4 are 8,000 sockets in the load test, twice that in HAProxy
#: The events of an update that show a player's action was accepted (what ``next_move`` sends).
ACTION_EVENTS = frozenset(
    ("ready", "drew", "swapped", "discarded", "jack_used", "queen_used", "king_used", "crisp_called")
)
#: The measured two-player games: the highest score limit (they must outlast the run).
SCORE_LIMIT = 150


# --- processes ---------------------------------------------------------------------------------------------


def _more_files() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(FILES, hard), hard))


def _cores(spec: str) -> set[int]:
    """``0`` or ``0,1`` or ``0-3``."""
    cores: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        cores.update(range(int(first), int(last or first) + 1))
    return cores


def _family(pid: int) -> list[int]:
    """``pid`` and every process below it (``/proc/PID/task/*/children``)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                todo += [int(child) for child in (task / "children").read_text().split()]
    return found


def _pin(pid: int, cores: set[int]) -> None:
    """Every thread of ``pid`` and of the processes below it onto ``cores`` (threads made later inherit it)."""
    for p in _family(pid):
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                os.sched_setaffinity(int(task.name), cores)


def _cpu_seconds(pids: Sequence[int]) -> tuple[float | None, float | None]:
    """CPU seconds (utime + stime) and resident bytes of ``pids`` and the processes below them, summed;
    None if none of them can be read."""
    ticks = rss = 0
    seen = False
    for p in (q for pid in pids for q in _family(pid)):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
        rss += next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
        seen = True
    if not seen:
        return None, None
    return ticks / os.sysconf("SC_CLK_TCK"), float(rss)


@contextlib.contextmanager
def throwaway_database(admin_url: str, tmp: Path) -> Iterator[str]:
    """A new empty PostgreSQL database made with ``admin_url``'s role (``tests/databases.py``), dropped after."""
    with mock.patch.object(databases, "PG_URL", admin_url), databases.database("postgresql", tmp) as url:
        yield url


@contextlib.contextmanager
def cluster_of(args: argparse.Namespace, nodes: int, *, cluster: bool = True, quiet: bool = False) -> Iterator[Cluster]:
    """``nodes`` nodes behind HAProxy on a throwaway database, pinned; everything stopped and dropped after.
    ``cluster=False``: one node without ``CRISP_CLUSTER`` (the baseline). On an error, the logs' ends."""
    # The load test's thousands of sockets come from one address (forwarded by HAProxy): no cap per address.
    env = {"CRISP_CLUSTER": "true" if cluster else "false", "CRISP_CONNECTIONS_PER_ADDRESS": "0"}
    if quiet:
        env["CRISP_LOG_LEVEL"] = "warning"
    with tempfile.TemporaryDirectory(prefix="crisp-bench-cluster-") as folder:
        tmp = Path(folder)
        with throwaway_database(args.database_url, tmp) as url:
            made = Cluster(
                tmp / "cluster",
                url,
                nodes,
                lease_seconds=args.lease,
                lease_renew_seconds=args.renew,
                drain_seconds=args.drain_seconds,
                env=env,
            )
            try:
                with made:
                    if not args.no_pin:
                        for i in made.nodes:
                            _pin(made.pid(i), _cores(args.node_cores))
                        _pin(made.haproxy_pid, _cores(args.load_cores))
                    yield made
            except Exception:
                print(made.tails(30), file=sys.stderr)
                raise


class LoadTest:
    """``crisp-server loadtest`` through HAProxy, in a process of its own on the load's cores (this file's
    ``load`` command: the server CPU summed over the nodes), its output in a file."""

    def __init__(self, args: argparse.Namespace, made: Cluster, duration: float, log: Path) -> None:
        self.log = log
        pids = [made.pid(i) for i in made.nodes]
        taskset = [] if args.no_pin else ["taskset", "-c", args.load_cores]
        self.command = [
            *taskset,
            *(sys.executable, str(Path(__file__).resolve()), "load", "--pids", ",".join(map(str, pids)), "--"),
            *("--url", made.url, "--rooms", str(args.rooms), "--players", str(args.players)),
            *("--pace", str(args.pace), "--duration", f"{duration:g}", "--json"),
        ]
        self.proc = _popen(self.command, os.environ, log)

    def result(self, timeout: float) -> dict[str, Any]:
        """Wait until it ends; its figures (its JSON line), with ``ok`` (its exit status was 0)."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the load test did not end within {timeout:g} s") from None
        lines = self.log.read_text(errors="replace").strip().splitlines()
        if not lines or not lines[-1].startswith("{"):
            raise RuntimeError("the load test printed no figures:\n" + "\n".join(lines[-30:]))
        figures: dict[str, Any] = json.loads(lines[-1])
        figures["ok"] = code == 0
        return figures

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # its own group (_popen)
        self.proc.wait()


def _metrics(made: Cluster, i: int) -> dict[str, float]:
    """Node ``i``'s ``/metrics``, each name's samples summed over its labels (empty if it does not answer)."""
    try:
        text = httpx.get(made.node_url(i) + "/metrics", timeout=5).text
    except httpx.HTTPError:
        return {}
    values: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name.partition("{")[0]] += float(value)
    return values


def _pct(values: Sequence[float], q: float) -> float | None:
    """The loadtest's percentile (nearest rank, from below)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


# --- load: the load test, measuring several server processes ----------------------------------------------


class _NodesProbe(loadtest.Probe):
    """The load test's probe, reading the CPU time and memory of every node (and what each started) from
    ``/proc`` at the instants the load test samples its one server."""

    pids: ClassVar[list[int]] = []

    async def sample(self) -> tuple[float | None, float | None]:
        return _cpu_seconds(self.pids)


def cmd_load(args: argparse.Namespace) -> int:
    pids = [int(p) for p in args.pids.split(",")]
    _NodesProbe.pids = pids
    rest = [a for a in args.loadtest if a != "--"]
    with mock.patch.object(loadtest, "Probe", _NodesProbe):
        return crisp_main(["loadtest", *rest, "--server-pid", str(pids[0])])


# --- cpu ---------------------------------------------------------------------------------------------------


@dataclass
class CpuRun:
    setup: str  # "baseline" or "cluster"
    nodes: int
    repeat: int
    actions_per_s: float
    views_per_s: float
    p50_ms: float | None
    p99_ms: float | None
    window_s: float
    cpu_s: float | None
    cpu_s_per_1k_actions: float | None
    commit_ms_mean: float | None  # crisp_db_commit_seconds over the whole run (joins too), all nodes
    problems: int  # errors, disconnects, rooms that failed to join
    moved: int

    @property
    def label(self) -> str:
        return "baseline" if self.setup == "baseline" else f"cluster x{self.nodes}"


def cpu_run(args: argparse.Namespace, nodes: int, *, cluster: bool, repeat: int) -> CpuRun:
    with cluster_of(args, nodes, cluster=cluster, quiet=True) as made:
        load = LoadTest(args, made, args.duration, made.tmp / "load.log")
        try:
            f = load.result(timeout=args.duration + 600)
        finally:
            load.stop()
        metrics = [_metrics(made, i) for i in made.nodes]
    commits = sum(m.get("crisp_db_commit_seconds_count", 0.0) for m in metrics)
    commit_s = sum(m.get("crisp_db_commit_seconds_sum", 0.0) for m in metrics)
    actions = f["actions_per_s"] * f["window"]
    cpu: float | None = f["server_cpu_s"]
    return CpuRun(
        setup="cluster" if cluster else "baseline",
        nodes=nodes,
        repeat=repeat,
        actions_per_s=f["actions_per_s"],
        views_per_s=f["messages_per_s"],
        p50_ms=f["p50_ms"],
        p99_ms=f["p99_ms"],
        window_s=f["window"],
        cpu_s=cpu,
        cpu_s_per_1k_actions=1000 * cpu / actions if cpu is not None and actions else None,
        commit_ms_mean=1000 * commit_s / commits if commits else None,
        problems=f["errors"] + f["disconnects"] + f["failed_rooms"],
        moved=f["moved"],
    )


def _overhead(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else 100 * (value / base - 1)


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def cmd_cpu(args: argparse.Namespace) -> int:
    counts = [int(n) for n in args.nodes.split(",")]
    runs: list[CpuRun] = []
    for r in range(1, args.repeat + 1):
        for setup, nodes in [("baseline", 1), *(("cluster", n) for n in counts)]:
            run = cpu_run(args, nodes, cluster=setup == "cluster", repeat=r)
            runs.append(run)
            print(
                f"  run {r}/{args.repeat} {run.label}: {run.actions_per_s:,.0f} actions/s, "
                f"{_fmt(run.cpu_s_per_1k_actions, '.2f')} CPU s per 1k actions",
                file=sys.stderr,
                flush=True,
            )
    where = "no pinning" if args.no_pin else f"nodes on core {args.node_cores}, HAProxy and load on {args.load_cores}"
    print(
        f"{args.rooms} rooms x {args.players} players, pace {args.pace:g}, {args.duration:g} s each, through "
        f"HAProxy; {where}; baseline: 1 node without CRISP_CLUSTER on the same PostgreSQL"
    )
    head = (
        f"{'run':>3} {'setup':<12} {'actions/s':>9} {'views/s':>8} {'p50 ms':>7} {'p99 ms':>8} "
        f"{'CPU s':>6} {'CPU s/1k act':>12} {'commit ms':>9} {'moved':>5} {'problems':>8}"
    )
    print(head)
    for run in runs:
        print(
            f"{run.repeat:>3} {run.label:<12} {run.actions_per_s:>9,.0f} {run.views_per_s:>8,.0f} "
            f"{_fmt(run.p50_ms, '.1f'):>7} {_fmt(run.p99_ms, '.1f'):>8} {_fmt(run.cpu_s, '.1f'):>6} "
            f"{_fmt(run.cpu_s_per_1k_actions, '.3f'):>12} {_fmt(run.commit_ms_mean, '.2f'):>9} "
            f"{run.moved:>5} {run.problems:>8}"
        )
    labels = list(dict.fromkeys(run.label for run in runs))
    medians: dict[str, dict[str, float | None]] = {}
    for label in labels:
        mine = [run for run in runs if run.label == label]
        medians[label] = {
            key: _median([getattr(run, key) for run in mine])
            for key in ("actions_per_s", "views_per_s", "p50_ms", "p99_ms", "cpu_s_per_1k_actions", "commit_ms_mean")
        }
    base = medians["baseline"]["cpu_s_per_1k_actions"]
    print(f"\nmedians of {args.repeat} run(s) each:")
    print(f"{'setup':<12} {'actions/s':>9} {'views/s':>8} {'p50 ms':>7} {'p99 ms':>8} {'CPU s/1k act':>12}  vs base")
    for label, m in medians.items():
        extra = "" if label == "baseline" else f"{_fmt(_overhead(m['cpu_s_per_1k_actions'], base), '+.1f')}%"
        print(
            f"{label:<12} {_fmt(m['actions_per_s']):>9} {_fmt(m['views_per_s']):>8} {_fmt(m['p50_ms'], '.1f'):>7} "
            f"{_fmt(m['p99_ms'], '.1f'):>8} {_fmt(m['cpu_s_per_1k_actions'], '.3f'):>12}  {extra}"
        )
    # Each cluster run against the baseline run of the same round (run just before it): less drift.
    paired: dict[str, list[float]] = {}
    for run in runs:
        baseline = next(b for b in runs if b.setup == "baseline" and b.repeat == run.repeat)
        change = _overhead(run.cpu_s_per_1k_actions, baseline.cpu_s_per_1k_actions)
        if run.setup == "cluster" and change is not None:
            paired.setdefault(run.label, []).append(change)
    print("\nCPU per action against the same round's baseline:")
    for label, changes in paired.items():
        listed = ", ".join(f"{c:+.1f}%" for c in changes)
        print(f"  {label}: {listed} (median {statistics.median(changes):+.1f}%)")
    one = paired.get("cluster x1")
    if one:
        met = "met" if statistics.median(one) < 10 else "NOT met"
        print(f"goal: the 1-node cluster within 10% more CPU per action than the baseline: {met}")
    if args.json:
        print(orjson.dumps({"runs": [asdict(run) for run in runs], "medians": medians, "paired": paired}).decode())
    return 0 if all(run.problems == 0 for run in runs) else 1


# --- failover and drain ------------------------------------------------------------------------------------


class ActionLog:
    """When each room's updates that carry a player's action arrived (``CrispClient.inspect`` sees every
    frame any client of this process receives, before it is decoded; from ``since`` on)."""

    def __init__(self) -> None:
        self.since = float("inf")
        self.at: dict[str, list[float]] = defaultdict(list)

    def __call__(self, frame: str | bytes) -> None:
        now = time.monotonic()
        if now < self.since:
            return
        message = orjson.loads(frame)
        if message.get("type") == "update" and any(e.get("type") in ACTION_EVENTS for e in message["events"]):
            self.at[message["room"]["code"]].append(now)

    def first_after(self, code: str, t: float) -> float | None:
        return next((a for a in self.at.get(code, ()) if a > t), None)


@dataclass
class RoomTimes:
    """One measured game of the node that was killed or drained; seconds from the kill (failover) or from
    the room's ``moved`` (drain)."""

    code: str
    back_s: float | None  # until every seat resumed (None: not within --after)
    action_s: float | None  # until the next action was accepted after that
    cuts: int  # the seats' drops after the event (2 if each seat came back once)
    moved_after_s: float | None  # drain: from the SIGTERM to the room's moved
    moved: bool  # the seats were told ``moved`` (4005)


@dataclass
class OutageRun:
    kind: str
    repeat: int
    victim: str
    games: int  # measured games playing at the event
    on_victim: int
    cut_elsewhere: int  # games of the other nodes that were cut too (should be 0)
    rooms: list[RoomTimes]
    load: dict[str, Any]
    claimed: float
    handed_over: float
    lost: float
    exit_status: int | None = None  # drain: the node's
    failed_seats: list[str] = field(default_factory=list)


def _new_cuts(table: Table, marks: dict[int, int]) -> list[Cut]:
    return [cut for seat in table.seats for cut in seat.cuts[marks[id(seat)] :]]


def _times(table: Table, marks: dict[int, int], log: ActionLog, t_event: float, kind: str) -> RoomTimes:
    cuts = _new_cuts(table, marks)
    moved = any(cut.moved for cut in cuts)
    start = t_event
    if kind == "drain" and cuts:
        start = min(cut.at for cut in cuts if cut.moved or not moved)
    everyone = all(len(seat.cuts) > marks[id(seat)] for seat in table.seats)
    back: float | None = None
    if everyone and all(cut.back_at is not None for cut in cuts):
        back = max(cut.back_at for cut in cuts if cut.back_at is not None)
    action = log.first_after(table.code, back) if back is not None else None
    return RoomTimes(
        code=table.code,
        back_s=None if back is None else back - start,
        action_s=None if action is None else action - start,
        cuts=len(cuts),
        moved_after_s=start - t_event if kind == "drain" and cuts else None,
        moved=moved,
    )


async def _open_tables(ws_url: str, n: int) -> list[Table]:
    tables = [Table(ws_url) for _ in range(n)]
    for k in range(0, n, 10):  # ten at a time: each opens three sockets
        await asyncio.gather(*(t.open(score_limit=SCORE_LIMIT) for t in tables[k : k + 10]))
    return tables


async def outage_run(args: argparse.Namespace, made: Cluster, kind: str, repeat: int) -> OutageRun:
    log = ActionLog()
    CrispClient.inspect = log
    tables: list[Table] = []
    players: dict[int, asyncio.Future[None]] = {}
    load: LoadTest | None = None
    try:
        tables = await _open_tables(made.ws_url, args.tables)
        players = {id(seat): asyncio.ensure_future(play(seat)) for t in tables for seat in t.seats}
        load = LoadTest(args, made, args.duration + args.after, made.tmp / "load.log")
        await asyncio.sleep(args.duration)

        owners = await asyncio.to_thread(made.owners)
        victim = Counter(owners.values()).most_common(1)[0][0]
        playing = [t for t in tables if not any(players[id(s)].done() for s in t.seats)]
        doomed = [t for t in playing if owners.get(t.code) == victim]
        marks = {id(seat): len(seat.cuts) for t in tables for seat in t.seats}
        index = made.index_of(victim)
        print(f"  {kind}: {victim} has {len(doomed)} of {len(playing)} games playing", file=sys.stderr, flush=True)
        t_event = log.since = time.monotonic()
        stopping: asyncio.Future[int] | None = None
        if kind == "failover":
            await asyncio.to_thread(made.kill, index)
        else:
            stopping = asyncio.ensure_future(asyncio.to_thread(made.terminate, index))

        def settled() -> bool:
            done = all(_times(t, marks, log, t_event, kind).action_s is not None for t in doomed)
            return done and (stopping is None or stopping.done())

        while time.monotonic() < t_event + args.after and not settled():
            await asyncio.sleep(0.1)
        rooms = [_times(t, marks, log, t_event, kind) for t in doomed]
        cut_elsewhere = sum(1 for t in playing if t not in doomed and _new_cuts(t, marks))
        exit_status = await stopping if stopping is not None else None
    except BaseException:
        if load is not None:
            load.stop()
        raise
    finally:
        CrispClient.inspect = None
        for task in players.values():
            task.cancel()
        await asyncio.gather(*players.values(), return_exceptions=True)
        for table in tables:
            with contextlib.suppress(Exception):
                await table.close()
    failed = [
        f"{t.code}/{seat.name}: {task.exception()!r}"
        for t in tables
        for seat in t.seats
        if not (task := players[id(seat)]).cancelled() and task.exception() is not None
    ]
    try:
        figures = await asyncio.to_thread(load.result, args.duration + args.after + 600)
    finally:
        load.stop()
    metrics = [await asyncio.to_thread(_metrics, made, i) for i in made.nodes if made.running(i)]
    return OutageRun(
        kind=kind,
        repeat=repeat,
        victim=victim,
        games=len(playing),
        on_victim=len(doomed),
        cut_elsewhere=cut_elsewhere,
        rooms=rooms,
        load={k: figures[k] for k in ("actions_per_s", "errors", "disconnects", "moved", "restarted", "ok")},
        claimed=sum(m.get("crisp_rooms_claimed_total", 0.0) for m in metrics),
        handed_over=sum(m.get("crisp_rooms_handed_over_total", 0.0) for m in metrics),
        lost=sum(m.get("crisp_rooms_lost_total", 0.0) for m in metrics),
        exit_status=exit_status,
        failed_seats=failed,
    )


def _spread(values: Sequence[float]) -> str:
    p50, p99, most = _pct(values, 0.5), _pct(values, 0.99), max(values, default=None)
    return f"p50 {_fmt(p50, '.2f')} p99 {_fmt(p99, '.2f')} max {_fmt(most, '.2f')}"


def cmd_outage(args: argparse.Namespace) -> int:
    kind: str = args.command
    runs: list[OutageRun] = []
    for r in range(1, args.repeat + 1):
        with cluster_of(args, 3) as made:
            runs.append(asyncio.run(outage_run(args, made, kind, r)))
    since = "the kill (SIGKILL)" if kind == "failover" else "each room's moved (after SIGTERM)"
    print(
        f"{kind}: 3 nodes, lease {args.lease:g} s (renewed every {args.renew:g} s), {args.tables} measured "
        f"two-player games and {args.rooms} load-test rooms of {args.players}, {args.duration:g} s of play "
        f"before the {'kill' if kind == 'failover' else 'SIGTERM'}; seconds from {since}"
    )
    for run in runs:
        back = [room.back_s for room in run.rooms if room.back_s is not None]
        action = [room.action_s for room in run.rooms if room.action_s is not None]
        missing = len(run.rooms) - len(back)
        print(
            f"run {run.repeat}: {run.victim} had {run.on_victim} of {run.games} games; seats resumed: {_spread(back)}"
            f"; next action: {_spread(action)}" + (f"; NOT back within {args.after:g} s: {missing}" if missing else "")
        )
        if kind == "drain":
            after = [room.moved_after_s for room in run.rooms if room.moved_after_s is not None]
            print(f"  moved after the SIGTERM: {_spread(after)}")
        lf = run.load
        exit_note = f", the drained node exited with {run.exit_status}" if run.exit_status is not None else ""
        print(
            f"  surviving nodes (whole run): {run.claimed:.0f} rooms claimed, {run.handed_over:.0f} handed over, "
            f"{run.lost:.0f} lost"
            f"{exit_note}; games of other nodes cut: {run.cut_elsewhere}; load test: {lf['actions_per_s']:,.0f} "
            f"actions/s, {lf['moved']} moved, {lf['restarted']} restarted, {lf['disconnects']} disconnects, "
            f"{lf['errors']} errors"
        )
        for failure in run.failed_seats[:5]:
            print(f"  seat failed: {failure}")
    back = [room.back_s for run in runs for room in run.rooms if room.back_s is not None]
    action = [room.action_s for run in runs for room in run.rooms if room.action_s is not None]
    total = sum(len(run.rooms) for run in runs)
    print(f"all runs, {total} games: seats resumed: {_spread(back)}; next action: {_spread(action)}")
    goal = 15.0 if kind == "failover" else 2.0
    p99 = _pct(back, 0.99)
    met = "met" if p99 is not None and p99 < goal and len(back) == total else "NOT met"
    print(f"goal: p99 of seats resumed under {goal:g} s{' with a 10 s lease' if kind == 'failover' else ''}: {met}")
    if args.json:
        print(orjson.dumps({"runs": [asdict(run) for run in runs]}).decode())
    ok = total > 0 and len(back) == total and all(not run.failed_seats and run.cut_elsewhere == 0 for run in runs)
    return 0 if ok else 1


# --- the command line --------------------------------------------------------------------------------------


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM: stop and clean up as on Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--players", type=int, default=4, help="players per load-test room (default 4)")
    common.add_argument("--pace", type=float, default=1.0, help="the load test's actions per room per second")
    common.add_argument("--repeat", type=int, default=1, help="runs of each setup (default 1)")
    common.add_argument(
        "--database-url",
        default=os.environ.get("CRISP_TEST_DATABASE_URL"),
        help="PostgreSQL whose role may create databases (default: $CRISP_TEST_DATABASE_URL)",
    )
    common.add_argument("--lease", type=float, default=10.0, help="CRISP_LEASE_SECONDS (default 10)")
    common.add_argument("--renew", type=float, default=2.0, help="CRISP_LEASE_RENEW_SECONDS (default 2)")
    common.add_argument("--drain-seconds", type=float, default=30.0, help="CRISP_DRAIN_SECONDS (default 30)")
    common.add_argument("--node-cores", default="0", help="the nodes' cores (default 0)")
    common.add_argument("--load-cores", default="1", help="HAProxy's, the load test's and this script's (1)")
    common.add_argument("--no-pin", action="store_true", help="leave every process on every core")
    common.add_argument("--json", action="store_true", help="also print the figures as one JSON line")

    cpu = sub.add_parser("cpu", parents=[common], help="CPU per action: 1, 2, 3 nodes against one alone")
    cpu.add_argument("--rooms", type=int, default=500, help="load-test rooms (default 500)")
    cpu.add_argument("--duration", type=float, default=30.0, help="the load test's seconds (default 30)")
    cpu.add_argument("--nodes", default="1,2,3", help="cluster sizes to run (default 1,2,3)")
    for name, what in (("failover", "kill -9 of a node"), ("drain", "SIGTERM of a node")):
        p = sub.add_parser(name, parents=[common], help=f"rooms back after a {what}")
        p.add_argument("--rooms", type=int, default=200, help="load-test rooms in the background (default 200)")
        p.add_argument("--tables", type=int, default=40, help="measured two-player games (default 40)")
        p.add_argument("--duration", type=float, default=10.0, help="seconds of play before it (default 10)")
        p.add_argument("--after", type=float, default=30.0, help="seconds the rooms are watched after (30)")
    load = sub.add_parser("load", help="(used by the others) the load test, CPU summed over --pids")
    load.add_argument("--pids", required=True, help="the server processes, comma-separated")
    load.add_argument("loadtest", nargs=argparse.REMAINDER, help="crisp-server loadtest's arguments, after --")
    args = parser.parse_args(argv)

    _more_files()
    if args.command == "load":
        return cmd_load(args)
    if not args.database_url:
        parser.error("no PostgreSQL: give --database-url or set CRISP_TEST_DATABASE_URL")
    if haproxy_binary() is None:
        parser.error("no haproxy (apt-get install haproxy, or CRISP_HAPROXY=/path/to/haproxy)")
    if not args.no_pin:
        os.sched_setaffinity(0, _cores(args.load_cores))  # this script (the measured games' driver) too
    signal.signal(signal.SIGTERM, _interrupt)
    if args.command == "cpu":
        return cmd_cpu(args)
    return cmd_outage(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: every process stopped, the database dropped", file=sys.stderr)
        sys.exit(130)
