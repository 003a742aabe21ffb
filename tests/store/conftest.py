"""Databases for the store tests: a fresh SQLite file always; PostgreSQL when CRISP_TEST_DATABASE_URL is set."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from tests.databases import BACKENDS, database


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    await asyncio.to_thread(upgrade, database_url)
    s = Store(database_url)
    await s.start()
    try:
        yield s
    finally:
        await s.close()
