"""Luck (`tracker luck`, the luck section of reports): every roll weighed at its odds when it
was rolled, against what it brought; battles weighed by their exact odds from the first roll.

The campaign is the README walkthrough with manual dice, so every expected value is worked out
by hand here: in turn 1 Britain searches for two U-boats with GB-DD3 and GB-DD4 (SM3: 2 each,
dice 7 and 8: 0 of 0.4 expected); in Britain's collect phase (turn 2) DE-SS1 rolls a 7 on the
convoy table (CV5: 1-3 none, 4-6 one, 7-8 two, 9-10 three: 13/10 expected, 2 destroyed)."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.test_readme import walkthrough
from tracker.cli.main import cli


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The README walkthrough, to its end (an undo and a redo of the collection included:
    undone events do not count, their redone copies do, once)."""
    db = str(tmp_path_factory.mktemp("luck") / "campaign.db")
    for command, code, _ in walkthrough():
        run(db, *shlex.split(command)[1:], code=code)
    return db


def metric(data: dict[str, Any], nation: str, turn: int, name: str) -> dict[str, float]:
    row = next(r for r in data["nations"][nation]["turns"] if r["turn"] == turn)
    figures: dict[str, float] = row["metrics"][name]
    return figures


def test_searches_count_at_their_target_numbers_SM3(played: str) -> None:
    data = json.loads(run(played, "luck", "--json"))
    assert metric(data, "Britain", 1, "searches") == {"expected": 0.4, "actual": 0.0}


def test_the_convoy_table_counts_at_its_odds_CV5(played: str) -> None:
    data = json.loads(run(played, "luck", "--json"))
    turn = next(r["turn"] for r in data["nations"]["Germany"]["turns"] if r["metrics"]["ntr_destroyed"]["actual"])
    assert metric(data, "Germany", turn, "ntr_destroyed") == {"expected": 1.3, "actual": 2.0}
    assert metric(data, "Britain", turn, "ntr_lost") == {"expected": 1.3, "actual": 2.0}
    # The search of CV3 at 4 (GB-DD1: a 2) and 2 (GB-BM1: a 5): 0.6 expected, 1 found.
    assert metric(data, "Britain", turn, "searches") == {"expected": 0.6, "actual": 1.0}


def test_battles_have_a_percentile_from_their_odds(played: str) -> None:
    data = json.loads(run(played, "luck", "--json"))
    battles = {b["battle"]: b for b in data["battles"]}
    assert set(battles) == {1, 2}
    for b in battles.values():
        assert 0 <= b["percentile"] <= 1
    # The convoy battle: Germany lost DE-SS2 to GB-DD1's hit, and sank nothing.
    assert battles[2]["actual"] == {"attacker_units_lost": 1, "defender_units_lost": 0, "ntr_destroyed": 2}
    totals = data["nations"]["Germany"]["total"]
    assert totals["units_lost"]["actual"] == 1
    germany_only = json.loads(run(played, "luck", "--nation", "de", "--json"))
    assert list(germany_only["nations"]) == ["Germany"]
    text = run(played, "luck")
    assert "searches succeeded" in text and "battle 2 (convoy, Central North Sea), Germany against Britain" in text


def test_a_convoy_battle_is_weighed_with_the_searchers_its_owner_picked_CV3(played: str) -> None:
    """Britain searched with GB-BM1 and GB-DD1 only (CV3, after merchant defence): which units
    search is its choice, not luck, so the battle's odds are those of `tracker odds convoy` with
    those two, not of every eligible unit searching (0.71 German submarines lost expected)."""
    battle = {b["battle"]: b for b in json.loads(run(played, "luck", "--json"))["battles"]}[2]
    forces = ["--attacker", "Germany:submarine=2", "--defender", "Britain:bomber=1,destroyer=1", "--ntr", "3"]
    odds = json.loads(run(played, "odds", "convoy", *forces, "--json"))["expected"]
    for key in ("attacker_units_lost", "defender_units_lost", "ntr_destroyed"):
        assert battle["expected"][key] == pytest.approx(odds[key], abs=1e-12), key
    assert battle["percentile"] == pytest.approx(0.2717)


def test_reports_carry_the_luck_of_their_rolls(played: str, tmp_path: Path) -> None:
    data = json.loads(run(played, "report", "--all", "--format", "json"))
    assert data["luck"]["nations"]["Britain"]["total"]["searches"]["expected"] == pytest.approx(1.0)
    assert "## Luck" in run(played, "report", "--all", "--format", "md")
    html = tmp_path / "all.html"
    run(played, "report", "--all", "--format", "html", "-o", str(html))
    assert 'id="chart-luck"' in html.read_text()


