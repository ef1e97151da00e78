"""`tracker serve`: the league server, one ASGI process over a campaign database.

It lives in the server's room and is named in the main group's command table, so the command
line reaches the server only when `serve` is run.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from domain.errors import InputError, TrackerError, Unavailable
from tracker.cli.common import Context
from tracker.cli.params import Whole
from tracker.storage.store import DEFAULT_DB

PORT = Whole(0, 65535)


# The log's levels and formats (tracker.server.logs, not imported here: it needs the server extra).
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")

_F = TypeVar("_F", bound=Callable[..., Any])


def env_name(option: str) -> str:
    """The environment variable an option is also read from: --smtp-host, TRACKER_SMTP_HOST."""
    return "TRACKER_" + option.lstrip("-").replace("-", "_").upper()


def env_option(name: str, **kwargs: Any) -> Callable[[_F], _F]:
    """An option also read from TRACKER_<NAME> (the ASGI factory reads all of them there)."""
    envvar = env_name(name)
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
    names = setting_names(click.get_current_context(), db_given=serve_db is not None)
    port = check_address(host, port)
    app = build_app(serve_db or ctx.db, f" on http://{host}:{port}/", names=names, **options)
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


def setting_names(ctx: click.Context, db_given: bool = False, factory: bool = False) -> dict[str, str]:
    """Each of `serve`'s options as the operator gave it, for the errors and warnings that name
    it: the option when typed, its environment variable when read from there (under the ASGI
    factory, which takes no options, always). An option given neither way keeps its name."""
    names: dict[str, str] = {}
    for param in ctx.command.params:
        if isinstance(param, click.Option) and param.name and isinstance(param.envvar, str):
            from_env = factory or ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT
            names[param.opts[0]] = param.envvar if from_env else param.opts[0]
    # The database: serve's own --db, else the global --db or TRACKER_DB (the factory's).
    db_from_env = not db_given and ctx.find_root().get_parameter_source("db") is ParameterSource.ENVIRONMENT
    names["--db"] = "TRACKER_DB" if factory or db_from_env else "--db"
    return names


def said_as(text: str, names: Mapping[str, str]) -> str:
    """`text` with each option it names said as the operator gave it (`setting_names`)."""
    for option, name in names.items():
        if name != option:
            text = re.sub(rf"(?<![\w-]){re.escape(option)}(?![\w-])", name, text)
    return text


def named_as(e: InputError, names: Mapping[str, str]) -> InputError:
    """`e` said as `said_as` says: the key store's and the database's checks say `--keys ...`
    and `name another with --db` whichever way they were given."""
    message = said_as(str(e), names)
    if message == str(e):
        return e
    renamed = InputError(message)
    renamed.exit_code = e.exit_code
    return renamed


def _check_public_url(url: str | None, names: Mapping[str, str]) -> None:
    """--public-url (TRACKER_PUBLIC_URL) is the http(s) address every notification links
    players to: refused at start, not found in the players' messages ("not a url/campaigns/...",
    or a javascript: link)."""
    from tracker.service.notify import url_problem

    if url is not None and url_problem(url) is not None:
        name = names.get("--public-url", "--public-url")
        raise InputError(f"{name} must be an http:// or https:// address with a host, got {url[:200]!r}")


# The tracker's own packages: an import of one of them failing is no missing extra.
OWN_PACKAGES = ("domain", "projections", "tracker")


def missing_extra(e: ImportError) -> InputError:
    """The one-line error for the server's imports failing: the server extra to install, or,
    where the module that failed is the tracker's own (a broken or half-upgraded install), that
    module and its error: installing the extra would not mend it."""
    if (e.name or "").split(".")[0] in OWN_PACKAGES:
        return InputError(f"tracker serve could not load the tracker's own {e.name} ({e}): reinstall the tracker")
    return InputError(
        f"tracker serve needs the server extra ({e.name} is missing): pip install 'twtea-naval-tracker[server]', "
        "or pip install '.[server]' in a checkout"
    )


def build_app(
    db: str | None, where: str, keys: str | None, reveal: str, public_url: str | None, log_level: str,
    log_format: str, webhook_hosts: str = "private", names: Mapping[str, str] | None = None, **smtp: Any,
) -> Any:  # fmt: skip
    """The server's application as `tracker serve` (or the factory) runs it: its log set up,
    and the worker that sends turn notifications (`tracker notify`) started with it. `names`:
    the options as the operator gave them (`setting_names`), for the errors that name them."""
    names = names or {}
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
    sender = senders(**smtp, names=names)
    _check_public_url(public_url, names)
    delivery = DeliverySettings.from_env(public_url=public_url, sender=sender)
    try:
        app = create_app(db or DEFAULT_DB, keys=keys, reveal=reveal)
    except InputError as e:
        raise named_as(e, names) from None
    app.state.delivery = delivery
    log = logging.getLogger("tracker.server")
    tracker = app.state.service.tracker
    # The key store too: a server started from another folder, whose default store is a new
    # one, rolls no auto die of the league's; the operator checks which store it opened here.
    log.info("Serving %s%s (API under /api), dice seeds in %s", tracker.safe_url, where, key_store(tracker))
    warn_foreign_keys(tracker, log, names)
    return app


def key_store(tracker: Any) -> str:
    """The key store a tracker opened, as the operator names it: a SQLite file by its path, a
    database by its URL (its password hidden)."""
    from tracker.storage.store import sqlite_file

    url = tracker.registry.keys.url
    path = sqlite_file(url.render_as_string(hide_password=False))
    return str(path) if path is not None else str(url.render_as_string(hide_password=True))


def warn_foreign_keys(tracker: Any, log: logging.Logger, names: Mapping[str, str] | None = None) -> None:
    """Say at start, naming it (as --keys or TRACKER_KEYS, as it was given: `names`), that the
    key store is not the league's (`/ready` then fails `keys`): the server still serves reads
    and manual dice, so it starts."""
    from sqlalchemy.exc import SQLAlchemyError

    from tracker.server.ready import foreign_keys

    try:
        problem = foreign_keys(tracker)
    except SQLAlchemyError:
        return  # the database or the store stopped answering: `/ready` says so
    if problem is not None:
        log.warning("%s", said_as(f"--keys {key_store(tracker)}: {problem}", names or {}))


def app_from_environment() -> Any:
    """The ASGI factory's application: `tracker serve`'s options read from the environment
    (TRACKER_DB, TRACKER_KEYS, TRACKER_REVEAL, TRACKER_PUBLIC_URL, TRACKER_SMTP_*,
    TRACKER_WEBHOOK_HOSTS, TRACKER_LOG_LEVEL, TRACKER_LOG_FORMAT); the address and workers are the ASGI server's.
    A bad setting prints one line naming it and exits with the status the command would, or,
    in a worker of `uvicorn --workers`, with uvicorn's status of a worker that cannot start, so
    that its supervisor stops instead of starting the worker again for good."""
    try:
        with serve.make_context("serve", [], obj=None) as ctx:
            options = dict(ctx.params)
            names = setting_names(ctx, factory=True)
        for key in ("serve_db", "host", "port"):
            options.pop(key)
        return build_app(os.environ.get("TRACKER_DB"), "", names=names, **options)
    except click.ClickException as e:
        # Named by the variable that was read, not by the option it stands for.
        envvar = getattr(getattr(e, "param", None), "envvar", None)
        click.echo(f"Error: {f'{envvar}: {e.message}' if isinstance(envvar, str) else e.format_message()}", err=True)
        raise SystemExit(startup_failure(e.exit_code)) from None
    except Unavailable as e:
        # A database or key store out of reach may answer again: uvicorn starts the worker
        # again (its supervisor would stop the whole server on a startup failure, for good).
        click.echo(f"Error: {e}", err=True)
        raise SystemExit(e.exit_code) from None
    except TrackerError as e:
        click.echo(f"Error: {e}", err=True)
        raise SystemExit(startup_failure(e.exit_code)) from None


# uvicorn's exit status of a worker that failed before it served (uvicorn >= 0.50): its
# supervisor stops on it, where it starts a worker that exited otherwise again, at once.
UVICORN_STARTUP_FAILURE = 3


def startup_failure(status: int) -> int:
    """The factory's exit status for a bad setting: `status` in a process of its own; in a
    worker process (the ASGI server's child), uvicorn's startup failure, since every worker
    would fail alike. (A database that does not answer is no bad setting: `Unavailable`.)"""
    import multiprocessing

    return UVICORN_STARTUP_FAILURE if multiprocessing.parent_process() is not None else status


def senders(
    smtp_host: str | None, smtp_port: int, smtp_from: str | None, smtp_starttls: bool, smtp_user: str | None,
    names: Mapping[str, str] | None = None,
) -> Any:  # fmt: skip
    """The notifications' senders: webhooks, and e-mail when an SMTP server is given (each
    setting named in a refusal as `names` says the operator gave it)."""
    from tracker.service.notify import Senders, SmtpSender, SmtpSettings

    if smtp_host is None:
        return Senders()
    host, sender = (names or {}).get("--smtp-host", "--smtp-host"), (names or {}).get("--smtp-from", "--smtp-from")
    if not smtp_from:
        # The missing one said the way its partner was given: an environment sets both.
        missing = f"{env_name('--smtp-from')}=ADDRESS" if host.startswith("TRACKER_") else f"{sender} ADDRESS"
        raise click.UsageError(f"{host} needs {missing} (the notifications' sender)")
    from tracker.service.notify import is_address

    if not is_address(smtp_from):
        # The SMTP server refuses it at the first message, in the delivery log, not at start.
        raise click.UsageError(
            f"{sender} must be one e-mail address, e.g. tracker@league.example, got {smtp_from[:200]!r}"
        )
    settings = SmtpSettings(
        smtp_host, smtp_port, smtp_from, smtp_starttls, smtp_user, os.environ.get("TRACKER_SMTP_PASSWORD")
    )
    return Senders(email=SmtpSender(settings))
