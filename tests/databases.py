"""Throwaway databases for tests: a SQLite file, or a fresh PostgreSQL database when one is configured."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import IN_CI

#: Set by .ci/run (and by a developer who has PostgreSQL): a database whose role may create databases.
PG_URL = os.environ.get("CRISP_TEST_DATABASE_URL")

BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=pytest.mark.skipif(not PG_URL and not IN_CI, reason="no CRISP_TEST_DATABASE_URL")),
]


async def _admin(sql: str) -> None:
    import asyncpg  # the server's own PostgreSQL driver: nothing more to install for tests

    assert PG_URL is not None
    url = make_url(PG_URL)
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
    if PG_URL is None:
        pytest.fail("CI=true but CRISP_TEST_DATABASE_URL is not set: .ci/run starts PostgreSQL and sets it")
    name = f"crisp_t_{secrets.token_hex(4)}"
    _run_admin(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(PG_URL).set(drivername="postgresql+asyncpg", database=name)
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
