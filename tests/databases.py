"""Throwaway databases for tests: a SQLite file, or a fresh PostgreSQL database.

PostgreSQL comes from ``CRISP_TEST_DATABASE_URL`` (.ci/run sets it: a role that may create databases) or, where
that is not set, from a cluster of the test run's own: where PostgreSQL's programs are installed (``initdb``
and ``pg_ctl`` on ``PATH``, or Debian's ``/usr/lib/postgresql/<version>/bin``), the first test that needs
PostgreSQL makes one in a temporary folder (``initdb``), starts it on a free loopback port (``pg_ctl``), and
the end of the run stops and deletes it. PostgreSQL refuses to run as root: as root the cluster runs as the
``postgres`` user (``runuser``; Debian's package makes that user). Without the programs, the PostgreSQL cases
are skipped with the line that says how to install them (under CI=true they fail).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import IN_CI

#: Set by .ci/run (and by a developer who has PostgreSQL running): a database whose role may create databases.
ENV_URL = os.environ.get("CRISP_TEST_DATABASE_URL")

#: What to do where neither is there.
INSTALL = (
    "no PostgreSQL for the tests: install its programs (Debian/Ubuntu: apt-get install postgresql; the tests "
    "run a throwaway cluster of their own), or set CRISP_TEST_DATABASE_URL to a database whose role may create "
    "databases"
)


#: What a cluster of the tests' own needs.
PROGRAMS = ("initdb", "pg_ctl", "createdb")


def _pg_bin(debian: Path = Path("/usr/lib/postgresql")) -> Path | None:
    """The folder of ``initdb``, ``pg_ctl`` and ``createdb``: that of the ``initdb`` on ``PATH`` (a link
    followed), else Debian's newest version."""
    found = shutil.which("initdb")
    folders = [Path(found).resolve().parent] if found is not None else []
    versions = [p for p in debian.glob("*/bin") if p.parent.name.isdigit()]
    folders += sorted(versions, key=lambda p: int(p.parent.name), reverse=True)
    return next((f for f in folders if all((f / name).exists() for name in PROGRAMS)), None)


#: The PostgreSQL programs, for clusters of the tests' own (``None``: not installed).
PG_BIN = _pg_bin()


def own_cluster_problem(programs: Path | None = PG_BIN) -> str | None:
    """Why this machine cannot run a cluster of the tests' own (with ``programs``), or ``None`` if it can."""
    if programs is None:
        return INSTALL
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "as root, PostgreSQL runs as the postgres user, and runuser is missing (util-linux)"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "as root, PostgreSQL runs as the postgres user, and there is none (apt-get install postgresql)"
    return None


#: Whether the PostgreSQL cases can run here, and why not.
PG_PROBLEM = None if ENV_URL else own_cluster_problem()
PG_AVAILABLE = PG_PROBLEM is None

BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=pytest.mark.skipif(not PG_AVAILABLE and not IN_CI, reason=PG_PROBLEM or "")),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Cluster:
    """A PostgreSQL cluster in a temporary folder, on a free loopback port, whose superuser is ``crisp``
    (trusted, no password): stopping it stops nobody else's database. As root it runs as ``postgres``."""

    def __init__(self) -> None:
        assert PG_BIN is not None
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="crisp-pg-"))  # /tmp: the postgres user must reach it
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        self.data = self.dir / "data"
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "crisp", "--no-sync")
        self.url = f"postgresql+asyncpg://crisp@127.0.0.1:{self.port}/crisp"

    def run(self, program: str, *args: str) -> None:
        """Run one of PostgreSQL's programs (as ``postgres`` when this process is root)."""
        assert PG_BIN is not None
        command = [str(PG_BIN / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"), "-w", "start")

    def createdb(self, name: str) -> None:
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "crisp", name)

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


#: The run's own cluster, once started (key "cluster").
_own: dict[str, Cluster] = {}
_own_lock = threading.Lock()


def pg_url() -> str:
    """The admin URL of the tests' PostgreSQL: ``CRISP_TEST_DATABASE_URL``, or the run's own cluster, started
    on first use (:func:`stop_own_cluster` ends it). Skips (fails under CI=true) where there is neither."""
    if ENV_URL:
        return ENV_URL
    if PG_PROBLEM is not None:
        if IN_CI:
            pytest.fail(f"CI=true but {PG_PROBLEM}: .ci/run starts PostgreSQL and sets CRISP_TEST_DATABASE_URL")
        pytest.skip(PG_PROBLEM)
    with _own_lock:
        if "cluster" not in _own:
            cluster = Cluster()
            try:
                cluster.start()
                cluster.createdb("crisp_test")
            except BaseException:
                cluster.remove()
                raise
            _own["cluster"] = cluster
        return make_url(_own["cluster"].url).set(database="crisp_test").render_as_string(hide_password=False)


def stop_own_cluster() -> None:
    """Stop and delete the run's own cluster, if one was started (the end of the test run)."""
    with _own_lock:
        cluster = _own.pop("cluster", None)
    if cluster is not None:
        cluster.remove()


async def _admin(sql: str) -> None:
    import asyncpg  # the server's own PostgreSQL driver: nothing more to install for tests

    url = make_url(pg_url())
    conn = await asyncpg.connect(
        user=url.username, password=url.password, host=url.host, port=url.port or 5432, database=url.database
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _run_admin(sql: str) -> None:
    # A thread of its own: callers may be inside a running event loop (async tests).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _admin(sql)).result()


@contextmanager
def database(kind: str, tmp_path: Path) -> Iterator[str]:
    """The async URL of an empty database of ``kind``, dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'crisp.sqlite3'}"
        return
    admin = pg_url()  # skips, or fails under CI=true, where there is no PostgreSQL
    name = f"crisp_t_{secrets.token_hex(4)}"
    _run_admin(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(admin).set(drivername="postgresql+asyncpg", database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        _drop(name)


def _drop(name: str) -> None:
    # An autovacuum worker may hold the new database for a moment (and only a privileged role may stop
    # it): try again briefly rather than fail a test in its teardown.
    for attempt in range(10):
        try:
            _run_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except Exception:
            if attempt == 9:
                raise
            time.sleep(0.5)
