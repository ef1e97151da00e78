"""The whole suite's server logs scanned for secrets: a server logs no token, dice seed,
webhook URL or password, whatever a test makes it do.

Every test that starts a server keeps its log here (`keep_log`). The secrets the tests issue
are collected as they are made: tokens, seeds and webhook URLs made in the test process
(`collecting`), and after each server stops, the seeds of its key store and campaign database,
the webhook URLs of its channels and the SMTP password it was given (`harvest`). A token
issued in another process (`tracker players add` run as a command) is found by its shape. At
the end of the session every kept log is scanned for every secret (`scan`), and the session
fails naming the file and the kind of secret; the secret itself is not printed. A seed the
campaign's log has revealed (D3) is public by then, and no longer counted.

Under pytest-xdist each worker hands what it kept to the controller (`hand_over`,
`take_over`), which scans once all workers are done (tests/conftest.py).
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

# A player's token as tracker.service.players makes it: `trk_` + 8 random bytes in hex + `_` +
# 32 random bytes in URL-safe base64. Only an issued token has this shape.
TOKEN_SHAPE = re.compile(r"trk_[0-9a-f]{16}_[0-9A-Za-z_\-]{43}")
# Shorter values are not secrets the tracker issues, and would be found by chance in any log.
SHORTEST = 12

_logs: set[str] = set()
_secrets: dict[str, str] = {}  # value: kind
_unharvested: set[str] = set()  # databases `harvest` could not read
# Seeds a campaign's log has published (`dice reveal`, D3): anyone may read them, so a log
# that holds one (a fuzzer sending back what the API showed it) leaks nothing.
_public: set[str] = set()


@dataclass(frozen=True)
class Finding:
    """A secret of some kind found in a kept log."""

    log: str
    kind: str

    def __str__(self) -> str:
        return f"{self.log}: holds a {self.kind}"


def keep_log(path: Path) -> Path:
    """Keep a server's log (its output file) for the scan at the end of the session."""
    _logs.add(str(Path(path).resolve()))
    return path


def secret(kind: str, value: str | None) -> None:
    """Collect a secret a test issued: kind is token, seed, webhook URL or password."""
    if not value or len(value) < SHORTEST:
        return
    if kind == "webhook URL":
        parts = urlsplit(value)
        # A URL with nothing after its host carries no secret, and is what the log's masked
        # form (`https://host/***`) begins with.
        if parts.path in ("", "/") and not parts.query and not parts.username:
            return
    _secrets.setdefault(value, kind)


def kept() -> tuple[list[str], dict[str, str]]:
    """The logs kept and the secrets collected by this process so far, less the seeds that
    have been published since."""
    return sorted(_logs), {value: kind for value, kind in _secrets.items() if value.lower() not in _public}


def unharvested() -> list[str]:
    """The servers' databases this process could not read for secrets."""
    return sorted(_unharvested)


# ----- collected as they are made -----


def _wrapped(method: Callable[..., Any], kind: str, pick: Callable[[dict[str, Any], Any], str | None]) -> Any:
    signature = inspect.signature(method)

    @functools.wraps(method)
    def collect(*args: Any, **kwargs: Any) -> Any:
        made = method(*args, **kwargs)
        secret(kind, pick(signature.bind(*args, **kwargs).arguments, made))
        return made

    return collect


@contextmanager
def collecting() -> Iterator[None]:
    """While open, the tokens, seeds and webhook URLs the tracker makes in this process are
    collected: what `Players.add`, `Registry.seed` (and the server's key store) and
    `Outbox.add` return or keep."""
    from tracker.service.notify import Outbox
    from tracker.service.players import Players
    from tracker.storage.store import Registry

    targets: list[tuple[Any, str, str, Callable[[dict[str, Any], Any], str | None]]] = [
        (Players, "add", "token", lambda given, made: made),
        (Registry, "seed", "seed", lambda given, made: made),
        (Outbox, "add", "webhook URL", lambda given, made: given["target"] if given["kind"] == "webhook" else None),
    ]
    try:
        from tracker.server.keys import KeyedRegistry
    except ImportError:  # the server extra is not installed: no key store in this process
        pass
    else:
        targets.append((KeyedRegistry, "seed", "seed", lambda given, made: made))
    with pytest.MonkeyPatch.context() as patch:
        for owner, name, kind, pick in targets:
            patch.setattr(owner, name, _wrapped(getattr(owner, name), kind, pick))
        yield


