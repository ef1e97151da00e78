"""A group's house rules from start to play: `tracker rulesets --copy` writes the built-in
ruleset to edit (a pip install keeps the built-in file deep in the Python environment), the copy
is named after its file, and the odds of a position given by hand weigh the selected campaign's
values, not the built-in ones."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

BUILTIN = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text(encoding="utf-8")


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def test_copy_writes_the_builtin_ruleset_named_after_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = run("rulesets", "--copy", "twtea-3e", "-o", "house.toml")
    assert "Wrote house.toml: a copy of twtea-3e, named house." in out
    copied = (tmp_path / "house.toml").read_text(encoding="utf-8")
    # Every line as the built-in writes it (its comments too) but the name's.
    changed = [a for a, b in zip(copied.split("\n"), BUILTIN.split("\n"), strict=True) if a != b]
    assert changed == ['name = "house"']
    created = run("--db", "c.db", "new", "c", "--scenario", "north-sea-1914", "--ruleset", "house.toml")
    assert "with ruleset house" in created


def test_copy_to_standard_output_is_the_builtin_file_named_as_a_copy() -> None:
    """Written to standard output (`> house.toml`), the copy kept the built-in's name, and a
    campaign on it was announced as played by twtea-3e: it is named as a copy of it."""
    copied = run("rulesets", "--copy", "twtea-3e", "-o", "-")
    assert tomllib.loads(copied)["ruleset"]["name"] == "twtea-3e-copy"
    assert copied == BUILTIN.replace('name = "twtea-3e"', 'name = "twtea-3e-copy"', 1)


def test_a_copy_written_to_a_file_named_as_the_builtin_is_named_as_a_copy(tmp_path: Path) -> None:
    target = tmp_path / "twtea-3e.toml"
    run("rulesets", "--copy", "twtea-3e", "-o", str(target))
    assert tomllib.loads(target.read_text(encoding="utf-8"))["ruleset"]["name"] == "twtea-3e-copy"


def test_copy_replaces_a_file_only_with_force(tmp_path: Path) -> None:
    target = tmp_path / "house.toml"
    target.write_text("mine", encoding="utf-8")
    out = run("rulesets", "--copy", "twtea-3e", "-o", str(target), code=2)
    assert "exists; --force replaces it" in out and target.read_text(encoding="utf-8") == "mine"
    run("rulesets", "--copy", "twtea-3e", "-o", str(target), "--force")
    assert tomllib.loads(target.read_text(encoding="utf-8"))["ruleset"]["name"] == "house"


def test_copy_and_output_go_together(tmp_path: Path) -> None:
    assert "give --copy RULESET and -o FILE together" in run("rulesets", "--copy", "twtea-3e", code=2)
    assert "give --copy RULESET and -o FILE together" in run("rulesets", "-o", str(tmp_path / "x.toml"), code=2)
    assert not (tmp_path / "x.toml").exists()
    # Without either, the list as before.
    assert run("rulesets").startswith("twtea-3e: ")


def test_odds_of_a_hand_position_weigh_the_selected_campaigns_ruleset(tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    # The house cruiser attacks on 4 or less, the built-in one on 5.
    text = BUILTIN.replace('name = "twtea-3e"', 'name = "house"', 1)
    house.write_text(text.replace('abbr = "CA"\nattack = 5', 'abbr = "CA"\nattack = 4', 1), encoding="utf-8")
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house))
    args = ("odds", "naval", "--attacker", "Germany:cruiser=1", "--defender", "Britain:destroyer=1")
    played = json.loads(run("--db", db, *args, "--json"))
    built_in = json.loads(run("--db", db, *args, "--ruleset", "twtea-3e", "--json"))
    house_named = json.loads(run("--db", db, *args, "--ruleset", str(house), "--json"))
    assert played["holder"] == house_named["holder"] != built_in["holder"]
    # The title says the values are not the usual ones; without a campaign, the built-in ones.
    assert run("--db", db, *args).startswith(
        f"Odds of a naval position: attacker {args[3]}; defender {args[5]} (ruleset house):"
    )
    assert run("--db", db, *args, "--ruleset", "twtea-3e").startswith(
        f"Odds of a naval position: attacker {args[3]}; defender {args[5]}:"
    )
    nodb = json.loads(run("--db", str(tmp_path / "none.db"), *args, "--json"))
    assert nodb["holder"] == built_in["holder"]
    assert not (tmp_path / "none.db").exists()


def test_odds_of_a_hand_position_with_no_campaign_at_hand_opens_no_database(tmp_path: Path) -> None:
    """With no database named and none here, `odds naval` weighs by the built-in ruleset without
    looking for a campaign: no database library imported, nothing opened (it was 0.2 s a call)."""
    import os
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "sys.argv = ['tracker', 'odds', 'naval', '--attacker', 'Germany:destroyer=1',\n"
        "            '--defender', 'Britain:destroyer=1']\n"
        "from tracker.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "storage = ('sqlalchemy', 'eventsourcing.persistence', 'eventsourcing.application',\n"
        "           'eventsourcing_sqlalchemy')\n"
        "print(sorted(m for m in sys.modules if m.startswith(storage)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_DB"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert "attacker wins" in done.stdout, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
    assert list(tmp_path.iterdir()) == []
