"""PBEM by file as a group plays it by mail: what each refusal of a mistaken file tells the player
to do (a file cut short or wrapped by the mail program, a signature added after it, a `--since`
past what the others hold, a file of another campaign, a fork), and what export and import say
of the next file to send. Every refusal is one line and appends nothing."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.service.application import Tracker


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", "mail", *args])
    assert result.exit_code == code, result.output
    return result.output


def refused(db: str, *args: str, code: int) -> str:
    """A refusal: one line, exit `code`, and the campaign here unchanged."""
    before = count(db)
    out = run(db, *args, code=code)
    assert len(out.strip().splitlines()) == 1 and "Traceback" not in out, out
    assert count(db) == before
    return out


def count(db: str) -> int:
    with Tracker(db) as t:
        return len(t.stored_events(t.campaign_id("mail")))


def head(db: str) -> str:
    return next(line for line in run(db, "verify").splitlines() if line.startswith("Head: "))


@pytest.fixture
def group(tmp_path: Path) -> dict[str, Any]:
    """Germany's and Britain's copies of a manual-dice campaign, and Germany's first turn
    (research with a die, purchase) written as a continuation for Britain."""
    germany, britain = str(tmp_path / "germany.db"), str(tmp_path / "britain.db")
    run(germany, "new", "mail", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl"
    run(germany, "export", str(full))
    run(britain, "import", str(full))
    base = count(germany)
    run(germany, "research", "advanced_submarine", "--dice", "9", "--ref", "rolz#1")
    run(germany, "next")
    run(germany, "buy", "submarine", "2")
    turn = tmp_path / "turn.jsonl"
    run(germany, "export", "--since", str(base), str(turn))
    return {"germany": germany, "britain": britain, "tmp": tmp_path, "base": base, "turn": turn}


def test_a_file_cut_inside_a_line_says_it_was_cut_short(group: dict[str, Any]) -> None:
    """A mail client's size limit cut the file in the middle of an event's line: said as a file
    cut short, not only as JSON that lacks its end."""
    data = group["turn"].read_bytes()
    cut = group["tmp"] / "cut.jsonl"
    cut.write_bytes(data[: len(data) * 2 // 3])
    out = refused(group["britain"], "import", str(cut), code=2)
    assert "not valid JSON" in out and "the file ends inside this line, so it was cut short" in out, out


def test_a_file_wrapped_by_the_mail_program_says_so(group: dict[str, Any]) -> None:
    """Pasted into a mail's body, each long line broken at 76 characters."""
    lines = group["turn"].read_text().splitlines(keepends=True)
    wrapped = group["tmp"] / "wrapped.jsonl"
    wrapped.write_text("".join(line[:76] + "\n" + line[76:] if len(line) > 80 else line for line in lines))
    out = refused(group["britain"], "import", str(wrapped), code=2)
    assert "line 1: " in out and "the line breaks off before its JSON ends" in out, out
    assert "as an attachment" in out


def test_an_error_inside_a_line_is_not_called_a_cut(group: dict[str, Any]) -> None:
    """A stray character within a whole line is bad JSON there, nothing more."""
    lines = group["turn"].read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"seq"', '"seq" x', 1)
    bad = group["tmp"] / "bad.jsonl"
    bad.write_text("".join(lines))
    out = refused(group["britain"], "import", str(bad), code=2)
    assert "line 3: not valid JSON" in out and "cut" not in out and "breaks off" not in out, out


def test_a_signature_after_the_last_event_is_named_as_text_added_after_the_end(group: dict[str, Any]) -> None:
    sig = group["tmp"] / "sig.jsonl"
    sig.write_bytes(group["turn"].read_bytes() + b"-- \nSent from my phone\n")
    events = len(group["turn"].read_text().splitlines()) - 1
    out = refused(group["britain"], "import", str(sig), code=2)
    assert f"line {events + 2}: not valid JSON" in out, out
    assert f"after the {events} events its header (line 1) declares: text was added after the file's end" in out


