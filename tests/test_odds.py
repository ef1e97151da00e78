"""Exact odds (`domain.procedures.odds`, `tracker odds`): the enumerator against brute force over
every die face, the dice grouping of every roll step of naval battles, the odds of a battle in
progress in a campaign, and the command line.

Brute force walks the same pure transitions, rolling every die of a step on every face (no
grouping, no pooling, no loop formula) and sums 1/faces^n per face combination."""

from __future__ import annotations

import json
import re
import shlex
from fractions import Fraction
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.procedures import odds
from domain.procedures.base import Context, Decision, Ended, Outcome
from domain.procedures.canon import Canon
from domain.procedures.engine import EXPANDED
from tests.odds_positions import TOP, asw_combat, context, convoy_battle, interception_of, naval_battle
from tests.support import advance as advance_passing
from tracker.analysis import odds as analysis_odds
from tracker.cli.main import cli
from tracker.service.application import Tracker


def _every_face(ctx: Context, state: Any) -> list[tuple[Any, Fraction]]:
    """Every face of every die of the roll `state` waits for: (child state settled, chance)."""
    n = odds.need(state, ctx)
    assert isinstance(n, odds.Roll)
    dice = [(i, g) for i, g in enumerate(n.groups) for _ in range(g.count)]
    draws = [list(product(range(1, g.faces + 1), repeat=g.dice)) for _, g in dice]
    total = 1
    for d in draws:
        total *= len(d)
    out = []
    for combo in product(*draws):
        counts = [[0] * len(g.values) for g in n.groups]
        for (i, g), draw in zip(dice, combo, strict=True):
            counts[i][g.category(draw)] += 1
        child, _ = odds.roll(state, ctx, tuple(tuple(c) for c in counts))
        out.append((_settle(ctx, child), Fraction(1, total)))
    return out


def _settle(ctx: Context, state: Any) -> Any:
    n = odds.need(state, ctx)
    while isinstance(n, Decision):
        state, _ = odds.decide(state, ctx, None)
        n = odds.need(state, ctx)
    return state


def brute_force(
    ctx: Context, state: Any, memo: dict[Any, dict[Outcome, Fraction]] | None = None
) -> dict[Outcome, Fraction]:
    """The outcome distribution by rolling every die on every face (for procedures that end)."""
    memo = {} if memo is None else memo
    state = _settle(ctx, state)
    if state in memo:
        return memo[state]
    n = odds.need(state, ctx)
    if isinstance(n, Ended):
        memo[state] = {n.outcome: Fraction(1)}
        return memo[state]
    out: dict[Outcome, Fraction] = {}
    for child, p in _every_face(ctx, state):
        for o, q in brute_force(ctx, child, memo).items():
            out[o] = out.get(o, Fraction(0)) + p * q
    memo[state] = out
    return out


def exact(ctx: Context, state: Any) -> dict[Outcome, Fraction]:
    result = odds.exact_odds(state, ctx)
    assert result.truncated == 0
    return {o: m[0] for o, m in result.outcomes.items()}


GERMAN_TE3 = {"Germany": {"advanced_submarine": TOP["advanced_submarine"]}}
BRITISH_TE4 = {"Britain": {"advanced_asw": TOP["advanced_asw"]}}


@pytest.mark.parametrize(
    "tech,subs,searchers,ntr",
    [
        ({}, 2, {"destroyer": 1}, 3),
        (GERMAN_TE3, 1, {"cruiser": 1}, 2),
        (BRITISH_TE4, 1, {"destroyer": 1, "bomber": 1}, 1),
    ],
    ids=["plain", "TE3", "TE4-with-aircraft"],
)
def test_convoy_odds_equal_brute_force_CV2_CV7(
    tech: dict[str, Any], subs: int, searchers: dict[str, int], ntr: int
) -> None:
    ctx = context(tech)
    state = convoy_battle(ctx, subs, searchers, ntr)
    assert exact(ctx, state) == brute_force(ctx, state)


