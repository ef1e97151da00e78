"""`tracker serve`: the league server, one ASGI process over a campaign database.

It lives in the server's room and is named in the main group's command table, so the command
line reaches the server only when `serve` is run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from domain.errors import InputError, TrackerError
from tracker.cli.common import Context
from tracker.cli.params import Whole
from tracker.storage.store import DEFAULT_DB

PORT = Whole(0, 65535)


# The log's levels and formats (tracker.server.logs, not imported here: it needs the server extra).
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")

_F = TypeVar("_F", bound=Callable[..., Any])


def env_option(name: str, **kwargs: Any) -> Callable[[_F], _F]:
    """An option also read from TRACKER_<NAME> (the ASGI factory reads all of them there)."""
    envvar = "TRACKER_" + name.lstrip("-").replace("-", "_").upper()
    if "default" in kwargs and not kwargs.get("is_flag"):
        kwargs["show_default"] = True
    return click.option(name, envvar=envvar, show_envvar=True, **kwargs)


@click.command(name="serve")
@click.option("--db", "serve_db", help="The campaign database (default: the global --db / TRACKER_DB).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (all: 0.0.0.0).")
@click.option("--port", type=PORT, default=8000, show_default=True, help="Port to listen on.")
@env_option(
    "--keys",
    help="Key store for the auto dice seeds (D5): a file, created readable by this user only, or a database "
    "URL; never the campaign database. Default: tracker-keys.db here.",
)
@env_option(
    "--reveal",
    type=click.Choice(["on-request", "each-round"]),
    default="on-request",
    help="each-round: every round that ends publishes its dice seed and commits to the next (D5).",
)
@env_option(
    "--public-url",
    help="The address players reach this server at: turn notifications link to the campaign's viewer page.",
)
@env_option("--smtp-host", help="SMTP server that sends the e-mail channels' notifications (`tracker notify`).")
@env_option("--smtp-port", type=PORT, default=587, help="The SMTP server's port.")
@env_option("--smtp-from", help="The notifications' sender address (required with --smtp-host).")
@env_option("--smtp-starttls", is_flag=True, help="Encrypt the SMTP connection with STARTTLS.")
@env_option("--smtp-user", help="SMTP login; the password is read from TRACKER_SMTP_PASSWORD.")
@env_option(
    "--webhook-hosts",
    type=click.Choice(["public", "private", "any"]),
    default="private",
    help="Where webhooks may be posted: public addresses only (a league open to strangers); also private "
    "networks and this machine (a group's own bot); or any, link-local addresses (cloud metadata) too.",
)
@env_option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="info",
    help="The least important log lines printed: info has one line per request.",
)
@env_option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    default="text",
    help="The log on stderr: text for people, or json (one object a line) for a log collector.",
)
@click.pass_obj
def serve(ctx: Context, /, serve_db: str | None, host: str, port: int, **options: Any) -> None:
    """Serve the campaigns of a database to a group: a JSON API under /api and the browser
    viewer at /, on SQLite or PostgreSQL. Several processes may serve one PostgreSQL database.

    Auto dice are rolled by the server alone, from seeds in its key store (`--keys`), which no
    player can read; seeds still in the campaign database are moved there.

    One log line per request on stderr; /health answers while the process is up, /ready while
    the database and the key store answer. For several worker processes, run the ASGI factory
    instead: `uvicorn --factory tracker.server:create_app --workers 4`, with these options in
    the environment variables named beside them (TRACKER_DB for the database).

    Example: tracker serve --db postgresql://league@db/league --keys /srv/league/keys.db --port 8000
    """
    try:
        import uvicorn
    except ImportError as e:
        raise missing_extra(e) from None
    port = check_address(host, port)
    app = build_app(serve_db or ctx.db, f" on http://{host}:{port}/", **options)
    config = uvicorn.Config(
        app, host=host, port=port, log_level=options["log_level"], server_header=False, log_config=None,
        access_log=False,
    )  # fmt: skip
    closing(uvicorn.Server)(config).run()


def closing(server: type[Any]) -> type[Any]:
    """uvicorn's server, ending the application's event streams when it shuts down (SIGTERM,
    Ctrl+C): it waits for every response to end, and a stream (an open viewer page) never
    does. Actions in progress still end and answer first."""
    from tracker.server.app import close_streams

    class Closing(server):  # type: ignore[misc]
        async def shutdown(self, sockets: Any = None) -> None:
            close_streams(self.config.app)
            await super().shutdown(sockets)

    return Closing


def check_address(host: str, port: int) -> int:
    """One line naming the address when the server could not listen there (a port another
    process holds, a host that is not this machine's), before the server opens the database:
    starting changes it (seeds moved to the key store), which a server that never ran must not.
    Returns the port: for --port 0, the free one the system gave the probe (so that the log
    names the address the server listens on, not port 0)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as e:
        raise InputError(f"--host {host!r}: {getattr(e, 'strerror', None) or e}") from None
    with socket.socket(family, kind, proto) as probe:
        # As uvicorn binds: a port left in TIME_WAIT by a server just stopped is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        return int(probe.getsockname()[1])


def _check_public_url(url: str | None) -> None:
    """--public-url (TRACKER_PUBLIC_URL) is the http(s) address every notification links
    players to: refused at start, not found in the players' messages ("not a url/campaigns/...",
    or a javascript: link)."""
    from tracker.service.notify import url_problem

    if url is not None and url_problem(url) is not None:
        raise InputError(f"--public-url must be an http:// or https:// address with a host, got {url[:200]!r}")


def missing_extra(e: ImportError) -> InputError:
    return InputError(
        f"tracker serve needs the server extra ({e.name} is missing): pip install 'twtea-naval-tracker[server]', "
        "or pip install '.[server]' in a checkout"
    )


def build_app(
    db: str | None, where: str, keys: str | None, reveal: str, public_url: str | None, log_level: str,
    log_format: str, webhook_hosts: str = "private", **smtp: Any,
) -> Any:  # fmt: skip
    """The server's application as `tracker serve` (or the factory) runs it: its log set up,
    and the worker that sends turn notifications (`tracker notify`) started with it."""
    try:
        from tracker.server import logs
        from tracker.server.app import create_app
        from tracker.server.delivery import DeliverySettings
    except ImportError as e:
        raise missing_extra(e) from None
    logs.configure(log_level, log_format)
    from tracker.service.notify import senders as webhook_senders

    # For every webhook this process posts: its delivery worker's and `notify test`'s.
    webhook_senders.webhook_hosts = webhook_hosts
    # The options are checked before the application opens the database: making it moves the
    # seeds into the key store and may reveal one, which a refused start must not do.
    sender = senders(**smtp)
    _check_public_url(public_url)
    delivery = DeliverySettings.from_env(public_url=public_url, sender=sender)
    app = create_app(db or DEFAULT_DB, keys=keys, reveal=reveal)
    app.state.delivery = delivery
    log = logging.getLogger("tracker.server")
    log.info("Serving %s%s (API under /api)", app.state.service.tracker.safe_url, where)
    warn_foreign_keys(app.state.service.tracker, log)
    return app


def warn_foreign_keys(tracker: Any, log: logging.Logger) -> None:
    """Say at start, naming it, that the key store is not the league's (`/ready` then fails
    `keys`): the server still serves reads and manual dice, so it starts."""
    from sqlalchemy.exc import SQLAlchemyError

    from tracker.server.ready import foreign_keys

    try:
        problem = foreign_keys(tracker)
    except SQLAlchemyError:
        return  # the database or the store stopped answering: `/ready` says so
    if problem is not None:
        keys = tracker.registry.keys.url.render_as_string(hide_password=True)
        log.warning("--keys %s: %s", keys, problem)


def app_from_environment() -> Any:
    """The ASGI factory's application: `tracker serve`'s options read from the environment
    (TRACKER_DB, TRACKER_KEYS, TRACKER_REVEAL, TRACKER_PUBLIC_URL, TRACKER_SMTP_*,
    TRACKER_WEBHOOK_HOSTS, TRACKER_LOG_LEVEL, TRACKER_LOG_FORMAT); the address and workers are the ASGI server's.
    A bad setting prints one line naming it and exits with the status the command would."""
    try:
        with serve.make_context("serve", [], obj=None) as ctx:
            options = dict(ctx.params)
        for key in ("serve_db", "host", "port"):
            options.pop(key)
        return build_app(os.environ.get("TRACKER_DB"), "", **options)
    except click.ClickException as e:
        # Named by the variable that was read, not by the option it stands for.
        envvar = getattr(getattr(e, "param", None), "envvar", None)
        click.echo(f"Error: {f'{envvar}: {e.message}' if isinstance(envvar, str) else e.format_message()}", err=True)
        raise SystemExit(e.exit_code) from None
    except TrackerError as e:
        click.echo(f"Error: {e}", err=True)
        raise SystemExit(e.exit_code) from None


def senders(
    smtp_host: str | None, smtp_port: int, smtp_from: str | None, smtp_starttls: bool, smtp_user: str | None
) -> Any:
    """The notifications' senders: webhooks, and e-mail when an SMTP server is given."""
    from tracker.service.notify import Senders, SmtpSender, SmtpSettings

    if smtp_host is None:
        return Senders()
    if not smtp_from:
        raise click.UsageError("--smtp-host needs --smtp-from ADDRESS (the notifications' sender)")
    from tracker.service.notify import is_address

    if not is_address(smtp_from):
        # The SMTP server refuses it at the first message, in the delivery log, not at start.
        raise click.UsageError(
            f"--smtp-from must be one e-mail address, e.g. tracker@league.example, got {smtp_from[:200]!r}"
        )
    settings = SmtpSettings(
        smtp_host, smtp_port, smtp_from, smtp_starttls, smtp_user, os.environ.get("TRACKER_SMTP_PASSWORD")
    )
    return Senders(email=SmtpSender(settings))
