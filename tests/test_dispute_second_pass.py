"""A dispute over a battle, second pass: an override undo over both sides' actions says that
both sides must agree, and whom (RK3); a lock by a roll or an answer undone since says so; an
override undo's summary lists its rolls as runs; `explain` of a roll names the value its base
is and why (F4, NC1, CV4, AS4, SM4)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from domain.dice import Override
from domain.errors import InputError, RuleViolation
from domain.rules.record import check_override, locked_message, plan_undo
from domain.ruleset import load_ruleset, ruleset_from_dict
from domain.scenario import read_scenario, scenario_from_dict
from projections.summary import summary
from tracker.cli.main import cli
from tracker.service.application import Tracker


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def events(db: str) -> int:
    with Tracker(db) as t:
        return t.load(t.campaign_id(None)).version


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo campaign (fixed seed): an interception, an ASW combat, a convoy battle and
    naval battle 4 (events 217-252: Germany's opening fire, Britain's screens, both sides'
    fire), every die auto."""
    db = str(tmp_path_factory.mktemp("dispute2") / "demo.db")
    result = CliRunner().invoke(cli, ["demo", "--db", db])
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def battle_undone(demo: str, tmp_path: Path) -> str:
    """A copy of the demo, its naval battle (events 217-252) undone with both sides' agreement."""
    db = str(tmp_path / "undone.db")
    Path(db).write_bytes(Path(demo).read_bytes())
    run(db, "undo", "--to", "216", "--yes", "--override", "--reason", "wrong zone", "--agreed-by", "GB,DE")
    return db


def copy_of(demo: str, tmp_path: Path) -> str:
    db = str(tmp_path / "copy.db")
    Path(db).write_bytes(Path(demo).read_bytes())
    return db


# ----- RK3: whose agreement an override over both sides' actions needs -----


def test_rk3_an_override_over_both_sides_actions_says_both_sides_must_agree(demo: str, tmp_path: Path) -> None:
    db = copy_of(demo, tmp_path)
    before = events(db)
    undo = ("undo", "--to", "216", "--yes", "--override", "--reason", "wrong zone", "--agreed-by")
    out = run(db, *undo, "Germany", code=1)
    assert out == (
        "Error: RK3: an override undo concerns Germany and Britain, nations of different sides: each needs the "
        "agreement of a nation of another side than its own, so both sides must agree; Germany agrees for Britain "
        "only; still needed: one of Britain, France for Germany (e.g. --agreed-by Germany,Britain)\n"
    )
    out = run(db, *undo, "Britain", code=1)
    assert "Britain agrees for Germany only; still needed: one of Germany, Austria-Hungary for Britain" in out
    assert "(e.g. --agreed-by Britain,Germany)" in out
    out = run(db, *undo[:-1], code=2)
    assert out == (
        "Error: an override undo needs --agreed-by NATIONS: it concerns Germany and Britain, nations of different "
        "sides, so both sides must agree: one of Britain, France for Germany and one of Germany, Austria-Hungary "
        "for Britain (e.g. --agreed-by Britain,Germany; RK3)\n"
    )
    # The plain undo names the agreement the override needs, not only the first lock's side.
    out = run(db, "undo", "--to", "216", "--yes", code=1)
    assert out.endswith(
        "--agreed-by NATIONS (the locked actions are Germany's and Britain's, so both sides must agree: one of "
        "Britain, France for Germany and one of Germany, Austria-Hungary for Britain)\n"
    )
    assert events(db) == before, "a refused undo appended something"
    # What the refusal suggests is taken (the rule itself is unchanged: each side's nation).
    assert "agreed by Britain, Germany" in run(db, *undo, "Britain,Germany")


_RULESET_DATA = load_ruleset("twtea-3e")[1]
_SCENARIO_DATA = read_scenario("north-sea-1914")[0]
SCENARIO = scenario_from_dict(_SCENARIO_DATA, "north-sea-1914", ruleset_from_dict(_RULESET_DATA, "r"))


def test_rk3_one_side_concerned_keeps_its_message_and_allies_count_as_that_side() -> None:
    override = Override(reason="misclick", agreed_by=("Austria-Hungary",))
    with pytest.raises(RuleViolation, match=r"concerns Germany: it needs the agreement of a nation of another side"):
        check_override(SCENARIO, ["Germany", "Austria-Hungary"], override, "an override undo")
    assert check_override(SCENARIO, ["Germany", "Britain"], Override("x", ("France", "DE")), "u") == (
        "France",
        "Germany",
    )
    with pytest.raises(InputError, match=r"--agreed-by NATION: a nation of another side \(Britain, France\)"):
        check_override(SCENARIO, ["Germany"], Override("x", ()), "an override undo")
    # Two nations agreeing, both of one side: they agree for the other side only.
    with pytest.raises(RuleViolation, match=r"Britain and France agree for Germany only; still needed: one of "):
        check_override(SCENARIO, ["Germany", "Britain"], Override("x", ("Britain", "France")), "u")


# ----- RK3: a lock by a roll or an answer undone since -----


