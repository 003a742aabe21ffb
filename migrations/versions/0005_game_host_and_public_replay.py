"""games.host (the room's host seat when the game started) and games.public (its replay is public by link)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05 03:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A game stored before this revision has no host (nobody may make its replay public) and is not public.
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("host", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("public", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("public")
        batch_op.drop_column("host")
