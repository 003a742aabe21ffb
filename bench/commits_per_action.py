"""Group commits and rows written per accepted action on the nodes of a cluster, over a steady window of the
load test through HAProxy (docs/cluster.md: how many nodes one PostgreSQL carries).

    CRISP_TEST_DATABASE_URL=postgresql+asyncpg://crisp:crisp@127.0.0.1:5432/crisp_test \\
        python bench/commits_per_action.py --nodes 1,3 --rooms 500

Each run: a throwaway database, the nodes and HAProxy (``tests/cluster/harness.py``), the load test for
``--warmup`` + ``--seconds`` + 5 s; the nodes' ``/metrics`` are read at the start and the end of the window.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cluster.harness import Cluster
from tests.databases import database

COUNTERS = ("crisp_db_commit_seconds_count", "crisp_action_publish_seconds_count", "crisp_db_operations_total")


def scrape(cluster: Cluster) -> dict[str, float]:
    """The counters above, summed over the nodes."""
    out = dict.fromkeys(COUNTERS, 0.0)
    for i in cluster.nodes:
        for line in httpx.get(cluster.node_url(i) + "/metrics", timeout=5).text.splitlines():
            name, _, value = line.partition(" ")
            if name in out:
                out[name] += float(value)
    return out


def run(nodes: int, rooms: int, warmup: float, seconds: float) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="crisp-commits-"))
    with (
        database("postgresql", tmp) as url,
        Cluster(tmp / "cluster", url, nodes, lease_seconds=10, lease_renew_seconds=2) as cluster,
    ):
        command = [sys.executable, "-m", "crisp_server", "loadtest", "--url", cluster.url, "--rooms", str(rooms)]
        command += ["--players", "4", "--pace", "1", "--duration", str(warmup + seconds + 5)]
        load = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(warmup)
            before, start = scrape(cluster), time.monotonic()
            time.sleep(seconds)
            after, took = scrape(cluster), time.monotonic() - start
        finally:
            load.kill()
            load.wait()
    delta = {name: after[name] - before[name] for name in COUNTERS}
    actions = delta["crisp_action_publish_seconds_count"] or 1.0
    commits = delta["crisp_db_commit_seconds_count"]
    return (
        f"{nodes} node(s), {rooms} rooms of 4: {actions / took:,.0f} actions/s, {commits / took:,.0f} commits/s, "
        f"{commits / actions:.2f} commits and {delta['crisp_db_operations_total'] / actions:.2f} rows per action"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--nodes", default="1,3", help="node counts, comma-separated (default 1,3)")
    parser.add_argument("--rooms", type=int, default=500, help="load-test rooms of 4 (default 500)")
    parser.add_argument("--warmup", type=float, default=25.0, help="seconds before the window (default 25)")
    parser.add_argument("--seconds", type=float, default=20.0, help="the window (default 20)")
    args = parser.parse_args(argv)
    for n in (int(x) for x in args.nodes.split(",")):
        print(run(n, args.rooms, args.warmup, args.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