def _event(kind: str, version: int, action: int, /, **fields: Any) -> Any:
    return type(kind, (SimpleNamespace,), {})(originator_version=version, action=action, **fields)


def test_rk3_a_lock_by_an_answer_undone_since_says_so() -> None:
    before = {"round": 1, "nation": "Germany", "phase": "naval_combat", "battles": {}}
    plan = plan_undo(
        [
            _event("TargetsChosen", 5, 5, nation="Germany"),
            _event("ScreeningChosen", 6, 6, nation="Britain"),
            _event("ActionUndone", 7, 7, undone_from=6, undone_to=6, restored={}),
        ],
        before,
        SCENARIO,
    )
    # What the undo event records is worded as before (verify re-runs it and compares).
    assert [lock.because for lock in plan.locks] == ["action 5 by Germany was answered by Britain at event 6"]
    assert locked_message(plan).startswith(
        "action 5 by Germany was answered by Britain at event 6; Britain's answer was undone since by event 7, "
        "but it was seen: it still locks; undo it only with --override"
    )


def test_rk3_a_plain_undo_after_an_override_undo_says_the_roll_it_cites_was_undone(battle_undone: str) -> None:
    out = run(battle_undone, "undo", code=1)
    (undo,) = [r for r in json.loads(run(battle_undone, "log", "--kind", "ActionUndone", "--json"))]
    assert out == (
        "Error: RK3: action 215 by Germany is followed by dice (roll 33 at event 229); roll 33 was undone since "
        f"by event {undo['seq']}, but its dice were seen: they still lock; undo it only with --override --reason "
        "TEXT --agreed-by NATION (a nation of another side than Germany)\n"
    )


def test_rk3_a_lock_by_a_roll_still_in_play_says_nothing_of_an_undo(demo: str) -> None:
    out = run(demo, "undo", "--to", "216", "--yes", code=1)
    assert out.startswith("Error: RK3: action 217 by Germany is followed by dice (roll 33 at event 229) (and 4 more")
    assert "undone since" not in out, out


# ----- RK3: the undo's summary lists its rolls as runs -----


def test_rk3_an_override_undos_summary_lists_its_rolls_as_runs(battle_undone: str) -> None:
    (undo,) = json.loads(run(battle_undone, "log", "--kind", "ActionUndone", "--json"))
    assert undo["data"]["rolls"] == list(range(33, 42))
    assert undo["summary"] == (
        "undo of events 217-252 OVERRIDE (dice rolls 33-41 undone; agreed by Britain, Germany; reason: wrong zone)"
    )
    one = _event("ActionUndone", 9, 9, undone_from=3, undone_to=8, override=True, rolls=[7], agreed_by=[], reason="r")
    assert summary(one) == "undo of events 3-8 OVERRIDE (dice roll 7 undone; reason: r)"
    many = _event("ActionUndone", 9, 9, undone_from=3, undone_to=8, override=True, rolls=[1, 2, 5], reason="r")
    assert summary(many) == "undo of events 3-8 OVERRIDE (dice rolls 1-2, 5 undone; reason: r)"
    # The views written with the summary match a rebuild of the log.
    assert "view rows match a rebuild of the log" in run(battle_undone, "verify", "--projections")


def test_rk3_verify_and_the_report_name_an_override_undos_rolls_as_runs(battle_undone: str, tmp_path: Path) -> None:
    """`verify`'s list of overrides and the turn report's line said every roll taken back, one
    by one: thousands of numbers for a long undo."""
    assert "taking back rolls 33-41, agreed by Britain, Germany: wrong zone" in run(battle_undone, "verify")
    report = tmp_path / "all.md"
    run(battle_undone, "report", "--all", "-o", str(report))
    assert "taking back dice rolls 33-41" in report.read_text()


# ----- F4: which value a roll's base is, and why -----


