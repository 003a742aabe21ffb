"""Crisp's server and the bare fan-out server side by side, pair by pair, under the same load (issue 7).

For each room count, each server in turn runs alone on core 0 (``taskset``) with a fresh database, and
``crisp-server loadtest`` drives it from core 1; the figures come from the load test's JSON line and the
server's CPU time in ``/proc``. Prints one table: throughput, latency, CPU (and the part of it in the kernel:
``sys``), views per server CPU-second and, per pair, that figure for Crisp as a share of the bare server's.

    python bench/compare.py --rooms 500,1000,2000 --duration 30

This machine is shared: the same server's CPU per view moves by 10 to 20% from one run to the next. With
``--together`` both servers run at the same time on core 0, each with its own load test on core 1, so that the
share of bare is measured under the same conditions for both (issue 19).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
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


def measure(rooms: int, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each server's figures under ``rooms`` rooms: one after the other, or ``--together``: both servers at once
    on the server core and both loads at once on the load core, so that whatever else the machine does
    meanwhile (a neighbour, the CPU's clock) weighs on both alike. The servers then share their core: their CPU
    figures are what each used, and their latencies include waiting for the other."""
    if not args.together:
        out = {}
        for kind in KINDS:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", default="500,1000,2000", help="room counts, comma-separated")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--pace", type=float, default=0.0, help="as for loadtest (default 0: as fast as allowed)")
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--server-core", default="0")
    parser.add_argument("--load-core", default="1")
    parser.add_argument(
        "--together", action="store_true", help="run both servers at once on the server core (an A/B under one noise)"
    )
    args = parser.parse_args()
    _more_files()
    rows: list[tuple[int, str, dict[str, Any]]] = []
    for rooms in (int(r) for r in args.rooms.split(",")):
        for kind, figures in measure(rooms, args).items():
            rows.append((rooms, kind, figures))
        print(f"  {rooms} rooms: done", file=sys.stderr, flush=True)
    head = (
        f"{'rooms':>6} {'server':>6} {'actions/s':>9} {'views/s':>8} {'CPU %':>6} {'sys %':>5} {'views/CPU-s':>11} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'KB/conn':>7} {'errors':>6}  share of bare"
    )
    print(head)
    bare = {rooms: f for rooms, kind, f in rows if kind == "bare"}
    for rooms, kind, f in rows:
        cpu = f["server_cpu_s"]
        per_conn = None
        if f["rss_before"] is not None and f["rss_after"] is not None:
            per_conn = (f["rss_after"] - f["rss_before"]) / 1024 / (rooms * args.players)
        share = ""
        if kind == "crisp" and f["views_per_cpu_s"] and bare[rooms]["views_per_cpu_s"]:
            share = f"{100 * f['views_per_cpu_s'] / bare[rooms]['views_per_cpu_s']:.0f}%"
        print(
            f"{rooms:>6} {kind:>6} {_fmt(f['actions_per_s']):>9} {_fmt(f['messages_per_s']):>8} "
            f"{_fmt(_share(cpu, f)):>6} {_fmt(_share(f.get('server_system_s'), f)):>5} "
            f"{_fmt(f['views_per_cpu_s']):>11} "
            f"{_fmt(f['p50_ms'], '.1f'):>7} {_fmt(f['p99_ms'], '.1f'):>7} {_fmt(per_conn, '.1f'):>7} "
            f"{f['errors'] + f['disconnects'] + f['failed_rooms']:>6}  {share}"
        )
    return 0 if all(f["ok"] for _, _, f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
