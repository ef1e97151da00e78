"""The revisions of the side tables, oldest first by their numbers (Alembic reads them by path)."""
