"""Long work (`import`, `export`, `report --all`) shows a progress bar on a terminal and stays
quiet in scripts: off a terminal the commands print exactly what they printed before, on
stdout, with nothing extra on stderr; the ticks add up to the events or turns."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import tracker.cli.commands.report
import tracker.cli.commands.transfer
from tracker.cli.common import progress
from tracker.cli.main import cli
from tracker.interchange.transfer import export_campaign, import_campaign
from tracker.reports.report import build_report, render
from tracker.service.application import Tracker

# The campaign, played through the CLI: Germany's turn, then Britain's, each ended with
# `next` once the enemy passed on convoy attacks (CV1), so the campaign is at turn 3.
PLAY = [
    ["new", "c", "--scenario", "north-sea-1914", "--dice", "manual"],
    ["next", "--to", "placement"],
    ["next"],
    ["convoy", "pass", "--by", "Britain"],
    ["next"],
    ["next", "--to", "placement"],
    ["next"],
    ["convoy", "pass", "--by", "Germany"],
    ["next"],
]


def invoke(db: str, *args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", db, *args], input=stdin, catch_exceptions=False)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int, int, str]:
    """The database, its event count, its turns and the last event's hash."""
    db = str(tmp_path_factory.mktemp("progress") / "c.db")
    for args in PLAY:
        result = invoke(db, *args)
        assert result.exit_code == 0, result.output
    with Tracker(db) as t:
        c = t.load(t.campaign_id("c"))
        turns = build_report(t, t.campaign_id("c"), None, "json")["position"]["turn"]
        return db, c.version, turns, c.last_hash


@pytest.fixture
def export_file(campaign: tuple[str, int, int, str], tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    with Tracker(campaign[0]) as t:
        path.write_text(export_campaign(t, t.campaign_id("c")).text, encoding="utf-8")
    return path


class Recorder:
    """A stand-in for `tracker.cli.common.progress` that keeps each bar's label, total and ticks."""

    def __init__(self) -> None:
        self.bars: list[dict[str, Any]] = []

    @contextmanager
    def __call__(self, length: int, label: str = "") -> Iterator[Callable[[int], None]]:
        bar: dict[str, Any] = {"label": label, "total": length, "ticks": []}
        self.bars.append(bar)
        try:
            yield bar["ticks"].append
        finally:
            bar["closed"] = True

    def only(self) -> dict[str, Any]:
        assert len(self.bars) == 1, self.bars
        bar = self.bars[0]
        assert bar.get("closed") and all(n == 1 for n in bar["ticks"])
        return bar


def _without_timestamp(text: str) -> list[Any]:
    rows = [json.loads(line) for line in text.splitlines()]
    rows[0].pop("exported_at")
    return rows


def _exported(events: int, last_hash: str, where: str) -> str:
    return (
        f"Exported campaign 'c': {events} events to {where} "
        f"(head {events}:{last_hash}; check it later with `tracker verify --head`).\n"
    )


# ----- (1) not a terminal: the output of before, and nothing on stderr -----


def test_export_to_a_file_prints_the_same_line_and_nothing_on_stderr(
    campaign: tuple[str, int, int, str], tmp_path: Path, export_file: Path
) -> None:
    db, events, _turns, last_hash = campaign
    out = tmp_path / "out.jsonl"
    result = invoke(db, "export", str(out))
    assert result.exit_code == 0
    assert result.stdout == _exported(events, last_hash, str(out))
    assert result.stderr == ""
    assert _without_timestamp(out.read_text(encoding="utf-8")) == _without_timestamp(
        export_file.read_text(encoding="utf-8")
    )

    as_json = invoke(db, "export", str(tmp_path / "again.jsonl"), "--json")
    assert as_json.exit_code == 0 and as_json.stderr == ""
    assert json.loads(as_json.stdout)["events"] == events


def test_export_to_stdout_holds_only_the_file_and_stderr_only_the_summary(
    campaign: tuple[str, int, int, str], export_file: Path
) -> None:
    db, events, _turns, last_hash = campaign
    result = invoke(db, "export", "-")
    assert result.exit_code == 0
    assert _without_timestamp(result.stdout) == _without_timestamp(export_file.read_text(encoding="utf-8"))
    assert result.stderr == _exported(events, last_hash, "stdout")


def test_import_prints_the_same_lines_and_nothing_on_stderr(
    campaign: tuple[str, int, int, str], tmp_path: Path, export_file: Path
) -> None:
    _db, events, _turns, _hash = campaign
    dest = str(tmp_path / "dest.db")
    url = f"sqlite:///{dest}"
    result = invoke(dest, "import", str(export_file))
    assert result.exit_code == 0
    # PBEM by file: then whose move it is, as `inbox` lists it, and how to send it on.
    waiting = invoke(dest, "inbox").stdout
    assert result.stdout == (
        f"Imported campaign 'c': {events} events into {url}; "
        # A manual-dice campaign: its dice are typed, with no seed to re-derive them from (D4).
        "hash chain intact, no typed roll yet (manual dice have no seed to re-derive).\n"
        f"Waiting now:\n{waiting}"
        "When you have recorded your part, send it to the others: "
        f"`tracker --campaign c export --since {events} FILE`.\n"
    )
    assert result.stderr == ""

    piped = invoke(dest, "import", "-", "--as", "piped", "--json", stdin=export_file.read_bytes())
    assert piped.exit_code == 0 and piped.stderr == ""
    assert json.loads(piped.stdout)["events"] == events


def test_a_refused_import_keeps_its_exit_code_and_its_one_line_error(
    campaign: tuple[str, int, int, str], tmp_path: Path, export_file: Path
) -> None:
    lines = export_file.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:2] + lines[3:]), encoding="utf-8")  # event 2 deleted
    result = invoke(str(tmp_path / "dest.db"), "import", str(bad))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: {bad}: line 3: event 2 missing: the log jumps to event 3; nothing was imported\n"


