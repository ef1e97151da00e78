"""Export and import: JSON lines that rebuild a campaign exactly, in SQLite or PostgreSQL, or are refused."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session

from domain.campaign import Campaign
from domain.dice import DiceSource
from domain.errors import InputError, RuleViolation
from tests.support import advance as advance_passing
from tests.support import perform_advance
from tracker.cli.main import cli
from tracker.interchange.format import FORMAT, ImportRefused, parse_export
from tracker.interchange.transfer import ExportRefused, export_campaign, import_campaign
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker
from tracker.service.verify import VerifyReport, verify_campaign, verify_events

# ----- helpers -----


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def research(c: Campaign, d: DiceSource) -> Any:
    return c.research("Germany", "advanced_submarine", d)


def move(c: Campaign, d: DiceSource) -> Any:
    plan = c.move("Germany", ["DE-SS3", "DE-SS4"], ["Southern North Sea", "Dover Strait"])
    # SM2, SM5: Britain lets them pass its destroyers unsearched; they go on to Dover.
    c.intercept_search(c.battle_count, [], d)
    c.intercept_continue(c.battle_count, None)
    return plan


def play(t: Tracker, cid: UUID, reveal: bool = True) -> None:
    """Germany researches (one auto roll), reveals the seed, moves U-boats and ends its turn,
    each action asked for by name as the command line does."""
    t.perform(cid, "research", {"technology": "advanced_submarine", "nation": "Germany"})
    perform_advance(t, cid)
    if reveal:
        t.reveal_seed(cid)
    perform_advance(t, cid)
    t.perform(cid, "move", {"units": ["DE-SS3", "DE-SS4"], "path": ["Southern North Sea", "Dover Strait"]})
    # SM2, SM5: Britain lets them pass its destroyers unsearched; they go on to Dover.
    battle = t.load(cid).battle_count
    t.perform(cid, "intercept search", {"battle": battle, "units": ""})
    t.perform(cid, "intercept continue", {"battle": battle})
    while t.load(cid).nation == "Germany":
        perform_advance(t, cid)


def source_campaign(path: str, name: str, reveal: bool = True) -> UUID:
    with Tracker(path) as t:
        cid = t.create(name, "north-sea-1914", dice="auto").id
        play(t, cid, reveal)
    return cid


def verify(t: Tracker, cid: UUID) -> VerifyReport:
    stored = t.stored_events(cid)
    return verify_events(((s.originator_version, partial(t.decode, s)) for s in stored), lambda e: t.seed_for(cid, e))


def state_of(c: Campaign) -> dict[str, Any]:
    """Everything the log rebuilds, apart from the aggregate id."""
    return {
        **c.game_state(),
        "version": c.version,
        "name": c.name,
        "dice_mode": c.dice_mode,
        "commitments": c.commitments,
        "revealed_seeds": c.revealed_seeds,
        "roll_count": c.roll_count,
        "battle_count": c.battle_count,
        "last_hash": c.last_hash,
    }


def export_to(path: Path, source: str, name: str) -> Path:
    with Tracker(source) as t:
        path.write_text(export_campaign(t, t.campaign_id(name)).text, encoding="utf-8")
    return path


def invoke(db: str, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", db, *args])


@pytest.fixture
def source(tmp_path: Path, unique_name: str) -> str:
    path = str(tmp_path / "source.db")
    source_campaign(path, unique_name)
    return path


@pytest.fixture
def export_file(tmp_path: Path, source: str, unique_name: str) -> Path:
    return export_to(tmp_path / "campaign.jsonl", source, unique_name)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def rewrite(path: Path, change: Callable[[list[str]], object]) -> Path:
    lines = lines_of(path)
    change(lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def line_number_of(path: Path, kind: str) -> int:
    """The 1-based line number of the first event of this kind."""
    for number, line in enumerate(lines_of(path), start=1):
        if number > 1 and json.loads(line)["kind"] == kind:
            return number
    raise AssertionError(f"no {kind} in the export")


# ----- the format -----


def test_export_has_a_header_then_one_line_per_event_with_its_hashes(export_file: Path, source: str) -> None:
    lines = [json.loads(line) for line in lines_of(export_file)]
    header, events = lines[0], lines[1:]
    assert header["format"] == FORMAT and header["version"] == 1
    assert header["events"] == len(events) and header["last_hash"] == events[-1]["hash"]
    assert header["exported_at"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["kind"] == "Created" and events[0]["prev_hash"] == "0" * 64
    for before, after in zip(events, events[1:], strict=False):
        assert after["prev_hash"] == before["hash"]
    roll = next(e for e in events if e["kind"] == "DiceRolled")
    assert roll["topic"] == "domain.campaign:Campaign.DiceRolled"
    assert roll["event"]["values"] == json.loads(roll["state"])["values"]
    assert set(events[0]) == {"seq", "kind", "topic", "timestamp", "prev_hash", "hash", "event", "state"}


def test_the_hash_can_be_checked_from_the_file_alone(export_file: Path) -> None:
    import hashlib

    for line in lines_of(export_file)[1:]:
        e = json.loads(line)
        canonical = json.dumps(
            {
                "prev": e["prev_hash"],
                "kind": e["kind"],
                "version": e["seq"],
                "timestamp": e["timestamp"],
                "content": e["event"],
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        assert hashlib.sha256(canonical.encode()).hexdigest() == e["hash"]


def test_secret_seeds_are_not_exported(tmp_path: Path, unique_name: str) -> None:
    path = str(tmp_path / "secret.db")
    cid = source_campaign(path, unique_name, reveal=True)
    with Tracker(path) as t:
        secrets = [s for epoch in range(3) if (s := t.seed_for(cid, epoch))]
        text = export_campaign(t, cid).text
        revealed = t.load(cid).revealed_seeds
    assert len(secrets) == 2 and revealed == secrets[:1]
    assert secrets[0] in text  # revealed in the log
    assert secrets[1] not in text  # the current seed stays secret


# ----- round trips -----


def test_round_trip_rebuilds_the_exact_rows_and_state(
    export_file: Path, source: str, db_url: str, unique_name: str
) -> None:
    """SQLite -> SQLite and SQLite -> PostgreSQL."""
    with Tracker(source) as src:
        old_cid = src.campaign_id(unique_name)
        old_rows = src.stored_events(old_cid)
        old_state = state_of(src.load(old_cid))
    with Tracker(db_url) as t:
        result = import_campaign(t, export_file.read_bytes(), str(export_file))
        assert result.campaign == unique_name and result.events == len(old_rows)
        cid = t.campaign_id(unique_name)
        assert cid == result.campaign_id
        new_rows = t.stored_events(cid)
        assert [(r.originator_version, r.topic, bytes(r.state)) for r in new_rows] == [
            (r.originator_version, r.topic, bytes(r.state)) for r in old_rows
        ]
        assert state_of(t.load(cid)) == old_state
        report = verify(t, cid)
        assert report.ok, report.problem
        assert report.rolls_checked == 1 and report.rolls_unchecked == 0  # the seed was revealed
        # The read models catch up on the imported events.
        assert t.board_at(cid, at=len(new_rows))["phase"] == old_state["phase"]


def test_rolls_with_a_secret_seed_are_noted_not_failed(tmp_path: Path, unique_name: str) -> None:
    source = str(tmp_path / "s.db")
    source_campaign(source, unique_name, reveal=False)
    export_file = export_to(tmp_path / "e.jsonl", source, unique_name)
    dest = str(tmp_path / "d.db")
    result = invoke(dest, "import", str(export_file))
    assert result.exit_code == 0, result.output
    assert "1 auto roll not re-derived" in result.output
    with Tracker(dest) as t:
        cid = t.campaign_id(unique_name)
        report = verify(t, cid)
        assert report.ok and report.rolls_unchecked == 1 and report.rolls_checked == 0
        # No secret seed came along: further rolls need manual dice, after a recorded switch (D4).
        with pytest.raises(RuleViolation, match="^D4: .*dice seed.*tracker dice switch manual --reason"):
            t.execute(cid, lambda c, d: c.research(c.nation, "advanced_asw", d))
        with pytest.raises(RuleViolation, match="^D4: .*uses auto dice"):
            t.execute(cid, lambda c, d: c.research(c.nation, "advanced_asw", d), [9])
    out = invoke(dest, "verify")
    assert out.exit_code == 0 and "not re-derived" in out.output


def test_import_into_the_same_database_under_another_name(db_url: str, tmp_path: Path, unique_name: str) -> None:
    source_campaign(db_url, unique_name)
    export_file = export_to(tmp_path / "e.jsonl", db_url, unique_name)
    copy = f"{unique_name}-copy"
    result = invoke(db_url, "import", str(export_file), "--as", copy)
    assert result.exit_code == 0, result.output
    with Tracker(db_url) as t:
        original, imported = t.campaign_id(unique_name), t.campaign_id(copy)
        assert original != imported
        assert state_of(t.load(imported)) == state_of(t.load(original))
        assert verify(t, imported).ok and verify(t, original).ok
        # Playing on in the copy leaves the original as it was.
        before = len(t.stored_events(original))
        # No dice: the imported campaign has no seed here (see dice_for), and the step rolls none.
        perform_advance(t, imported)
        assert len(t.stored_events(original)) == before
    assert invoke(db_url, "--campaign", copy, "verify").exit_code == 0
    # The copy shows the name it was imported under, not the one recorded in its first event.
    shown = json.loads(invoke(db_url, "--campaign", copy, "state", "--json").output)
    assert shown["campaign"] == copy
    assert f"# {copy}: Turn 1" in invoke(db_url, "--campaign", copy, "report", "--turn", "1").output


def test_importing_the_same_export_twice_changes_nothing_and_says_so(
    export_file: Path, db_url: str, unique_name: str
) -> None:
    assert invoke(db_url, "import", str(export_file)).exit_code == 0
    with Tracker(db_url) as t:
        before = len(t.stored_events(t.campaign_id(unique_name)))
    again = invoke(db_url, "import", str(export_file))
    assert again.exit_code == 0, again.output
    assert again.output.startswith(f"Nothing to import: campaign {unique_name!r} already holds every event")
    with Tracker(db_url) as t:
        assert len(t.stored_events(t.campaign_id(unique_name))) == before


def test_another_campaign_under_a_name_already_taken_is_refused(
    export_file: Path, db_url: str, unique_name: str
) -> None:
    with Tracker(db_url) as t:
        t.create(unique_name, "north-sea-1914")
    again = invoke(db_url, "import", str(export_file))
    assert again.exit_code == 2
    assert f"campaign {unique_name!r} already exists" in again.output and "--as" in again.output
    assert len(again.output.strip().splitlines()) == 1


def test_a_failed_write_leaves_neither_events_nor_name(
    export_file: Path, tmp_path: Path, unique_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = str(tmp_path / "d.db")
    with Tracker(dest) as t:
        recorder: Any = t.app.recorder
        original = recorder.insert_events

        def crash_after_writing(stored: Any, **kwargs: Any) -> Any:
            original(stored, **kwargs)
            raise RuntimeError("power cut")

        monkeypatch.setattr(recorder, "insert_events", crash_after_writing)
        with pytest.raises(RuntimeError, match="power cut"):
            import_campaign(t, export_file.read_bytes(), str(export_file))
        monkeypatch.undo()
        assert t.registry.lookup(unique_name) is None
        assert t.app.recorder.max_notification_id() in (None, 0)
        # Nothing half-done stands in the way of the next attempt.
        import_campaign(t, export_file.read_bytes(), str(export_file))
        assert verify(t, t.campaign_id(unique_name)).ok


def test_a_name_left_by_a_crashed_creation_is_reused_without_its_seeds(
    export_file: Path, tmp_path: Path, unique_name: str
) -> None:
    dest = str(tmp_path / "d.db")
    with Tracker(dest) as t:
        stale = "00000000-0000-4000-8000-000000000001"
        t.registry.claim(unique_name, stale)
        t.registry.seed(stale, 0, "ab" * 32)
        result = import_campaign(t, export_file.read_bytes(), str(export_file))
        assert str(result.campaign_id) == stale
        assert t.seed_for(result.campaign_id, 0) is None
        assert verify(t, result.campaign_id).ok


def test_a_long_campaign_is_imported_with_a_snapshot(tmp_path: Path, unique_name: str) -> None:
    source = str(tmp_path / "long.db")
    with Tracker(source) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
        while len(t.stored_events(cid)) < SNAPSHOT_INTERVAL + 5:
            t.execute(cid, advance)
        old_state = state_of(t.load(cid))
    export_file = export_to(tmp_path / "long.jsonl", source, unique_name)
    with Tracker(str(tmp_path / "d.db")) as t:
        result = import_campaign(t, export_file.read_bytes(), str(export_file))
        assert t.app.snapshots is not None
        snapshots = list(t.app.snapshots.get(result.campaign_id))
        # Taken of the checked state at the last event: loading the import replays nothing.
        assert [s.originator_version for s in snapshots] == [result.events] == [SNAPSHOT_INTERVAL + 5]
        assert state_of(t.load(result.campaign_id)) == old_state
        assert verify_campaign(t, result.campaign_id).snapshots_checked == 1


# ----- the CLI -----


def test_cli_export_import_verify(source: str, tmp_path: Path, unique_name: str) -> None:
    out_file = tmp_path / "cli.jsonl"
    result = invoke(source, "--campaign", unique_name, "export", str(out_file))
    assert result.exit_code == 0, result.output
    assert f"Exported campaign {unique_name!r}" in result.output
    header = json.loads(lines_of(out_file)[0])
    dest = str(tmp_path / "dest.db")
    result = invoke(dest, "import", str(out_file), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["campaign"] == unique_name and data["events"] == header["events"]
    assert data["last_hash"] == header["last_hash"] and data["rolls_checked"] == 1
    verified = invoke(dest, "verify")
    assert verified.exit_code == 0 and verified.output.startswith("OK:")
    state = json.loads(invoke(dest, "state", "--json").output)
    assert state["campaign"] == unique_name


def test_an_imported_auto_campaign_is_told_the_switch_its_typed_dice_need(tmp_path: Path) -> None:
    """The seed stayed behind, so typed dice are refused (D4) until a recorded switch: the
    import's note gives that command, for this campaign, and it works as given."""
    source, dest, file = str(tmp_path / "source.db"), str(tmp_path / "dest.db"), tmp_path / "autumn.jsonl"
    assert invoke(source, "new", "autumn league", "--scenario", "north-sea-1914", "--dice", "auto").exit_code == 0
    assert invoke(source, "export", str(file)).exit_code == 0
    result = invoke(dest, "import", str(file))
    assert result.exit_code == 0, result.output
    typed = ("research", "advanced_asw", "--dice", "9")
    refused = invoke(dest, *typed)
    assert refused.exit_code == 1 and "D4" in refused.output, refused.output
    note = result.output.splitlines()[-1]
    assert "D4" in note and "--dice" in note, note
    command = shlex.split(note.split("`")[1].replace("TEXT", "'the seed stayed behind'"))
    assert command[:3] == ["tracker", "--campaign", "autumn league"], command
    switched = invoke(dest, *command[1:])
    assert switched.exit_code == 0, switched.output
    typed_now = invoke(dest, *typed)
    assert typed_now.exit_code == 0 and "[manual]" in typed_now.output, typed_now.output


