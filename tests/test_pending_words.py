"""What `pending`, the inbox and the hand-off messages say, as a person reads it: a phase in
words ("naval combat"), its ID only where a command takes it (`tracker next --to naval_combat`);
and the commands they suggest quoting a name only where the shell needs it (`--nation Germany`,
`--zone 'Yellow Sea'`)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracker.cli.common import next_command
from tracker.cli.main import cli
from tracker.service.describe import EnglishDescriber, command, naming_campaign
from tracker.service.notify import email_body, message_text


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


# ----- phases in words -----


def test_t3_pending_names_the_phase_to_finish_in_words_and_next_takes_its_id(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    run(db, "new", "war", "--scenario", "great-war-1914")
    # The ID is what is typed: `next --to` still takes it.
    run(db, "next", "--to", "naval_combat")
    first = run(db, "pending").splitlines()[0]
    assert first == "waiting for Germany to finish naval combat (tracker next) [T3]"


def test_t3_the_turn_item_and_the_f7_landing_gate_name_phases_in_words() -> None:
    turn = {"kind": "turn", "nation": "Britain", "phasing": "Britain", "phase": "collect_resources", "rule": "T3"}
    said = EnglishDescriber().item(turn)
    assert said == "waiting for Britain to finish collect resources (tracker next) [T3]"
    landing = {"kind": "air_landing", "phasing": "Germany", "units": ["DE-BM1"], "rule": "F7"}
    assert "by the end of noncombat movement," in EnglishDescriber().item(landing)


def test_a_hand_off_messages_head_line_and_subject_name_the_phase_in_words() -> None:
    payload: dict[str, Any] = {
        "campaign": "autumn", "title": "The North Sea", "round": 2, "phase": "naval_combat", "nation": "Germany",
        "reasons": ["turn"], "newly_owing": [], "pending": [],
    }  # fmt: skip
    text = message_text(payload, next_command, None)
    assert text.splitlines()[0] == "The North Sea (autumn): round 2 · Germany · naval combat"
    assert email_body(text, payload)["subject"] == "[The North Sea (autumn)] round 2 · Germany · naval combat"


# ----- commands quoted as the shell needs -----

# A quoted span of a command: one the shell would read the same without its quotes is needless.
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
# An optional part of a command (`[--units U1,U2]`): a form to fill in, not a command to run.
OPTIONAL = re.compile(r" \[[^\]]*\]")
# The options whose value is a name from the scenario.
NAMING = ("--nation", "--by", "--zone", "--at", "--to", "--path")


def needless_quotes(said: str) -> list[str]:
    return [m.group() for m in QUOTED.finditer(said) if shlex.quote(m.group()[1:-1]) == m.group()[1:-1]]


def named(said: str) -> list[tuple[str, str]]:
    """Each naming option of each command in `said` with its value, as the shell reads it."""
    found = []
    for part in OPTIONAL.sub("", said).split(", or "):
        words = shlex.split(part)
        assert words[0] == "tracker", said
        found += [(w, words[i + 1]) for i, w in enumerate(words) if w in NAMING]
    return found


def every_item(nations: list[str], zone: str) -> list[dict[str, Any]]:
    """An item of each kind `pending` gives a command for, waiting for `nations` (the first of
    them deciding) in `zone`."""
    first = nations[0]
    gates: list[dict[str, Any]] = [
        {"kind": "turn", "nation": first},
        {"kind": "naval_due", "zone": zone},
        {"kind": "naval_may", "zone": zone},
        {"kind": "asw_may", "zone": zone},
        {"kind": "convoy_open", "nation": first, "zone": zone},
        {"kind": "unplaced", "unit_type": "submarine", "count": 2, "legal": [zone, "Kiel"]},
        {"kind": "unplaced", "unit_type": "submarine", "count": 1, "legal": []},
        {"kind": "air_landing", "units": ["DE-BM1"]},
        {"kind": "air_landing", "units": ["DE-BM1"], "landing": {"unit": "DE-BM1", "path": [zone]}},
        {"kind": "air_landing", "units": ["DE-BM1"], "landing": {"unit": "DE-BM1", "path": [zone, "Kiel"]}},
    ]
    decisions = {first: {"submerge": ["DE-SS1"], "retreat": [zone]}}
    steps = [
        ("naval", step)
        for step in ("targets", "opening_targets", "screening", "opening_screening", "fire", "opening_fire")
    ]
    steps += [("naval", "casualties"), ("naval", "decide"), ("convoy", "casualties")]
    steps += [("interception", s) for s in ("search", "detect", "decide", "continue")]
    steps += [("asw", s) for s in ("search", "decide")]
    steps += [("convoy", s) for s in ("merchant_defence", "merchant_casualty", "search", "convoy_table")]
    battles = [
        {"battle": 3, "kind": kind, "step": step, "waiting": nations, "zone": zone, "decisions": decisions}
        for kind, step in steps
    ]
    return [{"battle": None, "step": None, "waiting": [], "zone": None, **g} for g in gates] + battles


def test_every_suggested_command_quotes_a_name_only_where_the_shell_needs_it() -> None:
    cases = [
        (["Germany", "Austria-Hungary"], "Heligoland"),
        (["Ottoman Empire", "Germany"], "Yellow Sea"),
        (["Britain", "France"], "St. George's Channel"),
    ]
    for nations, zone in cases:
        for item in every_item(nations, zone):
            said = command(item)
            assert said, item
            assert not needless_quotes(said), (said, item)
            for option, value in named(said):
                if option == "--nation" or option == "--by":
                    assert value == nations[0], said
                elif value == "ZONE":
                    assert option == "--to" and "landing" not in item, said  # F7: a form to fill in
                elif option == "--path":
                    assert value == f"{zone},Kiel", said
                else:
                    assert value == zone, said
    # Where quotes are needed they are there: a name of several words, one holding a "'".
    assert command({"battle": None, "step": None, "kind": "asw_may", "zone": "Yellow Sea"}) == (
        "tracker asw start --zone 'Yellow Sea'"
    )
    several = {"battle": 1, "kind": "naval", "step": "targets", "waiting": ["Germany", "Austria-Hungary"]}
    assert command(several) == "tracker battle targets 1 --nation Germany [--targets FIRER=TARGET,...]"
    assert command({**several, "waiting": ["Ottoman Empire", "Germany"]}) == (
        "tracker battle targets 1 --nation 'Ottoman Empire' [--targets FIRER=TARGET,...]"
    )
    convoy = {"battle": None, "step": None, "kind": "convoy_open", "nation": "Britain", "zone": "St. George's Channel"}
    assert command(convoy) == (
        'tracker convoy declare --by Britain --zone "St. George\'s Channel", or tracker convoy pass --by Britain'
    )


def test_sm4_pending_names_the_nation_choosing_targets_without_quotes(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    moved = run(db, "move", "DE-SS3", "DE-SS4", "DE-SS5", "--path", "Southern North Sea,Dover Strait")
    assert "battle 1 (interception, Southern North Sea)" in moved
    run(db, "intercept", "search", "1", "--units", "GB-DD3,GB-DD4,GB-DD5", "--dice", "1,2,7")
    run(db, "intercept", "detect", "1", "--subs", "DE-SS4,DE-SS5")
    commands = [line.split("next: ", 1)[1] for line in run(db, "pending").splitlines() if "next: " in line]
    # It was `--nation 'Germany'`.
    assert commands == ["tracker battle targets 1 --nation Germany [--targets FIRER=TARGET,...]"]


def test_a_campaign_named_with_a_backslash_is_named_in_a_hand_offs_commands() -> None:
    # It was read as a template's escape: "bad escape \q", and no message was written.
    assert naming_campaign("tracker next, or tracker pending", "a\\q") == (
        "tracker --campaign 'a\\q' next, or tracker --campaign 'a\\q' pending"
    )
    item = {"battle": None, "step": None, "kind": "turn", "nation": "Germany", "zone": None, "waiting": ["Germany"]}
    payload: dict[str, Any] = {
        "campaign": "a\\q", "title": "T", "round": 1, "phase": "purchase", "nation": "Germany",
        "reasons": ["turn"], "newly_owing": [], "pending": [{**item, "text": "waiting for Germany"}],
    }  # fmt: skip
    assert "  next: tracker --campaign 'a\\q' next" in message_text(payload, next_command, None).splitlines()
