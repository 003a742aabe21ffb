"""Backing up a SQLite database while its server plays, restoring one, and the lock a running server holds on
its database (``crisp-server backup`` / ``restore``; PostgreSQL has ``pg_dump`` and ``pg_restore`` for this).

The backup is SQLite's online backup API, in one step: it reads the database as of one instant (a read
transaction) while the server goes on committing, because in WAL mode a reader never blocks the writer. It is
not done a few pages at a time: a backup in steps starts over whenever another connection commits between two
steps, and a playing server commits every few milliseconds (measured: 1,398 restarts to copy 50 MB once).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

from . import sqlite_fast
from .migrate import HEAD, alembic_config, upgrade

#: What SQLite keeps beside a database file in WAL mode: moved together with it, never left beside another.
SIDE_FILES = ("-wal", "-shm")


class Refused(Exception):
    """The command will not do it (a PostgreSQL URL, an existing file, a file that is no Crisp database):
    the message says why and what to do instead."""


class InUse(Refused):
    """A server (or a restore) holds the database's lock."""


class Unwritable(Exception):
    """The copy cannot be written where it was asked to go (a folder that cannot be made, no permission): the
    message names the folder or file and the system's reason."""


@dataclass(frozen=True, slots=True)
class Copied:
    target: Path
    bytes: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Restored:
    database: Path
    revision: str
    migrated_to: str | None
    kept: Path | None


def sqlite_file(url: str) -> Path:
    """The SQLite file of the database URL; ``Refused`` for PostgreSQL or an in-memory database."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        raise Refused(
            "the database is PostgreSQL: back it up with pg_dump -Fc and restore it with pg_restore --clean "
            "(see docs/backup.md)"
        )
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        raise Refused(f"not a SQLite file: {parsed.render_as_string(hide_password=True)}")
    return Path(parsed.database).resolve()


def lock_file(database: Path) -> Path:
    """The file a running server holds locked (``flock``) beside its database, e.g. ``crisp.sqlite3.lock``."""
    return database.with_name(database.name + ".lock")


@contextlib.contextmanager
def holding(database: Path) -> Iterator[None]:
    """Hold the database's lock while the block runs; ``InUse`` at once if another process holds it. The lock
    goes with the process (a server killed with ``kill -9`` holds it no more)."""
    path = lock_file(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle: IO[bytes] = path.open("ab")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InUse(f"a server (or a restore) uses {database}: {path} is locked; stop the server first") from None
        yield
    finally:
        handle.close()  # closing it releases the lock


def backup(database: Path, target: Path, *, force: bool = False) -> Copied:
    """Copy ``database`` (a server may be writing it) to ``target``: first to ``target.partial``, checked with
    ``PRAGMA integrity_check``, then renamed. The copy is one file (rollback journal mode; a server that opens
    it switches it to WAL again)."""
    if not database.is_file():
        raise Refused(f"there is no database at {database}")
    if target.exists() and not force:
        raise Refused(f"{target} exists: choose another name, or add --force to replace it")
    partial = target.with_name(target.name + ".partial")
    _writable(partial)
    for leftover in (partial, *(partial.with_name(partial.name + s) for s in ("-journal", *SIDE_FILES))):
        leftover.unlink(missing_ok=True)  # an earlier backup that was stopped
    start = time.perf_counter()
    source = sqlite3.connect(database, timeout=sqlite_fast.BUSY_SECONDS)
    try:
        copy = sqlite3.connect(partial)
        try:
            source.backup(copy)  # one step: see the module's docstring
            copy.execute("PRAGMA journal_mode=DELETE")
            problems = _integrity(copy)
        finally:
            copy.close()
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    if problems:
        partial.unlink(missing_ok=True)
        raise sqlite3.DatabaseError(f"the copy failed its integrity check: {problems}")
    _fsync(partial)
    partial.replace(target)
    _fsync(target.parent)
    return Copied(target, target.stat().st_size, time.perf_counter() - start)


def _writable(partial: Path) -> None:
    """Make ``partial``'s folder if it is missing (as ``mkdir -p`` would) and make sure a file can be written
    there; ``Unwritable`` naming the folder otherwise (SQLite would only say "unable to open database file")."""
    folder = partial.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unwritable(
            f"cannot create the folder {folder} ({exc.strerror or exc}): create it, writable by this user, or "
            "choose another"
        ) from None
    try:
        with partial.open("ab"):
            pass
    except OSError as exc:
        raise Unwritable(
            f"cannot write in the folder {folder} ({exc.strerror or exc}): make it writable by this user, or "
            "choose another"
        ) from None


def check(path: Path, migrations: Path | None = None) -> str:
    """The Alembic revision of the Crisp database at ``path``, after ``PRAGMA integrity_check``; ``Refused``
    if it is not one (not SQLite, damaged, no revision, or one these migrations do not know)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            problems = _integrity(db)
            if problems:
                raise Refused(f"{path} is damaged (integrity check: {problems})")
            try:
                revision = db.execute("SELECT version_num FROM alembic_version").fetchone()
            except sqlite3.OperationalError:
                revision = None
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB:
            raise Refused(f"{path} is not a SQLite database ({exc})") from None
        raise Refused(f"{path} is damaged or cannot be read ({exc})") from None
    if revision is None:
        raise Refused(f"{path} is no Crisp database: it has no schema revision (table alembic_version)")
    from alembic.script import ScriptDirectory  # only here: a server's start does not load Alembic

    known = ScriptDirectory.from_config(alembic_config("sqlite://", migrations))
    try:
        known.get_revision(revision[0])
    except Exception:
        raise Refused(
            f"{path} has schema revision {revision[0]}, which this release does not know: "
            "restore it with the release that made it"
        ) from None
    return str(revision[0])