def test_a_since_past_the_others_head_names_the_missing_events_and_the_export_that_fills_them(
    group: dict[str, Any],
) -> None:
    """The sender gave --since too high (no file in between exists): the refusal names the
    events missing and the export to ask for, and that export, run as given, is imported."""
    germany, britain = group["germany"], group["britain"]
    end, base = count(germany), group["base"]
    late = group["tmp"] / "late.jsonl"
    run(germany, "export", "--since", str(base + 2), str(late))
    out = refused(britain, "import", str(late), code=1)
    assert f"import the files in between first (events {base + 1}-{base + 2}, missing here)" in out, out
    command = out.split("`")[1]
    assert command == f"tracker --campaign mail export --since {base} FILE", out
    fill = group["tmp"] / "fill.jsonl"
    run(germany, *shlex.split(command)[3:-1], str(fill))
    assert f"events {base + 1}-{end} appended" in run(britain, "import", str(fill))
    assert head(britain) == head(germany)


def test_a_file_imported_into_a_campaign_of_another_name_names_the_files_campaign(
    group: dict[str, Any],
) -> None:
    britain = group["britain"]
    run(britain, "new", "other", "--scenario", "north-sea-1914", "--dice", "manual")
    result = CliRunner().invoke(cli, ["--db", britain, "--campaign", "other", "import", str(group["turn"])])
    assert result.exit_code == 1, result.output
    assert "this file of campaign 'mail' continues event" in result.output, result.output
    assert count(britain) == group["base"]


def test_a_continuation_into_a_database_without_the_campaign_suggests_the_right_database(
    group: dict[str, Any],
) -> None:
    elsewhere = str(group["tmp"] / "elsewhere.db")
    run(elsewhere, "new", "mail2", "--scenario", "north-sea-1914", "--dice", "manual")
    result = CliRunner().invoke(cli, ["--db", elsewhere, "import", str(group["turn"])])
    assert result.exit_code == 1, result.output
    assert "has no campaign 'mail'" in result.output and "name it with --db FILE" in result.output


def test_a_fork_names_the_file_in_the_command_that_mends_it(group: dict[str, Any]) -> None:
    """The command to copy names the file just refused, and it mends the fork as given."""
    germany, britain = group["germany"], group["britain"]
    run(britain, "research", "advanced_submarine", "--dice", "2", "--ref", "rolz#2")
    out = refused(britain, "import", str(group["turn"]), code=1)
    assert f"`tracker import {group['turn']} --resolve theirs`" in out, out
    command = next(part for part in out.split("`") if part.endswith("--resolve theirs"))
    assert "Mended the fork" in run(britain, *shlex.split(command)[1:])
    assert head(britain) == head(germany)


def test_an_export_since_says_what_to_send_and_the_head_the_others_must_reach(group: dict[str, Any]) -> None:
    germany = group["germany"]
    out = run(germany, "export", "--since", str(group["base"]), str(group["tmp"] / "my turn.jsonl"))
    sent = group["tmp"] / "my turn.jsonl"
    assert f"Send {sent} to the other players: each runs `tracker import {shlex.quote(str(sent))}`" in out, out
    assert f"must end at {head(germany)}." in out


def test_a_fast_forward_names_the_export_that_sends_the_next_part(group: dict[str, Any]) -> None:
    """Britain imports, then records its part and sends it with the export the import named:
    Germany's copy takes it, and both heads agree."""
    germany, britain = group["germany"], group["britain"]
    out = run(britain, "import", str(group["turn"]))
    end = count(germany)
    line = out.strip().splitlines()[-1]
    assert line.startswith("When you have recorded your part, send it to the others:"), out
    command = line.split("`")[1]
    assert command == f"tracker --campaign mail export --since {end} FILE"
    run(britain, "next")
    back = group["tmp"] / "back.jsonl"
    run(britain, *shlex.split(command)[3:-1], str(back))
    assert "appended" in run(germany, "import", str(back))
    assert head(britain) == head(germany)
