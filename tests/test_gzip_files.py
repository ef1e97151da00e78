"""Gzip-compressed campaign files (issue: a gzipped export read "line 1: not UTF-8 text"):
`import` knows gzip by its first bytes, whatever the file's name, and reads it a line at a
time; `export FILE.gz` (and the reply `import --resolve mine` writes) is written gzipped;
a damaged or cut-short gzip file is refused in one line naming it, importing nothing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.service.application import Tracker

FIXTURES = Path(__file__).parent / "fixtures"
EXPORTS = sorted(FIXTURES.glob("*.jsonl.gz"))


def run(db: str | Path, *args: str, code: int = 0, stdin: bytes | None = None) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], input=stdin)
    assert result.exit_code == code, result.output
    return result.output


def head(db: str | Path, campaign: str) -> str:
    out = run(db, "--campaign", campaign, "verify")
    assert "OK" in out, out
    return next(line for line in out.splitlines() if line.startswith("Head: "))


def events(db: str | Path, campaign: str = "pbem") -> list[tuple[int, str]]:
    with Tracker(str(db)) as t:
        return [(e.originator_version, e.hash) for e in t.events(t.campaign_id(campaign))]


def without_export_time(text: bytes) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in text.splitlines()]
    del lines[0]["exported_at"]
    return lines


@pytest.mark.parametrize("fixture", EXPORTS, ids=lambda p: p.name)
def test_a_gzipped_export_imports_as_its_plain_text_does(fixture: Path, tmp_path: Path) -> None:
    """Each stored fixture imports as it is, to the head its unpacked text imports to."""
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(gzip.decompress(fixture.read_bytes()))
    name = json.loads(plain.read_text().splitlines()[0])["campaign"]
    run(tmp_path / "from-gz.db", "import", str(fixture))
    run(tmp_path / "from-plain.db", "import", str(plain))
    assert head(tmp_path / "from-gz.db", name) == head(tmp_path / "from-plain.db", name)


def test_gzip_is_known_by_its_bytes_on_stdin_and_under_any_name(tmp_path: Path) -> None:
    packed = (FIXTURES / "demo-one-module.jsonl.gz").read_bytes()
    renamed = tmp_path / "campaign.jsonl"
    renamed.write_bytes(packed)
    assert "Imported campaign 'demo': 162 events" in run(tmp_path / "a.db", "import", str(renamed))
    assert "Imported campaign 'demo': 162 events" in run(tmp_path / "b.db", "import", "-", stdin=packed)
    assert head(tmp_path / "a.db", "demo") == head(tmp_path / "b.db", "demo")


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    run(db, "import", str(FIXTURES / "demo-one-module.jsonl.gz"))
    return db


def test_export_to_a_gz_name_writes_gzip_that_imports_back(demo: Path, tmp_path: Path) -> None:
    packed, plain = tmp_path / "out.jsonl.gz", tmp_path / "out.jsonl"
    out = run(demo, "export", str(packed))
    assert f"162 events to {packed} (head 162:" in out
    run(demo, "export", str(plain))
    data = packed.read_bytes()
    # No time and no name in the gzip header: the same log packs to the same bytes.
    assert data[:2] == b"\x1f\x8b" and data[4:8] == b"\0\0\0\0" and data[3] & 0x08 == 0
    assert without_export_time(gzip.decompress(data)) == without_export_time(plain.read_bytes())
    run(tmp_path / "copy.db", "import", str(packed))
    assert head(tmp_path / "copy.db", "demo") == head(demo, "demo")
    # Standard output stays plain text, for a pipe of the user's own.
    assert run(demo, "export", "-").startswith('{"format":"twtea-naval-tracker/events"')


@pytest.mark.parametrize("cut", ["middle", "trailer", "header"])
def test_a_cut_short_gzip_file_is_refused_in_one_line_and_imports_nothing(demo: Path, tmp_path: Path, cut: str) -> None:
    whole = tmp_path / "whole.jsonl.gz"
    run(demo, "export", str(whole))
    data = whole.read_bytes()
    cut_file = tmp_path / "cut.jsonl.gz"
    cut_file.write_bytes({"middle": data[: len(data) // 2], "trailer": data[:-4], "header": data[:5]}[cut])
    fresh = tmp_path / "fresh.db"
    out = run(fresh, "import", str(cut_file), code=2)
    assert out.startswith(f"Error: {cut_file}: the gzip data ends too soon, ") and "cut short" in out, out
    assert len(out.splitlines()) == 1 and "Traceback" not in out
    assert not fresh.exists()  # the database the refused import would have created is gone
    # Into a database that holds campaigns already: nothing is added.
    out = run(demo, "import", str(cut_file), "--as", "copy", code=2)
    assert len(out.splitlines()) == 1
    with Tracker(str(demo)) as t:
        assert t.campaign_names() == ["demo"]


def test_a_damaged_gzip_file_is_refused_in_one_line(demo: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl.gz"
    run(demo, "export", str(whole))
    data = bytearray(whole.read_bytes())
    data[-8] ^= 0xFF  # the checksum of the unpacked text
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(bytes(data))
    out = run(tmp_path / "fresh.db", "import", str(damaged), code=2)
    assert out.startswith(f"Error: {damaged}: the gzip data is damaged, after line 163 (CRC check failed"), out
    assert len(out.splitlines()) == 1


def test_another_packing_is_named_not_read_as_text(tmp_path: Path) -> None:
    zipped = tmp_path / "autumn.zip"
    zipped.write_bytes(b"PK\x03\x04" + bytes(40))
    out = run(tmp_path / "fresh.db", "import", str(zipped), code=2)
    assert out == f"Error: {zipped} is a zip archive: the tracker reads campaign files plain or gzip-compressed; " \
        "unpack it first (or send it gzipped)\n"  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> dict[str, Path]:
    """Germany's and Britain's copies of one manual-dice campaign, mailed gzipped."""
    germany, britain = tmp_path / "germany.db", tmp_path / "britain.db"
    run(germany, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl.gz"
    run(germany, "--campaign", "pbem", "export", str(full))
    run(britain, "import", str(full))
    return {"germany": germany, "britain": britain, "tmp": tmp_path}


def test_a_gzipped_continuation_fast_forwards_the_other_copy(table: dict[str, Path]) -> None:
    germany, britain = table["germany"], table["britain"]
    base = len(events(germany))
    run(germany, "--campaign", "pbem", "research", "advanced_submarine", "--dice", "4", "--ref", "dice-server#1")
    run(germany, "--campaign", "pbem", "next")
    turn = table["tmp"] / "turn.jsonl.gz"
    run(germany, "--campaign", "pbem", "export", "--since", str(base), str(turn))
    assert json.loads(gzip.decompress(turn.read_bytes()).splitlines()[0])["since"] == base
    out = run(britain, "--campaign", "pbem", "import", str(turn))
    assert f"Fast-forwarded campaign 'pbem': events {base + 1}-{len(events(germany))} appended" in out
    assert events(britain) == events(germany)
    assert head(britain, "pbem") == head(germany, "pbem")


def test_resolve_mine_replies_gzipped_to_a_gzipped_file(
    table: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    germany, britain, tmp = table["germany"], table["britain"], table["tmp"]
    monkeypatch.chdir(tmp)
    base = len(events(germany))
    run(germany, "--campaign", "pbem", "research", "advanced_submarine", "--dice", "4", "--ref", "dice-server#1")
    run(britain, "--campaign", "pbem", "next")
    theirs = tmp / "britain-turn.jsonl.gz"
    run(britain, "--campaign", "pbem", "export", "--since", str(base), str(theirs))
    out = run(germany, "--campaign", "pbem", "import", str(theirs), "--resolve", "mine")
    reply = f"pbem-since-{base}.jsonl.gz"
    assert f"Send {reply} " in out
    assert (tmp / reply).read_bytes()[:2] == b"\x1f\x8b"
    run(britain, "--campaign", "pbem", "import", reply, "--resolve", "theirs")
    assert events(britain) == events(germany)