def test_reports_carry_each_battles_percentile(played: str, tmp_path: Path) -> None:
    """The turn report's luck section has what `tracker luck` has: each battle's percentile
    (JSON key, a Markdown table, an HTML table)."""
    luck = json.loads(run(played, "luck", "--json"))
    data = json.loads(run(played, "report", "--all", "--format", "json"))
    assert data["luck"]["battles"] == luck["battles"]
    convoy = next(b for b in data["luck"]["battles"] if b["battle"] == 2)
    turn = json.loads(run(played, "report", "--turn", str(convoy["turn"]), "--format", "json"))
    assert [b["battle"] for b in turn["luck"]["battles"]] == [2]
    assert turn["luck"]["battles"][0]["percentile"] == convoy["percentile"]
    text = run(played, "report", "--turn", str(convoy["turn"]), "--format", "md")
    section = text[text.index("## Luck") :]
    row = next(line for line in section.splitlines() if line.startswith("| 2 (convoy)"))
    assert f"| {convoy['percentile']:.0%} |" in row and "Central North Sea" in row
    html = tmp_path / "turn.html"
    run(played, "report", "--turn", str(convoy["turn"]), "--format", "html", "-o", str(html))
    page = html.read_text()
    cell = page[page.index('id="luck-battle-2"') :]
    assert f"{convoy['percentile'] * 100:.0f}%</td>" in cell[: cell.index("</tr>")]


def x_tick_labels(svg: str) -> list[str]:
    """The tick labels of a chart's x axis, read from its SVG (text kept as text)."""
    ns = "{http://www.w3.org/2000/svg}"
    (axis,) = [g for g in ET.fromstring(svg).iter(f"{ns}g") if g.get("id") == "chart-luck-x-axis"]
    return [t.text or "" for t in axis.iter(f"{ns}text") if t.get("class") == "tick"]


def test_the_luck_chart_counts_whole_national_turns(played: str) -> None:
    """x is the national turn, 0 the start, as in the other charts; a point at the end of every
    turn reported, a turn without rolls keeping the sum (the walkthrough's third turn)."""
    from tracker.reports.html import chart_svgs, luck_points
    from tracker.reports.report import build_report
    from tracker.service.application import Tracker

    with Tracker(played) as t:
        cid = t.campaign_id(None)
        whole, first, second = (build_report(t, cid, turn, fmt="html") for turn in (None, 1, 2))
    xs, lines = luck_points(whole)
    assert xs == [0, 1, 2, 3]
    # Britain's turn 1: 0 of 0.4 searches; GB-DD3 and GB-DD4 alone search (AS2, SM2: the odds
    # start from the searchers named), one finding a U-boat at 0.32, both at 0.04, and each
    # finder fighting one round (SM4: hit at 2, hit by the U-boat at 4): 0 of 0.08 units sunk
    # (0.32 x 0.2 + 0.04 x 0.4), 0 of 0.16 lost (0.32 x 0.4 + 0.04 x 0.8).
    assert lines["Britain"][:2] == [0.0, pytest.approx(-0.4 - 0.08 + 0.16)]
    assert lines["Germany"][3] == lines["Germany"][2] and lines["France"] == [0.0] * 4
    luck_svg = {c["key"]: c["svg"] for c in chart_svgs(whole)}["luck"]
    assert x_tick_labels(luck_svg) == ["start", "1", "2", "3"]
    # The walkthrough stops in turn 3: its point is that turn so far.
    assert "national turn (0 = start; each point: the end of a turn, the last so far)" in luck_svg
    # One turn: from the turn before it (0, the start, for turn 1) to its end, whole turns only.
    assert luck_points(first)[0] == [0, 1] and luck_points(second)[0] == [1, 2]
    assert x_tick_labels({c["key"]: c["svg"] for c in chart_svgs(first)}["luck"]) == ["start", "1"]
    assert x_tick_labels({c["key"]: c["svg"] for c in chart_svgs(second)}["luck"]) == ["1", "2"]


def test_battles_too_big_to_enumerate_quickly_are_left_out_F3() -> None:
    """The bound on a battle's positions: per nation and type the units left, and for capital
    ships (F3: two hits) how many of those are damaged."""
    from types import SimpleNamespace

    from tests.odds_positions import RULESET
    from tracker.analysis.luck import MAX_POSITIONS, positions

    def units(nation: str, **counts: int) -> list[Any]:
        return [SimpleNamespace(nation=nation, type=t) for t, n in counts.items() for _ in range(n)]

    assert positions(RULESET, units("Germany", destroyer=10) + units("Britain", destroyer=10)) == 121
    assert positions(RULESET, units("Germany", battleship=2)) == 6  # 0, 1 or 2 left, each damaged or not
    mixed = units("Germany", battleship=2, cruiser=2, destroyer=3, submarine=2, fighter=1) + units(
        "Britain", battleship=1, aircraft_carrier=1, cruiser=2, destroyer=3, submarine=2, fighter=1
    )
    assert positions(RULESET, mixed) > MAX_POSITIONS


def test_bad_luck_nation_is_one_line_and_exit_2(played: str) -> None:
    out = run(played, "luck", "--nation", "Atlantis", code=2)
    assert out.startswith("Error: ") and out.count("\n") == 1


