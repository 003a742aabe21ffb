"""The time of a room's standings (``Store.room_standings``, what ``GET /api/rooms/{code}/standings`` awaits):
the first call, which replays every ended game from its stored record, and a cached call, which only reads
the list of the room's games, on a room with 20 finished games of 8 players to 150 points.

    python bench/standings.py                      # SQLite
    CRISP_TEST_DATABASE_URL=postgresql+asyncpg://crisp:crisp@127.0.0.1:5432/crisp_test \\
        python bench/standings.py --databases sqlite,postgresql

Each first call is made on a new ``Store`` (an empty cache; the database's own pages are warm by then).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crisp_server.engine import Options
from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from tests.databases import database
from tests.store.games import save_room, store_game

NAMES = [f"Player {i}" for i in range(8)]


async def measure(url: str, games: int, firsts: int, cached: int) -> str:
    await asyncio.to_thread(upgrade, url)
    options = Options(150, None, False)
    store = Store(url)
    await store.start()
    try:
        await save_room(store, "bench", "ACDEFG", NAMES, phase="lobby", options=options)
        actions = 0
        for g in range(games):
            record = await store_game(store, "bench", f"game{g}", NAMES, seed=g, options=options)
            actions += sum(len(r.actions) for r in record.rounds)
    finally:
        await store.close()

    first_ms: list[float] = []
    first_cpu_ms: list[float] = []  # this process's CPU time: less at the mercy of the machine's load
    cached_ms: list[float] = []
    for _ in range(firsts):
        store = Store(url)
        await store.start()
        try:
            start, cpu = time.perf_counter(), time.process_time()
            found = await store.room_standings("bench")
            first_ms.append((time.perf_counter() - start) * 1000)
            first_cpu_ms.append((time.process_time() - cpu) * 1000)
            assert found.games == games
            for _ in range(cached if not cached_ms else 0):
                start = time.perf_counter()
                await store.room_standings("bench")
                cached_ms.append((time.perf_counter() - start) * 1000)
        finally:
            await store.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{games} games of 8 to 150 ({actions} actions): first call median {statistics.median(first_ms):.1f} ms "
        f"(min {min(first_ms):.1f}, max {max(first_ms):.1f}, {firsts} runs; CPU median "
        f"{statistics.median(first_cpu_ms):.1f} ms); cached call median "
        f"{statistics.median(cached_ms):.2f} ms (max {max(cached_ms):.2f}, {cached} calls); load average {load}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--databases", default="sqlite", help="sqlite, postgresql, comma-separated (default sqlite)")
    parser.add_argument("--games", type=int, default=20, help="finished games in the room (default 20)")
    parser.add_argument("--firsts", type=int, default=5, help="first calls, each on a new store (default 5)")
    parser.add_argument("--cached", type=int, default=200, help="cached calls (default 200)")
    args = parser.parse_args(argv)
    for kind in args.databases.split(","):
        with tempfile.TemporaryDirectory(prefix="crisp-standings-") as tmp, database(kind, Path(tmp)) as url:
            print(f"{kind}: " + asyncio.run(measure(url, args.games, args.firsts, args.cached)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
