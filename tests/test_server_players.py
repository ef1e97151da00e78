"""Players and tokens on a real `tracker serve` (PL1, PL2, RK3): every way an action can lack
the right to be recorded, overrides approved through the server, and the CLI's `--server`
mode giving the local CLI's output and exit status. Nothing secret reaches the server's log.

Reads need a token (issue 24): the tests read as the league's spectator (`Reader`), and a
token of another campaign now finds "no such campaign" (404) where it was refused with 403."""

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
    """A command run in this process, locally or as the `--server` client; what a real terminal
    or pipe makes of its output is a process's own (the colours' test runs processes)."""
    return in_process(*args, env=env)


def add_player(db: Path, name: str, *role: str, campaign: str = "autumn") -> str:
    done = tracker("--db", str(db), "--campaign", campaign, "players", "add", name, *role)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("players")
    db = work / "league.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    tokens = {
        "anna": add_player(db, "anna", "--nations", "Germany"),
        "bob": add_player(db, "bob", "--nations", "Britain"),
        "ref": add_player(db, "ref", "--referee"),
        "gone": add_player(db, "gone", "--nations", "Germany"),
    }
    assert tracker("--db", str(db), "players", "revoke", "gone").returncode == 0
    assert tracker("--db", str(db), "new", "winter", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    tokens["winter-ref"] = add_player(db, "wendy", "--referee", campaign="winter")
    tokens["walt"] = add_player(db, "walt", "--nations", "Britain,Germany", campaign="winter")
    assert tracker("--db", str(db), "new", "spring", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    tokens["s-anna"] = add_player(db, "anna", "--nations", "Germany", campaign="spring")
    tokens["s-bob"] = add_player(db, "bob", "--nations", "Britain", campaign="spring")
    tokens["s-gone"] = add_player(db, "gone", "--nations", "France", campaign="spring")
    assert tracker("--db", str(db), "--campaign", "spring", "players", "revoke", "gone").returncode == 0
    watch = tracker("--db", str(db), "players", "add", "watcher", "--spectator", "--league")
    assert watch.returncode == 0, watch.stderr
    tokens["watch"] = watch.stdout.strip().splitlines()[-1]
    with served(str(db), workdir=work) as server:
        yield Reader(server, tokens["watch"]), db, tokens


def remote(server, token: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "COLUMNS": "100"}
    if token is not None:
        env["TRACKER_TOKEN"] = token
    return tracker("--server", server.url, *args, env=env)


def command(server, token: str | None, *args: str) -> tuple[int, dict]:
    return server.request("POST", "/api/command", {"args": list(args), "campaign": "autumn"}, token=token)


def test_pl2_players_add_prints_a_token_once_and_keeps_only_its_hash(league) -> None:
    _server, db, tokens = league
    listed = json.loads(tracker("--db", str(db), "--campaign", "autumn", "players", "list", "--json").stdout)
    assert [(p["name"], p["nations"], p["referee"], p["revoked"]) for p in listed] == [
        ("anna", ["Germany"], False, False),
        ("bob", ["Britain"], False, False),
        ("gone", ["Germany"], False, True),
        ("ref", [], True, False),
    ]
    with sqlite3.connect(db) as conn:
        stored = repr(conn.execute("SELECT * FROM tracker_players").fetchall())
    for token in tokens.values():
        assert token.split("_", 2)[2] not in stored
    again = tracker("--db", str(db), "--campaign", "autumn", "players", "add", "anna", "--nations", "Britain")
    assert again.returncode == 2 and "already has a token" in again.stderr
    unknown = tracker("--db", str(db), "--campaign", "autumn", "players", "add", "zed", "--nations", "Atlantis")
    assert unknown.returncode == 2


@pytest.mark.parametrize(
    "token_of, status",
    [(None, 401), ("gone", 401), ("bad", 401), ("bob", 403), ("winter-ref", 404), ("watch", 403)],
)
def test_pl2_an_action_needs_a_live_token_of_the_acting_nation(league, token_of, status) -> None:
    server, _db, tokens = league
    token = {"bad": "trk_0123456789abcdef_nope"}.get(token_of) or tokens.get(token_of)
    before = server.get("/api/campaigns/autumn/state")[1]["seq"]
    got, body = command(server, token, "next")
    assert got == status, body
    if status == 403:
        assert body["rule"] == "PL2"
        assert "not Germany" in body["error"] or "spectator" in body["error"]
    if status == 404:
        # Another campaign's token: the campaign is not there for it (issue 24).
        assert body["error"] == "no such campaign"
    if token_of is None:
        # No token: refused before the campaign is looked up, as POST .../actions refuses it.
        assert (
            body["error"] == "an action needs a player's token: Authorization: Bearer TOKEN (see tracker players add)"
        )
    assert server.get("/api/campaigns/autumn/state")[1]["seq"] == before


def test_pl2_an_action_named_for_another_players_nation_is_403_before_any_rule(league) -> None:
    server, _db, tokens = league
    before = server.get("/api/campaigns/autumn/state")[1]["seq"]
    # Not Britain's placement phase (T3 would refuse it too): the player is told it is not theirs.
    got, body = command(server, tokens["anna"], "ntr", "place", "Skagerrak", "--nation", "Britain")
    assert got == 403, body
    assert body["rule"] == "PL2" and body["error"] == "PL2: anna plays Germany, not Britain; this action is Britain's"
    got, body = command(server, tokens["anna"], "convoy", "pass", "--by", "gb")
    assert got == 403 and body["error"].endswith("this action is Britain's"), body
    assert server.get("/api/campaigns/autumn/state")[1]["seq"] == before


def test_a_malformed_authorization_header_is_401(league) -> None:
    server, _db, _tokens = league
    import urllib.error
    import urllib.request

    req = urllib.request.Request(server.url + "/api/command", data=b'{"args": ["next"]}', method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", "Basic abc")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    assert e.value.code == 401


def test_pl2_referee_only_actions_are_refused_to_players(league) -> None:
    server, _db, tokens = league
    for args in (["dice", "reveal"], ["adjust", "--resources", "Germany=5", "--reason", "gift"]):
        got, body = command(server, tokens["anna"], *args)
        assert got == 403 and body["rule"] == "PL2" and "only the referee" in body["error"], body
    got, body = command(server, tokens["ref"], "adjust", "--resources", "Germany=5", "--reason", "land war")
    assert got == 200, body


def test_requests_that_are_not_commands_are_4xx(league) -> None:
    server, _db, tokens = league
    assert server.request("POST", "/api/command", raw=b"{not json", token=tokens["anna"])[0] == 400
    assert server.request("POST", "/api/command", raw=b"[1, 2]", token=tokens["anna"])[0] == 400
    assert command(server, tokens["anna"], "serve")[0] == 400
    assert command(server, tokens["anna"], "report", "--turn", "1", "-o", "/tmp/x")[0] == 400
    assert command(server, tokens["anna"], "state", "--db", "/tmp/other.db")[0] == 400
    # Issue 24: the limit is 1 MiB (it was 256 KiB).
    assert server.request("POST", "/api/command", raw=b"x" * (1024 * 1024 + 1), token=tokens["anna"])[0] == 413
    got, body = command(server, tokens["anna"], "state", "--turn", "99999999999999999999")
    assert got == 400 and body["exit"] == 2


def test_rk3_an_override_is_recorded_only_once_the_other_side_approves_it(league) -> None:
    server, _db, tokens = league
    state = server.get("/api/campaigns/autumn/state")[1]
    assert (state["nation"], state["phase"]) == ("Germany", "research")
    got, body = command(server, tokens["anna"], "research", "advanced_submarine")
    assert got == 200, body
    override = ("undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    got, body = command(server, tokens["anna"], *override)
    assert got == 409 and body["rule"] == "RK3" and "override request" in body["error"]
    requests = server.get("/api/campaigns/autumn/overrides")[1]
    number = requests[-1]["id"]
    assert requests[-1]["requested_by"] == "anna" and requests[-1]["approved_by"] is None
    log_before = server.get("/api/campaigns/autumn/log")[1]
    # Not by the asker, not by a player of the asker's side.
    assert command(server, tokens["anna"], "approve", str(number))[0] == 409
    got, body = command(server, tokens["bob"], "approve", str(number))
    assert got == 200, body
    assert "OVERRIDE" in body["stdout"] and "agreed by Britain" in body["stdout"]
    log_after = server.get("/api/campaigns/autumn/log")[1]
    assert log_after[-1]["kind"] == "ActionUndone" and len(log_after) == len(log_before) + 1
    approved = server.get("/api/campaigns/autumn/overrides")[1][-1]
    assert approved["approved_by"] == "bob" and approved["recorded_at_event"] == log_after[-1]["seq"]
    # The list as a player reads it says where the override was recorded, as --json does.
    listed = command(server, tokens["anna"], "overrides")[1]["stdout"]
    assert listed.rstrip().endswith(f"- approved by bob, recorded at event {log_after[-1]['seq']}"), listed
    # Approved once: approving again is refused (RK3), not bad usage.
    got, body = command(server, tokens["bob"], "approve", str(number))
    assert got == 409 and body["rule"] == "RK3" and "was approved already by bob" in body["error"]


def test_pl2_a_player_cannot_undo_another_nations_action(league) -> None:
    server, _db, tokens = league
    got, body = command(server, tokens["anna"], "next")
    assert got == 200, body
    got, body = command(server, tokens["bob"], "undo")
    assert got == 403 and body["rule"] == "PL2" and "Germany" in body["error"]


def test_the_cli_over_server_prints_what_the_local_cli_prints(league) -> None:
    server, db, tokens = league
    for args in (
        ["state", "--json"],
        ["state"],
        ["pending", "--json"],
        ["log"],
        ["log", "--json", "--tail", "3"],
        ["explain", "2"],
        ["explain", "2", "--json"],
        ["luck", "--json"],
        ["odds", "naval", "--attacker", "Germany:destroyer=2", "--defender", "Britain:cruiser=1", "--json"],
    ):
        here = tracker("--db", str(db), "--campaign", "autumn", *args, env={"COLUMNS": "100"})
        there = remote(server, tokens["watch"], "--campaign", "autumn", *args)
        assert (there.returncode, there.stdout) == (here.returncode, here.stdout), args
    refused = remote(server, tokens["anna"], "--campaign", "autumn", "move", "DE-SS1", "--to", "Nowhere")
    assert refused.returncode == 2 and refused.stderr.startswith("Error: ")
    wrong = remote(server, tokens["bob"], "--campaign", "autumn", "next")
    assert wrong.returncode == 1 and "PL2" in wrong.stderr


def test_no_token_or_seed_reaches_the_servers_log_or_answers(league) -> None:
    server, db, tokens = league
    # Errors that quote what was sent must not quote a token.
    got, body = command(server, tokens["anna"] + "x", "next")
    assert got == 401 and tokens["anna"] not in json.dumps(body)
    log = server.log()
    for token in tokens.values():
        assert token not in log and token.split("_", 2)[2] not in log
    assert "POST /api/command" in log


def test_the_token_comes_from_the_config_file_for_that_server(league, tmp_path: Path) -> None:
    server, _db, tokens = league
    config = tmp_path / "config.toml"
    config.write_text(f'token = "trk_0000000000000000_other"\n[servers."{server.url}"]\ntoken = "{tokens["anna"]}"\n')
    env = {"TRACKER_CONFIG": str(config)}
    # anna's token went with it: refused as a player who is not the referee, not as no token.
    done = tracker("--server", server.url, "--campaign", "autumn", "dice", "reveal", env=env)
    assert done.returncode == 1 and "PL2" in done.stderr and "only the referee" in done.stderr
    config.write_text("token = [unclosed\n")
    broken = tracker("--server", server.url, "--campaign", "autumn", "dice", "reveal", env=env)
    assert broken.returncode == 2 and "config.toml" in broken.stderr
    nowhere = tracker("--server", "http://127.0.0.1:9", "state", env={"TRACKER_CONFIG": "/nonexistent"})
    assert nowhere.returncode == 1 and nowhere.stderr.startswith("Error: cannot reach the server")
    bad_url = tracker("--server", "ftp://x", "state", env={"TRACKER_CONFIG": "/nonexistent"})
    assert bad_url.returncode == 2


READS = [
    "/api/health", "/api/campaigns", "/api/campaigns/autumn/state", "/api/campaigns/autumn/pending",
    "/api/campaigns/autumn/log", "/api/campaigns/autumn/explain/1", "/api/campaigns/autumn/report?turn=1",
    "/api/campaigns/autumn/verify", "/api/campaigns/autumn/overrides",
]  # fmt: skip


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize("token_of", ["anna", "ref", "watch"])
def test_reads_need_a_token_of_the_campaign(league, path: str, token_of: str) -> None:
    # Issue 24: reading needed no token before; now a player's, the referee's or a spectator's.
    server, _db, tokens = league
    status, body = server.get(path, token=tokens[token_of])
    assert status == 200, body
    status, body = server.server.get(path)
    assert status == (200 if path in ("/api/health", "/api/campaigns") else 404), body


@pytest.fixture(scope="module")
def waiting_request(league) -> int:
    """An override request in campaign spring that names France's agreement."""
    server, _db, tokens = league
    spring = {"campaign": "spring"}
    status, body = server.post("/api/command", {"args": ["research", "advanced_submarine"], **spring}, tokens["s-anna"])
    assert status == 200, body
    override = ["undo", "--override", "--reason", "slip", "--agreed-by", "France"]
    status, body = server.post("/api/command", {"args": override, **spring}, tokens["s-anna"])
    assert status == 409 and body["rule"] == "RK3", body
    return int(server.get("/api/campaigns/spring/overrides")[1][-1]["id"])


@pytest.mark.parametrize(
    "token_of, status", [(None, 401), ("s-gone", 401), ("winter-ref", 404), ("s-bob", 403), ("watch", 403)]
)
def test_pl2_rk3_approving_an_override_needs_a_live_token_of_the_nations_it_names(
    league, waiting_request: int, token_of: str | None, status: int
) -> None:
    server, _db, tokens = league
    path = f"/api/campaigns/spring/overrides/{waiting_request}/approve"
    got, body = server.post(path, {}, token=tokens.get(token_of) if token_of else None)
    assert got == status, body
    assert server.get("/api/campaigns/spring/overrides")[1][-1]["approved_by"] is None


def test_pl1_every_action_through_the_server_records_the_player_and_the_nation_acted_for(league) -> None:
    server, db, tokens = league
    state = server.get("/api/campaigns/winter/state")[1]
    assert server.post("/api/campaigns/winter/actions", {"action": "next"})[0] == 401
    assert server.post("/api/campaigns/winter/actions", {"action": "next"}, token=tokens["watch"])[0] == 403
    status, body = server.post("/api/campaigns/winter/actions", {"action": "next"}, token=tokens["winter-ref"])
    assert status == 200, body
    assert body["action"] == "next" and body["events"] and body["asked"] == state["seq"] + 1
    asked = json.loads(
        tracker("--db", str(db), "--campaign", "winter", "log", "--json", "--kind", "ActionAsked").stdout
    )[-1]["data"]
    assert (asked["name"], asked["player"], asked["nation"]) == ("next", "wendy", state["nation"])
    # Over the command line too, by a player of two nations: the one the action is for.
    status, body = server.post("/api/command", {"args": ["next"], "campaign": "winter"}, token=tokens["walt"])
    assert status == 200, body
    asked = server.get("/api/campaigns/winter/log?kind=ActionAsked")[1][-1]["data"]
    assert (asked["name"], asked["player"], asked["nation"]) == ("next", "walt", state["nation"])


@pytest.mark.parametrize(
    "body, status",
    [
        ({"action": "no such action"}, 400),
        ({"action": "next", "inputs": {"bogus": 1}}, 400),
        ({"action": "next", "inputs": []}, 400),
        ({"action": "next", "seen": 10**30}, 400),
        ({"action": "next", "seen": 1}, 409),
        ({"inputs": {}}, 400),
    ],
)
def test_bad_action_requests_are_4xx(league, body: dict, status: int) -> None:
    server, _db, tokens = league
    got, answer = server.post("/api/campaigns/winter/actions", body, token=tokens["winter-ref"])
    assert got == status, answer
    assert answer["error"]


def test_the_action_registry_is_listed(league) -> None:
    server, _db, _tokens = league
    status, listed = server.get("/api/actions")
    assert status == 200 and {"next", "move", "undo", "convoy declare"} <= {a["action"] for a in listed}


def test_the_action_registry_advertises_the_least_whole_number_each_input_takes(league) -> None:
    server, _db, tokens = league
    inputs = {(a["action"], i["name"]): i for a in server.get("/api/actions")[1] for i in a["inputs"]}
    assert inputs[("ntr place", "count")]["min"] == 1
    # Every whole number an action takes counts or numbers something: none takes less than 1.
    assert {i["min"] for i in inputs.values() if i["kind"] == "int"} == {1}
    # Below it, the input is refused as such, before any rule is looked at.
    asked = {"action": "ntr place", "inputs": {"zone": "Central North Sea", "count": 0}}
    got, answer = server.post("/api/campaigns/winter/actions", asked, token=tokens["winter-ref"])
    assert got == 400 and "input 'count' must be between 1 and" in answer["error"], answer


@pytest.mark.parametrize(
    "terminal",
    [
        {"FORCE_COLOR": "1", "TERM": "xterm-256color"},
        {"FORCE_COLOR": "1", "TERM": "xterm", "COLORTERM": "truecolor"},
        {"FORCE_COLOR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"},
        {"TERM": "xterm-256color"},
    ],
)
def test_the_cli_over_server_colours_exactly_as_the_local_cli_does(league, terminal: dict[str, str]) -> None:
    server, db, tokens = league
    env = {"COLUMNS": "90", "TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": tokens["watch"], **terminal}
    clean = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "COLORTERM", "TERM")}
    styled = {}
    for args in (["state"], ["units"], ["map"], ["log", "--tail", "5"]):
        here = subprocess.run(
            [*TRACKER, "--db", str(db), "--campaign", "autumn", *args],
            capture_output=True, env={**clean, **env}, timeout=300,
        )  # fmt: skip
        there = subprocess.run(
            [*TRACKER, "--server", server.url, "--campaign", "autumn", *args],
            capture_output=True, env={**clean, **env}, timeout=300,
        )  # fmt: skip
        assert (there.returncode, there.stdout) == (here.returncode, here.stdout), args
        styled[args[0]] = b"\x1b[" in here.stdout
        if args == ["state"]:
            # The sides' colours (red, blue), never under NO_COLOR.
            assert (b"\x1b[1;31m" in here.stdout) == ("FORCE_COLOR" in terminal and "NO_COLOR" not in terminal)
    # A pipe is no terminal: styles only when forced.
    assert styled["state"] == styled["units"] == ("FORCE_COLOR" in terminal)
    assert not styled["log"]


def test_rk3_approve_renders_for_the_approvers_terminal_and_takes_json(tmp_path: Path) -> None:
    db = tmp_path / "approve.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    anna, bob = add_player(db, "anna", "--nations", "Germany"), add_player(db, "bob", "--nations", "Britain")
    with served(str(db), workdir=tmp_path) as server:
        assert command(server, anna, "research", "advanced_submarine", "--dice", "4")[0] == 200
        got, body = command(server, anna, "undo", "--override", "--reason", "slip", "--agreed-by", "Britain")
        assert got == 409 and body["rule"] == "RK3", body
        number = str(server.get("/api/campaigns/autumn/overrides", token=bob)[1][-1]["id"])
        # The approver's own terminal: 60 columns, colour; and --json, as for every other command.
        terminal = {"columns": 60, "color_system": "standard", "tty": True}
        got, body = server.request(
            "POST", "/api/command", {"args": ["approve", number, "--json"], "campaign": "autumn", **terminal}, token=bob
        )
        assert got == 200, body
        shown = json.loads(body["stdout"])
        assert [e["kind"] for e in shown["events"]][-1] == "ActionUndone"
        assert "usage: approve REQUEST [--json]" in command(server, bob, "approve", number, "x")[1]["error"]
