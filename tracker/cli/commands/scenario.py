"""`tracker scenario check|map|new`: authoring a scenario file before any campaign exists, in a
loop of check, look at the map, fix."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import click

from domain.errors import DataFileError, InputError, TrackerError
from domain.ruleset import Ruleset, builtin_names
from domain.ruleset_files import RulesetFileError
from domain.scenario import SCENARIO_NAME, SOME_POSITIONS, NotUtf8, Scenario, decoded_scenario, scenario_text
from domain.scenario_check import Finding, ScenarioCheck, check_scenario
from domain.scenario_layout import computed_positions, typed_positions, with_positions
from domain.schema import printable
from domain.text import plural
from domain.toml_lines import key_lines
from tracker.cli.common import emit_json, json_option
from tracker.cli.output import check_output, write_output
from tracker.cli.params import RULESET, FilePath
from tracker.reports.board_map import board_svg

RULESET_HELP = "Check against this ruleset (a built-in name or a file) instead of the one the scenario names."


@click.group(name="scenario")
def scenario_group() -> None:
    """Author a scenario file: check it, draw its map, start one from a template."""


# ----- check -----


def _finding_line(source: str, f: Finding) -> str:
    where = f"{source}:{f.line}" if f.line is not None else source
    key = f"{f.key}: " if f.key else ""
    # A key path names a table as written, control characters too (an error of their own):
    # escaped, the finding stays one line.
    return printable(f"{where}: {f.level}: {key}{f.message}")


def _summary(result: ScenarioCheck) -> str:
    counts = f"{plural(len(result.errors), 'error')}, {plural(len(result.warnings), 'warning')}"
    written = result.written
    if written is None:
        return f"{result.source}: {counts}"
    board = (
        f"{plural(written.sea, 'sea zone')}, {plural(written.land, 'land territory')}"
        f", {plural(written.nations, 'nation')}, {plural(written.unit_groups, 'unit group')}"
    )
    return f"{result.source}: {counts} ({board})"


# The label findings give a scenario read from stdin (`-`), as editors' linters name it.
STDIN = "<stdin>"


def _text(file: str) -> tuple[str, str]:
    """The text and source label of a scenario file, a built-in by name, or stdin for '-'."""
    if file == "-":
        return decoded_scenario(sys.stdin.buffer.read(), STDIN), STDIN
    return scenario_text(file)


def _unreadable(file: str, problem: TrackerError, ruleset: str | None = None) -> NoReturn:
    """--json's answer for a file that cannot be read: the error as a finding, exit 2 as without.
    With `ruleset` (the --ruleset typed), the scenario was read and that ruleset could not be:
    the finding is the ruleset file's, at its line and key as the text says them."""
    message = problem.problem if isinstance(problem, DataFileError) else str(problem)
    file = STDIN if file == "-" else file
    # The line the message names, for a file that is not UTF-8 at one.
    line = problem.line if isinstance(problem, NotUtf8 | RulesetFileError) else None
    at, key = file, ""
    if ruleset is not None:
        if isinstance(problem, DataFileError):
            at, key = problem.file if isinstance(problem, RulesetFileError) else problem.source, problem.key
        else:
            at = ruleset  # one that is no file, or no file that can be read: as typed
    error = {"level": "error", "file": at, "line": line, "key": key, "message": message}
    emit_json({"file": file, "ok": False, "errors": [error], "warnings": []})
    click.echo(f"Error: {problem}", err=True)
    sys.exit(problem.exit_code)


