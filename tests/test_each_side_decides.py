"""Each side decides for itself (PL2): the commands that take the defaults of several steps
(`battle auto`, `battle step`, `intercept auto`, `convoy auto`, `convoy declare --auto`, `battle
start --auto`, `asw start --auto`) take only the steps of the nations they decide for. Through
the league server that is the asking player's nations: such a command stops where another
player must choose or roll, says who and with which command, and is refused (recording
nothing) when the very first step is another's. Locally, with no players, it decides for all.

The battles are the fuzz's positions (`tests.test_battle_command_fuzz`): a naval battle where
Germany picks targets, Britain screens its battleships (HA3) and both fire, and a convoy battle
on German trade where Germany rolls merchant defence (CV2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.errors import RuleViolation
from tests.support import in_process, served
from tests.test_battle_command_fuzz import CHOICES, Game, template
from tests.test_server import Reader
from tracker.service.application import Tracker
from tracker.service.players import Players
from tracker.service.verify import verify_campaign

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


@pytest.fixture(scope="module")
def positions() -> Iterator[dict[str, tuple[Path, Path]]]:
    folder = Path(tempfile.mkdtemp(prefix="tracker-each-side-"))
    try:
        made = {kind: template(folder, kind) for kind in ("naval", "convoy on German trade")}
        for kind in ("naval", "convoy"):
            made[f"{kind} unstarted"] = template(folder, kind, start=False)
        yield made
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def naval(positions: dict[str, tuple[Path, Path]], tmp_path: Path) -> Iterator[Game]:
    game = Game(*positions["naval"], tmp_path)
    yield game
    game.served.close()


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


def waits(game: Game, battle: int = 1) -> tuple[str, list[str]]:
    b = game.served.load(game.cid).battles[str(battle)]
    return b["step"], list(b["waiting"])


# ----- the aggregate: a command decides for the nations it is given (None: all) -----


def test_pl2_locally_without_players_battle_auto_decides_for_every_nation(tmp_path: Path) -> None:
    db, _keys = template(tmp_path, "naval", serve=False)
    with Tracker(str(db)) as t:
        cid = t.campaign_id(None)
        done = t.perform(cid, "battle auto", {"battle": 1})
        assert not done.campaign.battles
        chosen = {(type(e).__name__, e.nation) for e in done.events if type(e).__name__ in CHOICES}
        assert {("TargetsChosen", "Germany"), ("ScreeningChosen", "Britain")} <= chosen
        assert verify_campaign(t, cid).ok


def test_pl2_battle_auto_deciding_for_germany_stops_at_britains_screening(naval: Game) -> None:
    events = naval.ask("ref", "battle auto", {"battle": 1, "deciding": ["Germany"]})
    assert events is not None
    assert "TargetsChosen" in kinds(events) and "ScreeningChosen" not in kinds(events)
    assert waits(naval) == ("screening", ["Britain"])


def test_pl2_battle_auto_whose_first_step_is_anothers_is_refused_and_records_nothing(naval: Game) -> None:
    before = naval.stored_version()
    with pytest.raises(RuleViolation) as refused:
        naval.served.acting_as(
            naval.players["ref"],
            lambda: naval.served.perform(naval.cid, "battle auto", {"battle": 1, "deciding": ["Britain"]}),
        )
    assert refused.value.rule == "PL2" and "that step is Germany's" in str(refused.value)
    assert naval.stored_version() == before
    assert waits(naval) == ("targets", ["Germany"])


def test_pl2_a_volley_is_the_first_rollers_and_a_shared_choice_each_nations_own(naval: Game) -> None:
    # Targets, screens, then the volley: both sides roll, Germany first (HA1, HA3, NC3).
    assert naval.ask("anna", "battle step", {"battle": 1}) is not None
    assert naval.ask("bert", "battle step", {"battle": 1}) is not None
    assert waits(naval) == ("fire", ["Germany", "Britain"])
    assert naval.ask("bert", "battle step", {"battle": 1}) is None
    fired = naval.ask("anna", "battle step", {"battle": 1})
    assert fired is not None and "DiceRolled" in kinds(fired)
    # Both sides place their hits: Britain places its own first while Germany's wait (HA4).
    assert waits(naval) == ("casualties", ["Germany", "Britain"])
    placed = naval.ask("bert", "battle auto", {"battle": 1})
    assert placed is not None
    assert [(type(e).__name__, e.nation) for e in placed if type(e).__name__ in CHOICES] == [
        ("CasualtiesChosen", "Britain")
    ]
    assert waits(naval) == ("casualties", ["Germany"])


# ----- the league server's tracker: the asking player's nations -----


def test_pl2_germanys_battle_auto_stops_at_britains_screening(naval: Game) -> None:
    events = naval.ask("anna", "battle auto", {"battle": 1})
    assert events is not None and "ScreeningChosen" not in kinds(events)
    asked = [e for e in naval.served.events(naval.cid) if type(e).__name__ == "ActionAsked"][-1]
    assert (asked.player, asked.inputs["deciding"]) == ("anna", ["Germany"])
    assert waits(naval) == ("screening", ["Britain"])


def test_pl2_a_player_may_not_decide_for_another_players_nation(naval: Game) -> None:
    from tracker.service.players import Forbidden

    before = naval.stored_version()
    with pytest.raises(Forbidden, match="deciding for 'Britain' is not theirs"):
        naval.served.acting_as(
            naval.players["anna"],
            lambda: naval.served.perform(naval.cid, "battle auto", {"battle": 1, "deciding": ["Britain"]}),
        )
    assert naval.stored_version() == before


def test_pl2_battle_step_by_britain_while_germany_rolls_merchant_defence_is_refused(
    positions: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    game = Game(*positions["convoy on German trade"], tmp_path)
    try:
        assert waits(game) == ("merchant_defence", ["Germany"])
        before = game.stored_version()
        said = {}
        for name in ("battle step", "battle auto", "convoy auto", "convoy roll"):
            with pytest.raises(RuleViolation) as refused:
                game.served.acting_as(
                    game.players["bert"], lambda name=name: game.served.perform(game.cid, name, {"battle": 1})
                )
            assert refused.value.rule == "PL2", (name, refused.value)
            said[name] = str(refused.value)
        assert said["battle step"] == (
            "PL2: bert plays Britain; battle 1 is waiting for Germany: tracker convoy roll 1"
        )
        assert said["convoy auto"] == said["battle auto"] == said["battle step"]
        assert said["convoy roll"] == "PL2: bert plays Britain, not Germany; this action is Germany's"
        assert game.stored_version() == before
    finally:
        game.served.close()


@pytest.mark.parametrize(
    "kind, who, args, first, waiting",
    [
        (
            "convoy unstarted",
            "anna",
            ["convoy", "declare", "--by", "Germany", "--zone", "Central North Sea", "--auto"],
            "ConvoyAttackDeclared",
            "Waiting for Britain: tracker convoy roll 1   [PL2]",
        ),
        (
            "naval unstarted",
            "anna",
            ["battle", "start", "--zone", "Central North Sea", "--auto"],
            "NavalBattleStarted",
            "Waiting for Britain: tracker battle screen 1 [--screens FIRER=ESCORT,...]   [PL2]",
        ),
    ],
)
def test_pl2_a_command_that_starts_a_battle_and_plays_it_stops_at_the_other_sides_step(
    positions: dict[str, tuple[Path, Path]], tmp_path: Path, kind: str, who: str, args: list[str], first: str,
    waiting: str,
) -> None:  # fmt: skip
    from tracker.server.commands import run_command

    game = Game(*positions[kind], tmp_path)
    try:
        before = game.stored_version()
        done = run_command(game.served, game.players[who], "fuzz", args)
        assert (done["exit"], done["stderr"]) == (0, ""), done
        # The battle started is the asker's action; the steps after it stop at the other side's.
        assert waiting in done["stdout"].splitlines()
        recorded = game.served.events(game.cid)[before:]
        assert kinds(recorded)[1] == first
        assert not [e for e in recorded if type(e).__name__ in CHOICES and e.nation != "Germany"]
    finally:
        game.served.close()


def test_pl2_autos_stopped_at_each_sides_steps_verify(naval: Game) -> None:
    players = {"Germany": "anna", "Britain": "bert"}
    while naval.served.load(naval.cid).battles:
        nation = waits(naval)[1][0]
        assert naval.ask(players[nation], "battle auto", {"battle": 1}) is not None
    report = verify_campaign(naval.served, naval.cid)
    assert report.ok, report.problem


# ----- through `tracker serve`, one token per side -----


def tracker(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `--server` client run in this process, with no TRACKER_ setting of this environment
    but those `env` gives."""
    return in_process(*args, env=env)


