"""Crisp's server and the bare fan-out server side by side, pair by pair, under the same load (issue 7).

For each room count, each server in turn runs alone on core 0 (``taskset``) with a fresh database, and
``crisp-server loadtest`` drives it from core 1; the figures come from the load test's JSON line and the
server's CPU time in ``/proc``. Prints one table: throughput, latency, CPU (and the part of it in the kernel:
``sys``), views per server CPU-second and, per pair, that figure for Crisp as a share of the bare server's.

    python bench/compare.py --rooms 500,1000,2000 --duration 30

This machine is shared: the same server's CPU per view moves by 10 to 20% from one run to the next. With
``--together`` both servers run at the same time on core 0, each with its own load test on core 1, so that the
share of bare is measured under the same conditions for both (issue 19).

``--runs N`` does it all N times, the two servers taking turns to go first, and prints every run's table and
then the medians of each figure (the share of bare: the median of the runs' shares, with their range):

    python bench/compare.py --rooms 1000,2000 --pace 1 --duration 30 --runs 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("crisp", "bare")
FILES = 20000  # this machine's limit of open files per process; 2,000 rooms of 4 need 8,000 sockets


def _more_files() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(FILES, hard), hard))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError("the server did not start listening")


@contextlib.contextmanager
def server(kind: str, core: str) -> Iterator[tuple[int, int]]:
    """Start ``crisp`` or ``bare`` pinned to ``core``; yield its port and pid."""
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="crisp-bench-") as data:
        if kind == "crisp":
            command = [sys.executable, "-m", "crisp_server", "serve", "--port", str(port)]
        else:
            command = [sys.executable, str(ROOT / "bench" / "bare_broadcast.py"), "--port", str(port)]
        env = {
            **os.environ,
            "CRISP_DATA_DIR": data,
            "CRISP_LOG_LEVEL": "warning",
            # Every bot comes from 127.0.0.1: the look-up limit per address is for strangers guessing codes.
            "CRISP_LOOKUP_BURST": "1000000",
            "CRISP_LOOKUP_PER_MINUTE": "1000000",
            # And thousands of sockets from one address: the cap per address is for strangers too.
            "CRISP_CONNECTIONS_PER_ADDRESS": "0",
        }
        proc = subprocess.Popen(
            ["taskset", "-c", core, *command],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_port(port, proc)
            yield port, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_load(port: int, pid: int, rooms: int, args: argparse.Namespace) -> subprocess.Popen[str]:
    """The load test against one server, started (it inherits ``_more_files()``)."""
    command = [
        *("taskset", "-c", args.load_core, sys.executable, "-m", "crisp_server", "loadtest"),
        *("--url", f"http://127.0.0.1:{port}", "--rooms", str(rooms), "--players", str(args.players)),
        *("--pace", str(args.pace), "--duration", str(args.duration), "--server-pid", str(pid), "--json"),
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def figures_of(run: subprocess.Popen[str]) -> dict[str, Any]:
    """Wait for a load test; its figures (the JSON line it prints last)."""
    stdout, stderr = run.communicate()
    lines = stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"the load test printed no figures:\n{stdout}\n{stderr}")
    figures: dict[str, Any] = json.loads(lines[-1])
    figures["ok"] = run.returncode == 0
    return figures


def measure(rooms: int, args: argparse.Namespace, order: tuple[str, ...] = KINDS) -> dict[str, dict[str, Any]]:
    """Each server's figures under ``rooms`` rooms: one after the other (in ``order``), or ``--together``:
    both servers at once on the server core and both loads at once on the load core, so that whatever else the
    machine does meanwhile (a neighbour, the CPU's clock) weighs on both alike. The servers then share their
    core: their CPU figures are what each used, and their latencies include waiting for the other."""
    if not args.together:
        out = {}
        for kind in order:
            with server(kind, args.server_core) as (port, pid):
                out[kind] = figures_of(start_load(port, pid, rooms, args))
        return out
    with server("crisp", args.server_core) as crisp, server("bare", args.server_core) as bare:
        runs = {
            kind: start_load(port, pid, rooms, args) for kind, (port, pid) in zip(KINDS, (crisp, bare), strict=True)
        }
        return {kind: figures_of(run) for kind, run in runs.items()}


def _share(seconds: float | None, figures: dict[str, Any]) -> float | None:
    """``seconds`` of CPU as a percentage of the run's window (of one core)."""
    return None if seconds is None else 100 * seconds / figures["window"]


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


#: The figures of a run that ``--runs`` takes the median of (those of the load test's JSON line).
FIGURES = ("actions_per_s", "messages_per_s", "server_cpu_s", "server_system_s", "views_per_cpu_s", "p50_ms", "p99_ms")

Row = tuple[int, str, dict[str, Any]]
"""One server's figures at one room count: rooms, kind, the load test's figures."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=_room_counts, default="500,1000,2000", help="room counts, comma-separated")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--pace", type=float, default=0.0, help="as for loadtest (default 0: as fast as allowed)")
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--server-core", default="0")
    parser.add_argument("--load-core", default="1")
    parser.add_argument(
        "--together", action="store_true", help="run both servers at once on the server core (an A/B under one noise)"
    )
    parser.add_argument(
        "--runs", type=_positive, default=1, help="measure everything this many times; print each run and the medians"
    )
    return parser.parse_args(argv)


def _room_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"room counts are whole numbers, comma-separated, not {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"each room count is at least 1, not {text!r}")
    return counts


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def order_of(run: int) -> tuple[str, ...]:
    """Which server goes first in run ``run`` (0-based), one server at a time: they take turns."""
    return KINDS if run % 2 == 0 else KINDS[::-1]


def share_of_bare(rows: list[Row]) -> dict[int, float]:
    """Per room count, Crisp's views per server CPU-second as a percentage of the bare server's."""
    views = {(rooms, kind): f.get("views_per_cpu_s") for rooms, kind, f in rows}
    out = {}
    for rooms, kind, _f in rows:
        crisp, bare = views.get((rooms, "crisp")), views.get((rooms, "bare"))
        if kind == "crisp" and crisp and bare:
            out[rooms] = 100 * crisp / bare
    return out


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def medians(runs: list[list[Row]]) -> list[Row]:
    """Each server's median figures at each room count over ``runs``, in the first run's order. Memory and
    errors: the median of the memory before and after, the most errors of any run; ``ok`` if every run was."""
    out: list[Row] = []
    for rooms, kind, first in runs[0]:
        same = [f for run in runs for r, k, f in run if (r, k) == (rooms, kind)]
        figures: dict[str, Any] = {name: _median([f.get(name) for f in same]) for name in FIGURES}
        figures["window"] = _median([f["window"] for f in same]) or first["window"]
        # CPU as a share of the window: the median of each run's share, not of its seconds.
        shares = [100 * f["server_cpu_s"] / f["window"] for f in same if f.get("server_cpu_s") is not None]
        figures["server_cpu_s"] = None if not shares else statistics.median(shares) * figures["window"] / 100
        figures["rss_before"] = _median([f.get("rss_before") for f in same])
        figures["rss_after"] = _median([f.get("rss_after") for f in same])
        for name in ("errors", "disconnects", "failed_rooms"):
            figures[name] = max(f[name] for f in same)
        figures["ok"] = all(f["ok"] for f in same)
        out.append((rooms, kind, figures))
    return out


def table(rows: list[Row], players: int, shares: dict[int, str] | None = None) -> list[str]:
    """The lines of one table of ``rows``; ``shares`` replaces the share of bare computed from them."""
    lines = [
        f"{'rooms':>6} {'server':>6} {'actions/s':>9} {'views/s':>8} {'CPU %':>6} {'sys %':>5} {'views/CPU-s':>11} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'KB/conn':>7} {'errors':>6}  share of bare"
    ]
    computed = share_of_bare(rows)
    for rooms, kind, f in rows:
        cpu = f["server_cpu_s"]
        per_conn = None
        if f["rss_before"] is not None and f["rss_after"] is not None:
            per_conn = (f["rss_after"] - f["rss_before"]) / 1024 / (rooms * players)
        share = ""
        if kind == "crisp":
            if shares is not None:
                share = shares.get(rooms, "")
            elif rooms in computed:
                share = f"{computed[rooms]:.0f}%"
        lines.append(
            f"{rooms:>6} {kind:>6} {_fmt(f['actions_per_s']):>9} {_fmt(f['messages_per_s']):>8} "
            f"{_fmt(_share(cpu, f)):>6} {_fmt(_share(f.get('server_system_s'), f)):>5} "
            f"{_fmt(f['views_per_cpu_s']):>11} "
            f"{_fmt(f['p50_ms'], '.1f'):>7} {_fmt(f['p99_ms'], '.1f'):>7} {_fmt(per_conn, '.1f'):>7} "
            f"{f['errors'] + f['disconnects'] + f['failed_rooms']:>6}  {share}"
        )
    return lines


def report(runs: list[list[Row]], players: int) -> list[str]:
    """Every run's table; with more than one run, then the medians, the share of bare as the median of the
    runs' shares with their range and each run's share."""
    if len(runs) == 1:
        return table(runs[0], players)
    lines: list[str] = []
    for number, rows in enumerate(runs, 1):
        lines += [f"run {number} of {len(runs)}", *table(rows, players), ""]
    per_run = [share_of_bare(rows) for rows in runs]
    shares = {}
    for rooms in dict.fromkeys(rooms for rooms, _kind, _f in runs[0]):
        values = [run[rooms] for run in per_run if rooms in run]
        if not values:
            continue
        every = ", ".join(f"{run[rooms]:.0f}%" if rooms in run else "-" for run in per_run)
        shares[rooms] = f"{statistics.median(values):.0f}% ({min(values):.0f}-{max(values):.0f}%: {every})"
    lines += [f"medians of {len(runs)} runs", *table(medians(runs), players, shares)]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _more_files()
    runs: list[list[Row]] = []
    for run in range(args.runs):
        rows: list[Row] = []
        for rooms in args.rooms:
            for kind, figures in measure(rooms, args, order_of(run)).items():
                rows.append((rooms, kind, figures))
            print(f"  run {run + 1} of {args.runs}, {rooms} rooms: done", file=sys.stderr, flush=True)
        rows.sort(key=lambda row: (args.rooms.index(row[0]), KINDS.index(row[1])))
        runs.append(rows)
    print("\n".join(report(runs, args.players)))
    return 0 if all(f["ok"] for rows in runs for _, _, f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
