"""`tracker odds` through the league server: one player's `odds naval` of 20 units a side held
a server thread for about a minute before the positions limit refused it. The server now
refuses a position of more than 10 units a side (6 with --exact) before enumerating anything,
and stops any odds command after its budget of time, each in one line saying to run `tracker
odds` locally (exit 1, HTTP 409); the command line on a database weighs what it always did."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Server, in_process, served

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

LOCALLY = "run `tracker odds` on your own machine for big battles"
FORCE = "battleship=5,cruiser=5,destroyer=5,submarine=5"


def tracker(db: Path, *args: str) -> str:
    """A command on the database, run in this process."""
    done = in_process("--db", str(db), *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def refused(message: str) -> tuple[int, dict[str, Any]]:
    return 409, {"exit": 1, "stdout": "", "stderr": f"Error: {message}\n", "error": message, "rule": None}


def too_many(units: int, limit: int = 10, exact: bool = False) -> str:
    more = " with --exact" if exact else ""
    return (
        f"the server weighs odds of at most {limit} units a side{more}, this battle has {units} on one side: {LOCALLY}"
    )


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Path]]:
    """The tester's league (great-war-1914, auto dice) with its referee's token, and battle 1 in
    progress: the High Seas Fleet (18 units) against 8 British in the Southern North Sea."""
    work = tmp_path_factory.mktemp("odds")
    db = work / "s1.db"
    tracker(db, "new", "league1", "--scenario", "great-war-1914", "--dice", "auto")
    token = tracker(db, "players", "add", "rita", "--referee").strip().splitlines()[-1]
    tracker(db, "next", "--to", "combat_movement")
    fleet = [f"DE-{kind}{n}" for kind, most in (("BB", 7), ("CA", 3), ("DD", 4), ("SS", 3)) for n in range(1, most + 1)]
    tracker(db, "move", ",".join(fleet), "--to", "Southern North Sea")
    tracker(db, "next")
    tracker(db, "battle", "start", "--zone", "Southern North Sea")
    with served(str(db), "--keys", str(work / "keys.db"), workdir=work) as server:
        yield server, token, db


def odds(server: Server, token: str, *args: str) -> tuple[int, Any]:
    return server.post("/api/command", {"args": ["odds", *args], "campaign": "league1"}, token)


def test_the_testers_battle_of_20_units_a_side_is_refused_in_milliseconds(league) -> None:
    server, token, _db = league
    started = time.monotonic()
    answer = odds(server, token, "naval", "--attacker", f"Germany:{FORCE}", "--defender", f"Britain:{FORCE}")
    # It took about 62 s of the server's CPU; refused before anything is enumerated now.
    assert time.monotonic() - started < 5
    assert answer == refused(too_many(20))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["convoy", "--attacker", "Germany:submarine=11", "--defender", "Britain:cruiser=1", "--ntr=2"], too_many(11)),
        (["intercept", "--attacker", "Germany:submarine=11", "--defender", "Britain:destroyer=1"], too_many(11)),
        (["asw", "--attacker", "Britain:destroyer=6,cruiser=5", "--defender", "Germany:submarine=1"], too_many(11)),
        (["naval", "--attacker", "Germany:battleship=6", "--defender", "Britain:cruiser=3", "--defender",
          "France:cruiser=3,destroyer=5"], too_many(11)),  # allies count on their side
        (["naval", "--attacker", "Germany:battleship=2", "--defender", "Britain:cruiser=7", "--exact"],
         too_many(7, 6, exact=True)),
        # The battle in progress: the High Seas Fleet's 18 units.
        (["1"], too_many(18)),
        (["1", "--json"], too_many(18)),
    ],
)  # fmt: skip
def test_a_position_over_the_bound_is_refused_for_every_procedure(league, args: list[str], message: str) -> None:
    server, token, _db = league
    assert odds(server, token, *args) == refused(message)


def test_odds_within_the_bound_are_weighed_and_the_command_line_keeps_its_own_limits(league) -> None:
    server, token, db = league
    status, body = odds(server, token, "naval", "--attacker", "Germany:battleship=2", "--defender", "Britain:cruiser=2")
    assert status == 200 and body["exit"] == 0 and "attacker wins" in body["stdout"]
    # A malformed force is the command's own error, as before.
    status, body = odds(server, token, "naval", "--attacker", "Germany:battleship=x", "--defender", "Britain:cruiser=1")
    assert status == 400 and body["error"].startswith("'x' in 'Germany:battleship=x' is not a whole number")
    # On a database, 11 a side is weighed as it always was.
    local = tracker(db, "odds", "naval", "--attacker", "Germany:battleship=11", "--defender", "Britain:battleship=11")
    assert "attacker wins" in local
    big = ("naval", "--attacker", "Germany:battleship=11", "--defender", "Britain:battleship=11")
    assert odds(server, token, *big) == refused(too_many(11))


def test_a_force_given_by_hand_names_a_nation_of_the_scenarios_on_the_server_too(
    league: tuple[Server, str, Path],
) -> None:
    """The server runs the command line's check of the forces: a nation no scenario has is
    refused naming it (exit 2), even with more units than the server weighs; codes and
    abbreviations are read as on the command line."""
    server, token, _db = league
    for units in (1, 20):
        args = ("naval", "--attacker", f"Atlantis:battleship={units}", "--defender", "Britain:cruiser=1")
        status, body = odds(server, token, *args)
        assert status == 400 and body["exit"] == 2
        assert body["error"].startswith(f"unknown nation 'Atlantis' in 'Atlantis:battleship={units}' (known, by name")
    status, body = odds(server, token, "naval", "--attacker", "de:BB=2", "--defender", "GB:ca=2")
    assert status == 200 and "attacker wins" in body["stdout"]


def test_every_odds_command_stops_at_its_budget_of_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`need`, `escorts` and `buy` are bounded by budgets of positions, not of time: the
    server's budget stops them as it stops a battle's odds (a budget of 0 s here, so the first
    position any of them expands stops it)."""
    from starlette.testclient import TestClient

    from tracker.server import odds_bounds
    from tracker.server.app import create_app

    db = tmp_path / "ns.db"
    for name, phase in (("buying", "purchase"), ("moving", "combat_movement")):
        tracker(db, "new", name, "--scenario", "north-sea-1914", "--dice", "auto")
        tracker(db, "--campaign", name, "next", "--to", phase)
    token = tracker(db, "players", "add", "rita", "--referee", "--league").strip().splitlines()[-1]
    monkeypatch.setattr(odds_bounds, "ODDS_SECONDS", 0.0)
    asks = [
        ("moving", ["naval", "--attacker", "Germany:battleship=1", "--defender", "Britain:cruiser=1"]),
        ("moving", ["need", "--zone", "Southern North Sea"]),
        ("moving", ["escorts", "--zone", "Heligoland Bight"]),
        ("buying", ["buy"]),
    ]
    message = f"the odds took over 0 s of the server's time and were stopped: {LOCALLY}"
    with TestClient(create_app(str(db), keys=str(tmp_path / "keys.db"))) as client:
        for campaign, args in asks:
            answer = client.post(
                "/api/command",
                json={"args": ["odds", *args], "campaign": campaign},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert (answer.status_code, answer.json()) == refused(message), args
        # Anything but odds runs without the budget.
        answer = client.post(
            "/api/command",
            json={"args": ["state", "--json"], "campaign": "moving"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 200


def test_a_ruleset_file_on_the_server_is_not_read_through_it(league) -> None:
    """`odds --ruleset PATH` read any file the server could: missing, not TOML or valid told a
    player what the server holds. Through a server a ruleset is a built-in, as for `new`."""
    server, token, _db = league
    fight = ("naval", "--attacker", "Germany:battleship=1", "--defender", "Britain:cruiser=1")
    for given in (["--ruleset", "/etc/passwd"], ["--ruleset=/etc/hostname"]):
        path = given[-1].removeprefix("--ruleset=")
        status, body = odds(server, token, *fight, *given)
        message = (
            f"--ruleset {path!r}: through a server, one of the built-ins (twtea-3e); a file on your machine is not sent"
        )
        assert (status, body) == (400, {"error": message, "rule": None})
    status, body = odds(server, token, *fight, "--ruleset", "twtea-3e")
    assert status == 200 and body["exit"] == 0