@scenario_group.command(name="check")
# A directory is the reader's to refuse: with --json, as a JSON document like any unreadable file.
@click.argument("file", type=FilePath(allow_dash=True))
@click.option("--ruleset", type=RULESET, help=RULESET_HELP)
@json_option
def check(file: str, ruleset: str | None, as_json: bool) -> None:
    """Check a scenario file, a built-in scenario by name, or '-' for stdin: every error and
    warning, each with its line and key path. Exit status 0 when there is no error (warnings
    alone pass), 1 when the file has errors, 2 when it cannot be read (no such file, not UTF-8
    text) or --ruleset names none; with --json, a JSON document in each case.

    Example: tracker scenario check my-board.toml
    """
    try:
        text, source = _text(file)
    except TrackerError as e:
        if not as_json:
            raise
        _unreadable(file, e)
    try:
        result = check_scenario(text, source, ruleset)
    except TrackerError as e:
        # Only the --ruleset typed is refused so: one the scenario names is a finding of its own.
        if not as_json or ruleset is None:
            raise
        _unreadable(source, e, ruleset)
    if as_json:
        emit_json(
            {
                "file": source,
                "ok": not result.errors,
                "errors": [f.as_dict(source) for f in result.errors],
                "warnings": [f.as_dict(source) for f in result.warnings],
            }
        )
    else:
        for f in result.findings:
            click.echo(_finding_line(source, f))
        click.echo(_summary(result))
    if result.errors:
        sys.exit(1)


# ----- map -----


def opening_board(scenario: Scenario) -> dict[str, Any]:
    """The board before the first move, in the shape the map drawing reads (`state --json`)."""
    return {
        "units": [
            {"at": g.at, "nation": g.nation, "type": g.type, "damage": 0}
            for g in scenario.units
            for _ in range(g.count)
        ],
        "ntr": {name: dict(nation.ntr) for name, nation in scenario.nations.items()},
        "owners": dict(scenario.game_map.land),
    }


def line_of(file: str, ruleset: str | None, key: str) -> int | None:
    """The line `scenario check` finds an error at key path `key` of a scenario file on (`new
    --scenario FILE` says it with the first error the check lists); None when it finds none there."""
    try:
        text, source = _text(file)
        result = check_scenario(text, source, ruleset)
    except TrackerError:
        return None
    # `tracker new` names a key path with its control characters escaped, as findings show it.
    found = next((f.line for f in result.errors if key in (f.key, printable(f.key)) and f.line is not None), None)
    if found is None and result.written is None and result.errors:
        # No TOML, or nothing in it: the one finding is the loader's refusal.
        found = result.errors[0].line
    return found


def _loaded(
    file: str, ruleset: str | None, positions: bool = True
) -> tuple[str, str, Scenario, Ruleset, Finding | None]:
    """The text, source label, scenario and ruleset of a file that loads (without its zones' x
    and y unless `positions`), and the error of x and y given for some zones only, as a warning
    (a map can be drawn around them); otherwise its first other error, with its line, as one
    line (exit 2)."""
    text, source = _text(file)
    result = check_scenario(text, source, ruleset, positions=positions)
    partly = next((f for f in result.errors if f.message.startswith(SOME_POSITIONS)), None)
    errors = [f for f in result.errors if f is not partly]
    if errors or result.scenario is None or result.ruleset is None:
        errors = errors or result.errors
        first = _finding_line(source, errors[0]).replace(": error: ", ": ", 1)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(f"{first}{more}; `tracker scenario check {shlex.quote(file)}` lists every problem")
    warning = replace(partly, level="warning") if partly is not None else None
    return text, source, result.scenario, result.ruleset, warning


def _write_coordinates(
    file: str, text: str, source: str, scenario: Scenario, force: bool, quiet: bool = False
) -> dict[str, tuple[int, int]]:
    """Compute a layout and write it into the file: around the zones that have x and y, which
    keep them; every zone's with `force` (a file whose every zone has them is refused without)."""
    if file in builtin_names("scenarios"):
        raise InputError(f"{file} is a built-in scenario: copy it to a file of your own to change it")
    if file == "-":
        raise InputError("--write-coordinates writes into the scenario file: give its name, not '-'")
    game_map = scenario.game_map
    typed = {} if force else typed_positions(text, source, game_map)
    if typed and len(typed) == len(game_map.adjacency):
        raise InputError(
            f"{source}: already has coordinates ({plural(len(typed), 'zone')}); "
            "--force replaces them with a computed layout"
        )
    positions = computed_positions(game_map, source, typed)
    # The typed zones' lines are left as they were typed (a comment, `+40`): only the others are written.
    computed = {zone: at for zone, at in positions.items() if zone not in typed}
    write_output(file, with_positions(text, source, game_map, computed))
    if not quiet:
        kept = f" (kept the {plural(len(typed), 'zone')} typed by hand)" if typed else ""
        click.echo(f"Wrote x and y for {plural(len(computed), 'zone')} into {source}{kept}.")
    return positions