@pytest.mark.parametrize(
    "tech,hunters,subs",
    [
        ({}, {"destroyer": 1}, 1),
        (BRITISH_TE4, {"destroyer": 1}, 2),
        (GERMAN_TE3 | BRITISH_TE4, {"destroyer": 1, "fighter": 1}, 1),
    ],
    ids=["plain", "TE4", "TE3-TE4-aircraft"],
)
def test_asw_odds_equal_brute_force_AS2_AS5(tech: dict[str, Any], hunters: dict[str, int], subs: int) -> None:
    ctx = context(tech)
    state = asw_combat(ctx, hunters, subs)
    assert exact(ctx, state) == brute_force(ctx, state)


@pytest.mark.parametrize(
    "tech,subs,searchers",
    [({}, 2, {"destroyer": 2}), (GERMAN_TE3, 2, {"destroyer": 1, "cruiser": 1}), (BRITISH_TE4, 1, {"destroyer": 1})],
    ids=["plain", "TE3", "TE4"],
)
def test_interception_odds_equal_brute_force_SM2_SM5(
    tech: dict[str, Any], subs: int, searchers: dict[str, int]
) -> None:
    ctx = context(tech)
    state = interception_of(ctx, subs, searchers)
    assert exact(ctx, state) == brute_force(ctx, state)


def test_interception_fighting_on_equals_brute_force_SM4() -> None:
    """With fight on after every round the fight can last; brute force with a depth of rounds
    reaches the exact odds within the mass it leaves."""
    ctx = context()
    state = interception_of(ctx, 1, {"destroyer": 1}, goes_on=False)
    fight = odds.exact_odds(state, ctx, lambda s, d: _fight_on(d))
    assert fight.truncated == 0 and sum(m[0] for m in fight.outcomes.values()) == 1
    assert fight.probability(lambda o: o.result == "submerged") == 0
    default = odds.exact_odds(state, ctx)
    assert fight.probability(lambda o: o.attacker_units_lost == 1) > default.probability(
        lambda o: o.attacker_units_lost == 1
    )


def _fight_on(d: Decision) -> object | None:
    from domain.procedures.interception import InterceptionDecision

    return InterceptionDecision() if d.kind == "decide" else None


NAVAL = [
    ({}, {"destroyer": 1}, {"destroyer": 1}),
    ({}, {"submarine": 2}, {"destroyer": 1, "transport": 1}),
    ({}, {"battleship": 1, "submarine": 1}, {"destroyer": 1}),
    (GERMAN_TE3, {"submarine": 1, "cruiser": 1}, {"battleship": 1}),
    (BRITISH_TE4, {"submarine": 2}, {"fighter": 1, "destroyer": 1}),
]


@pytest.mark.parametrize("tech,attackers,defenders", NAVAL, ids=["DD-DD", "SS-screen", "BB-SS", "TE3", "TE4-air"])
def test_every_naval_roll_step_equals_every_face_NC2_NC3_HA1_HA7(
    tech: dict[str, Any], attackers: dict[str, int], defenders: dict[str, int]
) -> None:
    """A naval battle may go on for ever, so brute force checks each roll step the enumerator
    met: the grouped, pooled chances of its results equal rolling every die on every face."""
    ctx = context(tech)
    state = naval_battle(ctx, attackers, defenders)
    engine = odds.Engine(ctx, None)
    engine.canon = Canon(state)
    root, _ = engine.settle(state)
    order = engine.order(root)
    checked = 0
    for s in order:
        if isinstance(odds.need(s, ctx), Ended):
            continue
        faces: dict[Any, Fraction] = {}
        for child, p in _every_face(ctx, s):
            # The enumerator names each position's units canonically (`Canon`).
            child = engine.canon(child) if engine.canon else child
            faces[child] = faces.get(child, Fraction(0)) + p
        grouped: dict[Any, Fraction] = {}
        for (child, _), p in engine.edges[s]:
            grouped[child] = grouped.get(child, Fraction(0)) + p
        assert grouped == faces
        checked += 1
    assert checked >= 1
    result = odds.exact_odds(state, ctx)
    assert result.truncated == 0 and sum(m[0] for m in result.outcomes.values()) == 1


