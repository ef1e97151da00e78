"""`tracker report --split`: a forum post cut into numbered parts that each fit a post's limit,
cut between blocks only, each part's tables, lists and code blocks closed and opened again (a
table's header repeated), so that each part renders on its own."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.reports.bbcode import BBCODE
from tracker.reports.markdown import MARKDOWN
from tracker.reports.split import PRESETS, SMALLEST, Markup, split_post
from tracker.service.notify.messages import webhook_body

MARKUPS: dict[str, Markup] = {"md": MARKDOWN, "bbcode": BBCODE}
LABEL = {"md": re.compile(r"\*\*\((\d+)/(\d+)\)\*\*"), "bbcode": re.compile(r"\[b\]\((\d+)/(\d+)\)\[/b\]")}
SEPARATOR = re.compile(r"%%%% part (\d+) of (\d+): ([\d,]+) characters %%%%")


@pytest.fixture(scope="module")
def north_sea(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("north-sea") / "demo.db"
    run_demo(str(path), lambda line: None)
    return str(path)


@pytest.fixture(scope="module")
def great_war(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("great-war") / "demo.db"
    run_demo(str(path), lambda line: None, scenario="great-war-1914")
    return str(path)


def invoke(db: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result


def report(db: str, fmt: str, *scope: str) -> str:
    return str(invoke(db, "report", *scope, "--format", fmt).stdout)


@pytest.fixture(scope="module")
def great_war_reports(great_war: str) -> dict[tuple[str, str], str]:
    """The great-war demo's reports: turn 1 (the longest turn) and the whole campaign."""
    return {(fmt, scope): report(great_war, fmt, *scope.split()) for fmt in MARKUPS for scope in ("--turn 1", "--all")}


# ----- the checker: balance of each part, and the report's lines given back in order -----


def md_problems(part: str) -> list[str]:
    """What would not render as written in a Markdown part: a fence left open, table rows with
    no header and delimiter row above them, emphasis, struck text or code left open."""
    problems, fence, lines = [], None, part.splitlines()
    previous = ""  # the line before, outside fences
    for k, line in enumerate(lines):
        marker = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        if line.startswith("|") and not previous.startswith("|"):
            delimiter = lines[k + 1] if k + 1 < len(lines) else ""
            if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", delimiter):
                problems.append(f"table rows with no header: {line[:60]!r}")
        if not line.startswith("|"):
            inline = re.sub(r"\\.", "", line)
            inline = re.sub(r"`[^`]*`", "", inline)
            for mark in ("`", "**", "~~"):
                if inline.count(mark) % 2:
                    problems.append(f"{mark} left open: {line[:60]!r}")
        previous = line
    if fence is not None:
        problems.append(f"fence {fence} left open")
    return problems


def bbcode_problems(part: str) -> list[str]:
    """What would not render as written in a BBCode part: a tag closed that is not the one
    open, a tag left open (nothing is a tag inside [code] but its end), a [code] table without
    its header over a line of dashes."""
    problems: list[str] = []
    stack: list[str] = []
    for tag in re.finditer(r"\[(/?)([a-z]+|\*)(=[^\]]*)?\]", part):
        closing, name = tag.group(1), tag.group(2).lower()
        if stack and stack[-1] == "code" and tag.group(0) != "[/code]":
            continue
        if name == "*":
            continue
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            problems.append(f"[/{name}] closes nothing open at {tag.start()}")
    problems += [f"[{name}] left open" for name in stack]
    for block in re.findall(r"\[code\]\n(.*?)\[/code\]", part, re.DOTALL):
        lines = block.splitlines()
        if len(lines) < 3 or not re.fullmatch(r"-+( +-+)*", lines[1]):
            problems.append(f"a [code] table without its header: {lines[:1]!r}")
    return problems


PROBLEMS = {"md": md_problems, "bbcode": bbcode_problems}
# Lines a part adds, at its end, to close what its cut leaves open.
CLOSERS = {"md": {"```", "~~~"}, "bbcode": {"[/list]", "[/code]", "[/quote]", "[/table]"}}


def without_label(part: str, fmt: str, number: int, total: int) -> str:
    """A part's text after its label, "(2/5)" in the markup, and the blank line below it."""
    first, blank, rest = part.split("\n", 2)
    label = LABEL[fmt].fullmatch(first)
    assert label is not None and label.groups() == (str(number), str(total)), first
    assert blank == ""
    return rest


