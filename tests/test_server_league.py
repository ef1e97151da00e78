"""A league run through the server (PL1, PL2): the league's referee creates campaigns and
adds their players over `tracker --server`, with the local CLI's output and exit status;
every other token is refused with PL2 (401 without a live one) and nothing is recorded.

Reads need a token (issue 24): the tests read as the league's spectator (`Reader`); a
referee of one campaign finds "no such campaign" in another, where it was refused with PL2."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support import TRACKER, in_process, served
from tests.test_server import Reader

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def tracker(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A command run in this process, locally or as the `--server` client."""
    return in_process(*args, env=env)


def process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A command run as a process of its own (one that might serve, if refused wrongly, would hang
    this one)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_SERVER", "TRACKER_CAMPAIGN")}
    return subprocess.run([*TRACKER, *args], capture_output=True, text=True, timeout=300, env={**clean, **(env or {})})


def token_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("league")
    db = work / "league.db"
    # A league starts with its referee, before there is any campaign.
    tokens = {"rita": token_of(tracker("--db", str(db), "players", "add", "rita", "--referee", "--league"))}
    tokens["gone"] = token_of(tracker("--db", str(db), "players", "add", "gone", "--referee", "--league"))
    assert tracker("--db", str(db), "players", "revoke", "gone", "--league").returncode == 0
    assert tracker("--db", str(db), "new", "old", "--scenario", "north-sea-1914").returncode == 0
    tokens["anna"] = token_of(tracker("--db", str(db), "players", "add", "anna", "--nations", "Germany"))
    tokens["otto"] = token_of(tracker("--db", str(db), "players", "add", "otto", "--referee"))
    tokens["watch"] = token_of(tracker("--db", str(db), "players", "add", "watch", "--spectator", "--league"))
    with served(str(db), workdir=work) as server:
        yield Reader(server, tokens["watch"]), db, tokens, work


def remote(server, token: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "COLUMNS": "100"}
    if token is not None:
        env["TRACKER_TOKEN"] = token
    return tracker("--server", server.url, *args, env=env)


def campaigns(server) -> list[str]:
    return list(server.get("/api/campaigns")[1])


@pytest.mark.parametrize(
    "who, status, says",
    [
        (None, 401, "needs a referee's token"),
        ("gone", 401, "unknown or revoked"),
        ("anna", 403, "PL2: creating a campaign is for the league's referee"),
        ("otto", 403, "PL2: creating a campaign is for the league's referee"),
    ],
)
def test_pl2_only_the_leagues_referee_creates_a_campaign_through_the_server(league, who, status, says) -> None:
    server, _db, tokens, _work = league
    token = tokens[who] if who else None
    before = campaigns(server)
    got, body = server.post("/api/command", {"args": ["new", "spring", "--scenario", "north-sea-1914"]}, token)
    assert got == status and says in body["error"], body
    if status == 403:
        assert body["rule"] == "PL2"
    done = remote(server, token, "new", "spring", "--scenario", "north-sea-1914")
    assert done.returncode == 1 and says in done.stderr and done.stdout == ""
    assert campaigns(server) == before


def test_pl2_the_leagues_referee_creates_a_campaign_as_the_local_cli_does(league, tmp_path: Path) -> None:
    server, _db, tokens, _work = league
    args = ["new", "north/sea 1914", "--scenario", "north-sea-1914", "--dice", "auto"]
    here = tracker("--db", str(tmp_path / "local.db"), *args)
    there = remote(server, tokens["rita"], *args)
    assert (
        (there.returncode, there.stdout, there.stderr)
        == (here.returncode, here.stdout, here.stderr)
        == (
            0,
            "Campaign 'north/sea 1914' created: The North Sea, autumn 1914 with ruleset twtea-3e, auto dice.\n"
            "Round 1 · Germany · research\n",
            "",
        )
    )
    assert "north/sea 1914" in campaigns(server)
    # PL1: the first event names the player who created the campaign; locally nobody is named.
    first = json.loads(remote(server, tokens["rita"], "--campaign", "north/sea 1914", "log", "--json").stdout)[0]
    assert first["kind"] == "Created" and first["data"]["created_by"] == "rita"
    assert first["summary"].endswith(" by rita")
    local_first = json.loads(tracker("--db", str(tmp_path / "local.db"), "log", "--json").stdout)[0]
    assert local_first["data"]["created_by"] is None and not local_first["summary"].endswith(" by rita")
    again = remote(server, tokens["rita"], *args)
    local_again = tracker("--db", str(tmp_path / "local.db"), *args)
    assert again.returncode == local_again.returncode == 2 and "already exists" in again.stderr


