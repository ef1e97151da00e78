"""The CLI through click's CliRunner: output, exit codes, one-line errors, the README reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from tracker.cli.main import cli

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_new_then_state_shows_the_opening_position(db: str) -> None:
    out = run(db, "new", "autumn", "--scenario", "north-sea-1914")
    assert "Campaign 'autumn' created" in out
    assert "Round 1 · Germany · research" in out
    data = json.loads(run(db, "state", "--json"))
    assert (data["round"], data["nation"], data["phase"]) == (1, "Germany", "research")
    assert {u["id"] for u in data["units"]} >= {"DE-SS1", "GB-CV1", "FR-BM1"}
    assert data["ntr"]["Britain"]["Western Approaches"] == 4
    assert "Forces" in run(db, "state")


def test_next_move_and_log(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    assert "round 1, Germany: purchase" in run(db, "next")
    run(db, "next")
    out = run(db, "move", "DE-SS3", "DE-SS4", "--path", "Southern North Sea,Dover Strait")
    # SM2: the U-boats stop in the Southern North Sea, where British destroyers may search them.
    assert "interception in Southern North Sea" in out and "Waiting: battle 1" in out
    run(db, "intercept", "search", "1", "--units", "")  # Britain lets them pass unsearched
    out = run(db, "intercept", "continue", "1")
    assert "through hostile Southern North Sea" in out
    records = json.loads(run(db, "log", "--json"))
    kinds = [r["kind"] for r in records]
    assert kinds[:5] == ["Created", "PhaseAdvanced", "PhaseAdvanced", "UnitsMoved", "InterceptionStarted"]
    assert records[-1]["kind"] == "UnitsMoved" and records[-1]["rule"] == "SM1"
    assert "UnitsMoved" in run(db, "log", "--kind", "UnitsMoved")


def test_sm1_refused_move_exits_1_with_one_line_and_records_nothing(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    before = len(json.loads(run(db, "log", "--json")))
    result = CliRunner().invoke(cli, ["--db", db, "move", "DE-DD1", "--path", "Southern North Sea,Dover Strait"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: SM1: DE-DD1")
    assert result.output.count("\n") == 1
    assert len(json.loads(run(db, "log", "--json"))) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["move", "XX-SS9", "--to", "Dover Strait"], "T3"),  # wrong phase is checked first
        (["state", "--bogus"], "state: no such option --bogus (see cli state --help)"),
        (["bogus"], "no such command 'bogus' (see cli --help)"),
        (["move", "DE-SS1"], "exactly one of --to or --path"),
    ],
)
def test_usage_and_refusals_have_exit_codes(db: str, args: list[str], message: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert message in result.output
    assert result.exit_code == (1 if message == "T3" else 2)
    assert "Traceback" not in result.output


def test_bad_inputs_exit_2_naming_the_input(db: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "state"])
    assert result.exit_code == 2 and "no database at" in result.output
    assert not Path(db).exists()  # reading creates nothing
    result = CliRunner().invoke(cli, ["--db", "mysql://x/y", "state"])
    assert result.exit_code == 2 and "unsupported database 'mysql'" in result.output
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "nowhere" / "c.db"), "state"])
    assert result.exit_code == 2 and "does not exist" in result.output
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello")
    result = CliRunner().invoke(cli, ["--db", str(not_db), "state"])
    assert result.exit_code == 2 and "not a SQLite database" in result.output
    result = CliRunner().invoke(cli, ["--db", db, "new", "x", "--scenario", "atlantis"])
    assert result.exit_code == 2 and "unknown scenario 'atlantis'" in result.output
    bad = tmp_path / "bad.toml"
    bad.write_text("[ruleset\n")
    result = CliRunner().invoke(cli, ["--db", db, "new", "x", "--scenario", "north-sea-1914", "--ruleset", str(bad)])
    assert result.exit_code == 2 and "bad.toml:1: ruleset: not valid TOML" in result.output


def test_a_user_ruleset_file_is_validated_and_recorded(db: str, tmp_path: Path) -> None:
    raw = (Path(__file__).resolve().parent.parent / "domain/data/rulesets/twtea-3e.toml").read_text()
    typo = tmp_path / "house.toml"
    typo.write_text(raw.replace("attack = 3\n", "atack = 3\n", 1))
    result = CliRunner().invoke(cli, ["--db", db, "new", "x", "--scenario", "north-sea-1914", "--ruleset", str(typo)])
    assert result.exit_code == 2
    # The misspelt key itself, not the one it was meant to be as missing.
    line = raw[: raw.index("attack = 3\n")].count("\n") + 1
    assert f"house.toml:{line}: units.destroyer.atack: unknown key (did you mean 'attack'?)" in result.output
    house = tmp_path / "house2.toml"
    house.write_text(raw.replace("cost = 10\nsuccess_min = 9", "cost = 5\nsuccess_min = 9"))
    run(db, "new", "house", "--scenario", "north-sea-1914", "--ruleset", str(house))
    house.write_text(raw)  # editing the file later never changes the running campaign
    out = run(db, "research", "advanced_submarine")
    assert "pays 5" in out


def test_several_campaigns_need_campaign_option(db: str) -> None:
    run(db, "new", "one", "--scenario", "north-sea-1914")
    run(db, "new", "two", "--scenario", "north-sea-1914")
    result = CliRunner().invoke(cli, ["--db", db, "state"])
    assert result.exit_code == 2 and "pick one with --campaign (one, two)" in result.output
    run(db, "--campaign", "two", "next")
    assert json.loads(run(db, "--campaign", "two", "state", "--json"))["phase"] == "purchase"
    assert json.loads(run(db, "--campaign", "one", "state", "--json"))["phase"] == "research"
    assert json.loads(run(db, "campaigns", "--json")) == ["one", "two"]


def test_manual_dice_are_checked_and_recorded_with_reference(db: str) -> None:
    run(db, "new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    result = CliRunner().invoke(cli, ["--db", db, "research", "advanced_asw"])
    assert result.exit_code == 1 and "D4" in result.output and "--dice" in result.output
    result = CliRunner().invoke(cli, ["--db", db, "research", "advanced_asw", "--dice", "11"])
    assert result.exit_code == 1 and "D1" in result.output
    result = CliRunner().invoke(cli, ["--db", db, "research", "advanced_asw", "--dice", "9,9"])
    assert result.exit_code == 1 and "2 dice entered but the action rolled 1" in result.output
    assert len(json.loads(run(db, "log", "--json"))) == 1
    out = run(db, "research", "advanced_asw", "--dice", "9", "--ref", "roll-4411")
    assert "success" in out and "[manual, ref roll-4411]" in out
    roll = json.loads(run(db, "log", "--json", "--kind", "DiceRolled"))[0]["data"]
    assert roll["values"] == [9] and roll["source"] == "manual" and roll["reference"] == "roll-4411"


def test_verify_passes_then_names_a_hand_edited_row(db: str) -> None:
    run(db, "new", "v", "--scenario", "north-sea-1914")
    run(db, "research", "advanced_submarine")
    run(db, "next")
    events = len(json.loads(run(db, "log", "--json", "--asked")))  # 6, or 7 when the research roll succeeds
    assert run(db, "verify").startswith(f"OK: {events} events")
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        state = conn.execute(text("SELECT state FROM tracker_events WHERE originator_version = 3")).scalar_one()
        conn.execute(
            text("UPDATE tracker_events SET state = :s WHERE originator_version = 3"),
            {"s": bytes(state).replace(b'"cost":10', b'"cost":1')},
        )
    engine.dispose()
    result = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert result.exit_code == 1
    assert "event 3 (ResearchPaid) was edited" in result.output
    data = json.loads(CliRunner().invoke(cli, ["--db", db, "verify", "--json"]).output)
    assert data["ok"] is False and data["bad_event"] == 3


def test_dice_reveal_publishes_the_committed_seed(db: str) -> None:
    run(db, "new", "d", "--scenario", "north-sea-1914")
    run(db, "research", "advanced_submarine")
    out = run(db, "dice", "reveal")
    seed = re.search(r"Seed revealed: ([0-9a-f]{64})", out)
    assert seed
    records = json.loads(run(db, "log", "--json"))
    assert records[-1]["kind"] == "SeedRevealed" and records[-1]["data"]["seed"] == seed.group(1)
    assert "1 auto roll re-derived" in run(db, "verify")


def test_demo_plays_and_verifies(tmp_path: Path) -> None:
    demo_db = str(tmp_path / "demo.db")
    out = CliRunner().invoke(cli, ["demo", "--db", demo_db], catch_exceptions=False).output
    for rule in ("[TE1]", "[SM1]", "[CV6]", "[F6]", "refused: SM1", "refused: T3", "refused: F7"):
        assert rule in out
    assert "Verify: hash chain intact" in out
    verified = run(demo_db, "verify")
    # PL1, 10.1: the demo records named actions as a player does, so verify re-runs every one.
    assert verified.startswith("OK:") and "checked by hash only" not in verified
    assert re.search(r"Re-refereed: [1-9]\d* actions? run again", verified), verified


def _commands(group: click.Group, prefix: str = "tracker") -> list[tuple[str, click.Command]]:
    found = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        full = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found.extend(_commands(command, full))
        else:
            found.append((full, command))
    return found


def test_every_command_has_help_with_an_example_and_is_in_the_reference() -> None:
    reference = (README.parent / "docs" / "commands.md").read_text()
    for full, command in _commands(cli):
        assert command.help and "Example:" in command.help, f"{full} has no example in its help"
        assert f"`{full}`" in reference, f"{full} is missing from docs/commands.md"
    # Every command has its section (groups have one too, before their commands).
    documented = set(re.findall(r"^#+ `(tracker [a-z ]+)`", reference, re.MULTILINE))
    assert {full for full, _ in _commands(cli)} <= documented


def test_readme_starts_with_the_two_setup_commands() -> None:
    lines = README.read_text().splitlines()
    block = lines[lines.index("```sh") + 1 : lines.index("```sh") + 3]
    assert block[0].endswith("pip install . && tracker demo")
    assert block[1].endswith('pip install ".[test]" && python -m pytest -n auto')


def test_demo_refuses_to_replace_an_existing_database(tmp_path: Path) -> None:
    # The file given is bad input, not a rule's refusal: exit 2, as `new` of a name taken.
    existing = tmp_path / "campaign.db"
    existing.write_bytes(b"343 events of a campaign")
    result = CliRunner().invoke(cli, ["demo", "--db", str(existing)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {existing} already exists: the demo writes a new database and never replaces one; "
        "pick another --db or delete the file yourself\n"
    )
    assert existing.read_bytes() == b"343 events of a campaign"
    result = CliRunner().invoke(cli, ["--db", str(existing), "demo"])
    assert result.exit_code == 2 and existing.read_bytes() == b"343 events of a campaign"
    taken = str(tmp_path / "taken.db")
    assert CliRunner().invoke(cli, ["--db", taken, "new", "w", "--scenario", "north-sea-1914"]).exit_code == 0
    again = CliRunner().invoke(cli, ["--db", taken, "new", "w", "--scenario", "north-sea-1914"])
    assert again.exit_code == 2 and "already exists" in again.output
    assert CliRunner().invoke(cli, ["--db", taken, "demo"]).exit_code == 2


def test_demo_honours_the_global_db(tmp_path: Path) -> None:
    target = str(tmp_path / "global.db")
    result = CliRunner().invoke(cli, ["--db", target, "demo"])
    assert result.exit_code == 0, result.output
    assert f"Campaign 'demo' in {target}" in result.output
    assert run(target, "verify").startswith("OK:")
    result = CliRunner().invoke(cli, ["--db", target, "demo", "--db", str(tmp_path / "other.db")])
    assert result.exit_code == 2 and "give --db once" in result.output


def test_demo_names_a_database_url_as_given_so_its_commands_can_be_pasted(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'url.db'}"
    result = CliRunner().invoke(cli, ["--db", url, "demo"])
    assert result.exit_code == 0, result.output
    assert f"Campaign 'demo' in {url}:" in result.output
    assert f"Try: tracker --db {url} log" in result.output
    assert run(url, "verify").startswith("OK:")
    assert not (tmp_path / "other.db").exists()
    result = CliRunner().invoke(cli, ["demo", "--db", str(tmp_path / "no" / "such" / "dir.db")])
    assert result.exit_code == 2 and result.output.startswith("Error: cannot create the demo database ")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["export", "a\x00.jsonl"], "export: FILE"),
        (["import", "a\x00.jsonl"], "import: FILE"),
        (["import", "a.jsonl", "--reply", "a\x00"], "import: --reply"),
        (["report", "--turn", "1", "-o", "a\x00.md"], "report: -o / --output"),
        (["stats", "-o", "a\x00.csv"], "stats: -o / --output"),
        (["scenario", "check", "a\x00.toml"], "scenario check: FILE"),
        (["scenario", "map", "north-sea-1914", "-o", "a\x00.svg"], "scenario map: -o / --output"),
        (["scenario", "new", "x", "-o", "a\x00.toml"], "scenario new: -o / --output"),
        (["demo", "--db", "a\x00.db"], "demo: --db"),
        (["shell", "--history", "a\x00"], "shell: --history"),
        (["--campaign", "a\x00", "state"], "--campaign"),
        (["show", "Dover\x00"], "show: ZONE"),
    ],
)
def test_a_file_or_name_holding_a_nul_character_is_bad_usage_naming_its_option(
    tmp_path: Path, args: list[str], named: str
) -> None:
    db = str(tmp_path / "nul.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    out = run(db, *args, code=2)
    assert out.startswith(f"Error: {named}: give ") and "NUL character" in out and "unexpected" not in out
    assert len(out.strip().splitlines()) == 1


def test_a_database_named_with_a_nul_character_is_bad_usage_and_nothing_is_made(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "a\x00.db"), "new", "x", "--scenario", "north-sea-1914"])
    assert result.exit_code == 2 and result.output.startswith("Error: --db: give a database file or URL")
    assert list(tmp_path.iterdir()) == []


def test_an_error_quoting_a_huge_value_stays_a_short_line(db: str, tmp_path: Path) -> None:
    """A value pasted wrong (100,000 characters) is quoted cut, as the server quotes it; a long
    path is still shown whole."""
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    huge = "x" * 100_000
    out = run(db, "log", "--nation", huge, code=2)
    assert out.startswith("Error: unknown nation 'xxx") and len(out) < 700, len(out)
    assert f"'{'x' * 300}...'" in out
    far = tmp_path / ("d" * 100) / "missing.db"
    out = run(str(far), "state", code=2)
    assert str(far) in out
