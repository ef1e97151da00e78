"""The league server's bound on `odds` of a position given by hand read the forces by the
built-in ruleset whatever campaign the request named: a league playing house rules with a unit
type of its own (a monitor) asked about 11 of them, the bound could not read the force, let the
command weigh it (by the campaign's ruleset) and so weighed a position over the server's bound.
It now reads the forces by the ruleset the command weighs them by: the campaign's, unless
--ruleset names a built-in."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

BUILTIN = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text(encoding="utf-8")
MONITOR = """
[units.monitor]
category = "naval"
class = "capital"
abbr = "MO"
attack = 4
defense = 4
move = 1
hits = 1
cost = 8
"""
LOCALLY = "run `tracker odds` on your own machine for big battles"


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def ask(tmp_path: Path) -> Any:
    """`tracker odds ARGS` through the API about campaign "house" (played on a ruleset with
    monitors) by its referee: (status, body)."""
    from starlette.testclient import TestClient

    from tracker.server.app import create_app

    house = tmp_path / "house.toml"
    house.write_text(BUILTIN.replace('name = "twtea-3e"', 'name = "house"', 1) + MONITOR, encoding="utf-8")
    db = str(tmp_path / "league.db")
    run("--db", db, "new", "house", "--scenario", "north-sea-1914", "--ruleset", str(house))
    run("--db", db, "new", "plain", "--scenario", "north-sea-1914")
    token = run("--db", db, "players", "add", "rita", "--referee", "--league").strip().splitlines()[-1]
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:

        def post(*args: str, campaign: str = "house") -> tuple[int, Any]:
            answer = client.post(
                "/api/command",
                json={"args": ["odds", *args], "campaign": campaign},
                headers={"Authorization": f"Bearer {token}"},
            )
            return answer.status_code, answer.json()

        yield post


def test_a_house_type_over_the_bound_is_refused_before_it_is_weighed(ask: Any) -> None:
    status, body = ask("naval", "--attacker", "Germany:monitor=11", "--defender", "Britain:destroyer=1")
    message = f"the server weighs odds of at most 10 units a side, this battle has 11 on one side: {LOCALLY}"
    assert (status, body.get("error")) == (409, message)


def test_within_the_bound_the_campaigns_ruleset_weighs_it(ask: Any) -> None:
    status, body = ask("naval", "--attacker", "Germany:monitor=2", "--defender", "Britain:destroyer=1")
    assert status == 200 and "(ruleset house)" in body["stdout"]


def test_another_campaign_or_a_builtin_named_reads_the_builtin_types(ask: Any) -> None:
    """The campaign on twtea-3e, and --ruleset twtea-3e, have no monitor: the command says so."""
    for args, campaign in ((["--ruleset", "twtea-3e"], "house"), ([], "plain")):
        status, body = ask("naval", "--attacker", "Germany:monitor=11", "--defender", "Britain:destroyer=1", *args,
                           campaign=campaign)  # fmt: skip
        assert status == 400 and body["error"].startswith("unknown unit type 'monitor'"), (args, campaign)


def test_the_api_document_says_which_ruleset_weighs_a_position_given_by_hand() -> None:
    from tracker.server.openapi import openapi_document

    body = openapi_document()["paths"]["/command"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    said = body["properties"]["campaign"]["description"]
    assert "`odds` of a position given by hand weighs it by this campaign's ruleset" in said
