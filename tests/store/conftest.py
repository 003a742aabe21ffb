"""Databases for the store tests: a fresh SQLite file always; PostgreSQL when CRISP_TEST_DATABASE_URL is set."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store

PG_URL = os.environ.get("CRISP_TEST_DATABASE_URL")

BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=pytest.mark.skipif(not PG_URL, reason="no CRISP_TEST_DATABASE_URL")),
]


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind; PostgreSQL gets a throwaway schema-free database per test."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'crisp.sqlite3'}"
        return
    assert PG_URL is not None
    yield from _postgres_database(PG_URL)


def _postgres_database(base_url: str) -> Iterator[str]:
    url = make_url(base_url)
    name = f"crisp_t_{secrets.token_hex(4)}"
    admin = url.set(drivername="postgresql+asyncpg")

    async def run(sql: str) -> None:
        import asyncpg  # the driver the server uses; no second driver needed for tests

        conn = await asyncpg.connect(
            user=admin.username,
            password=admin.password,
            host=admin.host,
            port=admin.port or 5432,
            database=admin.database,
        )
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    await asyncio.to_thread(upgrade, database_url)
    s = Store(database_url)
    await s.start()
    try:
        yield s
    finally:
        await s.close()