def _break_chain(lines: list[str]) -> None:
    row = json.loads(lines[3])
    row["prev_hash"] = "0" * 64
    lines[3] = json.dumps(row)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        pytest.param(_break_chain, 1, id="broken-chain"),
        pytest.param(lambda lines: lines.__setitem__(0, "shopping list"), 2, id="not-an-export"),
        pytest.param(lambda lines: lines.__delitem__(slice(-2, None)), 1, id="cut-tail"),
    ],
)
def test_a_refused_import_leaves_no_new_database_behind(
    export_file: Path, tmp_path: Path, damage: Callable[[list[str]], object], code: int
) -> None:
    bad = rewrite(export_file, damage)
    new = tmp_path / "new.db"
    refused = invoke(str(new), "import", str(bad))
    assert refused.exit_code == code and "Traceback" not in refused.output, refused.output
    assert len(refused.output.strip().splitlines()) == 1, refused.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("new.db")) == []
    # A database that was there before stays, as it was.
    assert invoke(str(new), "import", str(tmp_path / "nowhere.jsonl")).exit_code == 2 and not new.exists()
    with Tracker(str(new)) as t:
        t.create("kept", "north-sea-1914")
    assert invoke(str(new), "import", str(bad)).exit_code == code
    assert new.exists()
    with Tracker(str(new)) as t:
        assert t.campaign_names() == ["kept"]


