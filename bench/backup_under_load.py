"""What ``crisp-server backup`` costs a playing server: a real server (a fresh SQLite database, on loopback) plays
``--rooms`` rooms of bots (``crisp-server loadtest``) twice, first alone, then while ``crisp-server backup``
copies its database every ``--every`` seconds (each a process of its own, as from cron: its start costs about
0.8 s of CPU). Prints, for each run, the
players' action-to-last-view latency (the load test's p50, p99, max), the server's group commits from its
``/metrics`` histogram (how many, and how many took longer than 5, 10 and 50 ms), and for the backups their
count, size and durations. Bounded: two load tests of ``--duration`` seconds each, loopback only.

    python bench/backup_under_load.py [--rooms 500] [--duration 30] [--every 5]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
#: The load test's bots all come from 127.0.0.1: no look-up limit, no cap on its connections.
LOAD_SETTINGS = {
    "CRISP_LOOKUP_BURST": "100000",
    "CRISP_LOOKUP_PER_MINUTE": "100000",
    "CRISP_CONNECTIONS_PER_ADDRESS": "0",
    "CRISP_LOG_LEVEL": "warning",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def commits(base: str) -> dict[str, float]:
    """The server's ``crisp_db_commit_seconds`` histogram: cumulative count per bucket bound, and ``count``."""
    out: dict[str, float] = {}
    for line in httpx.get(base + "/metrics", timeout=10).text.splitlines():
        if line.startswith("crisp_db_commit_seconds_bucket"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            out[bound] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("crisp_db_commit_seconds_count"):
            out["count"] = float(line.rsplit(" ", 1)[1])
    return out


def load(base: str, rooms: int, duration: float, env: dict[str, str]) -> dict[str, float]:
    command = [sys.executable, "-m", "crisp_server", "loadtest", "--url", base, "--rooms", str(rooms)]
    command += ["--players", "4", "--pace", "1", "--duration", str(duration), "--json"]
    run = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    figures: dict[str, float] = json.loads(run.stdout.strip().splitlines()[-1])
    return figures


def run(
    rooms: int, duration: float, *, every: float, with_backups: bool, base: str, data: Path, env: dict[str, str]
) -> None:
    before = commits(base)
    stop = threading.Event()
    copies: list[tuple[float, float]] = []  # (MiB, seconds) of each backup

    def back_up() -> None:
        target = data.parent / "backup.sqlite3"
        while True:
            done = subprocess.run(
                [sys.executable, "-m", "crisp_server", "backup", "--force", str(target)],
                env={**env, "CRISP_DATA_DIR": str(data)},
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            # "backed up A to B: 12.3 MiB in 0.21 s, integrity check ok"
            words = done.stdout.split(": ", 1)[1].split()
            copies.append((float(words[0]), float(words[3])))
            if stop.wait(every):
                return

    worker = threading.Thread(target=back_up)
    if with_backups:
        worker.start()  # from the first join on: the load test's measured window is all under backups
    figures = load(base, rooms, duration, env)
    stop.set()
    if with_backups:
        worker.join()
    after = commits(base)
    n = after["count"] - before["count"]

    def slower(bound: str) -> int:
        return int(n - (after[bound] - before[bound]))

    label = "with backups" if with_backups else "alone"
    print(
        f"{label:>12}: actions/s {figures['actions_per_s']:.0f}, latency p50 {figures['p50_ms']:.1f} ms, "
        f"p99 {figures['p99_ms']:.1f} ms, max {figures['max_ms']:.1f} ms; commits {int(n)}, "
        f"> 5 ms {slower('0.005')}, > 10 ms {slower('0.01')}, > 50 ms {slower('0.05')}"
    )
    if copies:
        seconds = sorted(s for _, s in copies)
        print(
            f"{'':>12}  {len(copies)} backups of {copies[0][0]:.1f} to {copies[-1][0]:.1f} MiB, "
            f"each {seconds[0]:.2f} to {seconds[-1]:.2f} s (median {seconds[len(seconds) // 2]:.2f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between backups (default 5)")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="crisp-backup-") as tmp:
        data = Path(tmp) / "data"
        env = {**os.environ, **LOAD_SETTINGS, "CRISP_PORT": str(port), "CRISP_DATA_DIR": str(data)}
        env.pop("CRISP_DATABASE_URL", None)
        server = subprocess.Popen([sys.executable, "-m", "crisp_server", "serve"], env=env, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
            run(args.rooms, args.duration, every=args.every, with_backups=False, base=base, data=data, env=env)
            run(args.rooms, args.duration, every=args.every, with_backups=True, base=base, data=data, env=env)
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