def harvest(db: str | None, keys: str | None, env: Mapping[str, str] | None, workdir: Path) -> None:
    """After a server stopped: the seeds of its key store and of its campaign database, the
    webhook URLs of its channels, and the SMTP password it was given. `keys` None: the
    server's default key store in `workdir`; relative paths are `workdir`'s."""
    from tracker.server.keys import DEFAULT_KEYS

    env = env or {}
    secret("password", env.get("TRACKER_SMTP_PASSWORD"))
    for database in (db or env.get("TRACKER_DB"), keys or env.get("TRACKER_KEYS") or DEFAULT_KEYS):
        if database:
            try:
                _harvest_database(database, workdir)
            except Exception as e:  # noqa: BLE001 - the test's own outcome must not depend on this
                # Said at the end of the session; the tokens are still found by their shape.
                _unharvested.add(f"{database} ({type(e).__name__})")


def _harvest_database(database: str, workdir: Path) -> None:
    from sqlalchemy import create_engine, inspect, select

    from tracker.service.notify import channels_table
    from tracker.storage.store import database_url, seeds_table

    events_table = "tracker_events"

    if "://" not in database:
        path = Path(database) if Path(database).is_absolute() else workdir / database
        if not path.is_file():
            return
        database = str(path)
    engine = create_engine(database_url(database, create=False))
    queries = (
        (seeds_table, "seed", select(seeds_table.c.seed)),
        (channels_table, "webhook URL", select(channels_table.c.target).where(channels_table.c.kind == "webhook")),
    )
    try:
        with engine.connect() as conn:
            present = set(inspect(conn).get_table_names())
            if events_table in present:
                _publish_revealed(database)
            for table, kind, query in queries:
                # A database without the table holds nothing of that kind.
                for value in conn.execute(query).scalars() if table.name in present else ():
                    secret(kind, value)
    finally:
        engine.dispose()


def _publish_revealed(database: str) -> None:
    """Note as public the seeds the campaigns in `database` have revealed."""
    from tracker.service.application import Tracker

    with Tracker(database, create=False) as t:
        for name in t.campaign_names():
            try:
                revealed = t.load(t.campaign_id(name)).revealed_seeds
            except Exception:  # noqa: BLE001, S112 - a log a test damaged: its seeds stay secrets
                continue
            _public.update(seed.lower() for seed in revealed)


def option(args: Iterable[str], name: str) -> str | None:
    """The value of a `--name VALUE` or `--name=VALUE` option among a command's arguments."""
    args = list(args)
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


# ----- the scan -----


# A dice seed (32 random bytes in hex), a run of hex digits that may hold one, and the
# scheme and host a URL begins with.
SEED_SHAPE = re.compile(r"[0-9a-fA-F]{64}")
HEX_RUN = re.compile(r"[0-9a-fA-F]{64,}")
URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")