def test_cli_export_to_stdout_and_import_from_stdin(source: str, tmp_path: Path, unique_name: str) -> None:
    runner = CliRunner()
    exported = runner.invoke(cli, ["--db", source, "export", "-"])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout.splitlines()[0])["format"] == FORMAT
    assert "Exported" in exported.stderr and "Exported" not in exported.stdout
    dest = str(tmp_path / "dest.db")
    imported = runner.invoke(cli, ["--db", dest, "import", "-", "--as", "piped"], input=exported.stdout_bytes)
    assert imported.exit_code == 0, imported.output
    assert "Imported campaign 'piped'" in imported.output
    assert invoke(dest, "verify").exit_code == 0


def test_cli_file_errors_exit_2(tmp_path: Path, source: str) -> None:
    missing = invoke(source, "import", str(tmp_path / "nowhere.jsonl"))
    assert missing.exit_code == 2 and "cannot read" in missing.output
    unwritable = invoke(source, "export", str(tmp_path / "no-such-folder" / "x.jsonl"))
    assert unwritable.exit_code == 2 and "cannot write" in unwritable.output
    not_export = tmp_path / "notes.txt"
    not_export.write_text("shopping list\n")
    refused = invoke(source, "import", str(not_export))
    assert refused.exit_code == 2 and "line 1: not a campaign export" in refused.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert invoke(source, "import", str(empty)).exit_code == 2
    for result in (missing, unwritable, refused):
        assert len(result.output.strip().splitlines()) == 1
        assert "Traceback" not in result.output


