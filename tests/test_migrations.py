"""Versioned upgrades of the side tables: a database whose side tables release 0.1.0 made is
upgraded (stamped at the revision its tables hold, then brought to the head), keeps its rows,
and every command then works on it and verify passes; upgrading twice changes nothing; the
revisions make exactly the tables the tracker declares; on SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    func,
    inspect,
    select,
)
from sqlalchemy.engine import Engine, make_url

from tracker.cli.main import cli
from tracker.storage import migrations

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parent.parent


def release_0_1() -> MetaData:
    """The side tables as release 0.1.0 made them (tracker/store.py and tracker/players.py of
    that release, column for column)."""
    m = MetaData()
    when = DateTime(timezone=True)
    Table(
        "tracker_campaigns",
        m,
        Column("name", String(200), primary_key=True),
        Column("campaign_id", String(36), nullable=False, unique=True),
        Column("created_at", when, server_default=func.now()),
    )
    Table(
        "tracker_dice_seeds",
        m,
        Column("campaign_id", String(36), primary_key=True),
        Column("epoch", Integer, primary_key=True),
        Column("seed", String(64), nullable=False),
    )
    Table(
        "tracker_imported",
        m,
        Column("campaign_id", String(36), primary_key=True),
        Column("imported_at", when, server_default=func.now()),
    )
    Table(
        "tracker_served",
        m,
        Column("campaign_id", String(36), primary_key=True),
        Column("since", when, server_default=func.now()),
    )
    Table(
        "tracker_players",
        m,
        Column("campaign_id", String(36), primary_key=True),
        Column("name", String(100), primary_key=True),
        Column("nations", Text, nullable=False),
        Column("referee", Boolean, nullable=False, default=False),
        Column("token_id", String(32), nullable=False, unique=True),
        Column("salt", String(64), nullable=False),
        Column("token_hash", String(128), nullable=False),
        Column("created_at", when, server_default=func.now()),
        Column("revoked_at", when, nullable=True),
    )
    Table(
        "tracker_override_requests",
        m,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("campaign_id", String(36), nullable=False, index=True),
        Column("requested_by", String(100), nullable=False),
        Column("nations", Text, nullable=False),
        Column("agreed_by", Text, nullable=False),
        Column("reason", Text, nullable=False),
        Column("command", Text, nullable=False),
        Column("seen", Integer, nullable=False),
        Column("requested_at", when, server_default=func.now()),
        Column("approved_by", String(100), nullable=True),
        Column("approved_at", when, nullable=True),
        Column("recorded_at_event", Integer, nullable=True),
    )
    return m


def declared() -> MetaData:
    """Every side table as this tracker declares it."""
    from tracker.service import idempotency, notify, players
    from tracker.storage import store

    m = MetaData()
    for part in (store.metadata, players.metadata, notify.metadata, idempotency.metadata):
        for table in part.sorted_tables:
            table.to_metadata(m)
    return m


def side_tables() -> set[str]:
    return set(declared().tables)


def run(url: str, *args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, ["--db", url, *args])
    return done.exit_code, done.output


def ok(url: str, *args: str) -> str:
    code, out = run(url, *args)
    assert code == 0, out
    return out


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "campaign.db")
    return str(request.getfixturevalue("own_pg"))


def engine_of(url: str) -> Engine:
    return create_engine(url if "://" in url else f"sqlite:///{url}")


def back_to_release_0_1(url: str) -> None:
    """Make the side tables those release 0.1.0 left: the tables added since dropped, the import
    marks without their name and head, no recorded revision; the rows of its tables kept."""
    engine = engine_of(url)
    try:
        with engine.begin() as conn:
            old = release_0_1().tables["tracker_imported"]
            marks = [tuple(r) for r in conn.execute(select(old.c.campaign_id, old.c.imported_at))]
            for table in [*(side_tables() - set(release_0_1().tables)), "tracker_imported", "alembic_version"]:
                conn.exec_driver_sql(f"DROP TABLE {table}")
            old.create(conn)
            for campaign_id, at in marks:
                conn.execute(old.insert().values(campaign_id=campaign_id, imported_at=at))
    finally:
        engine.dispose()


def rows(url: str, table: str, *columns: str) -> list[tuple[Any, ...]]:
    engine = engine_of(url)
    try:
        with engine.connect() as conn:
            return sorted(tuple(r) for r in conn.exec_driver_sql(f"SELECT {', '.join(columns)} FROM {table}"))
    finally:
        engine.dispose()


def differences(url: str) -> list[Any]:
    """What Alembic finds different between the database's side tables and the declared ones."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    tables = side_tables()
    engine = engine_of(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn,
                opts={
                    "include_name": lambda name, kind, parent: kind != "table" or name in tables,
                    "compare_type": True,
                    "compare_server_default": False,
                },
            )
            return list(compare_metadata(context, declared()))
    finally:
        engine.dispose()


