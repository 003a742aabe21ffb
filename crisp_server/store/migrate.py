"""Running the Alembic migrations from the program (``crisp-server migrate`` and every server start).

A server starts on a database whose schema is current far more often than on one to migrate: it reads the
revision first (:func:`revision`, one query on the store's own engine) and loads Alembic only when the
database is not at :data:`HEAD` (importing Alembic and running its environment cost about 0.2 s of every
restart otherwise).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sqlalchemy import text
from sqlalchemy.engine import make_url

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.ext.asyncio import AsyncEngine

ROOT = Path(__file__).resolve().parent.parent.parent

#: The newest revision in ``migrations/versions`` (a test checks it against Alembic's own head).
HEAD: Final = "0005"


def migrations_dir(configured: Path | None = None) -> Path:
    """The migrations: as configured, else beside the package (a checkout), else in the working folder."""
    for candidate in (configured, ROOT / "migrations", Path.cwd() / "migrations"):
        if candidate is not None and (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("no migrations folder found: set CRISP_MIGRATIONS_DIR")


def alembic_config(url: str, directory: Path | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir(directory)))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def revision(engine: AsyncEngine) -> str | None:
    """The schema revision the database records, or ``None`` if it records none or cannot be asked (a new
    database, or one that is down: the migration that follows then says why, as it always did)."""
    try:
        async with engine.connect() as conn:
            found = (await conn.execute(text("SELECT version_num FROM alembic_version"))).first()
    except Exception:
        return None
    return str(found[0]) if found is not None else None


async def upgrade_if_needed(engine: AsyncEngine, url: str, directory: Path | None = None) -> bool:
    """Bring the database to :data:`HEAD` unless it is there already; whether a migration ran. Alembic runs
    its own event loop: the migration runs in a thread."""
    if await revision(engine) == HEAD:
        return False
    await asyncio.to_thread(upgrade, url, directory)
    return True


def upgrade(url: str, directory: Path | None = None, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision``. Not from inside a running event loop: it runs its own."""
    from alembic import command

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)  # a new data folder: no setup needed
    command.upgrade(alembic_config(url, directory), revision)


def downgrade(url: str, directory: Path | None = None, revision: str = "base") -> None:
    from alembic import command

    command.downgrade(alembic_config(url, directory), revision)


def check(url: str, directory: Path | None = None) -> None:
    """Raise if the models and the migrations differ (``alembic check``)."""
    from alembic import command

    command.check(alembic_config(url, directory))