def test_export_refuses_a_campaign_whose_log_was_edited(source: str, tmp_path: Path, unique_name: str) -> None:
    with Tracker(source) as t:
        cid = t.campaign_id(unique_name)
        cls: Any = t.app.recorder.events_record_cls  # type: ignore[attr-defined]
        with Session(t.app.factory.datastore.engine) as session:  # type: ignore[attr-defined]
            row = session.query(cls).filter(cls.originator_id == cid, cls.originator_version == 2).one()
            state = json.loads(bytes(row.state))
            state["cost"] = 1
            row.state = json.dumps(state).encode()
            session.commit()
        with pytest.raises(ExportRefused, match="event 2 .*was edited"):
            export_campaign(t, cid)
    out_file = tmp_path / "bad.jsonl"
    result = invoke(source, "export", str(out_file))
    assert result.exit_code == 1 and "tracker verify" in result.output
    assert not out_file.exists()


# ----- tampered files -----


def edit_die_in_event(path: Path) -> int:
    n = line_number_of(path, "DiceRolled")

    def change(lines: list[str]) -> None:
        obj = json.loads(lines[n - 1])
        obj["event"]["values"] = [v % 10 + 1 for v in obj["event"]["values"]]
        lines[n - 1] = json.dumps(obj)

    rewrite(path, change)
    return n


