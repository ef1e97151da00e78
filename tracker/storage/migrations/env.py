"""Alembic's environment for the tracker's side tables, configured by the tracker itself (no
alembic.ini): `tracker.storage.migrations` hands over an open connection, in a transaction that
holds the database's write lock, and commits once the revisions have run."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the side tables are upgraded by `tracker db upgrade`, on a connection it opens")
# The connection is already in a transaction (the tracker's), so Alembic opens none of its own.
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