def test_a_battle_that_cannot_end_soon_sums_its_rounds_exactly_NC3() -> None:
    """1 destroyer against 1 destroyer: each round ends it with chance 1 - (7/10)^2; the
    number of rounds is geometric, so its mean is 1/(1 - 49/100)."""
    ctx = context()
    result = odds.exact_odds(naval_battle(ctx, {"destroyer": 1}, {"destroyer": 1}), ctx, rounds=1)
    mean, variance = result.rounds()
    p = 1 - Fraction(49, 100)
    assert mean == pytest.approx(float(1 / p), rel=1e-12)
    assert variance == pytest.approx(float((1 - p) / p**2), rel=1e-9)
    assert result.probability(lambda o: o.result == "mutual_destruction") == Fraction(9, 100) / p


# ----- a battle in progress in a campaign, and the command line -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_odds_of_a_battle_in_progress_follow_the_referee_NC1(tmp_path: Path) -> None:
    """`tracker odds 1` at each step of a naval battle the referee plays with auto dice: the
    odds are a distribution, and once it ends the command says so."""
    db = str(tmp_path / "odds.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    with Tracker(db) as t:

        def to_battle(c: Any, _dice: Any) -> None:
            while c.phase != "naval_combat":
                advance_passing(c)
            c.naval_start("Germany", "Central North Sea")

        t.execute(t.campaign_id(None), to_battle)
    data = json.loads(run(db, "odds", "1", "--json", "--exact"))
    assert data["procedure"] == "naval"
    assert abs(sum(o["probability"] for o in data["outcomes"]) - 1) < 1e-12
    assert sum(Fraction(o["exact"]) for o in data["outcomes"]) == 1
    assert set(data["p"]) <= {"attacker_wins", "defender_wins", "mutual_destruction", "no_hit_possible"}
    assert set(data["expected"]) >= {"ntr_destroyed", "attacker_units_lost", "defender_units_lost", "rounds"}
    text = run(db, "odds", "1")
    assert text.startswith("Odds of battle 1 (naval in Central North Sea), from its step targets:")
    run(db, "battle", "auto", "1")
    assert "battle 1 (naval) has ended" in run(db, "odds", "1", code=1)
    assert run(db, "odds", "9", code=2).startswith("Error: no battle 9 in progress")


def test_odds_of_a_position_given_by_hand_as_text_and_json(tmp_path: Path) -> None:
    db = str(tmp_path / "none.db")
    out = run(db, "odds", "naval", "--attacker", "Germany:destroyer=1", "--defender", "Britain:destroyer=1", "--exact")
    assert "mutual destruction  3/17" in out  # (9/100) / (1 - 49/100)
    data = json.loads(
        run(
            db,
            "odds",
            "convoy",
            "--attacker",
            "Germany:submarine=2",
            "--defender",
            "Britain:destroyer=1",
            "--ntr",
            "3",
            "--tech",
            "Germany:advanced_submarine",
            "--json",
        )
    )
    assert data["procedure"] == "convoy" and 0 < data["expected"]["ntr_destroyed"] <= 3
    assert all({"probability", "ntr_destroyed"} <= set(o) for o in data["outcomes"])
    assert "p_exact" not in data and all("exact" not in o for o in data["outcomes"])  # floats without --exact
    exact = json.loads(
        run(
            db,
            "odds",
            "convoy",
            "--attacker",
            "Germany:submarine=2",
            "--defender",
            "Britain:destroyer=1",
            "--ntr",
            "3",
            "--tech",
            "Germany:advanced_submarine",
            "--json",
            "--exact",
        )
    )
    assert sum(Fraction(o["exact"]) for o in exact["outcomes"]) == 1
    assert exact["p"] == pytest.approx(data["p"], abs=1e-12)
    out = run(
        db,
        "odds",
        "asw",
        "--attacker",
        "Britain:destroyer=2",
        "--defender",
        "Germany:submarine=1",
        "--after-round",
        "fight",
    )
    assert "ended by submerging" not in out
    assert not Path(db).exists()  # nothing touched a database


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["naval", "--attacker", "Germany:zeppelin=1", "--defender", "Britain:cruiser=1"],
            "unknown unit type 'zeppelin'",
        ),
        (["naval", "--attacker", "Germany", "--defender", "Britain:cruiser=1"], "a force is NATION:TYPE=N"),
        (["naval", "--attacker", "Germany:cruiser=99", "--defender", "Britain:cruiser=1"], "unit counts are 1..20"),
        (["convoy", "--attacker", "Germany:submarine=1", "--defender", "Britain:cruiser=1"], "needs --ntr"),
        (
            ["convoy", "--attacker", "Germany:cruiser=1", "--defender", "Britain:cruiser=1", "--ntr", "2"],
            "submarines only",
        ),
        (
            ["asw", "--attacker", "Britain:destroyer=1", "--defender", "Germany:submarine=1", "--tech", "Britain:warp"],
            "unknown technology",
        ),
        (["duel"], "give a battle number or one of convoy"),
        (["naval", "--attacker", "Germany:cruiser=1"], "give the forces of both sides"),
    ],
)
def test_bad_odds_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = run(str(tmp_path / "none.db"), "odds", *args, code=2)
    assert message in out and out.count("\n") == 1, out