def given_back(parts: list[str], fmt: str, text: str) -> None:
    """The parts' lines, without their labels, the lines each reopens at its start (lines of
    the report: a tag, a table's header) and those it closes at its end, are the report's lines
    in order, each once (blank lines aside)."""
    original = [line for line in text.splitlines() if line.strip()]
    seen = set(original)
    at = 0
    for number, part in enumerate(parts, 1):
        lines = [line for line in without_label(part, fmt, number, len(parts)).splitlines() if line.strip()]
        for start in range(len(lines)):
            if not all(line in seen for line in lines[:start]):
                break  # a reopened line is one of the report's
            taken = 0
            while (
                start + taken < len(lines)
                and at + taken < len(original)
                and lines[start + taken] == original[at + taken]
            ):
                taken += 1
            if taken and all(line in CLOSERS[fmt] for line in lines[start + taken :]):
                at += taken
                break
        else:
            pytest.fail(f"part {number} is not a run of the report's lines: {lines[:3]}")
    assert at == len(original), f"the parts end at line {at} of {len(original)}: {original[at : at + 2]}"


def check(parts: list[str], fmt: str, limit: int, headless: Collection[int] = ()) -> None:
    """Every part within `limit` and balanced: no tag, fence or emphasis left open, every table
    under its header, except in parts with no room for it (`headless`, said in a warning)."""
    assert len(parts) > 1
    for number, part in enumerate(parts, 1):
        assert len(part) <= limit, f"part {number} has {len(part)} characters"
        assert part.endswith("\n")
        problems = PROBLEMS[fmt](part)
        if number in headless:
            problems = [p for p in problems if "without its header" not in p and "with no header" not in p]
        assert problems == [], f"part {number}:\n{part}"


# ----- the reports of the demo campaigns -----


@pytest.mark.parametrize("fmt", ["md", "bbcode"])
def test_a_north_sea_turn_report_is_cut_into_posts_that_each_render_alone(north_sea: str, fmt: str) -> None:
    text = report(north_sea, fmt, "--turn", "2")
    cut = split_post(text, MARKUPS[fmt], 700)
    assert cut.warnings == []
    check(cut.parts, fmt, 700)
    given_back(cut.parts, fmt, text)


@pytest.mark.parametrize("fmt", ["md", "bbcode"])
@pytest.mark.parametrize("scope", ["--turn 1", "--all"])
def test_a_great_war_report_fits_discord_messages(
    great_war_reports: dict[tuple[str, str], str], fmt: str, scope: str
) -> None:
    text = great_war_reports[fmt, scope]
    cut = split_post(text, MARKUPS[fmt], PRESETS["discord"])
    assert cut.warnings == []
    check(cut.parts, fmt, PRESETS["discord"])
    given_back(cut.parts, fmt, text)


def test_a_table_cut_in_two_repeats_its_header_in_the_next_part(great_war_reports: dict[tuple[str, str], str]) -> None:
    text = great_war_reports["md", "--turn 1"]
    original = text.splitlines()
    parts = split_post(text, MARKDOWN, 900).parts
    continued = 0
    for number, part in enumerate(parts, 1):
        body = without_label(part, "md", number, len(parts)).splitlines()
        if body[0].startswith("|") and original.index(body[2]) != original.index(body[0]) + 2:
            # The part starts in a table, with its header and delimiter row again.
            row = original.index(body[2])
            assert original[row - 1].startswith("| ")
            header = max(k for k in range(row) if original[k].startswith("|---"))
            assert body[:2] == original[header - 1 : header + 1]
            continued += 1
    assert continued >= 1


@settings(max_examples=40, deadline=None)
@given(
    fmt=st.sampled_from(["md", "bbcode"]),
    scope=st.sampled_from(["--turn 1", "--all"]),
    limit=st.integers(SMALLEST, 6000),
)
def test_every_part_fits_and_renders_alone_whatever_the_limit(
    great_war_reports: dict[tuple[str, str], str], fmt: str, scope: str, limit: int
) -> None:
    text = great_war_reports[fmt, scope]
    cut = split_post(text, MARKUPS[fmt], limit)
    if len(text) <= limit:
        assert cut.parts == [text]
        return
    check(cut.parts, fmt, limit, {*cut.headless, *cut.cut_inside})
    if not cut.warnings:
        # No block was cut inside: the parts give back the report whole.
        given_back(cut.parts, fmt, text)