@pytest.fixture
def league(positions: dict[str, tuple[Path, Path]], tmp_path: Path) -> Iterator[tuple[Any, dict[str, str]]]:
    game = Game(*positions["naval"], tmp_path)
    db, keys = game.served.url, game.folder / "keys.db"
    players = Players(game.served.engine)
    tokens = {
        "anna": players.add(str(game.cid), "anna", ["Germany"], False),
        "bert": players.add(str(game.cid), "bert", ["Britain"], False),
        "watch": players.add(str(game.cid), "watch", [], False, spectator=True),
    }
    game.served.close()
    with served(db, "--keys", str(keys), workdir=tmp_path) as server:
        yield Reader(server, tokens["watch"]), tokens


def remote(server: Any, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "COLUMNS": "100", "TRACKER_TOKEN": token}
    return tracker("--server", server.url, "--campaign", "fuzz", *args, env=env)


def test_pl2_through_the_server_each_side_makes_its_own_choices(league: tuple[Any, dict[str, str]]) -> None:
    server, tokens = league
    api = "/api/campaigns/fuzz"
    # Britain's token cannot open the battle: the targets are Germany's to choose.
    seq = server.get(f"{api}/state")[1]["seq"]
    refused = remote(server, tokens["bert"], "battle", "auto", "1")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("Error: PL2: bert plays Britain; battle 1 is waiting for Germany: ")
    assert "tracker battle targets 1" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert server.get(f"{api}/state")[1]["seq"] == seq
    status, body = server.post("/api/command", {"args": ["battle", "auto", "1"], "campaign": "fuzz"}, tokens["bert"])
    assert (status, body.get("rule")) == (403, "PL2"), body
    # Germany's auto takes Germany's targets and stops at Britain's screening, saying so.
    done = remote(server, tokens["anna"], "battle", "auto", "1")
    assert done.returncode == 0, done.stderr
    assert "Waiting for Britain: tracker battle screen 1 [--screens FIRER=ESCORT,...]   [PL2]" in done.stdout
    # Then each side's token answers its own steps until the battle ends.
    by_nation = {"Germany": "anna", "Britain": "bert"}
    for _ in range(30):
        pending = [p for p in server.get(f"{api}/pending")[1] if p["battle"] == 1]
        if not pending:
            break
        nation = pending[0]["waiting"][0]
        done = remote(server, tokens[by_nation[nation]], "battle", "auto", "1")
        assert done.returncode == 0, done.stderr
    assert not [p for p in server.get(f"{api}/pending")[1] if p["battle"] == 1]
    # PL1, PL2: every choice the players were asked for was made by the nation's own player.
    asked = {r["seq"]: r["data"] for r in server.get(f"{api}/log?kind=ActionAsked")[1]}
    choices = [r for kind in ("TargetsChosen", "ScreeningChosen") for r in server.get(f"{api}/log?kind={kind}")[1]]
    assert {r["data"]["nation"] for r in choices} == {"Germany", "Britain"}
    for r in choices:
        assert asked[r["data"]["action"]]["player"] == by_nation[r["data"]["nation"]], r
    verified = json.loads(remote(server, tokens["anna"], "verify", "--json").stdout)
    assert verified["ok"] is True