def test_the_luck_table_fits_80_columns_with_every_figure_whole(played: str) -> None:
    """At 80 columns (a pipe's width too) every line fits, every expected/actual pair is
    whole, and the legend gives each short header its words."""
    data = json.loads(run(played, "luck", "--json"))
    text = run(played, "luck")
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    germany = next(line for line in lines if line.split()[:2] == ["Germany", "total"])
    totals = data["nations"]["Germany"]["total"]
    assert germany.split()[2:] == [f"{v['expected']:.2f}/{v['actual']:g}" for v in totals.values()]
    legend = " ".join(" ".join(lines).split())
    for words in data["metrics"].values():
        assert words in legend


# A board of one sea zone: Britain's destroyer and bomber against a German U-boat.
ASW_BOARD = """
[scenario]
name = "asw-by-air"
title = "ASW by air"
ruleset = "twtea-3e"
dice = "manual"
turn_order = ["Britain", "Germany"]

[sides]
"Central Powers" = ["Germany"]
"Entente" = ["Britain"]

[nations.Germany]
code = "DE"
resources = 10

[nations.Britain]
code = "GB"
resources = 10

[map.sea."North Sea"]
adjacent = ["England", "Germany"]

[map.land."England"]
owner = "Britain"

[map.land."Germany"]
owner = "Germany"

[[units]]
nation = "Germany"
type = "submarine"
at = "North Sea"

[[units]]
nation = "Britain"
type = "bomber"
at = "England"
"""


def asw_by_air(tmp_path: Path, destroyer: bool) -> str:
    """Britain flies GB-BM1 to the U-boat (F7) and starts ASW combat (AS1); GB-BM1 alone
    searches and finds it with a 1 (AS2: bombers at 3), and, without TE4, nobody attacks."""
    board = ASW_BOARD + ('\n[[units]]\nnation = "Britain"\ntype = "destroyer"\nat = "North Sea"\n' if destroyer else "")
    (tmp_path / "asw.toml").write_text(board)
    db = str(tmp_path / "asw.db")
    run(db, "new", "asw", "--scenario", str(tmp_path / "asw.toml"))
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "gb-bm1", "--to", "North Sea")
    run(db, "next")
    run(db, "asw", "start", "--zone", "North Sea")
    run(db, "asw", "search", "1", "--units", "gb-bm1", "--dice", "1")
    return db


def test_an_asw_combat_searched_by_aircraft_alone_has_its_luck_AS2_F7(tmp_path: Path) -> None:
    """Naming GB-BM1 commits it for the phase (F7): the battle's odds from its first roll (the
    search) start from the searchers named, not from the units still free to search then."""
    db = asw_by_air(tmp_path, destroyer=False)
    (battle,) = json.loads(run(db, "luck", "--json"))["battles"]
    assert battle["kind"] == "asw" and battle["expected"]["defender_units_lost"] == 0
    assert "## Luck" in run(db, "report", "--turn", "1")


def test_asw_luck_counts_only_the_searchers_named_AS2_AS3(tmp_path: Path) -> None:
    """GB-DD1 could have searched and attacked (AS3) but was not named: the U-boat could not
    be sunk, and the odds say so (they assumed every eligible unit searching)."""
    db = asw_by_air(tmp_path, destroyer=True)
    (battle,) = json.loads(run(db, "luck", "--json"))["battles"]
    assert battle["expected"] == {"attacker_units_lost": 0.0, "defender_units_lost": 0.0, "ntr_destroyed": 0.0}


def test_a_battle_still_being_fought_has_no_luck_until_it_ends_AS4(tmp_path: Path) -> None:
    """GB-DD1 finds the U-boat (AS2) and the fire (AS4) is still to come: nobody is sunk yet,
    which is no outcome of the battle to weigh (a percentile of 51% said it was one)."""
    board = ASW_BOARD + '\n[[units]]\nnation = "Britain"\ntype = "destroyer"\nat = "North Sea"\n'
    (tmp_path / "asw.toml").write_text(board)
    db = str(tmp_path / "asw.db")
    run(db, "new", "asw", "--scenario", str(tmp_path / "asw.toml"))
    run(db, "next", "--to", "naval_combat")
    run(db, "asw", "start", "--zone", "North Sea")
    run(db, "asw", "search", "1", "--units", "gb-dd1", "--dice", "1")
    data = json.loads(run(db, "luck", "--json"))
    assert data["battles"] == []
    assert metric(data, "Britain", 1, "units_sunk") == {"expected": 0.0, "actual": 0.0}
    assert metric(data, "Britain", 1, "searches") == {"expected": 0.2, "actual": 1.0}
    assert "| 1 (asw) |" not in run(db, "report", "--turn", "1")

    # Once it ends, it counts: GB-DD1 sinks DE-SS1 with a 1, DE-SS1 misses with a 10.
    run(db, "battle", "fire", "1", "--dice", "1,10")
    (battle,) = json.loads(run(db, "luck", "--json"))["battles"]
    assert battle["actual"] == {"attacker_units_lost": 0, "defender_units_lost": 1, "ntr_destroyed": 0}
