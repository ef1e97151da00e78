"""The command line's context object: the global options, and the database opened on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.dice import Override
from tracker.cli.output import check_output, write_output
from tracker.cli.startup import importing, settle_imports

if TYPE_CHECKING:
    from collections.abc import Iterable

    from domain.campaign import Campaign
    from tracker.service.application import Tracker


class Context:
    """The global options, and the database opened on first use.

    Only a command that makes a campaign (`new`, `import`) sets `may_create`: every other
    one refuses a database file that does not exist instead of leaving an empty one behind.
    """

    def __init__(self, db: str | None, campaign: str | None) -> None:
        self.db = db
        self.campaign = campaign
        self.may_create = False
        # Set by --override on a command that takes --dice (D4, RK3).
        self.dice_override: Override | None = None
        # Set by --seen: the version the user looked at before this command.
        self.seen: int | None = None
        self._tracker: Tracker | None = None

    @property
    def tracker(self) -> Tracker:
        if self._tracker is None:
            # Opening imports the rest: the database's dialect, and for a new database the
            # library that creates the event tables.
            with importing():
                from tracker.service.application import Tracker

                self._tracker = Tracker(self.db, create=self.may_create)
            settle_imports()
        return self._tracker

    @property
    def names_a_database(self) -> bool:
        """Whether a database is named (--db, TRACKER_DB) or a campaign, or the default file is
        here: known without opening anything, nor importing a database library."""
        from pathlib import Path

        from tracker.storage import DEFAULT_DB

        return bool(self.db or self.campaign) or Path(DEFAULT_DB).exists()

    @property
    def has_tracker(self) -> bool:
        return self._tracker is not None

    def load(self) -> Campaign:
        """The selected campaign now."""
        t = self.tracker
        return t.load(t.campaign_id(self.campaign))

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()

    def write(self, path: str, text: str | Iterable[bytes]) -> int:
        """Write an output file (export, report, statistics) whole, never over the database."""
        from tracker.storage.store import database_url, sqlite_file

        db = sqlite_file(self._tracker.url if self._tracker is not None else database_url(self.db))
        return write_output(path, text, [db] if db is not None else [])

    def check_output(self, path: str) -> None:
        """Refuse an output path before any work is done (see `tracker.output`)."""
        if path != "-":
            from tracker.storage.store import database_url, sqlite_file

            db = sqlite_file(database_url(self.db))
            check_output(path, [db] if db is not None else [])
