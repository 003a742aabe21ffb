"""The command line: ``python -m crisp_server replay FILE...`` and ``python -m crisp_server bench engine``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .engine import MalformedRecord, loads_record, replay


def _replay_file(path: str) -> dict[str, Any]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise MalformedRecord(f"cannot read the file: {exc.strerror or exc}") from None
    return replay(loads_record(data))


def cmd_replay(files: Sequence[str]) -> int:
    """Replay each record; print results as RECORD_FORMAT.md says. Exit 2 if any file is malformed."""
    status = 0
    if len(files) == 1:
        try:
            result = _replay_file(files[0])
        except MalformedRecord as exc:
            print(f"{files[0]}: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(result, indent=1))
        return 0
    for path in files:
        try:
            line: dict[str, Any] = _replay_file(path)
        except MalformedRecord as exc:
            line = {"error": f"{path}: {exc}"}
            status = 2
        print(json.dumps(line, separators=(",", ":")))
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crisp-server", description="Crisp: the card game of memory and bluff.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_replay = sub.add_parser("replay", help="replay crisp-record/1 files and print their results as JSON")
    p_replay.add_argument("files", nargs="+", metavar="FILE")

    p_bench = sub.add_parser("bench", help="print performance figures")
    p_bench.add_argument("what", choices=["engine"], help="what to measure")
    p_bench.add_argument("--games", type=int, default=300, help="random full games to replay (default 300)")
    p_bench.add_argument("--seed", type=int, default=1, help="seed of the random games (default 1)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        return cmd_replay(args.files)
    if args.command == "bench":
        from .bench import bench_engine

        return bench_engine(games=args.games, seed=args.seed)
    return 2  # argparse has already refused anything else


if __name__ == "__main__":
    sys.exit(main())
