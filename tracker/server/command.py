"""`tracker serve`: the league server, one ASGI process over a campaign database.

It lives in the server's room and is named in the main group's command table, so the command
line reaches the server only when `serve` is run.
"""

from __future__ import annotations

import copy
from typing import Any

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
@click.option(
    "--public-url",
    help="The address players reach this server at: turn notifications link to the campaign's viewer page.",
)
@click.option("--smtp-host", help="SMTP server that sends the e-mail channels' notifications (`tracker notify`).")
@click.option("--smtp-port", type=PORT, default=587, show_default=True, help="The SMTP server's port.")
@click.option("--smtp-from", help="The notifications' sender address (required with --smtp-host).")
@click.option("--smtp-starttls", is_flag=True, help="Encrypt the SMTP connection with STARTTLS.")
@click.option("--smtp-user", help="SMTP login; the password is read from TRACKER_SMTP_PASSWORD.")
@click.pass_obj
def serve(
    ctx: Context,
    serve_db: str | None,
    host: str,
    port: int,
    keys: str | None,
    reveal: str,
    public_url: str | None,
    **smtp: Any,
) -> None:
    """Serve the campaigns of a database to a group: a JSON API under /api and the browser
    viewer at /, on SQLite or PostgreSQL. Several processes may serve one PostgreSQL database.

    Auto dice are rolled by the server alone, from seeds in its key store (`--keys`), which no
    player can read; seeds still in the campaign database are moved there.

    Example: tracker serve --db postgresql://league@db/league --keys /srv/league/keys.db --port 8000
    """
    try:
        import uvicorn

        from tracker.server.app import create_app
        from tracker.server.delivery import DeliverySettings
    except ImportError as e:
        raise InputError(
            f"tracker serve needs the server extra ({e.name} is missing): pip install 'twtea-naval-tracker[server]'"
        ) from None
    db = serve_db or ctx.db
    app = create_app(db or "campaign.db", keys=keys, reveal=reveal)
    # Turn notifications (`tracker notify`) are sent by this process's worker.
    app.state.delivery = DeliverySettings.from_env(public_url=public_url, sender=senders(**smtp))
    click.echo(f"Serving {app.state.service.tracker.safe_url} on http://{host}:{port}/ (API under /api)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False, log_config=log_config())


def senders(
    smtp_host: str | None, smtp_port: int, smtp_from: str | None, smtp_starttls: bool, smtp_user: str | None
) -> Any:
    """The notifications' senders: webhooks, and e-mail when an SMTP server is given."""
    import os

    from tracker.service.notify import Senders, SmtpSender, SmtpSettings

    if smtp_host is None:
        return Senders()
    if not smtp_from:
        raise click.UsageError("--smtp-host needs --smtp-from ADDRESS (the notifications' sender)")
    settings = SmtpSettings(
        smtp_host, smtp_port, smtp_from, smtp_starttls, smtp_user, os.environ.get("TRACKER_SMTP_PASSWORD")
    )
    return Senders(email=SmtpSender(settings))


def log_config() -> dict[str, Any]:
    """uvicorn's logging, with the access log hiding tokens: a viewer link carries one in its
    URL once (`?token=`), and the log must not keep it."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["hide_tokens"] = {"()": "tracker.server.access.HideTokens"}
    config["loggers"]["uvicorn.access"]["filters"] = ["hide_tokens"]
    return config


