"""The league server: `tracker serve`, an ASGI application over the application service; its JSON
API, the browser viewer's pages, the event streams, the per-player service, the dice key store,
and the command lines it runs for remote players.

May import: cli (it runs players' command lines through the same click group), and everything
the cli room may import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette


def create_app(db_url: str | None = None, **kwargs: Any) -> Starlette:
    """The ASGI application. With no arguments, an ASGI factory configured from the environment
    as `tracker serve` is from its options (TRACKER_DB, TRACKER_KEYS, TRACKER_PUBLIC_URL, ...;
    see `tracker serve --help`), its log set up and its notification worker started:

        uvicorn --factory tracker.server:create_app --workers 4

    With a database, the application alone (see `tracker.server.app.create_app`). Imported on
    call, so importing this package stays light."""
    if db_url is None and not kwargs:
        from tracker.server.command import app_from_environment

        app: Starlette = app_from_environment()
        return app
    from tracker.server.app import create_app as application

    return application(db_url, **kwargs)
