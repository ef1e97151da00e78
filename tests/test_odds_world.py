"""The odds a player of great-war-1914 asks in big positions: a convoy search with more results
(how many of each kind of searcher detect) than exact odds can weigh is refused in one line (or,
for the escorts' advice, left unweighed while a cheaper answer exists), and the advice's
`tracker odds` lines stay whole on a terminal, to copy."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.board import Board
from domain.campaign import Campaign
from domain.dice import commitment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance, cli_on
from tracker.analysis import escorts
from tracker.analysis import odds as view
from tracker.cli import common
from tracker.cli.main import cli

RULESET, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("great-war-1914")
WA, IRISH = "Western Approaches", "Irish Sea"
MOST = 4096  # view.MAX_SEARCH_RESULTS
KINDS = "destroyer=2,cruiser=2,battleship=2,bomber=2,fighter=2"  # 3**5 results of a search


def britain_guarding(units: list[tuple[str, str, str]], ntr: int = 4) -> Board:
    """Britain's combat movement of round 1 with only `units` (nation, type, zone) on the board
    and `ntr` British NTR in the Western Approaches."""
    c = Campaign.create(uuid.uuid4(), "world", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != ("Britain", "combat_movement"):
        advance(c)
    c.units.clear()
    codes = {n: v["code"] for n, v in SCENARIO["nations"].items()}
    for i, (nation, unit_type, zone) in enumerate(units):
        c.units[f"{codes[nation]}-{RULESET.units[unit_type].abbr}{i + 1}"] = {
            "type": unit_type,
            "nation": nation,
            "at": zone,
            "damage": 0,
            "moved": 0,
        }
    c.ntr["Britain"][WA] = ntr
    return c.board()


def test_a_convoy_search_with_more_results_than_exact_odds_take_is_refused_in_one_line_CV3() -> None:
    # Ten kinds of searchers, two of each: 3**10 results of a search (how many of each kind
    # detect), refused before any is worked out.
    result = CliRunner().invoke(
        cli,
        ["odds", "convoy", "--attacker", "Germany:submarine=1", "--defender", f"Britain:{KINDS}"]
        + ["--defender", f"France:{KINDS}", "--ntr", "2"],
    )
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "CV3" in lines[0] and "20 ships and aircraft search" in lines[0], lines
    assert "59,049 results" in lines[0] and f"at most {MOST:,}" in lines[0]
    assert "Traceback" not in result.output


def test_a_search_by_many_alike_searchers_is_weighed_by_how_many_detect_CV3() -> None:
    # Twenty destroyers and cruisers: 11 * 11 results, where each rolling on its own made 2**20.
    assert view.MAX_SEARCH_RESULTS == MOST
    state, _, _ = view.hypothetical(
        "convoy", RULESET, ("Germany:submarine=1",), ("Britain:destroyer=10,cruiser=10",), (), 2, False
    )
    assert view.search_results(state) == 11 * 11
    view.require_small_search(state)  # nothing refused
    state, _, _ = view.hypothetical("convoy", RULESET, ("Germany:submarine=1",), (f"Britain:{KINDS}",), (), 2, False)
    assert view.search_results(state) == 3**5


def test_escorts_answer_from_a_pool_larger_than_exact_odds_take_weighing_no_choice_beyond_it_CV3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One U-boat in the Western Approaches, more British destroyers in the Irish Sea than a
    # search can weigh together (a bound of 4 results for speed: 3 destroyers, 4 results): the
    # cheapest escort is one of them, and no choice of more searchers than exact odds take is
    # enumerated on the way (it would run for minutes).
    monkeypatch.setattr(view, "MAX_SEARCH_RESULTS", 4)
    board = britain_guarding([("Germany", "submarine", WA)] + [("Britain", "destroyer", IRISH)] * 4)
    sizes: list[int] = []
    weigh = escorts.loss

    def counting(q: escorts.Convoys, w: escorts.Window, counts: dict[str, int], *rest: object) -> tuple[float, int]:
        sizes.append(sum(counts.values()))
        return weigh(q, w, counts, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(escorts, "loss", counting)
    data = escorts.answer(escorts.convoy_question(board, WA), 1.2, 20_000)
    now = data["windows"][0]
    assert now["threats"] == {"Germany": 1} and len(now["reachable"]) == 4
    assert now["found"] and now["counts"] == {"destroyer": 1}
    assert sizes and max(sizes) <= 3


def test_escorts_refuse_in_one_line_when_the_answer_needs_more_searchers_than_exact_odds_take_CV3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fewer results than the real bound, for speed: the choices of at most two destroyers (3
    # results) miss the bound, and the search stops at the first of three instead of enumerating it.
    monkeypatch.setattr(view, "MAX_SEARCH_RESULTS", 3)
    board = britain_guarding([("Germany", "submarine", WA)] + [("Britain", "destroyer", IRISH)] * 3)
    with pytest.raises(escorts.InputError, match=r"came to 3 searchers.*4 results.*at most 3 \(CV3.*--type"):
        escorts.answer(escorts.convoy_question(board, WA), 0.0, 20_000)


def test_escorts_lines_to_copy_stay_whole_on_a_terminal_CV3(monkeypatch: pytest.MonkeyPatch) -> None:
    board = britain_guarding([("Germany", "submarine", WA), ("Britain", "destroyer", IRISH)])
    data = escorts.answer(escorts.convoy_question(board, WA), 0.0, 20_000)
    commands = [c for w in data["windows"] for c in w["commands"]]
    assert commands and all(len(c) > 40 for c in commands)
    monkeypatch.setattr(common, "prose_width", lambda: 40)
    shown = common.fit_prose(escorts.render(data)).splitlines()
    for c in commands:
        assert c in (line.strip() for line in shown), shown


@pytest.mark.parametrize("most,weighed", [(MOST, True), (4, False)], ids=["weighed", "too-many-results"])
def test_luck_weighs_a_convoy_battle_searched_by_many_and_skips_one_of_too_many_results_CV3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most: int, weighed: bool
) -> None:
    # Every turn report carries the battles' luck: a convoy battle with 18 ships and aircraft
    # that may search ran the odds of its search (2**18 results) for minutes into gigabytes.
    # Weighed by how many of each kind detect, it is counted; a search with more results than
    # exact odds take (a bound of 4 here) is skipped, as a battle of too many units is, and
    # the rest of the luck is counted.
    from domain.procedures import odds as engine
    from domain.procedures.convoy import ConvoyBattle

    monkeypatch.setattr(view, "MAX_SEARCH_RESULTS", most)
    weigh = engine.exact_odds
    sizes: list[int] = []

    def bounded(state: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(state, ConvoyBattle):
            sizes.append(len(state.searchers or state.eligible))
            assert view.search_results(state) <= most, "a search too big to weigh was weighed"
        return weigh(state, *args, **kwargs)

    monkeypatch.setattr(engine, "exact_odds", bounded)
    run = cli_on(tmp_path / "c.db")
    run("new", "w", "--scenario", "north-sea-1914", "--dice", "auto")
    run("adjust", "--add", "Britain:destroyer:Central North Sea:12", "--reason", "a big escort")
    for _ in range(100):  # bounded: a heading worded otherwise fails here, not hangs
        if "Britain · collect resources" in run("state").splitlines()[0]:
            break
        for line in run("pending").splitlines():
            if "convoy pass --by" in line:
                run("convoy", "pass", "--by", line.split("convoy pass --by ")[1].split()[0])
                break
        else:
            run("next")
    else:
        pytest.fail("never reached Britain's collect resources phase")
    run("convoy", "declare", "--by", "Germany", "--zone", "Central North Sea")
    run("convoy", "roll", "1")
    if "convoy casualties 1" in run("pending"):  # CV2: a 20 sinks a U-boat, Germany's pick
        run("convoy", "casualties", "1")
    assert "eligible: FR-BM1 at 2, GB-BM1 at 2" in run("pending")  # 18 may search
    # Luck counts a battle once it has ended: fought to its end with the defaults.
    run("convoy", "auto", "1")
    luck = json.loads(run("luck", "--json"))
    assert [b["kind"] for b in luck["battles"]] == (["convoy"] if weighed else [])
    assert sizes == ([18] if weighed else [])
    assert "Germany" in luck["nations"]
