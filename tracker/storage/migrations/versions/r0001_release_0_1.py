"""The side tables of release 0.1.0.

Campaign names, dice seeds, import and serve marks, players and override requests, as that
release made them.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa

from tracker.storage.migrations.steps import KEYED, create_table, no_downgrade

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

CREATES = (
    "tracker_campaigns",
    "tracker_dice_seeds",
    "tracker_imported",
    "tracker_served",
    "tracker_players",
    "tracker_override_requests",
)
ADDS: dict[str, tuple[str, ...]] = {}


def _when() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    create_table(
        "tracker_campaigns",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("campaign_id", sa.String(36), nullable=False, unique=True),
        sa.Column("created_at", _when(), server_default=sa.func.now()),
        **KEYED,
    )
    create_table(
        "tracker_dice_seeds",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("epoch", sa.Integer, primary_key=True),
        sa.Column("seed", sa.String(64), nullable=False),
        **KEYED,
    )
    create_table(
        "tracker_imported",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("imported_at", _when(), server_default=sa.func.now()),
        **KEYED,
    )
    create_table(
        "tracker_served",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("since", _when(), server_default=sa.func.now()),
        **KEYED,
    )
    create_table(
        "tracker_players",
        sa.Column("campaign_id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("nations", sa.Text, nullable=False),
        sa.Column("referee", sa.Boolean, nullable=False),
        sa.Column("token_id", sa.String(32), nullable=False, unique=True),
        sa.Column("salt", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(128), nullable=False),
        sa.Column("created_at", _when(), server_default=sa.func.now()),
        sa.Column("revoked_at", _when(), nullable=True),
        **KEYED,
    )
    create_table(
        "tracker_override_requests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("campaign_id", sa.String(36), nullable=False, index=True),
        sa.Column("requested_by", sa.String(100), nullable=False),
        sa.Column("nations", sa.Text, nullable=False),
        sa.Column("agreed_by", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("seen", sa.Integer, nullable=False),
        sa.Column("requested_at", _when(), server_default=sa.func.now()),
        sa.Column("approved_by", sa.String(100), nullable=True),
        sa.Column("approved_at", _when(), nullable=True),
        sa.Column("recorded_at_event", sa.Integer, nullable=True),
    )


def downgrade() -> None:
    no_downgrade(revision)
