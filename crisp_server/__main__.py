"""The command line: ``serve`` (the default) and its other commands (``python -m crisp_server --help``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine import MalformedRecord, loads_record, replay
from .texts import LANGUAGES

if TYPE_CHECKING:
    from .settings import Settings


def _replay_file(path: str) -> dict[str, Any]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise MalformedRecord(f"cannot read the file: {exc.strerror or exc}") from None
    return replay(loads_record(data))


def cmd_replay(files: Sequence[str]) -> int:
    """Replay each record; print results as docs/record-format.md says. Exit 2 if any file is malformed."""
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


def _settings(**overrides: Any) -> Settings | None:
    """The settings from the environment (and ``overrides``), or ``None`` after one line per problem on
    stderr: a wrong setting is the operator's to fix, not a traceback to read."""
    from pydantic import ValidationError

    from .settings import Settings

    try:
        return Settings(**overrides)
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"])
            if where and not where.startswith("CRISP_") and where != "PORT":
                where = f"CRISP_{where.upper()}"
            message = str(error["msg"]).removeprefix("Value error, ")
            print(f"crisp-server: {where + ': ' if where else ''}{message}", file=sys.stderr)
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crisp-server",
        usage="crisp-server [--host HOST] [--port PORT]\n       crisp-server COMMAND [options]",
        description="Crisp: the card game of memory and bluff. Without a command it runs the server (the same as "
        "crisp-server serve): it applies the database migrations and serves the game. Every setting is an "
        "environment variable (CRISP_PUBLIC_URL, CRISP_DATA_DIR, ...: docs/hosting.md).",
        epilog="crisp-server COMMAND --help shows a command's options.",
    )
    server = parser.add_argument_group("running the server (no command, or serve)")
    _serve_options(server)
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND", prog="crisp-server")

    p_serve = sub.add_parser(
        "serve", help="run the server (the default command)", description="Run the server (the default command)."
    )
    _serve_options(p_serve)

    p_replay = sub.add_parser("replay", help="replay crisp-record/1 files and print their results as JSON")
    p_replay.add_argument("files", nargs="+", metavar="FILE")

    sub.add_parser("migrate", help="apply the database migrations (the server also does it when it starts)")

    p_backup = sub.add_parser(
        "backup",
        help="copy the SQLite database to FILE, also while the server runs (docs/backup.md)",
        description="Copy the server's SQLite database (CRISP_DATA_DIR or CRISP_DATABASE_URL) to FILE while "
        "play goes on, and check the copy. Exit codes: 0 copied, 1 the copy failed, 2 refused (bad settings, "
        "PostgreSQL, FILE exists, no database).",
    )
    p_backup.add_argument("file", metavar="FILE", help="where the copy goes (written as FILE.partial, then renamed)")
    p_backup.add_argument("--force", action="store_true", help="replace FILE if it exists")

    p_restore = sub.add_parser(
        "restore",
        help="make FILE (a backup) the SQLite database; the server must be stopped (docs/backup.md)",
        description="Replace the server's SQLite database with FILE, checked and migrated to this release; the "
        "database it replaces is kept beside it as crisp.sqlite3.before-restore-<time>. Exit codes: 0 restored, "
        "1 the restore failed (nothing replaced), 2 refused (bad settings, PostgreSQL, FILE is no Crisp "
        "database), 3 a server uses the database.",
    )
    p_restore.add_argument("file", metavar="FILE", help="a copy made by crisp-server backup")

    sub.add_parser("schema", help="print the JSON Schema of every WebSocket message (docs/protocol.schema.json)")

    p_load = sub.add_parser("loadtest", help="play many rooms of bots against a running server and print figures")
    p_load.add_argument("--url", default="http://127.0.0.1:8000", help="the server (default http://127.0.0.1:8000)")
    p_load.add_argument("--rooms", type=int, default=50, help="rooms (default 50)")
    p_load.add_argument("--players", type=int, default=4, help="players per room, 2-8 (default 4)")
    p_load.add_argument(
        "--pace", type=float, default=1.0, help="actions per room per second, 0: as fast as the rules allow (default 1)"
    )
    p_load.add_argument("--duration", type=float, default=30.0, help="seconds of play before it stops (default 30)")
    p_load.add_argument("--crisp", type=float, default=0.1, help="chance a bot calls Crisp when it may (default 0.1)")
    p_load.add_argument("--seed", type=int, default=1, help="seed of the bots' choices")
    p_load.add_argument("--allow-remote", action="store_true", help="allow a server that is not on this machine")
    p_load.add_argument("--lobby", action="store_true", help="stay in the lobbies: idle connections (memory)")
    p_load.add_argument("--churn", type=int, default=0, metavar="R", help="R more rooms join while the first play")
    p_load.add_argument("--churn-seconds", type=float, default=10.0, help="over how long they join (default 10)")
    p_load.add_argument("--server-pid", type=int, help="read the server's CPU and memory from /proc, not /metrics")
    p_load.add_argument("--json", action="store_true", help="also print the figures as one JSON line")

    p_bench = sub.add_parser("bench", help="print performance figures")
    p_bench.add_argument("what", choices=["engine"], help="what to measure")
    p_bench.add_argument("--games", type=int, default=300, help="random full games to replay (default 300)")
    p_bench.add_argument("--seed", type=int, default=1, help="seed of the random games (default 1)")

    p_arena = sub.add_parser("arena", help="computer players play each other in process; print their figures")
    p_arena.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    p_arena.add_argument(
        "--seats", default="hard,normal,normal,normal", help="2-8 levels, comma-separated (random, easy, normal, hard)"
    )
    p_arena.add_argument("--seed", type=int, default=1, help="seed of the decks, seats and choices (default 1)")
    p_arena.add_argument(
        "--score-limit",
        help="the game's score limit, or several comma-separated (50,100,150): a run at each "
        "(default 100; with --table 50,100,150)",
    )
    p_arena.add_argument("--turn-seconds", type=int, help="the turn timer (default none; moves are instant)")
    p_arena.add_argument("--discard-draw", action="store_true", help="allow drawing from the discard pile")
    p_arena.add_argument(
        "--table",
        action="store_true",
        help="every pairing (normal vs 3 easy, hard vs 3 normal, hard vs 3 easy) at each score limit: the win "
        "share of the one player with its 95%% confidence interval (--seats is not used)",
    )
    p_arena.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    p_bot = sub.add_parser("bot", help="a computer player joins a room of a running server and plays it")
    p_bot.add_argument("--url", required=True, help="the server's WebSocket, e.g. ws://127.0.0.1:8000/ws")
    p_bot.add_argument("--room", required=True, metavar="CODE", help="the room code to join")
    p_bot.add_argument("--level", required=True, help="random, easy, normal or hard")
    p_bot.add_argument("--name", help='its name at the table (default "Hard bot", "Hard bot 2", ... for --level hard)')
    p_bot.add_argument("--games", type=int, default=1, help="games to play before it leaves (default 1)")
    p_bot.add_argument("--seed", type=int, help="seed of its choices and pauses (default: a fresh one)")
    p_bot.add_argument(
        "--pause", type=float, default=1.0, help="factor on its human-like pauses, 0: act at once (default 1)"
    )
    p_bot.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the server's messages (default en)")
    return parser