def a_played_database(url: str, tmp_path: Path) -> None:
    """Two campaigns, one of them imported, with a player, as release 0.1.0 would have held them."""
    ok(url, "new", "home", "--scenario", "north-sea-1914")
    ok(url, "research", "advanced_submarine")
    ok(url, "next")
    export = tmp_path / "home.jsonl"
    ok(url, "--campaign", "home", "export", str(export))
    ok(url, "import", str(export), "--as", "copy")
    ok(url, "--campaign", "home", "players", "add", "anna", "--nations", "Germany")
    back_to_release_0_1(url)


def test_a_release_0_1_database_is_upgraded_keeps_its_rows_and_every_command_works(url: str, tmp_path: Path) -> None:
    a_played_database(url, tmp_path)
    registered = rows(url, "tracker_campaigns", "name", "campaign_id")
    seeds = rows(url, "tracker_dice_seeds", "campaign_id", "epoch", "seed")
    players = rows(url, "tracker_players", "campaign_id", "name", "token_hash")
    assert json.loads(ok(url, "db", "current", "--json"))["current"] is None
    assert json.loads(ok(url, "db", "current", "--json"))["matches"] == "0001"
    if "://" in url:
        # A shared database is upgraded by whoever administers it, not by a player's command.
        code, out = run(url, "campaigns")
        assert (
            code == 2
            and f"`tracker --db {make_url(url).render_as_string(hide_password=True)} db upgrade`" in out
            and "0001" in out
        ), out
        done = json.loads(ok(url, "db", "upgrade", "--json"))
        assert done["stamped"] == "0001" and [s["revision"] for s in done["applied"]] == [
            "0002",
            "0003",
            "0004",
            "0005",
        ]
    else:
        ok(url, "campaigns")  # a SQLite file is upgraded when it is opened
    current = json.loads(ok(url, "db", "current", "--json"))
    assert current["current"] == migrations.HEAD and current["at_head"] is True
    assert rows(url, "tracker_campaigns", "name", "campaign_id") == registered
    assert rows(url, "tracker_dice_seeds", "campaign_id", "epoch", "seed") == seeds
    assert rows(url, "tracker_players", "campaign_id", "name", "token_hash") == players
    # The import mark of the earlier release is marked as such: its name, head 0.
    assert rows(url, "tracker_imported", "name", "head_seq", "head_hash") == [("copy", 0, "")]
    assert differences(url) == []
    for name in ("home", "copy"):
        assert ok(url, "--campaign", name, "verify").startswith("OK: "), name
    assert "anna" in ok(url, "--campaign", "home", "players", "list")
    ok(url, "--campaign", "home", "campaign", "public", "on")
    ok(url, "--campaign", "home", "notify", "add", "webhook", "https://hooks.example/x")
    ok(url, "--campaign", "home", "notify", "list")
    ok(url, "--campaign", "home", "next")
    ok(url, "--campaign", "home", "log")
    ok(url, "--campaign", "home", "report", "--turn", "1")
    ok(url, "--campaign", "home", "export", str(tmp_path / "again.jsonl"))
    ok(url, "import", str(tmp_path / "again.jsonl"), "--as", "third")
    for name in ("home", "copy", "third"):
        assert ok(url, "--campaign", name, "verify").startswith("OK: "), name


