"""Alembic environment: the URL comes from the server's settings; the models are the target."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import async_engine_from_config

from crisp_server.settings import Settings
from crisp_server.store.models import Base

#: Nodes started together on a new PostgreSQL database take turns: the first migrates, the others then find
#: nothing to do (a session-level advisory lock, held only while migrating).
MIGRATION_LOCK = 0x43524953  # "CRIS"

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    # A URL set by the caller (tests, `crisp-server migrate`) wins over the environment's settings.
    url = config.get_main_option("sqlalchemy.url")
    return url or Settings().resolved_database_url()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    locked = connection.dialect.name == "postgresql"
    if locked:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
        connection.commit()
    try:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            compare_type=True,
            render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        )
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if locked:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
            connection.commit()


async def run_migrations_online() -> None:
    engine = async_engine_from_config({"sqlalchemy.url": _url()}, prefix="sqlalchemy.", poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
