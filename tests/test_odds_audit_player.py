"""`tracker odds` as a player deciding whether to fight: positions given by hand that the
referee never makes are refused, a battle in progress says what its figures count, and a few
chances worked out by hand from RULES.md alone (no tracker code) match the enumeration."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.parametrize(
    ("procedure", "forces", "refusal"),
    [
        (
            "convoy",
            ["--attacker", "Germany:submarine=1", "--attacker", "Austria-Hungary:submarine=1", "--ntr", "2"],
            "in a convoy battle the attacker is one nation (CV1)",
        ),
        (
            "intercept",
            ["--attacker", "Germany:submarine=1", "--attacker", "AH:submarine=1"],
            "in an interception the attacker is one nation (SM2)",
        ),
        (
            "asw",
            ["--attacker", "Britain:destroyer=1", "--attacker", "France:destroyer=1"],
            "in ASW combat the attacker is one nation (AS1)",
        ),
    ],
)
def test_cv1_sm2_as1_a_position_by_hand_has_one_attacking_nation(
    tmp_path: Path, procedure: str, forces: list[str], refusal: str
) -> None:
    """The referee's convoy attack is one nation's (CV1), a submarine group moves for one nation
    (SM2), ASW combat is fought with the nation's own units (AS1): two attacking nations made
    one attack the referee never plays, and its odds were given as if it did."""
    defender = ["--defender", "Germany:submarine=1"] if procedure == "asw" else ["--defender", "Britain:destroyer=1"]
    out = run(str(tmp_path / "none.db"), "odds", procedure, *forces, *defender, code=2)
    assert out == f"Error: {refusal}\n"


def test_cv3_sm2_allies_still_defend_together(tmp_path: Path) -> None:
    """The other side may be several nations: allies search a convoy zone (CV3), every enemy of
    the group may intercept it (SM2)."""
    db = str(tmp_path / "none.db")
    run(db, "odds", "intercept", "--attacker", "Germany:submarine=1", "--defender", "Britain:destroyer=1",
        "--defender", "France:destroyer=1")  # fmt: skip
    run(db, "odds", "convoy", "--attacker", "Germany:submarine=1", "--defender", "Britain:destroyer=1",
        "--defender", "France:cruiser=1", "--ntr", "2")  # fmt: skip


@pytest.mark.parametrize("procedure", ["naval", "convoy", "asw"])
def test_sm5_stops_here_belongs_to_interceptions(tmp_path: Path, procedure: str) -> None:
    """--stops-here (SM5) was taken silently where it means nothing, as --ntr is not."""
    forces = {
        "naval": ["--attacker", "Germany:destroyer=1", "--defender", "Britain:cruiser=1"],
        "convoy": ["--attacker", "Germany:submarine=1", "--defender", "Britain:destroyer=1", "--ntr", "2"],
        "asw": ["--attacker", "Britain:destroyer=1", "--defender", "Germany:submarine=1"],
    }[procedure]
    out = run(str(tmp_path / "none.db"), "odds", procedure, *forces, "--stops-here", code=2)
    assert out == "Error: --stops-here belongs to interceptions (SM5)\n"


def test_nc1_a_battle_in_progress_counts_losses_from_here_and_rounds_from_the_first(tmp_path: Path) -> None:
    """After a round the expected losses dropped by the units already lost while the rounds did
    not: the text now says which count from where, and the JSON gives the round."""
    db = str(tmp_path / "c.db")
    run(db, "new", "c", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    run(db, "move", "DE-BB1", "DE-CA1", "DE-SS3", "--to", "Central North Sea")
    run(db, "next")
    run(db, "battle", "start", "--zone", "Central North Sea")
    text = run(db, "odds")
    assert "  attacker units lost from here on: " in text
    assert "  defender units lost from here on: " in text
    assert "  rounds in all (from the first): " in text
    data = json.loads(run(db, "odds", "1", "--json"))
    assert data["round"] == 1
    by_hand = run(db, "odds", "naval", "--attacker", "Germany:destroyer=1", "--defender", "Britain:cruiser=1")
    assert "  attacker units lost: " in by_hand and "from here on" not in by_hand
    assert "round" not in json.loads(
        run(db, "odds", "naval", "--attacker", "Germany:destroyer=1", "--defender", "Britain:cruiser=1", "--json")
    )


# ----- chances worked out by hand from RULES.md -----


def _odds(tmp_path: Path, *args: str) -> dict[str, object]:
    return json.loads(run(str(tmp_path / "none.db"), "odds", *args, "--exact", "--json"))


def test_nc2_nc3_two_submarines_against_a_destroyer_by_hand(tmp_path: Path) -> None:
    """NC2: the destroyer cancels one submarine's opening fire; the other fires first at 4 (F4)
    and a hit sinks the destroyer before it fires. Otherwise round 1: the cancelled submarine
    fires with the destroyer (at 3, NC6: escorts hit submarines), then rounds until a side is
    gone (NC3)."""
    sub, dd = Fraction(4, 10), Fraction(3, 10)

    def rounds_of_one_sub() -> Fraction:  # 1 submarine v the destroyer, both fire each round
        return sub * (1 - dd) / (1 - (1 - sub) * (1 - dd))

    two_subs_hit = 1 - (1 - sub) ** 2
    # 2 submarines v the destroyer from round 2: win at once on a hit, else go on with one if hit.
    win_two = (two_subs_hit + (1 - two_subs_hit) * dd * rounds_of_one_sub()) / (1 - (1 - two_subs_hit) * (1 - dd))
    round_1 = sub + (1 - sub) * dd * rounds_of_one_sub() + (1 - sub) * (1 - dd) * win_two
    expected = sub + (1 - sub) * round_1
    data = _odds(tmp_path, "naval", "--attacker", "Germany:submarine=2", "--defender", "Britain:destroyer=1")
    assert Fraction(data["p_exact"]["attacker_wins"]) == expected  # type: ignore[index]


def test_nc6_f3_a_battleship_cannot_hit_the_submarine_that_sinks_it_in_five_rounds(tmp_path: Path) -> None:
    """NC6: battleships never hit submarines; F3: the battleship takes two hits, at 4 a round
    (opening fire, NC2, then every round): a negative binomial, 2 / 0.4 = 5 rounds."""
    data = _odds(tmp_path, "naval", "--attacker", "Germany:submarine=1", "--defender", "Britain:battleship=1")
    assert data["p"] == {"attacker_wins": 1.0}
    assert data["expected"]["rounds"] == pytest.approx(5.0, rel=1e-9)  # type: ignore[index]


@pytest.mark.parametrize(
    ("tech", "table"), [((), Fraction(13, 10)), (("--tech", "Germany:advanced_submarine"), Fraction(16, 10))]
)
def test_cv2_cv5_one_submarine_against_an_unescorted_convoy_by_hand(
    tmp_path: Path, tech: tuple[str, ...], table: Fraction
) -> None:
    """CV2: 2D10 totalling 20 (1 in 100) sinks the submarine; CV5: 1-3 none, 4-6 one, 7-8 two,
    9-10 three (mean 13/10), Advanced Submarine adding 1 with 10 staying 10 (mean 16/10, TE3)."""
    data = _odds(tmp_path, "convoy", "--attacker", "Germany:submarine=1", "--defender", "Britain", "--ntr", "3", *tech)
    assert Fraction(data["expected_exact"]["ntr_destroyed"]) == Fraction(99, 100) * table  # type: ignore[index]
