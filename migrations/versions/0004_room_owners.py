"""room_owners: the lease of each room's owner node when several nodes share the rooms (CRISP_CLUSTER)

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 22:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # One node alone (the default) never writes a row here.
    op.create_table(
        "room_owners",
        sa.Column("code", sa.String(length=6), nullable=False),
        sa.Column("node", sa.String(length=64), nullable=True),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_room_owners")),
    )


def downgrade() -> None:
    op.drop_table("room_owners")