def edit_die_everywhere(path: Path) -> int:
    """A careful forger: the die changed in the readable fields and in the stored state."""
    n = line_number_of(path, "DiceRolled")

    def change(lines: list[str]) -> None:
        obj = json.loads(lines[n - 1])
        obj["event"]["values"] = [v % 10 + 1 for v in obj["event"]["values"]]
        state = json.loads(obj["state"])
        state["values"] = obj["event"]["values"]
        obj["state"] = json.dumps(state, separators=(",", ":"))
        lines[n - 1] = json.dumps(obj)

    rewrite(path, change)
    return n


def delete_a_middle_line(path: Path) -> int:
    rewrite(path, lambda lines: lines.pop(3))  # event 3
    return 4  # where event 3 should be, event 4 now is


def delete_the_last_line(path: Path) -> int:
    count = len(lines_of(path))
    rewrite(path, lambda lines: lines.pop())
    return count


def swap_two_lines(path: Path) -> int:
    def change(lines: list[str]) -> None:
        lines[2], lines[3] = lines[3], lines[2]

    rewrite(path, change)
    return 3


def edit_the_timestamp(path: Path) -> int:
    def change(lines: list[str]) -> None:
        obj = json.loads(lines[2])
        obj["timestamp"] = "2000-01-01T00:00:00+00:00"
        lines[2] = json.dumps(obj)

    rewrite(path, change)
    return 3