def test_the_readme_odds_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    # The first example: a position given by hand (the advice after it needs a campaign).
    section = readme[readme.index("### Exact odds") : readme.index("And the other way round")]
    command = next(line for line in section.splitlines() if line.startswith("tracker odds naval"))
    shown = [line[1:].strip() for line in section.splitlines() if line.startswith("#   ") and "%" in line]
    out = run(str(tmp_path / "none.db"), *command.split()[1:])
    for line in shown:
        assert line in " ".join(out.split()) or line in out, line


def test_an_enumeration_stops_at_its_limit_of_positions_and_names_it() -> None:
    """A battle beyond the limit is refused, not left to run for minutes; at the limit it runs
    to the end, telling how far it got now and then."""
    ctx = context()
    attackers = {"battleship": 1, "cruiser": 1, "destroyer": 2, "submarine": 1, "fighter": 1}
    defenders = {"battleship": 1, "aircraft_carrier": 1, "cruiser": 1, "destroyer": 2, "submarine": 1}
    state = naval_battle(ctx, attackers, defenders)
    seen: list[int] = []
    full = odds.exact_odds(state, ctx, exact=False, progress=seen.append)
    assert full.states > 256 and seen and seen == sorted(seen) and all(n % 256 == 0 for n in seen)
    with pytest.raises(odds.TooManyPositions, match="over 100 positions with dice to roll"):
        odds.exact_odds(state, ctx, exact=False, limit=100)
    assert odds.exact_odds(state, ctx, exact=False, limit=full.states).outcomes == full.outcomes


@pytest.mark.parametrize("exact", [False, True], ids=["floats", "fractions"])
def test_a_battle_beyond_the_limit_is_refused_once_found_not_once_expanded(exact: bool) -> None:
    """A big battle's positions take milliseconds each to expand, and the walk finds them far
    faster: it is refused as soon as it has found more positions with a roll than the limit
    (each would be expanded), so a refusal comes in a second rather than after minutes. The
    limit itself is unchanged: a battle of exactly that many positions still runs."""
    ctx = context()
    state = convoy_battle(ctx, 6, {"destroyer": 6}, ntr=8)
    expanded = 0

    def count() -> None:
        nonlocal expanded
        expanded += 1

    token = EXPANDED.set(count)
    try:
        with pytest.raises(odds.TooManyPositions, match="over 300 positions with dice to roll"):
            odds.exact_odds(state, ctx, exact=exact, limit=300)
    finally:
        EXPANDED.reset(token)
    assert expanded < 300 // 4, expanded