def _cairosvg(output: str) -> Any:
    """The optional package that writes PNG, or the refusal naming it."""
    try:
        import cairosvg
    except (ImportError, OSError):
        raise InputError(
            f"{output}: writing PNG needs the optional package cairosvg (pip install cairosvg); or write .svg"
        ) from None
    return cairosvg


def _write_png(output: str, svg: str) -> None:
    target = check_output(output)
    data = _cairosvg(output).svg2png(bytestring=svg.encode("utf-8"))
    # Whole or not at all, as every file the tracker writes.
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _format(output: str) -> str:
    suffix = Path(output).suffix.lower()
    if output == "-" or suffix == ".svg":
        return "svg"
    if suffix == ".png":
        return "png"
    raise InputError(f"{output}: unknown map format {suffix or '(no suffix)'}: give a .svg or .png file, or '-'")


@scenario_group.command(name="map")
@click.argument("file", type=FilePath(allow_dash=True))
@click.option(
    "-o",
    "--output",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="The picture to write: FILE.svg, FILE.png (needs cairosvg) or '-' (SVG).",
)
@click.option(
    "--write-coordinates",
    is_flag=True,
    help="Write the computed layout into FILE as x and y under each zone's header (comments and order kept); "
    "zones that have x and y keep them, and the others are laid out around them.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --write-coordinates: lay out every zone afresh, replacing the coordinates the file has.",
)
@click.option("--ruleset", type=RULESET, help=RULESET_HELP)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: what was written (on stderr when the picture goes to stdout with '-o -').",
)
def map_command(
    file: str, output: str | None, write_coordinates: bool, force: bool, ruleset: str | None, as_json: bool
) -> None:
    """Draw a scenario's map (a file, a built-in by name, or '-' for stdin) as the viewer does,
    with its starting forces and NTR, before any campaign exists. Where the file gives no
    coordinates, the zones are laid out from their adjacency (a force-directed layout);
    --write-coordinates keeps that layout in the file. Type x and y for the zones you care
    about first: the map lays out the rest around them (with a warning that the others have
    none yet) and --write-coordinates writes theirs; --force recomputes all.

    Example: tracker scenario map my-board.toml -o map.svg --write-coordinates
    """
    if output is None and not write_coordinates:
        raise click.UsageError("give -o FILE for the picture, or --write-coordinates, or both")
    picture = _format(output) if output is not None else None
    # A picture that cannot be written is refused before anything is: --write-coordinates must
    # not change the scenario file of a command that then fails.
    if output is not None and output != "-":
        check_output(output)
        if picture == "png":
            _cairosvg(output)
    # Coordinates about to be computed are not read here: typed for some zones only, they are
    # what --write-coordinates lays the others out around (or --force replaces), not an error.
    text, source, scenario, rules, partly = _loaded(file, ruleset, positions=not write_coordinates)
    origin = "coordinates from the file"
    if write_coordinates:
        positions = _write_coordinates(file, text, source, scenario, force, quiet=as_json)
        origin = "coordinates just written"
    elif partly is not None:
        # Halfway through typing coordinates: the map as --write-coordinates would complete it.
        click.echo(_finding_line(source, partly), err=True)
        typed = typed_positions(text, source, scenario.game_map)
        positions = computed_positions(scenario.game_map, source, typed)
        origin = (
            f"{len(typed)} from the file, the other {len(positions) - len(typed)} laid out around them "
            "(--write-coordinates writes those into the file)"
        )
    elif not scenario.game_map.positions:
        positions = computed_positions(scenario.game_map, source)
        origin = "laid out from the adjacency: no coordinates in the file (--write-coordinates keeps this layout)"
    else:
        positions = scenario.game_map.positions
    written = {
        "scenario": source,
        "coordinates_written": write_coordinates,
        "picture": output,
        "format": picture,
        "zones": len(positions),
        # Computed this time, whether kept in the file (--write-coordinates) or not.
        "layout": "file" if origin.startswith("coordinates from") else "computed",  # around typed ones too
    }
    if output is None:
        if as_json:
            emit_json(written)
        return
    drawn = replace(scenario, game_map=replace(scenario.game_map, positions=positions))
    svg = board_svg(opening_board(drawn), drawn, rules)
    if output == "-":
        click.echo(svg)
        if as_json:
            # The picture holds stdout, as `export -` does with the events.
            click.echo(json.dumps(written, ensure_ascii=False), err=True)
        return
    if picture == "png":
        _write_png(output, svg)
    else:
        write_output(output, svg + "\n")
    if as_json:
        emit_json(written)
        return
    click.echo(f"Wrote {output}: {plural(len(positions), 'zone')}, {origin}.")


