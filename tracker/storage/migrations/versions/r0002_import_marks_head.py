"""Import marks name their campaign and head.

An import mark names the campaign and the head of the log its import recorded; the marks
already there were written by an earlier tracker and are marked so (head 0, hash "").

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from tracker.storage.migrations.steps import add_columns, no_downgrade

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

CREATES: tuple[str, ...] = ()
ADDS = {"tracker_imported": ("name", "head_seq", "head_hash")}


def upgrade() -> None:
    added = add_columns(
        "tracker_imported",
        sa.Column("name", sa.String(200)),
        sa.Column("head_seq", sa.Integer),
        sa.Column("head_hash", sa.String(64)),
    )
    if added:
        # Rows written before the columns named no head: head 0 says so, so that a row written
        # later without one never passes for an earlier tracker's (verify checks the marks).
        op.execute(
            "UPDATE tracker_imported SET head_seq = 0, head_hash = '', name = (SELECT c.name FROM "
            "tracker_campaigns c WHERE c.campaign_id = tracker_imported.campaign_id)"
        )


def downgrade() -> None:
    no_downgrade(revision)
