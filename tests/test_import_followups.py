"""Follow-ups of the PBEM-by-file audit: the dice part of the command a `pending`/`inbox`/import
hint gives, as each dice mode has it (D4); what a continuation's import says it re-refereed;
files whose lines end in a carriage return alone; and whose move it is after a first full
import."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tracker.cli.main import cli
from tracker.service.describe import command

SNS = "Southern North Sea"
CNS = "Central North Sea"


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run(db: Path, *args: str) -> str:
    result = invoke(db, *args)
    assert result.exit_code == 0, result.output
    return result.output


def pending(db: Path) -> list[dict[str, Any]]:
    return list(json.loads(run(db, "pending", "--json")))


def filled(hint: str, count: int, value: int = 1) -> list[str]:
    """The hint as a player runs it: optional parts left out, each die typed (`value`)."""
    words = shlex.split(re.sub(r" \[[^\]]*\]", "", hint))
    assert words[0] == "tracker", hint
    return [",".join([str(value)] * count) if w.startswith("V,") else w for w in words[1:]]


def answer(db: Path, value: int) -> str:
    """Run the one dice hint `pending` gives as it is given, once without its dice (refused:
    no terminal here to ask for them, D4) and once with them; the step it answered."""
    (item,) = [i for i in pending(db) if i["command"] and "--dice" in i["command"]]
    hint = item["command"]
    assert "[--dice" not in hint and " --dice V," in hint, hint
    words = filled(hint, 0)
    bare = words[: words.index("--dice")]
    refused = invoke(db, *bare)
    assert refused.exit_code == 1 and "D4: this campaign uses manual dice" in refused.output, refused.output
    run(db, *filled(hint, item["dice"]["count"], value))
    return f"{item['kind']} {item['step']}"


# ----- D4: the dice part of a hint, per dice mode -----

# Every step whose command takes dice, as `pending` gives it.
DICE_STEPS = [
    ("convoy", "merchant_defence"),
    ("convoy", "search"),
    ("convoy", "convoy_table"),
    ("interception", "search"),
    ("asw", "search"),
    ("asw", "fire"),
    ("interception", "fire"),
    ("naval", "fire"),
    ("naval", "opening_fire"),
]


def _item(kind: str, step: str, dice: dict[str, Any] | None) -> dict[str, Any]:
    item: dict[str, Any] = {"battle": 3, "kind": kind, "step": step, "waiting": ["Britain"], "zone": SNS}
    if dice is not None:
        item["dice"] = dice
    return item


@pytest.mark.parametrize(("kind", "step"), DICE_STEPS)
def test_d4_a_manual_campaigns_hint_gives_dice_as_part_of_the_command(kind: str, step: str) -> None:
    """Manual dice must be given (without them the command is refused, unless a person at a
    terminal is asked): not shown as optional. Auto dice are not typed at all; a hand-off item
    without its dice keeps them optional; a step rolling no die has none."""
    typed = {"count": 2, "faces": 10, "order": ["A", "B"], "typed": True}
    manual = command(_item(kind, step, typed))
    assert manual is not None and " --dice V," in manual and "[--dice" not in manual, manual
    auto = command(_item(kind, step, {**typed, "typed": False}))
    assert auto is not None and "--dice" not in auto, auto
    unknown = command(_item(kind, step, None))
    assert unknown is not None and " [--dice V," in unknown, unknown
    # Apart from the dice, the command is the same.
    # D3: with typed dice, the dice server's roll id they may come with.
    assert manual.endswith(" [--ref ROLL_ID]") or " [--ref ROLL_ID] " in manual, manual
    typed_part = r" --dice \S+ \[--ref ROLL_ID\]"
    assert re.sub(typed_part, "", manual) == auto == re.sub(r" \[--dice [^\]]*\]", "", unknown)
    none = command(_item(kind, step, {**typed, "count": 0, "order": []}))
    assert none is not None and "--dice" not in none, none


def test_d4_each_dice_hint_of_a_manual_campaign_works_as_given_and_is_refused_without_dice(tmp_path: Path) -> None:
    """Played by the hints: an interception's search and volley, a convoy battle's merchant
    defence, search and convoy table. Each hint's dice are required: run without them (no
    terminal) it is refused, D4; filled in, it is recorded."""
    db = tmp_path / "c.db"
    run(db, "new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-SS3", "--path", f"{SNS},Dover Strait")
    assert answer(db, 1) == "interception search"
    run(db, "battle", "targets", "1")
    run(db, "battle", "screen", "1")
    assert answer(db, 10) == "interception fire"  # every shot misses
    db = tmp_path / "convoy.db"
    run(db, "new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "collect_resources")
    run(db, "convoy", "pass", "--by", "Britain")
    run(db, "next", "--to", "collect_resources", "--nation", "Britain")
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    assert answer(db, 1) == "convoy merchant_defence"
    assert answer(db, 10) == "convoy search"  # nobody finds the U-boat
    assert answer(db, 1) == "convoy convoy_table"


def test_d4_an_auto_campaigns_hint_types_no_dice(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    run(db, "new", "x", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-SS3", "--path", f"{SNS},Dover Strait")
    (item,) = pending(db)
    assert item["step"] == "search" and item["dice"]["typed"] is False
    assert item["command"] == f"tracker intercept search {item['battle']} [--units U1,U2]"


# ----- a continuation's import: what it re-refereed -----


def _actions(path: Path) -> int:
    return sum(json.loads(line).get("kind") == "ActionAsked" for line in path.read_text().splitlines()[1:])


def test_a_continuation_says_the_whole_log_was_re_refereed_and_how_much_of_it_the_file_brought(
    tmp_path: Path,
) -> None:
    mine, theirs = tmp_path / "mine.db", tmp_path / "theirs.db"
    run(mine, "new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run(mine, "research", "advanced_asw", "--dice", "3")
    run(mine, "next")
    full = tmp_path / "full.jsonl"
    run(mine, "export", str(full))
    run(theirs, "import", str(full))
    base = len(full.read_text().splitlines()) - 1
    run(mine, "next")
    turn = tmp_path / "turn.jsonl"
    run(mine, "export", "--since", str(base), str(turn))
    whole = tmp_path / "whole.jsonl"
    run(mine, "export", str(whole))
    brought, total = _actions(turn), _actions(whole)
    assert 0 < brought < total
    out = run(theirs, "import", str(turn))
    assert f"the whole log's {total} actions re-refereed, {brought} of them from this file." in out, out


def test_a_mended_fork_says_the_whole_log_was_re_refereed_and_how_much_of_it_the_file_brought(
    tmp_path: Path,
) -> None:
    mine, theirs = tmp_path / "mine.db", tmp_path / "theirs.db"
    run(mine, "new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run(mine, "research", "advanced_asw", "--dice", "3")
    full = tmp_path / "full.jsonl"
    run(mine, "export", str(full))
    run(theirs, "import", str(full))
    base = len(full.read_text().splitlines()) - 1
    run(mine, "next")
    run(mine, "next")
    run(theirs, "next", "--to", "combat_movement")  # the copies fork after event `base`
    turn = tmp_path / "turn.jsonl"
    run(mine, "export", "--since", str(base), str(turn))
    whole = tmp_path / "whole.jsonl"
    run(mine, "export", str(whole))
    brought, total = _actions(turn), _actions(whole)
    assert 0 < brought < total
    out = run(theirs, "import", str(turn), "--resolve", "theirs")
    assert f"Mended the fork at event {base + 1}" in out, out
    assert f"the whole log's {total} actions re-refereed, {brought} of them from this file;" in out, out


# ----- line endings -----


def _campaign_file(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "source.db"
    run(db, "new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "research", "advanced_asw", "--dice", "3")
    path = tmp_path / "full.jsonl"
    run(db, "export", str(path))
    head = next(line for line in run(db, "verify").splitlines() if line.startswith("Head: "))
    return path, head


@pytest.mark.parametrize("ending", [b"\r", b"\r\r\n", b"\r\n"], ids=["cr", "cr-cr-lf", "crlf"])
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_file_with_old_mac_or_converted_line_endings_imports_as_it_was_exported(
    tmp_path: Path, ending: bytes, packed: bool
) -> None:
    import gzip

    path, head = _campaign_file(tmp_path)
    data = path.read_bytes().replace(b"\n", ending)
    other = tmp_path / "converted.jsonl"
    other.write_bytes(gzip.compress(data) if packed else data)
    db = tmp_path / "dest.db"
    out = run(db, "import", str(other))
    assert out.startswith("Imported campaign 'x'"), out
    assert head in run(db, "verify")


def test_an_edited_line_of_an_old_mac_file_is_refused_naming_its_line(tmp_path: Path) -> None:
    path, _ = _campaign_file(tmp_path)
    lines = path.read_bytes().split(b"\n")
    (number,) = [n for n, line in enumerate(lines, 1) if b'"values":[3]' in line]
    lines[number - 1] = lines[number - 1].replace(b'"values":[3]', b'"values":[9]')
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(b"\r".join(lines))
    db = tmp_path / "dest.db"
    refused = invoke(db, "import", str(edited))
    assert refused.exit_code == 1, refused.output
    assert f"edited.jsonl: line {number}: event " in refused.output and "the line was edited" in refused.output
    assert not db.exists()


def test_old_mac_lines_split_at_a_cr_alone_or_a_crlf_across_reads_and_keep_the_limit() -> None:
    from tracker.interchange.compression import old_mac_lines

    assert old_mac_lines(b'{"a":1}\n', io.BytesIO()) is None
    assert old_mac_lines(b'{"a":1}\r\r\n', io.BytesIO()) is None
    assert old_mac_lines(b'{"a":1}\r', io.BytesIO()) is None  # one line: read as it is
    # The rest's first read (64 KiB) ends in the CR of a CR LF: one line end, not two.
    rest = io.BytesIO(b"a" * 65535 + b"\r\n3\r")
    lines = old_mac_lines(b"1\r2", rest)
    assert lines is not None
    assert lines.readline(-1) == b"1\n"
    assert lines.readline(-1) == b"2" + b"a" * 65535 + b"\n"
    assert lines.readline(-1) == b"3\n"
    assert lines.readline(-1) == b""
    long = old_mac_lines(b"123456\r7", io.BytesIO(b"89\r"))
    assert long is not None
    assert long.readline(4) == b"1234"  # cut at the limit, without a line end: too long
    assert long.readline(10) == b"56\n"
    assert long.readline(10) == b"789\n"


# ----- a first full import: whose move it is -----


def test_a_first_full_import_says_whose_move_it_is_as_a_continuation_does(tmp_path: Path) -> None:
    path, _ = _campaign_file(tmp_path)
    db = tmp_path / "dest.db"
    lines = run(db, "import", str(path)).splitlines()
    assert lines[1] == "Waiting now:"
    inbox = run(db, "inbox").splitlines()
    assert lines[2 : 2 + len(inbox)] == inbox and "Germany" in inbox[0]
    events = len(path.read_text().splitlines()) - 1
    assert lines[2 + len(inbox) :] == [
        f"When you have recorded your part, send it to the others: `tracker --campaign x export --since {events} FILE`."
    ]


def test_d4_a_first_import_of_an_auto_campaign_says_whose_move_then_the_seed_note_last(tmp_path: Path) -> None:
    source, dest = tmp_path / "source.db", tmp_path / "dest.db"
    run(source, "new", "x", "--scenario", "north-sea-1914", "--dice", "auto")
    path = tmp_path / "auto.jsonl"
    run(source, "export", str(path))
    lines = run(dest, "import", str(path)).splitlines()
    assert lines[1] == "Waiting now:" and lines[2 : 2 + len(run(dest, "inbox").splitlines())]
    # No copy of an auto campaign rolls its dice without the seed: the note says what to do
    # first; where to send what is recorded goes with manual dice.
    assert "D4" in lines[-1] and "export --since" not in "\n".join(lines)