@pytest.mark.parametrize(
    ("roll", "value", "line"),
    [
        # Naval battle 4: Germany attacks, Britain defends.
        (
            33,
            {"unit": "DE-SS1", "type": "submarine", "value": "attack", "base": 4, "side": "attacker"},
            "DE-SS1's attack 4 (submarine): Germany attacks in battle 4 (NC1), and an attacking unit fires at its "
            "attack value (F4)",
        ),
        (
            41,
            {"unit": "GB-DD2", "type": "destroyer", "value": "defense", "base": 3, "side": "defender"},
            "GB-DD2's defense 3 (destroyer): Britain defends in battle 4 (NC1), and a defending unit fires at its "
            "defense value (F4)",
        ),
        # The convoy battle: the submarines fire back at their defense value (3, not their attack 4).
        (
            27,
            {"unit": "DE-SS1", "type": "submarine", "value": "defense", "base": 3, "side": "attacker"},
            "DE-SS1's defense 3 (submarine): a submarine attacking a convoy fires back at its defense value (CV4)",
        ),
        (
            26,
            {"unit": "GB-DD1", "type": "destroyer", "value": "attack", "base": 3, "side": "defender"},
            "GB-DD1's attack 3 (destroyer): a unit that detected the submarines fires at its attack value (CV4)",
        ),
        # ASW combat: the hunted submarine fires back at its defense value; the hunter at its ASW value.
        (
            20,
            {"unit": "GB-SS1", "type": "submarine", "value": "defense", "base": 3, "side": "defender"},
            "GB-SS1's defense 3 (submarine): a detected submarine fires back at its defense value (AS4)",
        ),
        (
            17,
            {"unit": "DE-CA1", "type": "cruiser", "value": "ASW attack", "base": 2, "side": "attacker"},
            "DE-CA1's ASW attack 2 (cruiser): a detecting unit attacks its submarine at its ASW attack value (AS4)",
        ),
        # An interception: the moving submarine fires at its attack value.
        (
            5,
            {"unit": "DE-SS4", "type": "submarine", "value": "attack", "base": 4, "side": "attacker"},
            "DE-SS4's attack 4 (submarine): a detected submarine that is moving fires at its attack value (SM4)",
        ),
        (
            2,
            {"unit": "GB-DD3", "type": "destroyer", "value": "interception search", "base": 2, "side": None},
            "GB-DD3's interception search 2 (destroyer): a searching unit rolls at its interception search value (SM3)",
        ),
    ],
)
def test_f4_explain_of_a_roll_names_the_value_its_base_is_and_why(
    demo: str, roll: int, value: dict[str, Any], line: str
) -> None:
    data = json.loads(run(demo, "explain", "--roll", str(roll), "--json"))["dice"]
    assert {k: v for k, v in data["value"].items() if k != "why"} == value
    assert line.endswith(data["value"]["why"])
    assert f"  Value: {line}\n" in run(demo, "explain", "--roll", str(roll))


def test_f4_a_roll_of_no_unit_names_no_value(demo: str) -> None:
    # A research roll (TE1) and the merchant defence (CV2) roll for no unit's value.
    for roll in (1, 22):
        assert json.loads(run(demo, "explain", "--roll", str(roll), "--json"))["dice"]["value"] is None
        assert "  Value:" not in run(demo, "explain", "--roll", str(roll))


def test_f4_a_defending_bomber_and_carrier_fire_at_their_defense_values(tmp_path: Path) -> None:
    """The values where attack and defense differ: a bomber attacks at 6 and defends at 2, a
    carrier attacks at 2 and defends at 4 (F4)."""
    db = str(tmp_path / "carrier.db")
    run(db, "new", "cv", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next", "--to", "naval_combat")
    cns = "Central North Sea"
    run(
        db,
        "adjust",
        "--reason",
        "they join",
        "--add",
        f"Britain:aircraft_carrier:{cns}",
        "--add",
        f"Britain:bomber:{cns}",
    )
    run(db, "adjust", "--reason", "it joins", "--add", f"Germany:battleship:{cns}")
    run(db, "battle", "start", "--zone", cns)
    run(db, "battle", "auto")
    rolled = json.loads(run(db, "log", "--kind", "DiceRolled", "--json"))
    first: dict[str, int] = {}
    for r in rolled:
        first.setdefault(r["data"]["unit"], r["data"]["roll"])
    for unit, kind, base in (("GB-BM2", "bomber", 2), ("GB-CV2", "aircraft carrier", 4)):
        data = json.loads(run(db, "explain", "--roll", str(first[unit]), "--json"))["dice"]
        assert data["base_target"] == base
        assert (data["value"]["value"], data["value"]["base"], data["value"]["side"]) == ("defense", base, "defender")
        assert (
            f"  Value: {unit}'s defense {base} ({kind}): Britain defends in battle 1 (NC1), and a defending unit fires "
            "at its defense value (F4)\n"
        ) in run(db, "explain", "--roll", str(first[unit]))
    data = json.loads(run(db, "explain", "--roll", str(first["DE-BB3"]), "--json"))["dice"]["value"]
    assert (data["value"], data["base"], data["side"]) == ("attack", 7, "attacker")


def test_cv4_a_volley_longer_than_the_events_read_at_first_is_listed_whole(
    demo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The volley was looked for among the 64 events either side of the roll: a bigger one was
    cut short without a word, "die N of M" wrong. Read as far as the volley goes."""
    import tracker.service.history as history

    whole = json.loads(run(demo, "explain", "roll", "37", "--json"))["dice"]["volley"]
    assert len(whole) > 3
    monkeypatch.setattr(history, "_VOLLEY_REACH", 1)
    assert json.loads(run(demo, "explain", "roll", "37", "--json"))["dice"]["volley"] == whole


def test_ha7_the_hits_a_casualty_choice_placed_read_as_the_log_reads_them(demo: str) -> None:
    """`explain` of a casualty choice listed the hits it placed in words of their own ("on
    Britain"), where `log` names the side by its units' nations, as the campaign's scenario says."""
    logged = {r["seq"]: r["summary"] for r in json.loads(run(demo, "log", "--json"))}
    chosen = [r["seq"] for r in json.loads(run(demo, "log", "--kind", "CasualtiesChosen", "--json"))]
    placed = [h for seq in chosen for h in json.loads(run(demo, "explain", str(seq), "--json"))["choice"]["hits"]]
    assert placed and all(h["summary"] == logged[h["seq"]] for h in placed), placed
