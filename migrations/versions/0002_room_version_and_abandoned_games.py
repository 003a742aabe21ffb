"""rooms.v (the highest room version reserved) and games.abandoned

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A room saved before this revision has no version stored: rebuilt, it goes on from 1, as it always did.
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.add_column(sa.Column("v", sa.BigInteger(), server_default="0", nullable=False))
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("abandoned", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("abandoned")
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.drop_column("v")