def restore(source: Path, database: Path, migrations: Path | None = None) -> Restored:
    """Make ``source`` (a backup) the database, while no server runs on it: checked, copied beside the
    database, migrated to the newest revision, then put in place. The database it replaces is kept as
    ``crisp.sqlite3.before-restore-<UTC time>`` (with its WAL, if one was left). Nothing is replaced
    unless every step before succeeded."""
    if not source.is_file():
        raise Refused(f"there is no file {source}")
    revision = check(source, migrations)
    with holding(database):
        incoming = database.with_name(database.name + ".restoring")
        for leftover in (incoming, *(incoming.with_name(incoming.name + s) for s in ("-journal", *SIDE_FILES))):
            leftover.unlink(missing_ok=True)
        try:
            with (
                contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src,
                contextlib.closing(sqlite3.connect(incoming)) as copy,
            ):
                src.backup(copy)
            migrated = None
            if revision != HEAD:
                upgrade(f"sqlite+aiosqlite:///{incoming}", migrations)
                migrated = HEAD
            with contextlib.closing(sqlite3.connect(incoming)) as copy:
                copy.execute("PRAGMA journal_mode=DELETE")  # no WAL of its own left beside it
            _fsync(incoming)
        except BaseException:
            incoming.unlink(missing_ok=True)
            raise
        kept = _set_aside(database)
        incoming.replace(database)
        _fsync(database.parent)
    return Restored(database, revision, migrated, kept)


def _set_aside(database: Path) -> Path | None:
    """Move the database and its WAL files to ``<name>.before-restore-<time>`` (the WAL is first copied
    into it, so that the kept file is whole on its own); ``None`` if there was no database."""
    if not database.exists():
        for suffix in SIDE_FILES:  # a WAL without its database: nothing to keep, and nothing to replay
            database.with_name(database.name + suffix).unlink(missing_ok=True)
        return None
    # If it cannot, the WAL moves with it below.
    with (
        contextlib.suppress(sqlite3.Error),
        contextlib.closing(sqlite3.connect(database, timeout=sqlite_fast.BUSY_SECONDS)) as db,
    ):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = database.with_name(f"{database.name}.before-restore-{stamp}")
    n = 1
    while kept.exists():  # two restores within a second: neither kept file replaces the other
        n += 1
        kept = database.with_name(f"{database.name}.before-restore-{stamp}-{n}")
    database.replace(kept)
    for suffix in SIDE_FILES:
        side = database.with_name(database.name + suffix)
        if side.exists():
            # SQLite pairs ``X`` with ``X-wal``: renamed alike, the WAL stays with its database and is never
            # replayed into the restored one.
            side.replace(kept.with_name(kept.name + suffix))
    return kept


def _integrity(db: sqlite3.Connection) -> str:
    """What ``PRAGMA integrity_check`` found wrong, or an empty string."""
    rows = [str(row[0]) for row in db.execute("PRAGMA integrity_check").fetchall()]
    return "" if rows == ["ok"] else "; ".join(rows[:5])


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
