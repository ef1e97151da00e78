"""What the revisions share: a table or a column made only where it is missing.

Trackers before versioned upgrades made each side table when it was first used, so a database
they left may hold some tables of a revision and not others. A revision therefore makes what
it adds where it is missing, and names it (`CREATES`, `ADDS`), so that such a database is
stamped at the last revision it holds whole (see `tracker.storage.migrations`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

# A small table keyed by names or IDs, on SQLite: the primary key is then the table itself, not
# a rowid table plus an index copying every key. Each such table costs one page less in every
# campaign file (PostgreSQL ignores the option). Only for rows that stay small: a row larger
# than a twentieth of a page is stored less well without a rowid.
KEYED: dict[str, Any] = {"sqlite_with_rowid": False}


def create_table(name: str, *columns: Any, **options: Any) -> bool:
    """Create the table (with its indexes, and the dialect `options` given) unless the database
    has it; whether it did."""
    if sa.inspect(op.get_bind()).has_table(name):
        return False
    op.create_table(name, *columns, **options)
    return True


def add_columns(table: str, *columns: sa.Column[Any]) -> list[str]:
    """Add the columns the table lacks; the names of those added."""
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}
    added = []
    for column in columns:
        if column.name not in present:
            op.add_column(table, column)
            added.append(column.name)
    return added


def no_downgrade(revision: str) -> None:
    """Revisions only add: going back is restoring the copy taken before the upgrade."""
    raise NotImplementedError(f"revision {revision} has no downgrade: restore the database from a copy")
