"""PBEM by file: `export --since SEQ` writes the events after SEQ; `import` fast-forwards a campaign
that exists here when the file continues its chain (after re-refereeing every action), refuses a
fork naming the first differing event, refuses a file for another campaign, and is idempotent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import and_, select, update

from domain.chain import event_content, event_hash
from tracker.cli.main import cli
from tracker.service.application import Tracker

SNS = "Southern North Sea"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", "pbem", *args])
    assert result.exit_code == code, result.output
    return result.output


def head(db: str) -> str:
    return next(line for line in run(db, "verify").splitlines() if line.startswith("Head: "))


def count(db: str) -> int:
    with Tracker(db) as t:
        return len(t.stored_events(t.campaign_id("pbem")))


@pytest.fixture
def table(tmp_path: Path) -> dict[str, Any]:
    """Germany's copy and Britain's copy of one manual-dice campaign, Britain's from Germany's
    full export: the start of a game played by e-mail."""
    germany, britain = str(tmp_path / "germany.db"), str(tmp_path / "britain.db")
    run(germany, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    run(germany, "research", "advanced_submarine", "--dice", "4", "--ref", "dice-server#1001")
    full = tmp_path / "full.jsonl"
    run(germany, "export", str(full))
    run(britain, "import", str(full))
    return {"germany": germany, "britain": britain, "tmp": tmp_path, "base": count(germany)}


def continuation(table: dict[str, Any], name: str = "turn.jsonl") -> Path:
    path = table["tmp"] / name
    out = run(table["germany"], "export", "--since", str(table["base"]), str(path))
    assert f"after event {table['base']}" in out
    return path


def test_a_continuation_fast_forwards_the_other_copy_after_re_refereeing(table: dict[str, Any]) -> None:
    germany, britain = table["germany"], table["britain"]
    run(germany, "next")
    run(germany, "next")
    run(germany, "move", "DE-SS3", "--path", f"{SNS},Dover Strait")  # Britain may search it (SM2)
    path = continuation(table)
    header = json.loads(path.read_text().splitlines()[0])
    assert header["since"] == table["base"] and header["events"] == count(germany) - table["base"]
    out = run(britain, "import", str(path))
    assert f"Fast-forwarded campaign 'pbem': events {table['base'] + 1}-{count(germany)} appended" in out
    assert "4 actions re-refereed" in out
    assert head(britain) == head(germany)
    # Britain answers on its copy and sends its own continuation back.
    run(britain, "intercept", "search", "1", "--units", "", "--seen", str(count(britain)))
    back = table["tmp"] / "back.jsonl"
    run(britain, "export", "--since", str(count(germany)), str(back))
    assert "appended" in run(germany, "import", str(back))
    assert head(britain) == head(germany)


def test_importing_the_same_continuation_twice_changes_nothing_and_says_so(table: dict[str, Any]) -> None:
    run(table["germany"], "next")
    path = continuation(table)
    run(table["britain"], "import", str(path))
    before = count(table["britain"])
    out = run(table["britain"], "import", str(path))
    assert out.startswith("Nothing to import: campaign 'pbem' already holds every event of this file")
    assert count(table["britain"]) == before
    # The full export of the same campaign is no news either.
    full = table["tmp"] / "full-again.jsonl"
    run(table["germany"], "export", str(full))
    assert run(table["britain"], "import", str(full)).startswith("Nothing to import")


def test_a_fork_is_refused_naming_the_first_differing_event(table: dict[str, Any]) -> None:
    run(table["germany"], "next")
    run(table["britain"], "next")  # both recorded the same step, each on its own copy
    path = continuation(table)
    before = count(table["britain"])
    out = run(table["britain"], "import", str(path), code=1)
    first = table["base"] + 1
    assert f"line 2: fork at event {first}: the copies went different ways after event {first - 1}" in out, out
    # Each copy's first differing action, as typed and by whom, and the two ways to mend it.
    # The same words on both sides: the refusal says they are the same action, timed apart.
    assert "here `next`, in the file `next`: the same action, recorded on each copy at its own time" in out, out
    assert "--resolve theirs" in out and "--resolve mine" in out
    assert len(out.strip().splitlines()) == 1
    assert count(table["britain"]) == before


def test_a_continuation_of_another_campaign_is_refused(table: dict[str, Any], tmp_path: Path) -> None:
    other = str(tmp_path / "other.db")
    run(other, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    run(other, "research", "advanced_submarine", "--dice", "9")
    run(table["germany"], "next")
    path = continuation(table)
    out = run(other, "import", str(path), code=1)
    assert f"this file continues event {table['base']} with hash" in out
    assert "it continues another campaign, or another history of this one; nothing was imported" in out
    nowhere = str(tmp_path / "empty.db")
    out = run(nowhere, "import", str(path), code=1)
    assert "import the campaign's full export first" in out
    # A continuation from further on than this copy has got to.
    run(table["germany"], "next")
    later = table["tmp"] / "later.jsonl"
    run(table["germany"], "export", "--since", str(table["base"] + 2), str(later))
    out = run(table["britain"], "import", str(later), code=1)
    assert f"ends at event {table['base']}: import the files in between first" in out


def _rehash_from(t: Tracker, cid: Any, first: int) -> None:
    """Recompute every hash from event `first` on, as a forger who knows the format would."""
    table = t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
    events = t.events(cid)
    prev = events[first - 2].hash
    for event in events[first - 1 :]:
        v = event.originator_version
        attrs = dict(vars(event)) | {"prev_hash": prev}
        digest = event_hash(prev, type(event).__name__, v, event.timestamp, event_content(attrs))
        where = and_(table.c.originator_id == cid, table.c.originator_version == v)
        with t.engine.begin() as conn:
            state = json.loads(bytes(conn.execute(select(table.c.state).where(where)).scalar_one()))
            state.update(prev_hash=prev, hash=digest)
            conn.execute(update(table).where(where).values(state=json.dumps(state).encode()))
        prev = digest


def test_a_tampered_continuation_is_refused_by_the_referee(table: dict[str, Any]) -> None:
    """Germany's copy is edited behind the tracker's back (a U-boat moved further than it may,
    every hash recomputed): the continuation verifies by its chain, but not by the rules."""
    germany = table["germany"]
    run(germany, "next")
    run(germany, "next")
    run(germany, "move", "DE-SS3", "--to", SNS)
    with Tracker(germany) as t:
        cid = t.campaign_id("pbem")
        moved = next(e for e in t.events(cid) if type(e).__name__ == "UnitsMoved")
        table_ = t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
        where = and_(table_.c.originator_id == cid, table_.c.originator_version == moved.originator_version)
        with t.engine.begin() as conn:
            state = json.loads(bytes(conn.execute(select(table_.c.state).where(where)).scalar_one()))
            state["path"] = ["Heligoland Bight", SNS, "Dover Strait"]
            conn.execute(update(table_).where(where).values(state=json.dumps(state).encode()))
        _rehash_from(t, cid, moved.originator_version)
    path = continuation(table)
    before = count(table["britain"])
    out = run(table["britain"], "import", str(path), code=1)
    assert f"event {moved.originator_version} (UnitsMoved, F4) is not what the referee records" in out, out
    assert len(out.strip().splitlines()) == 1
    assert count(table["britain"]) == before


def test_a_fork_names_an_input_left_empty_where_the_other_copy_gave_it(table: dict[str, Any]) -> None:
    """SM2: `--units ""` (nobody searches) is not the default (every unit searches): at a fork
    the action of each copy shows it, or the two read as one with and one without units."""
    germany, britain = table["germany"], table["britain"]
    run(germany, "next")
    run(germany, "next")
    run(germany, "move", "DE-SS3", "--path", f"{SNS},Dover Strait")
    run(britain, "import", str(continuation(table)))
    seen = str(count(britain))
    run(germany, "intercept", "search", "1", "--units", "", "--seen", seen)
    run(britain, "intercept", "search", "1", "--units", "GB-DD3", "--dice", "7", "--seen", seen)
    path = table["tmp"] / "search.jsonl"
    run(germany, "export", "--since", seen, str(path))
    out = run(britain, "import", str(path), code=1)
    assert "here `intercept search (battle=1, units='GB-DD3', dice=[7])`, in the file " in out, out
    assert "in the file `intercept search (battle=1, units='')`;" in out, out


def test_a_second_fork_at_the_same_event_names_the_campaign_resolve_would_keep(table: dict[str, Any]) -> None:
    """A copy that gave way at event N once keeps its history as NAME-fork-N; a later refusal at
    event N (its own old file, say) names the name `--resolve theirs` would use then."""
    germany, britain = table["germany"], table["britain"]
    run(germany, "next")
    run(britain, "next")
    mine = table["tmp"] / "mine.jsonl"
    run(britain, "export", "--since", str(table["base"]), str(mine))
    fork = table["base"] + 1
    assert f"as campaign 'pbem-fork-{fork}'" in run(britain, "import", str(continuation(table)), "--resolve", "theirs")
    out = run(britain, "import", str(mine), code=1)
    assert f"keeps this copy's events after the fork as campaign 'pbem-fork-{fork}-2'" in out, out
    assert f"as campaign 'pbem-fork-{fork}-2'" in run(britain, "import", str(mine), "--resolve", "theirs")


def test_a_continuation_cut_short_is_refused_naming_the_first_missing_event(table: dict[str, Any]) -> None:
    run(table["germany"], "next")
    run(table["germany"], "buy", "submarine")
    path = continuation(table)
    lines = path.read_text().splitlines()
    cut = table["tmp"] / "cut.jsonl"
    cut.write_text("\n".join(lines[:3]) + "\n")
    before = count(table["britain"])
    out = run(table["britain"], "import", str(cut), code=1)
    first, declared = table["base"] + 1, len(lines) - 1
    assert f"cut.jsonl: line 4: event {first + 2} missing: the file ends after event {first + 1} but its header " in out
    assert f"declares {declared} events, {first}-{table['base'] + declared}; nothing was imported" in out, out
    assert count(table["britain"]) == before
    # A header claiming more events than the file holds is no continuation either.
    header = json.loads(lines[0]) | {"events": declared + 5}
    more = table["tmp"] / "more.jsonl"
    more.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert f"event {table['base'] + declared + 1} missing" in run(table["britain"], "import", str(more), code=1)
    assert count(table["britain"]) == before


def test_a_fast_forward_says_what_the_game_now_waits_for_and_the_command(table: dict[str, Any]) -> None:
    """By file no server tells the next player: the import that hands them the game does, as
    `tracker inbox` would, naming the campaign, the nation and the command to run."""
    germany, britain = table["germany"], table["britain"]
    run(germany, "next")
    run(germany, "next")
    run(germany, "move", "DE-SS3", "--path", f"{SNS},Dover Strait")
    out = run(britain, "import", str(continuation(table)))
    lines = out.splitlines()
    assert lines[0].startswith("Fast-forwarded campaign 'pbem'") and lines[1] == "Waiting now:", out
    assert lines[2].startswith(
        "pbem · round 1 · Germany · combat movement: battle 1 (interception, Southern North Sea):"
    )
    assert "waiting for Britain to choose which units search" in lines[2]
    assert lines[3].startswith("  next: tracker --campaign pbem intercept search 1 "), out
    # Nothing new, nothing to tell; --json keeps its shape.
    assert "Waiting now" not in run(britain, "import", str(continuation(table, "again.jsonl")))
    assert "waiting" not in json.loads(run(britain, "import", str(continuation(table, "again.jsonl")), "--json"))


def test_a_continuation_for_a_copy_imported_under_another_name_names_that_copy(
    table: dict[str, Any], tmp_path: Path
) -> None:
    # Britain's player imported the full export `--as autumn`; the next file names 'pbem'.
    renamed = str(tmp_path / "renamed.db")
    CliRunner().invoke(cli, ["--db", renamed, "import", str(table["tmp"] / "full.jsonl"), "--as", "autumn"])
    run(table["germany"], "next")
    path = continuation(table)
    result = CliRunner().invoke(cli, ["--db", renamed, "import", str(path)])
    assert result.exit_code == 1, result.output
    assert result.output.endswith(
        f"has no campaign 'pbem': campaign 'autumn' here holds event {table['base']} it continues: "
        "name it with --as autumn; nothing was imported\n"
    )
    done = CliRunner().invoke(cli, ["--db", renamed, "import", str(path), "--as", "autumn"])
    assert done.exit_code == 0 and "Fast-forwarded campaign 'autumn'" in done.output