def test_upgrading_twice_changes_nothing(url: str, tmp_path: Path) -> None:
    a_played_database(url, tmp_path)
    first = json.loads(ok(url, "db", "upgrade", "--json"))
    assert first["applied"] and first["current"] == migrations.HEAD
    engine = engine_of(url)
    try:
        before = {t: [c["name"] for c in inspect(engine).get_columns(t)] for t in side_tables()}
    finally:
        engine.dispose()
    second = json.loads(ok(url, "db", "upgrade", "--json"))
    assert second == {"before": migrations.HEAD, "stamped": None, "applied": [], "current": migrations.HEAD}
    assert "nothing to do" in ok(url, "db", "upgrade")
    engine = engine_of(url)
    try:
        assert {t: [c["name"] for c in inspect(engine).get_columns(t)] for t in side_tables()} == before
    finally:
        engine.dispose()


def test_a_new_database_gets_exactly_the_declared_tables_at_the_head(url: str) -> None:
    ok(url, "new", "fresh", "--scenario", "north-sea-1914")
    assert differences(url) == []
    assert "the head of this tracker" in ok(url, "db", "current")


def test_a_new_sqlite_file_keeps_its_small_keyed_side_tables_without_a_rowid(tmp_path: Path) -> None:
    """Each keyed side table made with a rowid costs a campaign file a page for the index that
    copies its key; the small ones are made without (the key is the table)."""
    import sqlite3

    db = tmp_path / "c.db"
    ok(str(db), "new", "fresh", "--scenario", "north-sea-1914")
    with sqlite3.connect(db) as conn:
        made = dict(conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'").fetchall())
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'index'")}
    keyed = ("campaigns", "dice_seeds", "imported", "served", "players", "public_campaigns")
    for table in (f"tracker_{name}" for name in keyed):
        assert made[table].rstrip().endswith("WITHOUT ROWID"), table
        assert f"sqlite_autoindex_{table}_1" not in indexes
    # A table whose rows may be large keeps its rowid.
    assert not made["tracker_request_keys"].rstrip().endswith("WITHOUT ROWID")


def test_tables_made_one_by_one_are_stamped_at_the_last_revision_they_hold_whole(tmp_path: Path) -> None:
    """A tracker before versioned upgrades made the idempotency keys' table when first used, the
    notification tables too: a database may hold the keys and not the notifications."""
    url = str(tmp_path / "c.db")
    a_played_database(url, tmp_path)
    engine = engine_of(url)
    try:
        from tracker.service.idempotency import keys_table

        keys_table.create(engine)
    finally:
        engine.dispose()
    assert json.loads(ok(url, "db", "current", "--json"))["matches"] == "0001"
    done = json.loads(ok(url, "db", "upgrade", "--json"))
    assert done["stamped"] == "0001" and done["current"] == migrations.HEAD
    assert differences(url) == []


def test_an_earlier_trackers_database_file_is_upgraded_and_verifies(tmp_path: Path) -> None:
    """A database an earlier tracker wrote (before 0.1.0: its side tables were made when first
    used, so it lacks some of that release's)."""
    db = tmp_path / "demo.db"
    db.write_bytes(gzip.decompress((FIXTURES / "demo-one-module.db.gz").read_bytes()))
    assert json.loads(ok(str(db), "db", "current", "--json"))["current"] is None
    assert ok(str(db), "verify").startswith("OK: ")
    assert json.loads(ok(str(db), "db", "current", "--json"))["at_head"] is True
    assert differences(str(db)) == []


def test_tables_a_newer_tracker_upgraded_are_refused_by_name(tmp_path: Path) -> None:
    url = str(tmp_path / "c.db")
    ok(url, "new", "c", "--scenario", "north-sea-1914")
    engine = engine_of(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    finally:
        engine.dispose()
    code, out = run(url, "campaigns")
    assert code == 2 and "revision '9999'" in out and "upgrade the tracker" in out and "Traceback" not in out
    current = json.loads(ok(url, "db", "current", "--json"))
    assert current["known"] is False and current["at_head"] is False
    assert run(url, "db", "upgrade")[0] == 2


def test_the_head_is_the_last_revision_and_there_is_one_line_of_them() -> None:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(migrations.FOLDER))
    assert script.get_heads() == [migrations.HEAD]
    order = [s.revision for s in reversed(list(script.walk_revisions()))]
    assert order == [f"{n:04d}" for n in range(1, len(order) + 1)]


PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
    "sys.argv = ['tracker', *json.loads(sys.argv[1])]\n"
    "from tracker.cli.main import main\n"
    "main()\n"
)