class _Secrets:
    """The secrets sorted by how a log is searched for them: each text searched for in a whole
    log costs a pass over it, so the many seeds and webhook URLs are found through what they
    look like, and only the rest one by one."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.seeds: dict[str, str] = {}  # the 64 hex digits of a seed, and its kind
        self.by_host: dict[str, list[tuple[str, str]]] = {}  # scheme://host: (URL, kind)
        self.others: list[tuple[str, str]] = []
        for value, kind in secrets.items():
            if TOKEN_SHAPE.fullmatch(value):
                continue  # found by its shape
            if SEED_SHAPE.fullmatch(value):
                self.seeds[value.lower()] = kind
            elif (start := URL_START.match(value)) is not None:
                self.by_host.setdefault(start.group(0), []).append((value, kind))
            else:
                self.others.append((value, kind))

    def kinds_in(self, content: str) -> set[str]:
        kinds = {"token" for _ in TOKEN_SHAPE.finditer(content)}
        for run in HEX_RUN.finditer(content):
            digits = run.group(0).lower()
            kinds |= {
                self.seeds[digits[i : i + 64]] for i in range(len(digits) - 63) if digits[i : i + 64] in self.seeds
            }
        for host, urls in self.by_host.items():
            if host in content:
                kinds |= {kind for value, kind in urls if value in content}
        kinds |= {kind for value, kind in self.others if value in content}
        return kinds


def scan(logs: Iterable[str], secrets: Mapping[str, str]) -> tuple[list[Finding], list[str]]:
    """(what was found, the logs that could not be read). A log holds a secret if it holds its
    text, or anything shaped as an issued token."""
    sorted_secrets = _Secrets(secrets)
    findings: list[Finding] = []
    unread: list[str] = []
    for log in sorted(set(logs)):
        try:
            content = Path(log).read_text(errors="replace")
        except OSError:
            unread.append(log)
            continue
        findings += [Finding(log, kind) for kind in sorted(sorted_secrets.kinds_in(content))]
    return findings, unread


# ----- across pytest-xdist workers -----

KEPT = pytest.StashKey[dict[str, Any]]()
WORKER_KEY = "secret_scan"


def _store(config: pytest.Config) -> dict[str, Any]:
    return config.stash.setdefault(KEPT, {"logs": set(), "secrets": {}, "unharvested": set(), "public": set()})


def hand_over(config: pytest.Config) -> None:
    """A worker gives the controller the logs it kept, the secrets it collected and the seeds
    it saw revealed."""
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        logs, secrets = kept()
        workeroutput[WORKER_KEY] = json.dumps(
            {"logs": logs, "secrets": secrets, "unharvested": unharvested(), "public": sorted(_public)}
        )


def take_over(node: Any) -> None:
    """The controller adds what a worker kept to its own."""
    given = getattr(node, "workeroutput", {}).get(WORKER_KEY)
    if given:
        store = _store(node.config)
        handed = json.loads(given)
        store["logs"].update(handed["logs"])
        store["unharvested"].update(handed.get("unharvested", []))
        store["public"].update(handed.get("public", []))
        for value, kind in handed["secrets"].items():
            store["secrets"].setdefault(value, kind)


RESULT = pytest.StashKey[tuple[int, int, list[Finding], list[str]]]()


def finish(session: pytest.Session) -> None:
    """On the controller (or a run without workers): scan every kept log, and fail the session
    if any holds a secret."""
    config = session.config
    if hasattr(config, "workeroutput"):
        return
    store = _store(config)
    logs, secrets = kept()
    store["logs"].update(logs)
    store["unharvested"].update(unharvested())
    for value, kind in secrets.items():
        store["secrets"].setdefault(value, kind)
    # A seed one worker saw revealed is public, though another worker made it and kept it as a
    # secret (the demo's, made by the tests of several workers).
    store["public"].update(_public)
    store["secrets"] = {v: k for v, k in store["secrets"].items() if v.lower() not in store["public"]}
    if not store["logs"]:
        return
    findings, unread = scan(store["logs"], store["secrets"])
    config.stash[RESULT] = (len(store["logs"]), len(store["secrets"]), findings, unread)
    if findings and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def report(terminalreporter: Any, config: pytest.Config) -> None:
    result = config.stash.get(RESULT, None)
    if result is None:
        return
    logs, secrets, findings, unread = result
    databases = sorted(_store(config)["unharvested"])
    terminalreporter.section("server logs scanned for secrets", red=bool(findings), bold=bool(findings))
    terminalreporter.write_line(
        f"{logs} server log(s), {secrets} secret(s) the tests issued, and anything shaped as "
        "a token: " + (f"{len(findings)} finding(s)" if findings else "none found")
    )
    for database in databases:
        terminalreporter.write_line(f"not harvested for secrets: {database}")
    for finding in findings:
        terminalreporter.write_line(f"SECRET IN LOG {finding}", red=True)
    if unread:
        terminalreporter.write_line(f"{len(unread)} kept log(s) gone before the scan (not scanned): {unread[:3]}")