def test_odds_beyond_max_positions_are_refused_in_one_line_exit_1(tmp_path: Path) -> None:
    forces = ["--attacker", "Germany:cruiser=2,destroyer=2", "--defender", "Britain:cruiser=2,destroyer=2"]
    out = run(str(tmp_path / "none.db"), "odds", "naval", *forces, "--max-positions", "3", code=1)
    assert out.count("\n") == 1 and "over 3 positions" in out and "--max-positions" in out, out
    assert "Traceback" not in out
    out = run(str(tmp_path / "none.db"), "odds", "naval", *forces, "--max-positions", "0", code=2)
    assert "--max-positions" in out


def shown_counts(text: str, label: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(rf"\r{label}: ([0-9,]+)", text)]


@pytest.mark.parametrize("exact", [True, False], ids=["fractions", "floats"])
def test_a_long_enumeration_shows_a_running_count_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    """Every engine of the work tells the count of each position it expands: the first
    positions of a big battle can take a second each, so the count is not kept for round
    numbers (it once showed nothing for half a minute)."""
    import io
    import sys

    from tracker.cli import common

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(common, "COUNT_AFTER", 0.0)
    monkeypatch.setattr(common, "COUNT_EVERY", 0.0)
    ctx = context()
    state = naval_battle(ctx, {"battleship": 1, "destroyer": 2, "submarine": 1}, {"cruiser": 2, "destroyer": 1})
    for stream, expect in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        with common.counting("Positions enumerated"):
            full = odds.exact_odds(state, ctx, exact=exact)
        text = stream.getvalue()
        counts = shown_counts(text, "Positions enumerated")
        if not expect:
            assert text == ""
            continue
        assert counts[:3] == [1, 2, 3] and counts == sorted(counts) and 1 < counts[-1] <= full.states
        assert text.endswith("\r\033[K")


