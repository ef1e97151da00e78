"""Bad usage and refused input as one line on stderr naming the command and the input (exit 2),
before anything is recorded: click's own errors, empty names, NaN, dice typed with empty values
or other scripts' digits, options that go with another; `replay --to` any event of the log;
a piped `tracker shell` exiting with the status of the line that failed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli.common import quoted
from tracker.cli.main import cli
from tracker.cli.params import dice_problem

DOCS = Path(__file__).resolve().parent.parent / "docs"


def invoke(db: str, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", db, *args], prog_name="tracker", input=stdin)


def ok(db: str, *args: str) -> str:
    result = invoke(db, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def refused(db: str, *args: str, code: int = 2) -> str:
    """The one line on stderr of a command that failed, checked: nothing on stdout, and the
    log as it was."""
    before = ok(db, "log", "--asked", "--json")
    result = invoke(db, *args)
    assert (result.exit_code, result.stdout) == (code, ""), result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert ok(db, "log", "--asked", "--json") == before
    return result.stderr


@pytest.fixture
def manual(tmp_path: Path) -> str:
    db = str(tmp_path / "m.db")
    ok(db, "new", "r", "--scenario", "north-sea-1914", "--dice", "manual")
    return db


@pytest.fixture
def auto(tmp_path: Path) -> str:
    db = str(tmp_path / "a.db")
    ok(db, "new", "r", "--scenario", "north-sea-1914", "--dice", "auto")
    return db


# ----- 1. click's usage errors: one line, the command, the input, where the help is -----


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["buy", "submarine", "0"],
            "buy: invalid value for [COUNT]: 0 is not in the range 1<=x<=1000 (see tracker buy --help)",
        ),
        (
            ["explain", "abc"],
            "explain: SEQ: give a whole number of at least 1 (got 'abc') (see tracker explain --help)",
        ),
        (
            ["buy", "submarine", "١"],
            "buy: [COUNT]: give a whole number from 1 to 1000 (got '١') (see tracker buy --help)",
        ),
        (
            ["log", "--tail", "0"],
            "log: invalid value for --tail: 0 is not in the range 1<=x<=2147483647 (see tracker log --help)",
        ),
        (["state", "--phase", "purchase"], "state: --phase needs --turn (see tracker state --help)"),
        (
            ["next", "--to", "nonsense"],
            "next: invalid value for --to: 'nonsense' is not one of 'research', 'purchase', 'combat_movement', "
            "'naval_combat', 'land_combat', 'noncombat_movement', 'placement', 'collect_resources' "
            "(see tracker next --help)",
        ),
        (
            ["dice", "switch"],
            "dice switch: missing argument {auto|manual}; choose from auto, manual (see tracker dice switch --help)",
        ),
        (
            ["next", "--seen", "99999999999999999999"],
            "next: invalid value for --seen: 99999999999999999999 is not in the range 1<=x<=2147483647 "
            "(see tracker next --help)",
        ),
        (["--seen", "5", "next"], "no such option --seen; did you mean --server? (see tracker --help)"),
        (["state", "a", "b"], "state: more arguments than the command takes: (a b) (see tracker state --help)"),
        (["dice", "bogus"], "dice: no such command 'bogus' (see tracker dice --help)"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command_and_the_input(manual: str, args: list[str], line: str) -> None:
    assert refused(manual, *args) == f"Error: {line}\n"


def test_help_is_unchanged_and_a_group_without_a_command_prints_its_help(manual: str) -> None:
    assert ok(manual, "buy", "--help").startswith("Usage: tracker buy [OPTIONS] UNIT_TYPE [COUNT]\n")
    result = invoke(manual, "dice")
    assert result.output.startswith("Usage: tracker dice [OPTIONS] COMMAND [ARGS]...")


def test_a_shell_line_says_a_usage_error_as_the_command_does(manual: str) -> None:
    result = invoke(manual, "shell", stdin="buy submarine 0\n")
    assert result.stderr == (
        "Error: buy: invalid value for [COUNT]: 0 is not in the range 1<=x<=1000 (see tracker buy --help)\n"
    )


# ----- 2. options that go with another -----


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["research", "advanced_submarine", "--reason", "r", "--agreed-by", "Britain"],
            "research: --reason and --agreed-by go with --override (see tracker research --help)",
        ),
        (
            ["research", "advanced_submarine", "--agreed-by", "Britain"],
            "research: --reason and --agreed-by go with --override (see tracker research --help)",
        ),
        (
            ["research", "advanced_asw", "--ref", "xyz"],
            "research: --ref goes with --dice (see tracker research --help)",
        ),
    ],
)
def test_override_words_and_a_reference_without_what_they_go_with_roll_nothing(
    auto: str, args: list[str], line: str
) -> None:
    assert refused(auto, *args) == f"Error: {line}\n"


def test_undo_with_a_reason_but_no_override_is_bad_usage(auto: str) -> None:
    ok(auto, "next")
    assert refused(auto, "undo", "--reason", "r") == (
        "Error: undo: --reason and --agreed-by go with --override (see tracker undo --help)\n"
    )


# ----- 3. empty names -----


def test_an_empty_nation_is_refused_not_taken_for_the_phasing_one(auto: str) -> None:
    ok(auto, "next")
    assert refused(auto, "buy", "submarine", "1", "--nation", "") == (
        "Error: buy: --nation: give a nation's name (got an empty one) (see tracker buy --help)\n"
    )
    assert refused(auto, "log", "--zone", " ") == (
        "Error: log: --zone: give a zone's name (got an empty one) (see tracker log --help)\n"
    )


@pytest.mark.parametrize(
    ("option", "what"),
    [("--db", "a database file or URL"), ("--campaign", "a campaign's name"), ("--server", "a server's URL")],
)
def test_an_empty_global_option_is_refused(tmp_path: Path, option: str, what: str) -> None:
    result = CliRunner().invoke(cli, [option, "", "state"], prog_name="tracker")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"Error: {option}: give {what} (got an empty one) (see tracker --help)\n"
    assert list(tmp_path.iterdir()) == []


# ----- 4. replay --to any event -----


def test_replay_stops_at_what_was_asked_before_an_action(auto: str) -> None:
    ok(auto, "next")
    out = ok(auto, "replay", "--to", "2")
    assert out.startswith("Event 2 (2/3) · turn 1 · Germany · research · ActionAsked [RK1]\n  asked: next\n")
    assert "Board after event 2" in out
    (frame,) = json.loads(ok(auto, "replay", "--to", "2", "--json"))
    assert (frame["seq"], frame["kind"], frame["board"]["phase"]) == (2, "ActionAsked", "research")
    # The refusal names the last event there is (it named none: a user had to look it up).
    assert refused(auto, "replay", "--to", "4") == "Error: no event 4 in this campaign (the last is event 3)\n"


# ----- 5. NaN and infinity -----


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["wait", "--timeout", "nan", "--player", "nobody"],
            "wait: --timeout: give a number from 0 to 604800 (got 'nan') (see tracker wait --help)",
        ),
        (
            ["odds", "need", "--zone", "Skagerrak", "--win", "nan"],
            "odds need: --win: give a number more than 0 and at most 1 (got 'nan') (see tracker odds need --help)",
        ),
        (
            ["odds", "escorts", "--zone", "Skagerrak", "--ntr-loss", "inf"],
            "odds escorts: --ntr-loss: give a number of at least 0 (got 'inf') (see tracker odds escorts --help)",
        ),
        (
            # Digits alone, beyond any float: it was taken for infinity.
            ["odds", "escorts", "--zone", "Skagerrak", "--ntr-loss", "1e400"],
            "odds escorts: --ntr-loss: give a number of at least 0 (got '1e400') (see tracker odds escorts --help)",
        ),
    ],
)
def test_nan_and_infinity_are_no_numbers_for_an_option(auto: str, args: list[str], line: str) -> None:
    assert refused(auto, *args) == f"Error: {line}\n"


# ----- 6. a reminder interval within bounds -----


def test_a_reminder_interval_is_at_most_30_days(auto: str) -> None:
    line = refused(auto, "notify", "add", "webhook", "https://example.com/h", "--remind", "99999999999999999999h")
    assert line == (
        "Error: notify add: --remind: give an interval from 60s to 30d (got '99999999999999999999h') "
        "(see tracker notify add --help)\n"
    )
    assert (
        ok(auto, "notify", "add", "webhook", "https://example.com/h", "--remind", "30d")
        .splitlines()[0]
        .endswith("reminded every 30d.")
    )


# ----- 7. db current --json as docs/json.md says -----


def test_db_current_json_has_the_keys_docs_json_lists(auto: str) -> None:
    (row,) = [line for line in (DOCS / "json.md").read_text().splitlines() if line.startswith("| `tracker db current`")]
    # The keys of the object, not those of the revisions listed inside it.
    documented = set(re.findall(r'"(\w+)"', re.sub(r"\[.*?\]", "", row.split("|")[2])))
    assert set(json.loads(ok(auto, "db", "current", "--json"))) == documented


# ----- 8. messages that name what they are about -----


def test_report_without_a_scope_says_what_to_give(auto: str) -> None:
    assert refused(auto, "report") == "Error: report: give --turn N or --all (see tracker report --help)\n"
    assert refused(auto, "report", "--turn", "1", "--all") == (
        "Error: report: give --turn N or --all, not both (see tracker report --help)\n"
    )


def test_a_unit_named_twice_is_named(auto: str) -> None:
    assert refused(auto, "adjust", "--remove", "DE-SS1,DE-SS1", "--reason", "x") == (
        "Error: DE-SS1 is named twice in --remove\n"
    )
    ok(auto, "next")
    ok(auto, "next")
    assert refused(auto, "move", "DE-DD1", "de-dd1", "--to", "Skagerrak") == "Error: de-dd1 is named twice\n"


def test_a_name_is_quoted_as_typed() -> None:
    assert [quoted(n) for n in ("autumn", "it's", 'say "q"', 'it\'s "q"', "a\nb")] == [
        "'autumn'",
        '"it\'s"',
        "'say \"q\"'",
        '\u201cit\'s "q"\u201d',
        "'a\\nb'",
    ]


def test_a_campaign_name_with_both_quotes_reads_as_typed(tmp_path: Path) -> None:
    db = str(tmp_path / "q.db")
    ok(db, "new", 'it\'s "q"', "--scenario", "north-sea-1914")
    assert ok(db, "campaign", "public") == (
        'Campaign \u201cit\'s "q"\u201d is private: only its players, referee and spectators read it, with their '
        "tokens.\n"
    )


# ----- 9. typed dice -----


@pytest.mark.parametrize(
    ("dice", "problem"),
    [
        ("1,,2", "empty value between commas"),
        ("1, ,2", "empty value between commas"),
        (",1", "empty value before the first comma"),
        ("1,", "empty value after the last comma"),
        ("٥", "give each die in the digits 0-9 (got '٥')"),
        ("1,２", "give each die in the digits 0-9 (got '２')"),
        ("abc", "give each die as a whole number (got 'abc')"),
        ("1.5", "give each die as a whole number (got '1.5')"),
        ("7;", "give each die as a whole number (got '7;')"),
        ("1_0", "give each die as a whole number (got '1_0')"),
    ],
)
def test_dice_with_an_empty_value_or_other_digits_are_refused(manual: str, dice: str, problem: str) -> None:
    assert refused(manual, "research", "advanced_asw", "--dice", dice) == (
        f"Error: research: --dice: {problem} (see tracker research --help)\n"
    )
    assert dice_problem(dice) == problem


def test_dice_typed_as_whole_numbers_pass_the_option_the_referee_judges_their_values() -> None:
    # D1: a die the roll cannot show is the referee's to refuse (exit 1), not bad typing.
    assert [dice_problem(d) for d in ("10,3", "10 3", "10, 3", "", "11", "-1", "0")] == [None] * 7


# ----- 10. a piped shell's exit status -----


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        ("state --json\npending\n", 0),
        ("state --bogus\nstate --json\n", 2),
        ("research advanced_asw\nstate --json\n", 1),  # manual dice: D4 wants --dice
        ("state --bogus\nresearch advanced_asw\npending\n", 1),
        ("research advanced_asw\nexplain abc\nexit\nstate\n", 2),
    ],
)
def test_a_piped_shell_exits_with_the_status_of_the_last_line_that_failed(manual: str, lines: str, code: int) -> None:
    result = invoke(manual, "shell", stdin=lines)
    assert result.exit_code == code, result.output