def edit_the_header_hash(path: Path) -> int:
    def change(lines: list[str]) -> None:
        obj = json.loads(lines[0])
        obj["last_hash"] = "f" * 64
        lines[0] = json.dumps(obj)

    rewrite(path, change)
    return 1


def name_a_foreign_topic(path: Path) -> int:
    def change(lines: list[str]) -> None:
        obj = json.loads(lines[2])
        obj["topic"] = "os:system"
        lines[2] = json.dumps(obj)

    rewrite(path, change)
    return 3


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (edit_die_in_event, r"event 4 \(DiceRolled\): the line's values does not match its stored state"),
        (edit_die_everywhere, r"event 4 \(DiceRolled\) was edited: its content does not match its hash"),
        (delete_a_middle_line, r"event 3 missing: the log jumps to event 4"),
        (delete_the_last_line, r"missing: the file ends after event \d+ but its header \(line 1\) declares"),
        (swap_two_lines, r"event 3 is out of order: event 2 belongs on this line but is on line 4"),
        (edit_the_timestamp, r"event 2 \(ActionAsked\): the line's timestamp does not match"),
        (edit_the_header_hash, r"the header's last_hash is not the hash of the last event"),
        (name_a_foreign_topic, r"topic 'os:system' is not an event of a campaign"),
    ],
)
def test_a_tampered_file_is_refused_naming_the_line(
    export_file: Path, db_url: str, tamper: Callable[[Path], int], message: str
) -> None:
    line = tamper(export_file)
    with Tracker(db_url) as t, pytest.raises(ImportRefused, match=message) as refused:
        import_campaign(t, export_file.read_bytes(), str(export_file), as_name="tampered")
    assert refused.value.line == line
    result = invoke(db_url, "import", str(export_file), "--as", "tampered")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {export_file}: line {line}: ")
    assert len(result.output.strip().splitlines()) == 1
    with Tracker(db_url) as t:
        assert t.registry.lookup("tampered") is None


def break_json(path: Path) -> int:
    def change(lines: list[str]) -> None:
        lines[4] = lines[4][:-10]

    rewrite(path, change)
    return 5


def drop_a_field(path: Path) -> int:
    def change(lines: list[str]) -> None:
        obj = json.loads(lines[2])
        del obj["hash"]
        lines[2] = json.dumps(obj)

    rewrite(path, change)
    return 3


def blank_line(path: Path) -> int:
    rewrite(path, lambda lines: lines.insert(2, ""))
    return 3


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (break_json, "not valid JSON"),
        (drop_a_field, "field 'hash' is missing"),
        (blank_line, "empty line"),
    ],
)
def test_an_unreadable_line_exits_2_naming_it(
    export_file: Path, tmp_path: Path, damage: Callable[[Path], int], message: str
) -> None:
    line = damage(export_file)
    dest = str(tmp_path / "d.db")
    result = invoke(dest, "import", str(export_file))
    assert result.exit_code == 2, result.output
    assert f"line {line}: {message}" in result.output
    assert len(result.output.strip().splitlines()) == 1
    with Tracker(dest) as t:
        assert t.campaign_names() == []


