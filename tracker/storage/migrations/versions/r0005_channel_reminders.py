"""Reminders and attached exports on notification channels.

Seconds between reminders, and whether an e-mail carries the export of the events since the
player last acted.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa

from tracker.storage.migrations.steps import add_columns, no_downgrade

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

CREATES: tuple[str, ...] = ()
ADDS = {"tracker_notify_channels": ("remind", "attach_export")}


def upgrade() -> None:
    add_columns(
        "tracker_notify_channels",
        sa.Column("remind", sa.Float, nullable=True),
        sa.Column("attach_export", sa.Integer, nullable=True),
    )


def downgrade() -> None:
    no_downgrade(revision)
