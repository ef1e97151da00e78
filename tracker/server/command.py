"""`tracker serve`: the league server, one ASGI process over a campaign database.

It lives in the server's room and is named in the main group's command table, so the command
line reaches the server only when `serve` is run.
"""

from __future__ import annotations

import click

from domain.errors import InputError
from tracker.cli.common import Context

PORT = click.IntRange(0, 65535)


@click.command(name="serve")
@click.option("--db", "serve_db", help="The campaign database (default: the global --db / TRACKER_DB).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (all: 0.0.0.0).")
@click.option("--port", type=PORT, default=8000, show_default=True, help="Port to listen on.")
@click.option(
    "--keys",
    help="Key store for the auto dice seeds (D5): a file, created readable by this user only, or a database "
    "URL; never the campaign database. Default: tracker-keys.db here.",
)
@click.option(
    "--reveal",
    type=click.Choice(["on-request", "each-round"]),
    default="on-request",
    show_default=True,
    help="each-round: every round that ends publishes its dice seed and commits to the next (D5).",
)
@click.pass_obj
def serve(ctx: Context, serve_db: str | None, host: str, port: int, keys: str | None, reveal: str) -> None:
    """Serve the campaigns of a database to a group: a JSON API under /api and the browser
    viewer at /, on SQLite or PostgreSQL. Several processes may serve one PostgreSQL database.

    Auto dice are rolled by the server alone, from seeds in its key store (`--keys`), which no
    player can read; seeds still in the campaign database are moved there.

    Example: tracker serve --db postgresql://league@db/league --keys /srv/league/keys.db --port 8000
    """
    try:
        import uvicorn

        from tracker.server.app import create_app
    except ImportError as e:
        raise InputError(
            f"tracker serve needs the server extra ({e.name} is missing): pip install 'twtea-naval-tracker[server]'"
        ) from None
    db = serve_db or ctx.db
    app = create_app(db or "campaign.db", keys=keys, reveal=reveal)
    click.echo(f"Serving {app.state.service.tracker.safe_url} on http://{host}:{port}/ (API under /api)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)


