"""Opening a replay (docs/replays.md): the server's time to build one, for the longest games it serves.

Finished 8-player games at score limit 150 (move clock 30 s, drawing from the discard pile allowed) are
played by random players who rarely call Crisp (long rounds, the draw pile turned over), with time-outs,
refused moves and the odd server restart, the way ``tests/test_replays.py`` plays them. Each game's record
then goes through what ``GET /api/games/{id}/replay`` does off the event loop
(``crisp_server.replays.replay_body``: parse the stored record, replay it step by step, feed the point of
view's memory, encode the JSON, gzip it) for every point of view: everything open and each seat. The
database read before it is not counted (one indexed read of the game's rows).

    python bench/replay_open.py [--games 10] [--seed 1] [--no-gzip]

It prints the median, p95 and max in ms over every game and point of view (wall time, and the CPU time of
the building thread, which a busy machine does not inflate), and the games' actions and body sizes.
The goal (issue 34) is 300 ms at most for any finished game of up to 8 players and 150 points.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crisp_server import native  # noqa: E402
from crisp_server.engine import Options, record_to_dict  # noqa: E402
from crisp_server.replays import replay_body  # noqa: E402
from tests.test_replays import PATIENT, random_record  # noqa: E402

GOAL_MS = 300


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10, help="games to play and replay (default 10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-gzip", action="store_true", help="leave the compression out")
    args = parser.parse_args()
    times: list[float] = []
    cpu_times: list[float] = []
    steps: list[int] = []
    sizes: list[int] = []
    for g in range(args.games):
        _, record = random_record(8, Options(150, 30, True), random.Random(f"bench {args.seed} {g}"), PATIENT)
        document = record_to_dict(record)
        steps.append(sum(len(r.actions) for r in record.rounds))
        for seat in [None, *range(8)]:
            start, cpu = time.perf_counter(), time.thread_time()
            body = replay_body(document, seat, game_id="bench", gzipped=not args.no_gzip)
            times.append((time.perf_counter() - start) * 1000)
            cpu_times.append((time.thread_time() - cpu) * 1000)
            sizes.append(len(body))
    load = os.getloadavg()
    print(f"engine {native.mode()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"{args.games} games of 8 players to 150: {min(steps)}-{max(steps)} actions each; "
        f"{len(times)} replays built ({'gzip' if not args.no_gzip else 'plain JSON'}), "
        f"{min(sizes) // 1024}-{max(sizes) // 1024} KiB"
    )
    print(f"wall: {_summary(times)} (goal <= {GOAL_MS} ms)")
    print(f"CPU:  {_summary(cpu_times)} (this thread's own time: what a loaded machine adds is waiting)")
    return 0 if max(times) <= GOAL_MS else 1


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms"


if __name__ == "__main__":
    raise SystemExit(main())
