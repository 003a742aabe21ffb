"""Running the Alembic migrations from the program (``crisp-server migrate`` and every server start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent.parent


def migrations_dir(configured: Path | None = None) -> Path:
    """The migrations: as configured, else beside the package (a checkout), else in the working folder."""
    for candidate in (configured, ROOT / "migrations", Path.cwd() / "migrations"):
        if candidate is not None and (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("no migrations folder found: set CRISP_MIGRATIONS_DIR")


def alembic_config(url: str, directory: Path | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir(directory)))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, directory: Path | None = None, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision``. Not from inside a running event loop: it runs its own."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)  # a new data folder: no setup needed
    command.upgrade(alembic_config(url, directory), revision)


def downgrade(url: str, directory: Path | None = None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url, directory), revision)


def check(url: str, directory: Path | None = None) -> None:
    """Raise if the models and the migrations differ (``alembic check``)."""
    command.check(alembic_config(url, directory))
