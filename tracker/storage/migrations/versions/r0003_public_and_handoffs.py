"""Public campaigns and turn hand-offs.

Campaigns anyone may read, and the notification channels, the outbox and the log of delivery
attempts.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa

from tracker.storage.migrations.steps import KEYED, create_table, no_downgrade

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

CREATES = (
    "tracker_public_campaigns",
    "tracker_notify_channels",
    "tracker_notify_outbox",
    "tracker_notify_attempts",
)
ADDS: dict[str, tuple[str, ...]] = {}


def upgrade() -> None:
    create_table(
        "tracker_public_campaigns",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("made_public_by", sa.String(100), nullable=True),
        sa.Column("made_public_at", sa.DateTime(timezone=True), server_default=sa.func.now()),
        **KEYED,
    )
    create_table(
        "tracker_notify_channels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("campaign_id", sa.String(36), nullable=False, index=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("player", sa.String(100), nullable=True),
        sa.Column("mention", sa.String(200), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    create_table(
        "tracker_notify_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("campaign_id", sa.String(36), nullable=False),
        sa.Column("channel_id", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.Float, nullable=False),
        sa.Column("delivered_at", sa.Float, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.UniqueConstraint("channel_id", "campaign_id", "version", name="tracker_notify_once"),
    )
    create_table(
        "tracker_notify_attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("outbox_id", sa.Integer, nullable=False, index=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("ok", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
    )


def downgrade() -> None:
    no_downgrade(revision)