def test_a_report_that_fits_is_one_part_as_it_is(great_war_reports: dict[tuple[str, str], str]) -> None:
    text = great_war_reports["bbcode", "--all"]
    assert split_post(text, BBCODE, len(text)).parts == [text]


def test_the_discord_preset_is_the_length_the_discord_notices_are_cut_to() -> None:
    body = webhook_body("discord", "x" * 5000, {}, None)
    assert len(body["content"]) == PRESETS["discord"]


# ----- constructs the reports do not write (yet): fences, quotes, a line longer than a part -----


def test_a_markdown_code_fence_cut_in_two_is_closed_and_opened_again() -> None:
    text = "# Log\n\n```text\n" + "".join(f"line {k} of the log\n" for k in range(60)) + "```\n\nAfter the log.\n"
    cut = split_post(text, MARKDOWN, 300)
    assert cut.warnings == []
    check(cut.parts, "md", 300)
    given_back(cut.parts, "md", text)
    assert all(p.split("\n")[2] == "```text" for p in cut.parts[1:-1])


def test_bbcode_quotes_and_nested_lists_cut_inside_are_closed_and_opened_again() -> None:
    items = "".join(f"[*]item {k} [b]bold[/b]\n[list]\n[*]under {k}\n[*]also under {k}\n[/list]\n" for k in range(20))
    said = "".join(f"said the admiral, {k} times.\n" for k in range(30))
    text = f"[quote]\n{said}[/quote]\n\n[list]\n{items}[/list]\n"
    cut = split_post(text, BBCODE, 250)
    check(cut.parts, "bbcode", 250)
    assert not cut.warnings
    given_back(cut.parts, "bbcode", text)


@pytest.mark.parametrize("fmt", ["md", "bbcode"])
def test_a_line_longer_than_a_part_is_cut_inside_with_a_warning(fmt: str) -> None:
    # Escaped characters (players' text) too: a cut never parts an escape from its character.
    escaped = "\\_" if fmt == "md" else "[\u200b"
    words = [f"word{k}" for k in range(1500)]
    # And a run of them with no space to cut at.
    said = " ".join(f"{w}{escaped}" if k % 7 == 0 else w for k, w in enumerate(words)) + " " + (escaped + "x") * 300
    line = f"- **{said}**" if fmt == "md" else f"[list]\n[*][b]{said}[/b]\n[/list]"
    text = f"Before.\n\n{line}\n\nAfter.\n"
    cut = split_post(text, MARKUPS[fmt], SMALLEST)
    assert len(cut.warnings) == 1 and "cut inside" in cut.warnings[0] and "\n" not in cut.warnings[0]
    check(cut.parts, fmt, SMALLEST)
    bodies = [without_label(p, fmt, k, len(cut.parts)) for k, p in enumerate(cut.parts, 1)]
    assert re.findall(r"word\d+", " ".join(bodies)) == words
    assert sum(b.count(escaped) for b in bodies) == said.count(escaped)


def test_a_table_whose_header_and_row_are_longer_than_a_part_keeps_its_rows_a_table() -> None:
    header = "| " + " | ".join(f"column {k}" for k in range(20)) + " |\n|" + "---|" * 20 + "\n"
    text = header + "".join("| " + " | ".join(str(k) for k in range(20)) + " |\n" for _ in range(10))
    cut = split_post(text, MARKDOWN, 300)
    assert any("header is not repeated" in w for w in cut.warnings)
    check(cut.parts, "md", 300, {*cut.headless, *cut.cut_inside})
    # Rows continued under a header of blank cells, as wide as the table's.
    assert (
        "\n| | | | | | | | | | | | | | | | | | | | |\n|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|\n| 0 | 1 |"
        in cut.parts[2]
    )


# ----- the command -----