# ----- new -----

TEMPLATE = """\
# {name}: a scenario for the naval tracker of The War to End All Wars.
# Started from `tracker scenario new`: every key is explained where it first appears.
# The loop: edit this file, then
#   tracker scenario check {name}.toml            every problem, with its line
#   tracker scenario map {name}.toml -o map.svg   the map as the viewer will draw it
# and when both are happy: tracker new my-campaign --scenario {name}.toml

[scenario]
# name: how campaigns and `tracker scenarios` call it (letters, digits, - and _).
name = "{name}"
# title: shown at the top of the viewer's board page and of every report (on the map: its tooltip).
title = "{name}: a new board"
# ruleset: the unit types, combat values and tables it is played with; `tracker rulesets`
# lists the built-in ones. A path to a ruleset file of your own works too, read from this
# file's folder (`tracker rulesets --copy twtea-3e -o house.toml` writes one to edit).
ruleset = "twtea-3e"
# dice: "auto" (the tracker rolls, verifiably) or "manual" (players type in real rolls).
dice = "auto"
# turn_order: every nation exactly once, in the order they move each round (T1).
turn_order = ["Germany", "Britain"]

# sides (F5): each nation on exactly one side; nations of different sides are enemies.
[sides]
"Central Powers" = ["Germany"]
"Entente" = ["Britain"]

# One table per nation.
[nations.Germany]
# code: 1 to 8 capital letters, unique; unit IDs (DE-SS1) and the map use it.
code = "DE"
# resources: held at the start. income: collected every turn besides NTR (default 0).
resources = 20
income = 8
# tech: head starts in the ruleset's technologies, name = level (TE2; optional).
tech = {{ advanced_submarine = 1 }}
# ntr: Naval Trade Resources at the start, by sea zone (F6). ntr_max: the most that may be
# placed back in a zone later (CV6; default: the starting number).
ntr = {{ "Heligoland Bight" = 2 }}
# entry_round: the round the nation enters the war (F8). Before it the nation is neutral
# and its turns are passed over; leave it out for a nation at war from round 1.
# entry_round = 3
# caps: the most units of a type the nation may have (PU3; optional).
# caps = {{ battleship = 4 }}

[nations.Britain]
code = "GB"
resources = 25
income = 10
ntr = {{ "North Sea" = 2, "Western Approaches" = 3 }}
ntr_max = {{ "North Sea" = 3, "Western Approaches" = 4 }}

# The map: one table per sea zone ([map.sea."..."]) and per land territory ([map.land."..."]),
# named as on your board (no ',', ':' or '|', and no two names alike but for case: commands
# type them).
# adjacent: the zones it borders. List each border once: it holds both ways.
# x, y: where the map draws the zone (x to the right, y downwards), for every zone or none;
# `tracker scenario map {name}.toml --write-coordinates` computes them for you (those you
# have not typed, around those you have).
[map.sea."North Sea"]
adjacent = ["Heligoland Bight", "English Channel", "Scotland", "England"]

[map.sea."Heligoland Bight"]
adjacent = ["Northern Germany"]

[map.sea."English Channel"]
adjacent = ["Western Approaches", "England"]

[map.sea."Western Approaches"]
adjacent = ["Scotland"]

# owner: the nation holding the territory at the start.
# port: new ships may be placed in the sea zones beside it, and new aircraft on it (PU2). With
# no territory marked, every territory is a port; once one says `port = true`, only the marked
# ones are.
[map.land."Scotland"]
owner = "Britain"
adjacent = ["England"]

[map.land."England"]
owner = "Britain"
port = true

[map.land."Northern Germany"]
owner = "Germany"
port = true

# Starting forces: one [[units]] table per group.
# nation; type: a unit type of the ruleset (twtea-3e: submarine, destroyer, cruiser,
# battleship, aircraft_carrier, transport, fighter, bomber, transport_plane); at: a zone;
# count: how many (default 1). Ships start at sea; aircraft in a territory of their side, or
# aboard carriers of their side (at = the carriers' sea zone; twtea-3e's carry 2 each). F8: a
# nation still neutral: its aircraft on its own land or carriers only; no other's on its land.
[[units]]
nation = "Germany"
type = "submarine"
at = "Heligoland Bight"
count = 3

[[units]]
nation = "Germany"
type = "battleship"
at = "Heligoland Bight"
count = 1

[[units]]
nation = "Germany"
type = "bomber"
at = "Northern Germany"

[[units]]
nation = "Britain"
type = "destroyer"
at = "North Sea"
count = 2

[[units]]
nation = "Britain"
type = "battleship"
at = "North Sea"
count = 2

[[units]]
nation = "Britain"
type = "cruiser"
at = "English Channel"

[[units]]
nation = "Britain"
type = "fighter"
at = "Scotland"
"""