def imported_by(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_opening_a_database_at_the_head_imports_no_alembic(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    assert "alembic" in imported_by("--db", db, "new", "c", "--scenario", "north-sea-1914")
    assert not any(m == "alembic" or m.startswith("alembic.") for m in imported_by("--db", db, "state"))


def test_ready_fails_schema_while_the_side_tables_are_not_at_this_trackers_head(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    import asyncio

    import httpx

    from tracker.server import create_app

    db = str(tmp_path / "league.db")
    ok(db, "new", "autumn", "--scenario", "north-sea-1914")
    app = create_app(db, keys=str(tmp_path / "keys.db"))

    def ready() -> tuple[int, Any]:
        async def fetch() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://league") as client:
                return await client.get("/ready")

        response = asyncio.run(fetch())
        return response.status_code, response.json()

    try:
        assert ready()[0] == 200
        engine = engine_of(db)
        try:
            with engine.begin() as conn:
                # As a shared database stands until `tracker db upgrade` brings it to the head.
                conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0004'")
        finally:
            engine.dispose()
        status, body = ready()
        assert status == 503 and body["failed"] == ["schema"]
        assert "schema not at head (side tables at 0004" in caplog.text
    finally:
        app.state.service.close()


UPGRADE = "import sys\nfrom tracker.cli.main import main\nsys.argv = ['tracker', *sys.argv[1:]]\nmain()\n"


def test_two_processes_upgrading_at_once_upgrade_once(url: str, tmp_path: Path) -> None:
    a_played_database(url, tmp_path)
    args = [sys.executable, "-c", UPGRADE, "--db", url, "db", "upgrade", "--json"]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT) for _ in "ab"]
    outcomes = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outcomes
    applied = sorted(len(json.loads(out)["applied"]) for out, _err in outcomes)
    assert applied == [0, 4]
    assert differences(url) == []
    assert rows(url, "tracker_imported", "name", "head_seq", "head_hash") == [("copy", 0, "")]


def test_db_commands_name_a_database_that_does_not_answer_in_one_line() -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:9/nowhere"
    for command, doing in (("current", "read"), ("upgrade", "upgrade")):
        code, out = run(url, "db", command)
        lines = out.strip().splitlines()
        assert code == 2 and len(lines) == 1, out
        assert lines[0].startswith(
            f"Error: cannot {doing} the tables of postgresql+psycopg://postgres@127.0.0.1:9/nowhere"
        )


def test_an_upgrade_refused_by_a_read_only_file_says_so_not_in_the_drivers_words() -> None:
    """`db upgrade` of a file its user may not write said "(sqlite3.OperationalError) attempt
    to write a readonly database"."""
    import sqlite3

    from sqlalchemy.exc import OperationalError as Refused

    from tracker.cli.commands.db import _failed

    error = Refused("UPDATE x", {}, sqlite3.OperationalError("attempt to write a readonly database"))
    message = str(_failed("upgrade", "sqlite:////srv/league.db", error))
    assert message == (
        "cannot upgrade the tables of sqlite:////srv/league.db: the database is read-only to this user "
        "(its file or its folder): nothing was changed"
    )
