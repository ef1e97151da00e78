"""Idempotency keys.

The request that recorded an action, with its answer, so a repeat records nothing.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa

from tracker.storage.migrations.steps import create_table, no_downgrade

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

CREATES = ("tracker_request_keys",)
ADDS: dict[str, tuple[str, ...]] = {}


def upgrade() -> None:
    create_table(
        "tracker_request_keys",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("player", sa.String(300), primary_key=True),
        sa.Column("first_version", sa.Integer, nullable=False),
        sa.Column("last_version", sa.Integer, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("complete", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Index("tracker_request_keys_by_key", "key", "player"),
    )


def downgrade() -> None:
    no_downgrade(revision)