def test_the_advice_search_shows_its_running_count_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tracker odds need` and `escorts` weigh many battles: the count goes on across them."""
    import io
    import sys

    from tests.test_odds_advise import CNS, FIGHTER_HURTS, board_of
    from tracker.analysis import advise, reach
    from tracker.cli import common

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(common, "COUNT_AFTER", 0.0)
    monkeypatch.setattr(common, "COUNT_EVERY", 0.0)
    monkeypatch.setattr(sys, "stderr", Terminal())
    with common.counting("Positions enumerated"):
        advise.search(reach.attack_question(board_of(FIGHTER_HURTS), "Germany", CNS), 0.85, 20_000)
    counts = shown_counts(sys.stderr.getvalue(), "Positions enumerated")
    assert counts and counts == list(range(1, len(counts) + 1))


def test_max_positions_cannot_be_given_through_a_server() -> None:
    """One player's command must not hold a league server's thread and memory for minutes."""
    from domain.errors import InputError
    from tracker.server.commands import check_args

    assert check_args(["odds", "naval", "--attacker", "Germany:cruiser=1"])
    for args in (["odds", "naval", "--max-positions", "999999"], ["odds", "naval", "--max-positions=999999"]):
        with pytest.raises(InputError, match="--max-positions cannot be given through a server"):
            check_args(args)


def test_damaged_capital_ships_left_read_in_the_plural_F3(tmp_path: Path) -> None:
    forces = ["--attacker", "Germany:battleship=2,destroyer=1", "--defender", "Britain:cruiser=2"]
    out = run(str(tmp_path / "none.db"), "odds", "naval", *forces)
    assert "2 battleships (damaged)" in out and "(damaged)s" not in out, out


def test_the_readme_advice_examples_print_what_the_readme_shows(tmp_path: Path) -> None:
    """The README's `odds need`, `odds escorts` and `odds buy` lines, on a new north-sea-1914
    campaign: `buy` in Germany's first purchase phase, the others at its combat movement."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("And the other way round") : readme.index("`tracker luck` sets")]
    block = section[section.index("```sh\n") + 6 : section.index("```\n", section.index("```sh\n"))]
    examples: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("tracker "):
            command, _, shown = line.partition("  #")
            # A comment on the command's own line says what it prints, in words or as printed.
            said = shown.strip()
            examples.append((command.strip(), [said] if said and not said.startswith("per type") else []))
        elif line.startswith("#   "):
            examples[-1][1].append(line[1:].strip())
    assert [c.split()[2] for c, _ in examples] == ["need", "escorts", "buy"]
    db = str(tmp_path / "c.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    run(db, "next")  # research -> purchase
    for command, shown in sorted(examples, key=lambda e: e[0].split()[2] != "buy"):
        if command.split()[2] != "buy" and "combat" not in run(db, "state"):
            run(db, "next")  # purchase -> combat_movement
        out = " ".join(run(db, *shlex.split(command)[1:]).split())
        for words in shown:
            # A line the README shortens ends in "...": its beginning is what the command prints.
            assert " ".join(words.removesuffix("...").split()) in out, (command, words)


@pytest.mark.parametrize("tty", [True, False], ids=["terminal", "pipe"])
def test_odds_text_wraps_between_words_at_the_terminals_width(tty: bool) -> None:
    """At 80 columns an outcome line goes on under its text, no word cut (the terminal cut
    "submarine" / "s"); in a pipe every line stays whole."""
    from tracker.cli.common import CLIENT_TERMINAL

    args = ["--attacker", "Germany:battleship=2,cruiser=2,submarine=2"]
    args += ["--defender", "Britain:battleship=1,cruiser=2,destroyer=2"]
    whole = CliRunner().invoke(cli, ["odds", "naval", *args]).output
    token = CLIENT_TERMINAL.set({"columns": 80, "color_system": None, "no_color": True, "tty": tty})
    try:
        out = CliRunner().invoke(cli, ["odds", "naval", *args]).output
    finally:
        CLIENT_TERMINAL.reset(token)
    if not tty:
        assert out == whole
        return
    lines = out.splitlines()
    assert any(len(line) > 80 for line in whole.splitlines())
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert out.split() == whole.split()  # the same words, none cut
    outcome = next(
        i for i, line in enumerate(lines) if "%  attacker wins: attacker left:" in line and i + 1 < len(lines)
    )
    assert lines[outcome + 1].startswith(" " * 12) and not lines[outcome + 1].startswith(" " * 13)


def test_a_command_to_copy_is_never_wrapped() -> None:
    """`tracker odds need` prints the `tracker odds naval` line behind its answer: wrapped, it
    could not be copied whole."""
    from tracker.cli.common import CLIENT_TERMINAL, fit_prose

    command = "  tracker odds naval --attacker Germany:battleship=2,cruiser=3 --defender Britain:battleship=3,cruiser=1"
    prose = "  units: " + ", ".join(f"DE-BB{i} (Heligoland Bight, 1 move)" for i in range(1, 5))
    token = CLIENT_TERMINAL.set({"columns": 60, "color_system": None, "no_color": True, "tty": True})
    try:
        out = fit_prose(f"{prose}\n{command}\n").splitlines()
    finally:
        CLIENT_TERMINAL.reset(token)
    assert out[-1] == command
    assert len(out) > 2 and all(len(line) <= 60 for line in out[:-1])
    assert out[1].startswith("      ") and " ".join(" ".join(out[:-1]).split()) == " ".join(prose.split())


def test_exact_chances_of_thousands_of_digits_are_written_whole() -> None:
    """A big battle's exact chances have denominators past the 4,300 digits Python's str()
    writes: `--exact` printed "a number in the input has more than 4300 digits" instead."""
    chance = Fraction(7**6000 + 1, 6**7000)
    written = analysis_odds._fraction(chance)
    numerator, denominator = written.split("/")
    assert Fraction(int_of(numerator), int_of(denominator)) == chance
    assert len(denominator) > 4300


def int_of(digits: str) -> int:
    """An int of any length from its decimal digits, read a chunk at a time as `_decimal`
    writes them (int() refuses more than 4,300 digits too)."""
    value = 0
    for start in range(0, len(digits), 1000):
        chunk = digits[start : start + 1000]
        value = value * 10 ** len(chunk) + int(chunk)
    return value