def cmd_arena(args: argparse.Namespace) -> int:
    """Run the arena; exit 1 if any bot made an illegal move, 2 for bad arguments."""
    from .bots import LEVELS
    from .engine import MAX_PLAYERS, MIN_PLAYERS, Options
    from .tools.arena import TABLE_LIMITS, format_summary, format_table, run_arena, run_table

    levels = [s.strip() for s in args.seats.split(",") if s.strip()]
    problem = None
    limits: list[int] = list(TABLE_LIMITS) if args.table else [100]
    if args.score_limit is not None:
        try:
            limits = [int(part) for part in args.score_limit.split(",")]
        except ValueError:
            problem = f"--score-limit takes whole numbers separated by commas, not {args.score_limit!r}"
    if problem is not None:
        pass
    elif not MIN_PLAYERS <= len(levels) <= MAX_PLAYERS:
        problem = f"--seats names {MIN_PLAYERS} to {MAX_PLAYERS} levels, not {len(levels)}"
    elif any(level not in LEVELS for level in levels):
        bad = next(level for level in levels if level not in LEVELS)
        problem = f"--seats: unknown level {bad!r} (one of {', '.join(LEVELS)})"
    elif args.games < 1:
        problem = "--games must be at least 1"
    runs: list[Options] = []
    try:
        runs = [Options(limit, args.turn_seconds, args.discard_draw) for limit in limits]
    except ValueError as exc:
        problem = problem or str(exc)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    if args.table:
        table = run_table(args.games, args.seed, limits, runs[0])
        print(json.dumps(table) if args.json else format_table(table))
        return 1 if any(row["illegal_moves"] for row in table["rows"]) else 0
    summaries = [run_arena(levels, args.games, args.seed, options).summary() for options in runs]
    if args.json:
        print(json.dumps(summaries[0] if len(summaries) == 1 else summaries))
    else:
        print("\n\n".join(format_summary(summary) for summary in summaries))
    return 1 if any(summary["illegal_moves"] for summary in summaries) else 0


