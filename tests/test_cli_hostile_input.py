"""Hostile input to the command line: file names the file system refuses, files that cannot be
read, output that cannot be written, an output encoding without the tracker's characters.
Each is one line naming the input, exit 1 or 2, never "unexpected", and nothing recorded."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import TRACKER
from tracker.cli.main import cli

# Longer than any file system's NAME_MAX (255): opening or even asking about it fails with
# ENAMETOOLONG, an OSError that is neither "no such file" nor "is a directory".
TOO_LONG = "x" * 300


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert "unexpected" not in err and "Traceback" not in err, err
    return lines[0]


def events(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM tracker_events").fetchone()[0])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "c.db"
    code, _, err = run("--db", str(path), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    assert code == 0, err
    return path


def test_a_ruleset_name_too_long_for_a_file_is_one_line_and_makes_no_campaign(db: Path, tmp_path: Path) -> None:
    before = events(db)
    for args in (
        ["--db", str(db), "new", "other", "--scenario", "north-sea-1914", "--ruleset", TOO_LONG],
        ["scenario", "check", "north-sea-1914", "--ruleset", TOO_LONG],
        ["odds", "naval", "--attacker", "Germany:submarine=1", "--defender", "Britain:cruiser=1", "--ruleset"]
        + [TOO_LONG],
    ):
        code, _, err = run(*args)
        assert code == 2, err
        assert "File name too long" in one_line_error(err)
    assert events(db) == before


def test_a_database_path_too_long_for_a_file_is_one_line(tmp_path: Path) -> None:
    code, _, err = run("--db", str(tmp_path / TOO_LONG), "campaigns")
    assert code == 2, err
    assert "File name too long" in one_line_error(err)


def test_an_output_file_name_too_long_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    code, _, err = run("scenario", "new", "board", "-o", str(tmp_path / TOO_LONG))
    assert code == 2, err
    assert "File name too long" in one_line_error(err)
    assert list(tmp_path.iterdir()) == []


def test_a_database_sqlite_cannot_open_names_it(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a file without read permission gives a user other than root (root reads it anyway).
    import tracker.service.application as application

    def unopenable(url: str) -> None:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(application, "read_only_copy", unopenable)
    code, _, err = run("--db", str(db), "state")
    assert code == 2, err
    line = one_line_error(err)
    assert str(db) in line and "unable to open database file" in line


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc")
def test_a_file_whose_device_fails_to_read_is_one_line(db: Path) -> None:
    # Reading /proc/self/mem at offset 0 fails with EIO: a device that fails under the reader.
    before = events(db)
    code, _, err = run("--db", str(db), "import", "/proc/self/mem", "--as", "copy")
    assert code == 1, err
    assert "Input/output error" in one_line_error(err)
    assert events(db) == before


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_to_a_full_disk_is_one_line_saying_the_action_stays_recorded(db: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*TRACKER, "--db", str(db), "next"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert proc.returncode == 1, proc.stderr
    line = one_line_error(proc.stderr)
    assert "No space left on device" in line and "recorded" in line
    # The phase ended before its words were lost: the log holds it, once.
    code, out, err = run("--db", str(db), "log", "--json")
    assert code == 0, err
    assert [r["kind"] for r in json.loads(out)] == ["Created", "PhaseAdvanced"]


def test_an_output_encoding_without_the_trackers_characters_is_one_line(db: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    proc = subprocess.run([*TRACKER, "--db", str(db), "state"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc.stderr)
    assert "ascii" in line and "UTF-8" in line


def test_an_export_whose_campaign_name_is_half_a_character_is_refused_in_one_line(db: Path, tmp_path: Path) -> None:
    # "\\ud800" is valid JSON and valid UTF-8 on disk, but decodes to a lone surrogate that no
    # database can store.
    export = tmp_path / "autumn.jsonl"
    code, _, err = run("--db", str(db), "export", str(export))
    assert code == 0, err
    header, *rest = export.read_text().splitlines()
    head = json.loads(header)
    head["campaign"] = "\ud800"
    export.write_text("\n".join([json.dumps(head), *rest]) + "\n")
    other = tmp_path / "other.db"
    code, _, err = run("--db", str(other), "import", str(export))
    assert code == 2, err
    assert "\\ud800" in one_line_error(err)
    assert not other.exists() or events(other) == 0


def board_files(tmp_path: Path) -> tuple[Path, Path]:
    """The built-in board and rules with names that look like rich markup: a zone
    "Skagerrak [/north]" (a closing tag nothing opened), a ruleset titled with a style tag."""
    data = Path(__file__).resolve().parent.parent / "domain" / "data"
    scenario = tmp_path / "bracketed.toml"
    text = (data / "scenarios" / "north-sea-1914.toml").read_text()
    scenario.write_text(text.replace("Skagerrak", "Skagerrak [/north]"))
    ruleset = tmp_path / "rules.toml"
    lines = (data / "rulesets" / "twtea-3e.toml").read_text().splitlines()
    lines = ['title = "House rules [bold]draft[/bold] [/x]"' if line.startswith("title = ") else line for line in lines]
    ruleset.write_text("\n".join(lines) + "\n")
    return scenario, ruleset


def test_names_that_look_like_markup_print_as_written(tmp_path: Path) -> None:
    scenario, ruleset = board_files(tmp_path)
    db = str(tmp_path / "b.db")
    code, _, err = run("--db", db, "new", "c", "--scenario", str(scenario), "--ruleset", str(ruleset))
    assert code == 0, err
    for args, shown in (
        (["map"], "Skagerrak [/north]"),
        (["state"], "Skagerrak [/north]"),
        (["show", "Skagerrak [/north]"], "Skagerrak [/north]"),
        (["replay", "--to", "1"], "Skagerrak [/north]"),
        (["units"], "House rules [bold]draft[/bold] [/x]"),
    ):
        code, out, err = run("--db", db, *args)
        assert code == 0, (args, err)
        assert shown in " ".join(out.split()), (args, out)


@pytest.mark.parametrize(
    ("kind", "target"),
    [
        ("webhook", "http://"),
        ("webhook", "https://discord.com:99999/api/webhooks/1/abc"),
        ("webhook", "http://[::1/hook"),
        ("webhook", "https://hooks.example.org/a b"),
        ("webhook", "https://hooks.example.org/a\r\nX-Injected: 1"),
        ("email", "@example.org"),
        ("email", "anna@"),
        ("email", "anna@example.org@evil.example"),
        ("email", "anna@example.org\tbob@example.org"),
    ],
)
def test_a_channel_that_can_never_take_a_message_is_refused_when_added(db: Path, kind: str, target: str) -> None:
    code, _, err = run("--db", str(db), "players", "add", "anna", "--nations", "Germany")
    assert code == 0, err
    code, _, err = run("--db", str(db), "notify", "add", kind, target, "--player", "anna")
    assert code == 2, err
    line = one_line_error(err)
    assert "webhook" in line or "e-mail" in line
    if kind == "webhook":
        assert "hooks.example.org" not in line and "api/webhooks" not in line  # its URL is its secret
    code, out, err = run("--db", str(db), "notify", "list", "--json")
    assert code == 0, err
    assert json.loads(out) == []


def test_a_webhook_with_a_host_and_port_is_still_added(db: Path) -> None:
    for target in ("https://discord.com/api/webhooks/1/abc", "http://[::1]:8080/hook", "http://127.0.0.1:9/hook"):
        code, _, err = run("--db", str(db), "notify", "add", "webhook", target)
        assert code == 0, err


def test_rk3_undo_to_an_event_of_a_campaign_holding_only_its_creation_names_no_empty_range(db: Path) -> None:
    # It said "--to must name an event between 1 and 0, got 1".
    code, _, err = run("--db", str(db), "undo", "--to", "1", "--yes")
    assert code == 1, err
    line = one_line_error(err)
    assert "RK3" in line and "no action to undo" in line and "between 1 and 0" not in line
    assert events(db) == 1


def test_a_reply_over_the_file_being_imported_is_refused_and_the_file_kept(db: Path, tmp_path: Path) -> None:
    # PBEM: both copies went on from event 1; this side keeps its own (--resolve mine), and the
    # reply would have replaced the other side's file, the one being read.
    theirs_db = tmp_path / "theirs.db"
    first = tmp_path / "first.jsonl"
    assert run("--db", str(db), "export", str(first))[0] == 0
    assert run("--db", str(theirs_db), "import", str(first))[0] == 0
    assert run("--db", str(db), "next")[0] == 0
    assert run("--db", str(theirs_db), "adjust", "--reason", "agreed", "--resources", "Germany=-1")[0] == 0
    theirs = tmp_path / "autumn-since-1.jsonl"
    assert run("--db", str(theirs_db), "export", str(theirs))[0] == 0
    sent = theirs.read_bytes()
    code, _, err = run("--db", str(db), "import", str(theirs), "--resolve", "mine", "--reply", str(theirs))
    assert code == 2, err
    assert "is the file being imported" in one_line_error(err)
    assert theirs.read_bytes() == sent
    code, out, err = run(
        "--db", str(db), "import", str(theirs), "--resolve", "mine", "--reply", str(tmp_path / "r.jsonl")
    )
    assert code == 0, err