@pytest.mark.parametrize(
    ("line", "cut", "message"),
    [
        (1, 30, "line 1: not a campaign export: no JSON header (Invalid control character at column 31)"),
        (3, 40, "line 3: not valid JSON (Invalid control character at column 41)"),
        (3, 0, "line 3: not valid JSON (Expecting value at column 1)"),
        # The file itself cut short inside a string.
        (-1, 40, "not valid JSON (Unterminated string starting at column "),
    ],
)
def test_a_cut_line_names_what_the_json_lacks_and_where(
    export_file: Path, tmp_path: Path, line: int, cut: int, message: str
) -> None:
    lines = lines_of(export_file)
    at = line - 1 if line > 0 else len(lines) - 1
    if line < 0:  # inside the event's hash
        cut = lines[at].index('"hash"') + 12
    lines[at] = lines[at][:cut] if cut else "}"
    export_file.write_text("\n".join(lines[: at + 1]) + ("\n" if line > 0 else ""))
    result = invoke(str(tmp_path / "d.db"), "import", str(export_file))
    assert result.exit_code == 2 and message in result.output, result.output
    assert " at at " not in result.output


@pytest.mark.parametrize("version", [2, True, 1.5, "1"])
def test_parse_rejects_an_unknown_format_version(export_file: Path, version: object) -> None:
    """`true` among them: Python reads it as 1."""
    lines = lines_of(export_file)
    header = json.loads(lines[0])
    header["version"] = version
    data = "\n".join([json.dumps(header), *lines[1:]]).encode()
    with pytest.raises(InputError, match=f"line 1: export format version {version!r} is not supported"):
        parse_export(data, "future.jsonl")


# ----- streaming: an endless or enormous input is refused as it is read -----


class _Endless:
    """A binary stream that serves `head`, then `tail` again and again, counting what it served."""

    def __init__(self, head: bytes, tail: bytes) -> None:
        self.head, self.tail, self.served = head, tail, 0
        self.buffer = head

    def readline(self, limit: int = -1) -> bytes:
        out = b""
        while limit < 0 or len(out) < limit:
            if not self.buffer:
                self.buffer = self.tail
            want = limit - len(out) if limit >= 0 else len(self.buffer)
            chunk = self.buffer[:want]
            newline = chunk.find(b"\n")
            if newline >= 0:
                chunk = chunk[: newline + 1]
            self.buffer = self.buffer[len(chunk) :]
            out += chunk
            if newline >= 0:
                break
        self.served += len(out)
        return out


def test_import_of_dev_zero_is_refused_at_line_1_without_reading_it_all(tmp_path: Path) -> None:
    dest = str(tmp_path / "d.db")
    zero = Path("/dev/zero")
    if zero.exists():
        result = invoke(dest, "import", str(zero))
        assert result.exit_code == 2, result.output
        assert "line 1: longer than" in result.output and len(result.output.strip().splitlines()) == 1
    stream = _Endless(b"", b"\0" * 65536)
    with Tracker(dest) as t, pytest.raises(InputError, match="line 1: longer than"):
        import_campaign(t, stream, "zeros")  # type: ignore[arg-type]
    from tracker.interchange.format import MAX_LINE_BYTES

    assert stream.served <= MAX_LINE_BYTES + 1


def test_an_oversized_line_is_refused_naming_it(export_file: Path, tmp_path: Path) -> None:
    from tracker.interchange.format import MAX_LINE_BYTES

    lines = lines_of(export_file)
    lines[3] = lines[3][:-1] + " " * MAX_LINE_BYTES + "}"
    export_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke(str(tmp_path / "d.db"), "import", str(export_file))
    assert result.exit_code == 2, result.output
    assert "line 4: longer than" in result.output and len(result.output.strip().splitlines()) == 1


def test_lines_are_checked_as_they_come(export_file: Path, tmp_path: Path) -> None:
    """An endless stream after a bad event stops at that event: nothing past it is read."""
    lines = lines_of(export_file)
    edited = json.loads(lines[2])
    edited["event"]["values"] = [99]
    head = ("\n".join([lines[0], lines[1], json.dumps(edited)]) + "\n").encode()
    stream = _Endless(head, (lines[3] + "\n").encode())
    with Tracker(str(tmp_path / "d.db")) as t, pytest.raises(ImportRefused, match="line 3"):
        import_campaign(t, stream, "endless")  # type: ignore[arg-type]
    assert stream.served < len(head) + 10 * (len(lines[3]) + 1)