def template(name: str) -> str:
    """The commented starting scenario, named `name`."""
    return TEMPLATE.format(name=name)


def builtin_copy(builtin: str, name: str) -> str:
    """The text of built-in scenario `builtin`, its comments and sources kept, named `name`:
    a pip install keeps the built-in files deep in the Python environment."""
    text, _ = scenario_text(builtin)
    line = key_lines(text)[("scenario", "name")].line
    rows = text.split("\n")
    rows[line - 1] = f"name = {json.dumps(name)}"
    return "\n".join(rows)


@scenario_group.command(
    name="new", short_help="Write a small, complete scenario with a comment on every key, to start a board from."
)
@click.argument("name")
@click.option(
    "-o",
    "--output",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="The file to write (default NAME.toml), or - for standard output.",
)
@click.option(
    "--from",
    "builtin",
    type=click.Choice(builtin_names("scenarios")),
    help="Start from a copy of this built-in scenario (its comments and sources kept) instead of the small template.",
)
@click.option("--force", is_flag=True, help="Replace the file if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the file written and the scenario's name.")
def new_scenario(name: str, output: str | None, builtin: str | None, force: bool, as_json: bool) -> None:
    """Write a small, complete scenario with a comment on every key, to start a board from;
    with --from, a copy of a built-in one.

    Example: tracker scenario new my-board && tracker scenario check my-board.toml
    """
    if not SCENARIO_NAME.fullmatch(name):
        raise InputError(f"scenario name {name!r}: letters, digits, - and _ (at most 64), a letter or digit first")
    text = template(name) if builtin is None else builtin_copy(builtin, name)
    if output == "-":
        # To stdout, as `map -o -` writes its picture: a file named "-" would be one that
        # `scenario check -` does not read.
        click.echo(text, nl=False)
        if as_json:
            click.echo(json.dumps({"file": "-", "scenario": name}, ensure_ascii=False), err=True)
        return
    target = output or f"{name}.toml"
    if Path(target).exists() and not force:
        raise InputError(f"{target}: exists; --force replaces it, or give another file with -o")
    write_output(target, text)
    if as_json:
        emit_json({"file": target, "scenario": name})
        return
    if builtin is None:
        click.echo(f"Wrote {target}: 2 sides, 2 nations, 4 sea zones, 3 land territories, 7 unit groups.")
    else:
        click.echo(f"Wrote {target}: a copy of {builtin}, named {name}.")
    # Commands to paste: a file name with a space or a quote in it is quoted as a shell reads it.
    quoted = shlex.quote(target)
    click.echo(f"Next: tracker scenario check {quoted}  and  tracker scenario map {quoted} -o map.svg")