def test_d5_a_campaign_created_through_the_server_keeps_its_seed_in_the_key_store(league) -> None:
    server, db, tokens, work = league
    assert (
        remote(server, tokens["rita"], "new", "keyed", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    )
    with sqlite3.connect(db) as conn:
        (cid,) = conn.execute("SELECT campaign_id FROM tracker_campaigns WHERE name = 'keyed'").fetchone()
        in_log = conn.execute("SELECT count(*) FROM tracker_dice_seeds WHERE campaign_id = ?", (cid,)).fetchone()[0]
    with sqlite3.connect(work / "tracker-keys.db") as conn:
        in_keys = conn.execute("SELECT count(*) FROM tracker_dice_seeds WHERE campaign_id = ?", (cid,)).fetchone()[0]
    assert (in_log, in_keys) == (0, 1)


def test_a_scenario_file_on_the_server_is_not_read_through_it(league) -> None:
    server, _db, tokens, work = league
    (work / "mine.toml").write_text("[scenario]\n")
    for given in (str(work / "mine.toml"), "/etc/passwd"):
        done = remote(server, tokens["rita"], "new", "filed", "--scenario", given)
        assert done.returncode == 2 and "one of the built-ins" in done.stderr, done.stderr
    done = remote(server, tokens["rita"], "new", "filed", "--scenario", "north-sea-1914", "--ruleset", "/etc/passwd")
    assert done.returncode == 2 and "filed" not in campaigns(server)


def test_pl2_the_referee_adds_a_campaigns_players_through_the_server(league) -> None:
    server, db, tokens, _work = league
    assert remote(server, tokens["rita"], "new", "winter", "--scenario", "north-sea-1914").returncode == 0
    added = remote(server, tokens["rita"], "--campaign", "winter", "players", "add", "bert", "--nations", "Britain")
    assert added.returncode == 0 and added.stdout.startswith("Player 'bert' (Britain) added to 'winter'"), added.stderr
    bert = added.stdout.strip().splitlines()[-1]
    assert bert.startswith("trk_") and bert not in server.log()
    # The new player's token works at once: Germany moves first, so bert's `next` is refused.
    refused = remote(server, bert, "--campaign", "winter", "next")
    assert refused.returncode == 1 and "PL2" in refused.stderr and "not Germany" in refused.stderr
    listed = remote(server, None, "--campaign", "winter", "players", "list", "--json")
    assert listed.returncode == 1 and "needs a referee's token" in listed.stderr
    listed = remote(server, tokens["rita"], "--campaign", "winter", "players", "list", "--json")
    assert [(p["name"], p["nations"]) for p in json.loads(listed.stdout)] == [("bert", ["Britain"])]
    local = tracker("--db", str(db), "--campaign", "winter", "players", "list", "--json")
    assert json.loads(local.stdout) == json.loads(listed.stdout)


@pytest.mark.parametrize(
    "who, args, says",
    [
        ("anna", ["--campaign", "old", "players", "add", "zed", "--nations", "Britain"], "for the campaign's referee"),
        ("otto", ["--campaign", "old", "players", "add", "zed", "--referee", "--league"], "for the league's referee"),
        # Issue 24: another campaign's referee learns nothing of it (it was PL2, "token is for another").
        ("otto", ["--campaign", "north/sea 1914", "players", "add", "zed", "--referee"], "no such campaign"),
        ("anna", ["--campaign", "old", "players", "revoke", "otto"], "for the campaign's referee"),
        ("watch", ["--campaign", "old", "players", "add", "zed", "--nations", "Britain"], "for the campaign's referee"),
    ],
)
def test_pl2_players_are_managed_through_the_server_by_a_referee_alone(league, who, args, says) -> None:
    server, db, tokens, _work = league
    if "north/sea 1914" not in campaigns(server):
        assert remote(server, tokens["rita"], "new", "north/sea 1914", "--scenario", "north-sea-1914").returncode == 0
    before = tracker("--db", str(db), "--campaign", "old", "players", "list", "--json").stdout
    done = remote(server, tokens[who], *args)
    if says == "no such campaign":
        assert done.returncode == 2 and done.stderr == "Error: no such campaign\n", done.stderr
    else:
        assert done.returncode == 1 and "PL2" in done.stderr and says in done.stderr, done.stderr
    assert tracker("--db", str(db), "--campaign", "old", "players", "list", "--json").stdout == before


def test_pl2_a_campaigns_referee_manages_its_players_through_the_server(league) -> None:
    server, _db, tokens, _work = league
    added = remote(server, tokens["otto"], "--campaign", "old", "players", "add", "carla", "--nations", "France")
    assert added.returncode == 0, added.stderr
    assert remote(server, tokens["otto"], "--campaign", "old", "players", "revoke", "carla").returncode == 0
    carla = added.stdout.strip().splitlines()[-1]
    assert remote(server, carla, "--campaign", "old", "next").stderr.startswith(
        "Error: the token is unknown or revoked"
    )


def test_pl2_the_leagues_referee_referees_every_campaign(league) -> None:
    server, _db, tokens, _work = league
    before = server.get("/api/campaigns/old/state")[1]["seq"]
    done = remote(
        server, tokens["rita"], "--campaign", "old", "adjust", "--resources", "Germany=1", "--reason", "land war"
    )
    assert done.returncode == 0, done.stderr
    asked = server.get("/api/campaigns/old/log?kind=ActionAsked")[1][-1]
    assert asked["seq"] > before and asked["data"]["player"] == "rita"
    listed = tracker("--db", str(_db), "players", "list", "--league", "--json")
    assert [(p["name"], p["referee"], p["revoked"]) for p in json.loads(listed.stdout)] == [
        ("gone", True, True),
        ("rita", True, False),
        ("watch", False, False),
    ]
    usage = tracker("--db", str(_db), "players", "add", "zed", "--league")
    assert usage.returncode == 2 and "--referee --league" in usage.stderr


def test_a_tracker_db_left_in_the_environment_does_not_stop_server_commands(league) -> None:
    server, db, tokens, _work = league
    env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": tokens["rita"], "TRACKER_DB": "elsewhere.db"}
    done = tracker("--server", server.url, "campaigns", env=env)
    assert done.returncode == 0 and "old" in done.stdout.splitlines(), done.stderr
    given = tracker("--server", server.url, "--db", str(db), "campaigns", env=env)
    assert given.returncode == 2 and "leave out --db" in given.stderr


def test_a_tracker_server_left_in_the_environment_names_itself_to_commands_that_never_run_on_one(
    tmp_path: Path,
) -> None:
    """The league's admin restarts `tracker serve` in the shell where TRACKER_SERVER names that
    (stopped) server: one line saying what to do, not "cannot reach the server" (exit 2)."""
    from tests.support import free_port

    env = {"TRACKER_SERVER": f"http://127.0.0.1:{free_port()}", "TRACKER_TOKEN": "trk_x"}
    done = process("serve", "--db", str(tmp_path / "league.db"), "--port", str(free_port()), env=env)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == "Error: 'serve' runs on a database, not through a server: unset TRACKER_SERVER for it\n"
    given = tracker("--server", env["TRACKER_SERVER"], "import", "turn.jsonl", env={"TRACKER_TOKEN": "trk_x"})
    assert given.returncode == 2 and "'import' runs on a database" in given.stderr
    assert "leave out --server" in given.stderr
    assert not (tmp_path / "league.db").exists()