def cmd_backup_or_restore(args: argparse.Namespace) -> int:
    """``backup FILE`` or ``restore FILE``, with the exit codes their ``--help`` lists."""
    from .store import backup as files

    settings = _settings()
    if settings is None:
        return 2
    try:
        database = files.sqlite_file(settings.resolved_database_url())
        if args.command == "backup":
            copied = files.backup(database, Path(args.file), force=args.force)
            print(
                f"backed up {database} to {copied.target}: {copied.bytes / 2**20:.1f} MiB in "
                f"{copied.seconds:.2f} s, integrity check ok"
            )
            return 0
        restored = files.restore(Path(args.file), database, settings.migrations_dir)
    except files.InUse as exc:
        print(f"crisp-server {args.command}: {exc}", file=sys.stderr)
        return 3
    except files.Refused as exc:
        print(f"crisp-server {args.command}: {exc}", file=sys.stderr)
        return 2
    except files.Unwritable as exc:
        print(f"crisp-server {args.command}: failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # SQLite, the disk, a migration that failed: the operator's to read, not a traceback
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"crisp-server {args.command}: failed, nothing replaced: {type(exc).__name__}: {said}", file=sys.stderr)
        return 1
    print(f"restored {args.file} (schema revision {restored.revision}) as {restored.database}")
    if restored.migrated_to is not None:
        print(f"migrated it from revision {restored.revision} to {restored.migrated_to}")
    if restored.kept is not None:
        print(f"the database before is kept as {restored.kept}")
    return 0


def _serve_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--host", help="address to listen on (CRISP_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (CRISP_PORT, default 8000)")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv.insert(0, "serve")  # `crisp-server --port 9000` runs the server
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from .serve import serve

        overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
        settings = _settings(**overrides)
        return 2 if settings is None else serve(settings)
    if args.command == "replay":
        return cmd_replay(args.files)
    if args.command == "migrate":
        from .store.migrate import upgrade

        settings = _settings()
        if settings is None:
            return 2
        url = settings.resolved_database_url()
        upgrade(url, settings.migrations_dir)
        from sqlalchemy.engine import make_url

        print(f"migrations applied: {make_url(url).render_as_string(hide_password=True)}")
        return 0
    if args.command in ("backup", "restore"):
        return cmd_backup_or_restore(args)
    if args.command == "schema":
        from .wire.schema import json_schema

        print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
        return 0
    if args.command == "loadtest":
        import uvloop

        from .collector import Collector
        from .remote.loadtest import run

        if not 2 <= args.players <= 8:
            print("--players must be 2 to 8", file=sys.stderr)
            return 2
        # Its own collector's pauses would count as the server's latency (see crisp_server.collector).
        collector = Collector()
        collector.start()
        try:
            return uvloop.run(
                run(
                    args.url,
                    args.rooms,
                    args.players,
                    pace=args.pace,
                    duration=args.duration,
                    crisp=args.crisp,
                    allow_remote=args.allow_remote,
                    seed=args.seed,
                    lobby=args.lobby,
                    churn=args.churn,
                    churn_seconds=args.churn_seconds,
                    server_pid=args.server_pid,
                    json_out=args.json,
                )
            )
        finally:
            collector.stop()
    if args.command == "bench":
        from .tools.bench import bench_engine

        return bench_engine(games=args.games, seed=args.seed)
    if args.command == "arena":
        return cmd_arena(args)
    if args.command == "bot":
        from .remote.wirebot import BotOptions
        from .remote.wirebot import main as bot_main

        return bot_main(
            BotOptions(args.url, args.room, args.level, args.name, args.games, args.seed, args.pause, args.lang)
        )
    return 2  # argparse has already refused anything else


if __name__ == "__main__":
    sys.exit(main())
