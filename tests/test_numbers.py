"""Numbers too large for the database, and filters that must match literally: one-line errors
with the right exit status, never "unexpected X"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import Tracker

HUGE = [str(2**63), str(2**31), str(10**30)]


def run(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "n.db")
    assert run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")[0] == 0
    assert run(path, "next")[0] == 0
    assert run(path, "next")[0] == 0
    assert run(path, "move", "DE-SS3", "--to", "Central North Sea")[0] == 0
    return path


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize(
    "args",
    [
        ["explain", "{n}"],
        ["state", "--at", "{n}"],
        ["state", "--turn", "{n}"],
        ["log", "--turn", "{n}"],
        ["log", "--battle", "{n}"],
        ["log", "--tail", "{n}"],
        ["undo", "--to", "{n}"],
        ["replay", "--to", "{n}"],
        ["report", "--turn", "{n}"],
        ["convoy", "roll", "{n}", "--dice", "1,1"],
        ["battle", "auto", "{n}"],
        ["ntr", "place", "Central North Sea", "{n}"],
    ],
)
def test_a_number_too_large_for_the_database_is_bad_usage(db: str, args: list[str], number: str) -> None:
    before = run(db, "log", "--json")[1]
    code, out = run(db, *[a.format(n=number) for a in args])
    assert code == 2, out
    assert "Error: " in out and "not in the range" in out and "unexpected" not in out, out
    assert run(db, "log", "--json")[1] == before


def test_demo_into_a_directory_is_bad_usage(tmp_path: Path) -> None:
    code, out = run(str(tmp_path / "x.db"), "demo", "--db", str(tmp_path))
    assert code == 2 and "is a directory" in out and "unexpected" not in out, out
    assert tmp_path.is_dir()


@pytest.mark.parametrize("pattern", ["%", "_", "%North%", "Central%North Sea"])
def test_log_zone_and_nation_filters_match_literally_never_as_a_pattern(db: str, pattern: str) -> None:
    # A pattern is no zone or nation: refused naming it, never matched as a wildcard.
    code, out = run(db, "log", "--json", "--zone", pattern)
    assert code == 2 and f"unknown zone {pattern!r}" in out, out
    code, out = run(db, "log", "--json", "--nation", pattern)
    assert code == 2 and f"unknown nation {pattern!r}" in out, out
    moved = json.loads(run(db, "log", "--json", "--zone", "Central North Sea")[1])
    assert [r["kind"] for r in moved] == ["UnitsMoved"]


@pytest.mark.parametrize("value", [2**63, 2**31])
def test_a_damaged_row_with_a_huge_number_gives_one_line_and_exit_1(db_url: str, unique_name: str, value: int) -> None:
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
        t.execute(cid, lambda c, d: advance_passing(c))
        table = t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
        with t.engine.begin() as conn:
            state = (
                conn.execute(table.select().where(table.c.originator_id == cid, table.c.originator_version == 2))
                .one()
                .state
            )
            data = json.loads(bytes(state))
            data["round"] = value
            conn.execute(
                update(table)
                .where(table.c.originator_id == cid, table.c.originator_version == 2)
                .values(state=json.dumps(data).encode())
            )
    try:
        if value < 2**63 and not db_url.startswith("postgresql"):
            pytest.skip("2^31 fits SQLite's integers")
        for args in (["log"], ["state", "--turn", "1"], ["explain", "2"], ["stats"], ["report", "--all"]):
            code, out = run(db_url, "--campaign", unique_name, *args)
            assert code == 1, (args, out)
            assert out.startswith("Error: ") and out.count("\n") == 1 and "unexpected" not in out, (args, out)
            assert "tracker verify" in out
        code, out = run(db_url, "--campaign", unique_name, "verify")
        assert code == 1 and "event 2 (PhaseAdvanced) was edited" in out, out
    finally:
        # The PostgreSQL database is shared by the session: take the damaged campaign away.
        with Tracker(db_url) as t, t.engine.begin() as conn:
            conn.execute(table.delete().where(table.c.originator_id == cid))


THOUSANDS = "9" * 5000  # beyond the 4300 digits Python reads as a number at all


@pytest.mark.parametrize("dice", [THOUSANDS, f"1,{THOUSANDS}", str(10**30)])
def test_a_die_of_thousands_of_digits_is_bad_usage(db: str, dice: str) -> None:
    # It was "unexpected ValueError: Exceeds the limit (4300 digits)", exit 1.
    before = run(db, "log", "--json")[1]
    result = CliRunner().invoke(cli, ["--db", db, "research", "advanced_submarine", "--dice", dice])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error: research: --dice: no die shows '")
    assert len(result.stderr.splitlines()) == 1 and "unexpected" not in result.stderr
    assert run(db, "log", "--json")[1] == before


def test_the_dice_input_refuses_a_die_of_thousands_of_digits_as_input() -> None:
    # The same dice sent as JSON (a league server's API) go through the action's input check.
    from domain.errors import InputError
    from tracker.service.inputs import DICE_FIELDS

    with pytest.raises(InputError, match="too many dice or a die out of range"):
        DICE_FIELDS[0].check("research", f"1,{THOUSANDS}")


def test_a_file_with_a_number_of_thousands_of_digits_is_bad_usage(db: str, tmp_path: Path) -> None:
    # An export or a scenario holding such a number: one line, exit 2, never "unexpected".
    export = tmp_path / "autumn.jsonl"
    assert run(db, "export", str(export))[0] == 0
    header, *events = export.read_text().splitlines()
    header = header.replace('"version":1,', f'"version":{THOUSANDS},', 1)
    export.write_text("\n".join([header, *events]) + "\n")
    scenario = tmp_path / "board.toml"
    assert run(db, "scenario", "new", "board", "-o", str(scenario))[0] == 0
    scenario.write_text(scenario.read_text().replace("resources = 20", f"resources = {THOUSANDS}", 1))
    for args in (
        ["scenario", "check", str(scenario)],
        ["new", "other", "--scenario", str(scenario)],
    ):
        result = CliRunner().invoke(cli, ["--db", db, *args])
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr == (
            "Error: a number in the input has more than 4300 digits: not a file the tracker wrote\n"
        ), args
    # An export names the line, the header's or an event's.
    result = CliRunner().invoke(cli, ["--db", db, "import", str(export), "--as", "copy"])
    assert result.exit_code == 2
    assert result.stderr == f"Error: {export}: line 1: a number there has more than 4300 digits\n"
    events[1] = events[1].replace('"seq":2,', f'"seq":{THOUSANDS},', 1)
    export.write_text("\n".join([header.replace(THOUSANDS, "1"), *events]) + "\n")
    result = CliRunner().invoke(cli, ["--db", db, "import", str(export), "--as", "copy"])
    assert result.exit_code == 2
    assert result.stderr == f"Error: {export}: line 3: a number there has more than 4300 digits\n"
