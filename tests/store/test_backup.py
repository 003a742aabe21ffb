"""What ``crisp-server backup`` and ``restore`` refuse, and what they leave behind: PostgreSQL, a FILE that
exists, a FILE that is no Crisp database (not SQLite, damaged, no or an unknown schema revision), a database in
use; and the database a restore replaces is kept whole, its WAL included."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crisp_server.__main__ import main
from crisp_server.store import backup
from crisp_server.store.migrate import upgrade


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder with a migrated database holding one room, as the commands' settings see it."""
    folder = tmp_path / "data"
    monkeypatch.setenv("CRISP_DATA_DIR", str(folder))
    monkeypatch.delenv("CRISP_DATABASE_URL", raising=False)
    upgrade(f"sqlite+aiosqlite:///{folder / 'crisp.sqlite3'}")
    with sqlite3.connect(folder / "crisp.sqlite3") as db:
        db.execute(
            "INSERT INTO rooms (id, code, link, phase, host, options, created_at, updated_at, v) "
            "VALUES ('r1', 'ABCDEF', 'http://x/r/ABCDEF', 'lobby', 0, '{}', '2026-01-01', '2026-01-01', 0)"
        )
    return folder


def rooms(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT code FROM rooms ORDER BY code")]


def test_backup_refuses_postgresql(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CRISP_DATABASE_URL", "postgresql://crisp:secret@127.0.0.1/crisp")
    assert main(["backup", str(tmp_path / "copy")]) == 2
    err = capsys.readouterr().err
    assert "PostgreSQL" in err
    assert "pg_dump" in err
    assert "secret" not in err
    assert main(["restore", str(tmp_path / "copy")]) == 2
    assert "pg_restore" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_backup_refuses_an_existing_file_unless_forced(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "copy.sqlite3"
    target.write_text("keep me")
    assert main(["backup", str(target)]) == 2
    assert "exists" in capsys.readouterr().err
    assert target.read_text() == "keep me"
    assert main(["backup", "--force", str(target)]) == 0
    assert rooms(target) == ["ABCDEF"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.sqlite3", "data"]  # no .partial, no WAL


def test_backup_of_no_database_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CRISP_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("CRISP_DATABASE_URL", raising=False)
    assert main(["backup", str(tmp_path / "copy")]) == 2
    assert "there is no database" in capsys.readouterr().err
    assert not (tmp_path / "empty" / "crisp.sqlite3").exists()  # the backup did not create one


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"these are not the pages you are looking for\n" * 200)


def _damaged(path: Path) -> None:
    # A real backup with a page in the middle overwritten: SQLite opens it, the integrity check fails.
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE filler (x BLOB)")
        db.executemany("INSERT INTO filler VALUES (randomblob(3000))", [()] * 50)
        db.execute("CREATE INDEX ix_filler ON filler (x)")
    with path.open("r+b") as f:
        f.seek(4096 * 20)
        f.write(b"\xff" * 4096)


def _no_revision(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE rooms (id TEXT)")


def _unknown_revision(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (_not_sqlite, "is not a SQLite database"),
        (_damaged, "damaged"),
        (_no_revision, "no schema revision"),
        (_unknown_revision, "revision 9999, which this release does not know"),
    ],
)
def test_a_bad_file_is_refused_and_nothing_is_replaced(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: object, said: str
) -> None:
    bad = tmp_path / "bad.sqlite3"
    if spoil in (_damaged, _unknown_revision):
        assert main(["backup", str(bad)]) == 0
    assert callable(spoil)
    spoil(bad)
    before = sorted(p.name for p in data.iterdir())
    assert main(["restore", str(bad)]) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert sorted(p.name for p in data.iterdir()) == before
    assert rooms(data / "crisp.sqlite3") == ["ABCDEF"]


def test_restore_is_refused_while_the_database_is_in_use(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.sqlite3"
    assert main(["backup", str(copy)]) == 0
    database = data / "crisp.sqlite3"
    with backup.holding(database):  # as a running server holds it
        assert main(["restore", str(copy)]) == 3
    assert "stop the server first" in capsys.readouterr().err
    assert not list(data.glob("*.before-restore-*"))
    assert main(["restore", str(copy)]) == 0  # once it is free


def test_the_replaced_database_is_kept_whole_with_what_its_wal_held(data: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite3"
    assert main(["backup", str(copy)]) == 0
    database = data / "crisp.sqlite3"
    # A server killed with its last commits still in the WAL (never copied into the database file).
    live = sqlite3.connect(database)
    live.execute("PRAGMA journal_mode=WAL")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute(
        "INSERT INTO rooms (id, code, link, phase, host, options, created_at, updated_at, v) "
        "VALUES ('r2', 'GHJKLM', 'http://x/r/GHJKLM', 'lobby', 0, '{}', '2026-01-01', '2026-01-01', 0)"
    )
    live.commit()
    crashed = tmp_path / "crashed"
    shutil.copytree(data, crashed)  # the files as the killed server left them, WAL and all
    live.close()
    assert (crashed / "crisp.sqlite3-wal").stat().st_size > 0

    database = crashed / "crisp.sqlite3"
    restored = backup.restore(copy, database)
    assert restored.kept is not None
    assert restored.kept.name.startswith("crisp.sqlite3.before-restore-")
    assert sorted(p.name for p in crashed.iterdir()) == sorted(
        ["crisp.sqlite3", "crisp.sqlite3.lock", restored.kept.name]
    )
    assert rooms(restored.kept) == ["ABCDEF", "GHJKLM"]  # the WAL's room is in the kept file
    assert rooms(database) == ["ABCDEF"]  # and not replayed into the restored one


def test_an_older_backup_is_migrated_when_restored(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.sqlite3"
    upgrade(f"sqlite+aiosqlite:///{old}", revision="0002")
    assert main(["restore", str(old)]) == 0
    out = capsys.readouterr().out
    assert "migrated it from revision 0002 to 0005" in out
    with sqlite3.connect(data / "crisp.sqlite3") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == ("0005",)
    with sqlite3.connect(old) as db:  # the backup itself is left as it was
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == ("0002",)


def test_backup_makes_the_folder_it_writes_to(data: Path, tmp_path: Path) -> None:
    target = tmp_path / "backups" / "nightly" / "crisp-2026-12-04.sqlite3"
    assert main(["backup", str(target)]) == 0
    assert rooms(target) == ["ABCDEF"]
    assert [p.name for p in target.parent.iterdir()] == [target.name]


def test_a_backup_that_cannot_be_written_exits_1_with_one_line_naming_the_folder(data: Path, tmp_path: Path) -> None:
    """As the real command: a cron job sees a non-zero exit and one line that says what to fix (a file where
    a folder must be: the folder cannot be made, even by root)."""
    blocker = tmp_path / "backups"
    blocker.write_text("not a folder")
    target = blocker / "crisp.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "crisp_server", "backup", str(target)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "CRISP_DATA_DIR": str(data)},
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"crisp-server backup: failed: cannot create the folder {blocker} ("), lines[0]
    assert blocker.read_text() == "not a folder"


def test_a_folder_that_cannot_be_written_is_named(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:  # as for a folder of another user (root may write)
        if self.parent == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    assert main(["backup", str(folder / "crisp.sqlite3")]) == 1
    err = capsys.readouterr().err
    assert (
        err == f"crisp-server backup: failed: cannot write in the folder {folder} (Permission denied): make it "
        "writable by this user, or choose another\n"
    )
    assert list(folder.iterdir()) == []
