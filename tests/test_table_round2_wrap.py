"""Prose wrapped to the terminal keeps a zone's name of several words whole where it is one of
a list ("retreat to Central South Atlantic/Canaries and Cape Verde") or quoted in a command to
copy (--path 'Heligoland Bight,Northwest Germany'): it was cut at a line's end ("Central South
/ Atlantic"). No line grows past the terminal for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_table_round2_fight_on import skagerrak
from tracker.cli import common
from tracker.cli.common import CLIENT_TERMINAL, fit_prose

ZONES = ["Central South Atlantic", "Canaries and Cape Verde", "South West African Coast"]
DECIDE = (
    "Waiting: battle 4 (naval, Gulf of Guinea): waiting for Britain and Germany to decide: Britain: "
    f"retreat to {'/'.join(ZONES)}; Germany: submerge DE-SS5 (default: fight on) [NC4]"
)
REFUSED = (
    "T4: naval combat cannot end yet: DE-BM1 must land; to close it: tracker move DE-BM1 --path "
    "'Central South Atlantic,Gulf of Guinea', or tracker battle start --zone 'Bay of Biscay'"
)
PLACES = (
    "Britain has 2 destroyers bought and not placed (legal: Northern England, Southern England, "
    "Panama Canal Zone, Syria and Palestine, German South West Africa) [PU2]"
)


def _at(columns: int, text: str) -> list[str]:
    token = CLIENT_TERMINAL.set({"columns": columns, "color_system": None, "no_color": True, "tty": True})
    try:
        return fit_prose(text).splitlines()
    finally:
        CLIENT_TERMINAL.reset(token)


def _cut(lines: list[str], names: list[str]) -> list[str]:
    """The names broken across two lines."""
    joined = "\n".join(lines)
    return [n for n in names if n not in joined and n in " ".join(" ".join(lines).split())]


@pytest.mark.parametrize("columns", [60, 72, 80, 100])
def test_retreat_options_keep_each_zone_name_whole(columns: int) -> None:
    lines = _at(columns, DECIDE)
    assert len(lines) > 1 and all(len(line) <= columns for line in lines), lines
    assert _cut(lines, ZONES) == []
    assert " ".join(" ".join(lines).split()).replace("/ ", "/") == DECIDE  # every word, in order


def test_a_list_of_names_breaks_after_its_slash_rather_than_inside_a_name() -> None:
    # At 80 columns "Canaries and Cape / Verde" was cut.
    lines = _at(80, DECIDE)
    assert lines[1].endswith("Canaries and Cape Verde/"), lines
    assert lines[2].lstrip().startswith("South West African Coast;"), lines


@pytest.mark.parametrize("columns", [44, 60, 80])
def test_a_quoted_name_in_a_command_to_copy_stays_whole(columns: int) -> None:
    lines = _at(columns, REFUSED)
    assert all(len(line) <= columns for line in lines), lines
    assert _cut(lines, ["'Central South Atlantic,Gulf of Guinea'", "'Bay of Biscay'"]) == []


@pytest.mark.parametrize("columns", [50, 70, 90])
def test_a_comma_list_of_places_keeps_each_name_whole(columns: int) -> None:
    lines = _at(columns, PLACES)
    assert all(len(line) <= columns for line in lines), lines
    names = ["Northern England", "Southern England", "Panama Canal Zone", "Syria and Palestine"]
    assert _cut(lines, [*names, "German South West Africa"]) == []


def test_a_name_longer_than_a_line_still_breaks_and_nothing_overflows() -> None:
    # 24 columns leave 20 after the indent: "South West African Coast" (24) cannot be kept whole.
    lines = _at(24, DECIDE)
    assert all(len(line) <= 24 for line in lines), lines


def test_a_command_path_too_long_for_a_line_breaks_between_words_as_before() -> None:
    # 'Central South Atlantic,Gulf of Guinea' (39) on 40 columns with a 4-column indent.
    lines = _at(40, REFUSED)
    assert all(len(line) <= 40 for line in lines), lines
    assert any(line.strip() == "'Bay of Biscay'" or "'Bay of Biscay'" in line for line in lines)


@pytest.mark.parametrize("columns", [50, 60, 70, 80])
def test_pending_keeps_the_retreat_zones_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    # Britain's retreat from the Skagerrak, as `pending` shows it on a terminal.
    run = skagerrak(tmp_path)
    monkeypatch.setattr(common, "prose_width", lambda: columns)
    lines = run("pending").splitlines()
    # The command to copy goes whole on its line, however long.
    assert all(len(line) <= columns for line in lines if "tracker " not in line), lines
    assert _cut(lines, ["Central North Sea", "Norwegian Leads"]) == []