def test_split_prints_each_part_after_a_separator_line(great_war: str) -> None:
    out = invoke(great_war, "report", "--turn", "1", "--split", "discord").stdout
    separators = [SEPARATOR.fullmatch(line) for line in out.splitlines() if line.startswith("%%%%")]
    texts = re.split(r"^%%%% .*\n", out, flags=re.MULTILINE)
    assert texts[0] == "" and len(texts) == len(separators) + 1 == 4
    # A blank line before each separator but the first, after the part's own last line.
    parts = [t.removesuffix("\n") for t in texts[1:-1]] + [texts[-1]]
    for k, (separator, part) in enumerate(zip(separators, parts, strict=True), 1):
        assert separator is not None and separator.groups() == (str(k), "3", f"{len(part):,}")
        assert len(part) <= 2000 and part.startswith(f"**({k}/3)**\n\n")
    check(parts, "md", 2000)


def test_split_with_json_prints_the_parts(great_war: str) -> None:
    parts = json.loads(
        invoke(great_war, "report", "--turn", "1", "--split", "1000", "--json", "--format", "bbcode").stdout
    )
    assert [p["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert all(p["of"] == len(parts) and p["characters"] == len(p["text"]) <= 1000 for p in parts)
    check([p["text"] for p in parts], "bbcode", 1000)


def test_split_with_output_writes_numbered_files(great_war: str, tmp_path: Path) -> None:
    target = tmp_path / "turn1.md"
    out = invoke(great_war, "report", "--turn", "1", "--split", "discord", "-o", str(target)).stdout
    files = sorted(tmp_path.glob("turn1-*.md"))
    assert [f.name for f in files] == ["turn1-1.md", "turn1-2.md", "turn1-3.md"]
    assert not target.exists()
    assert out.splitlines() == [
        f"Wrote part {k} of 3 to {f} ({len(f.read_text(encoding='utf-8')):,} characters)."
        for k, f in enumerate(files, 1)
    ]
    check([f.read_text(encoding="utf-8") for f in files], "md", 2000)
    written = json.loads(
        invoke(great_war, "report", "--turn", "1", "--split", "discord", "-o", str(target), "--json").stdout
    )
    assert [w["file"] for w in written] == [str(f) for f in files] and written[0]["of"] == 3


def test_split_warns_of_parts_an_earlier_cut_left_beside_the_new_ones(great_war: str, tmp_path: Path) -> None:
    """A scribe posting turn1-*.md after cutting again into fewer parts would post the old
    ones too: the command names them (it removes no file it did not write this time)."""
    target = tmp_path / "turn1.md"
    invoke(great_war, "report", "--turn", "1", "--split", "200", "-o", str(target))
    many = sorted(tmp_path.glob("turn1-*.md"))
    assert len(many) > 9
    result = CliRunner().invoke(
        cli, ["--db", great_war, "report", "--turn", "1", "--split", "discord", "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert "Wrote part 3 of 3" in result.stdout and "Warning" not in result.stdout
    (warning,) = result.stderr.splitlines()
    assert warning.startswith(f"Warning: {len(many)} files of an earlier --split are left beside these parts")
    assert many[0].name in warning and "turn1-1.md" not in warning
    assert all(f.exists() for f in many)
    # Cut again the same way: nothing is left over.
    again = CliRunner().invoke(
        cli, ["--db", great_war, "report", "--turn", "1", "--split", "discord", "-o", str(tmp_path / "t.md")]
    )
    assert again.exit_code == 0 and again.stderr == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--split", "199"], "from 200 to 1000000"),
        (["--split", "0"], "from 200 to 1000000"),
        (["--split", "1000001"], "from 200 to 1000000"),
        (["--split", "9" * 5000], "from 200 to 1000000"),
        (["--split", "-5"], "from 200 to 1000000"),
        (["--split", "twitter"], "discord (2000) or phpbb (60000)"),
        (["--split", "discord", "--format", "html"], "give --format md, discord or bbcode, not html"),
        (["--split", "discord", "--format", "json"], "give --format md, discord or bbcode, not json"),
    ],
)
def test_split_refuses_a_limit_out_of_range_and_formats_that_are_no_post(
    north_sea: str, args: list[str], words: str
) -> None:
    result = invoke(north_sea, "report", "--turn", "2", *args, code=2)
    message = result.output.strip()
    assert words in message and "\n" not in message and "Traceback" not in message