@pytest.mark.parametrize("fmt", ["md", "bbcode", "html", "json"])
def test_report_all_prints_the_report_and_nothing_on_stderr(campaign: tuple[str, int, int, str], fmt: str) -> None:
    db = campaign[0]
    with Tracker(db) as t:
        expected = render(build_report(t, t.campaign_id("c"), None, "md" if fmt == "bbcode" else fmt), fmt)
    result = invoke(db, "report", "--all", "--format", fmt)
    assert result.exit_code == 0
    assert result.stdout == expected
    assert result.stderr == ""


def test_the_real_bar_draws_nothing_off_a_terminal(
    campaign: tuple[str, int, int, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with Tracker(campaign[0]) as t:
        export_campaign(t, t.campaign_id("c"), partial(progress, label="Exporting events"))
        build_report(t, t.campaign_id("c"), None, "md", partial(progress, label="Building the report"))
    assert capsys.readouterr() == ("", "")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_goes_to_stderr(
    campaign: tuple[str, int, int, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stderr = _Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    with Tracker(campaign[0]) as t:
        export_campaign(t, t.campaign_id("c"), partial(progress, label="Exporting events"))
    assert "Exporting events" in stderr.getvalue() and "100%" in stderr.getvalue()
    assert capsys.readouterr().out == ""


# ----- (2) the ticks add up to the totals -----


def test_export_ticks_once_per_event(
    campaign: tuple[str, int, int, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, events, _turns, _hash = campaign
    bars = Recorder()
    monkeypatch.setattr(tracker.cli.commands.transfer, "progress", bars)
    assert invoke(db, "export", str(tmp_path / "out.jsonl")).exit_code == 0
    bar = bars.only()
    assert bar["total"] == events == len(bar["ticks"])
    assert bar["label"] == "Exporting events"


def test_import_ticks_once_per_event_line_of_the_declared_count(
    campaign: tuple[str, int, int, str], tmp_path: Path, export_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = campaign[1]
    bars = Recorder()
    monkeypatch.setattr(tracker.cli.commands.transfer, "progress", bars)
    assert invoke(str(tmp_path / "dest.db"), "import", str(export_file)).exit_code == 0
    assert invoke(str(tmp_path / "dest.db"), "import", "-", "--as", "b", stdin=export_file.read_bytes()).exit_code == 0
    assert [b["total"] for b in bars.bars] == [events, events]
    for bar in bars.bars:
        assert sum(bar["ticks"]) == events and all(n == 1 for n in bar["ticks"]) and bar["closed"]
        assert bar["label"] == "Checking events"


def test_report_all_ticks_once_per_turn_and_one_turn_has_no_bar(
    campaign: tuple[str, int, int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _events, turns, _hash = campaign
    assert turns == 3
    bars = Recorder()
    monkeypatch.setattr(tracker.cli.commands.report, "progress", bars)
    assert invoke(db, "report", "--all").exit_code == 0
    bar = bars.only()
    assert bar["total"] == turns == len(bar["ticks"])
    assert invoke(db, "report", "--turn", "2").exit_code == 0
    assert len(bars.bars) == 1


def test_library_callers_pass_the_callback_or_get_no_progress(
    campaign: tuple[str, int, int, str], tmp_path: Path
) -> None:
    db, events, turns, _hash = campaign
    with Tracker(db) as t:
        cid = t.campaign_id("c")
        bars = Recorder()
        with_bar = export_campaign(t, cid, partial(bars, label="export"))
        plain = export_campaign(t, cid)
        assert _without_timestamp(with_bar.text) == _without_timestamp(plain.text)
        assert sum(bars.only()["ticks"]) == events

        bars = Recorder()
        assert build_report(t, cid, None, "json", partial(bars, label="report")) == build_report(t, cid, None, "json")
        assert sum(bars.only()["ticks"]) == turns
        text = plain.text.encode("utf-8")

    with Tracker(str(tmp_path / "dest.db")) as dest:
        bars = Recorder()
        result = import_campaign(dest, text, "c.jsonl", None, partial(bars, label="import"))
        assert result.events == events
        bar = bars.only()
        assert bar["total"] == sum(bar["ticks"]) == events
        assert import_campaign(dest, text, "c.jsonl", "quiet").events == events


def test_a_refused_import_closes_its_bar_where_it_stopped(
    campaign: tuple[str, int, int, str], tmp_path: Path, export_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = campaign[1]
    lines = export_file.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:4] + lines[5:]), encoding="utf-8")  # event 4 deleted
    bars = Recorder()
    monkeypatch.setattr(tracker.cli.commands.transfer, "progress", bars)
    result = invoke(str(tmp_path / "dest.db"), "import", str(bad))
    assert result.exit_code == 1
    bar = bars.only()
    assert bar["total"] == events and sum(bar["ticks"]) == 3