def test_more_event_lines_than_the_header_declares_stop_at_the_first_extra(export_file: Path, tmp_path: Path) -> None:
    lines = lines_of(export_file)
    head = ("\n".join(lines) + "\n").encode()
    stream = _Endless(head, (lines[-1] + "\n").encode())
    with Tracker(str(tmp_path / "d.db")) as t, pytest.raises(ImportRefused, match="beyond the"):
        import_campaign(t, stream, "endless")  # type: ignore[arg-type]
    assert stream.served <= len(head) + len(lines[-1]) + 1


def test_a_file_saved_with_a_byte_order_mark_imports(export_file: Path, tmp_path: Path) -> None:
    """A Windows editor that opens the file and saves it unchanged puts a BOM in front of it;
    the events are as exported, so the import goes ahead (it named the BOM a missing header)."""
    export_file.write_bytes(b"\xef\xbb\xbf" + export_file.read_bytes())
    dest = str(tmp_path / "d.db")
    result = invoke(dest, "import", str(export_file))
    assert result.exit_code == 0, result.output
    assert invoke(dest, "verify").output.startswith("OK: ")


@pytest.mark.parametrize(("name", "problem"), [("", "1 to 200 characters"), ("a\x00b", "control characters")])
def test_a_header_campaign_name_that_cannot_be_used_names_the_file_and_as(
    export_file: Path, tmp_path: Path, name: str, problem: str
) -> None:
    lines = lines_of(export_file)
    header = json.loads(lines[0])
    header["campaign"] = name
    export_file.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    dest = str(tmp_path / "d.db")
    result = invoke(dest, "import", str(export_file))
    assert result.exit_code == 2, result.output
    assert f"{export_file}: line 1: the header's campaign name cannot be used: " in result.output
    assert problem in result.output and result.output.rstrip().endswith("name it with --as NAME")
    assert invoke(dest, "import", str(export_file), "--as", "renamed").exit_code == 0


def test_importing_an_export_back_into_its_own_database_changes_nothing(
    export_file: Path, source: str, unique_name: str
) -> None:
    """The campaign was never imported here: the message said "it was imported before"."""
    before = invoke(source, "log", "--json").output
    result = invoke(source, "import", str(export_file))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Nothing to import: campaign {unique_name!r} already holds every event")
    assert "(it was exported from here, or imported before)" in result.output
    assert invoke(source, "log", "--json").output == before


def test_a_campaign_database_given_to_import_is_named_as_one(source: str, tmp_path: Path) -> None:
    """The database file where its export belongs read "line 1: not UTF-8 text"."""
    dest = str(tmp_path / "d.db")
    result = invoke(dest, "import", source, "--as", "copy")
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"Error: {source} is a SQLite database, not a campaign export: use it with --db {source}, "
        f"or write its export with `tracker --db {source} export FILE`\n"
    )
    with Tracker(dest) as t:
        assert t.campaign_names() == []


def test_export_says_1_event_and_one_event_after_since(tmp_path: Path) -> None:
    """A count of one and a span of one read as words do: "1 event", "event 2" (it said
    "1 events" and "events 2-2")."""
    db = str(tmp_path / "one.db")

    def said(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--db", db, *args])
        assert result.exit_code == 0, result.output
        return result.output

    said("new", "one", "--scenario", "north-sea-1914", "--dice", "auto")
    out = said("export", str(tmp_path / "full.json"))
    assert out.startswith(f"Exported campaign 'one': 1 event to {tmp_path / 'full.json'} (head 1:")
    said("next")
    out = said("export", "--since", "2", str(tmp_path / "tail.json"))
    assert out.startswith(f"Exported campaign 'one': event 3, after event 2, to {tmp_path / 'tail.json'} (head 3:")
