"""`tracker report` and `tracker stats`: turn reports in Markdown, HTML and JSON; per-turn figures."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable
from contextlib import nullcontext
from functools import partial
from typing import Any

import click

from domain.errors import InputError
from domain.memory import collector_paused
from tracker.cli.common import POSITIVE, Context, emit_json, progress
from tracker.cli.completion import complete_turns
from tracker.cli.params import Expected, FilePath
from tracker.reports.split import LARGEST, PRESETS, SMALLEST


def _write(
    ctx: Context, text: str | Iterable[str], output: str | None, what: str, fmt: str, as_json: bool = False
) -> None:
    """Print `text` (or its pieces, in turn), or write it to `output` (UTF-8) and say so: in
    words, or with --json as `{"file", "format", "bytes", "what"}`."""
    if output is None or output == "-":
        for piece in [text] if isinstance(text, str) else text:
            click.echo(piece, nl=False)
        return
    size = ctx.write(output, text if isinstance(text, str) else (piece.encode("utf-8") for piece in text))
    if as_json:
        emit_json({"file": output, "format": fmt, "bytes": size, "what": what})
        return
    click.echo(f"Wrote {what} to {output} ({size:,} bytes).")


class _PostLength(click.ParamType[int, Any]):
    """A post's length in characters: a whole number in range, or a forum named in `PRESETS`."""

    name = "length"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text in PRESETS:
            return PRESETS[text]
        # The digits' length first: int() refuses thousands of them with a traceback.
        if text.isascii() and text.isdigit() and len(text.lstrip("0")) <= 9 and SMALLEST <= int(text) <= LARGEST:
            return int(text)
        # Digits alone, as they are typed: "2,000" would be refused.
        named = " or ".join(f"{k} ({v})" for k, v in PRESETS.items())
        raise Expected(
            f"give a number of characters from {SMALLEST} to {LARGEST}, or {named} (got {value!r})", ctx, param
        )


_output_option = click.option(
    "-o",
    "--output",
    "output",
    type=FilePath(dir_okay=False),
    help="Write to this file instead of the terminal ('-' for the terminal).",
)


@click.command(name="report")
@click.option(
    "--turn",
    type=POSITIVE,
    help="Report this national turn (1 = round 1's first nation).",
    shell_complete=complete_turns,
)
@click.option("--all", "whole", is_flag=True, help="Report the whole campaign, turn by turn.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "discord", "bbcode", "html", "json"], case_sensitive=False),
    help="Markdown for a forum post; discord: Markdown as Discord shows it (tables as code blocks), cut "
    "into messages of 2000 characters unless --split says otherwise; BBCode for phpBB or BoardGameGeek; "
    "a self-contained HTML page with charts; or JSON.  [default: md; json with --json]",
)
@click.option(
    "--split",
    "limit",
    type=_PostLength(),
    metavar="N|" + "|".join(PRESETS),
    help="Cut an md, discord or bbcode report into numbered posts of at most N characters (Unicode code points, "
    f"as Discord counts them): {', '.join(f'{k} = {v}' for k, v in PRESETS.items())}. "
    "With -o posts.md: posts-1.md, posts-2.md... (the part number goes before the file's extension).",
)
@_output_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: the report (as --format json; with --split, its parts), or with -o what was written.",
)
@click.pass_obj
def report(
    ctx: Context, turn: int | None, whole: bool, fmt: str | None, limit: int | None, output: str | None, as_json: bool
) -> None:
    """A turn report: moves, battles with every die, casualties, NTR lost, resources, research,
    undos (undone events struck through) and the fleet and trade tables at the end of the turn.
    It names the nations still neutral then (F8), as `state` does; the first turn played in a
    round names the nations at war from that round.

    Give --turn N for one national turn or --all for the whole campaign (--campaign NAME
    picks the campaign, as for every command).

    --split cuts it into posts that each render alone (a table cut in two repeats its header);
    printed, each part follows a line "%%%% part 2 of 5: 1,987 characters %%%%".

    Example: tracker report --turn 2 --format html -o turn2.html
    """
    from tracker.reports.report import build_report, render, stream_report

    if turn is not None and whole:
        raise click.UsageError("give --turn N or --all, not both")
    if turn is None and not whole:
        raise click.UsageError("give --turn N or --all")
    if fmt is not None and fmt.lower() == "discord" and limit is None:
        # A Discord message holds 2000 characters: a report longer is no message.
        limit = PRESETS["discord"]
    if limit is not None:
        _split(ctx, turn, (fmt or "md").lower(), limit, output, as_json)
        return
    if as_json and fmt is not None and fmt.lower() != "json" and output in (None, "-"):
        raise click.UsageError(f"--json prints the report as JSON: leave out --format {fmt}, or write it with -o")
    if output is not None:
        ctx.check_output(output)
    t = ctx.tracker
    fmt = (fmt or ("json" if as_json else "md")).lower()
    # BBCode and Discord's Markdown are rendered from the Markdown report: they need what it needs.
    bar = partial(progress, label="Building the report") if whole else None
    what = f"the {fmt} report of turn {turn}" if turn is not None else f"the {fmt} campaign report"
    if whole and fmt in ("md", "discord", "bbcode"):
        # Drawn and written a turn at a time: a long campaign's report is never held whole.
        _write(ctx, stream_report(t, t.campaign_id(ctx.campaign), fmt, bar), output, what, fmt, as_json)
        return
    # One turn's report is a bounded lot of short-lived objects, freed by their reference
    # counts: no cyclic collection walks the process's objects while it is built (a third of
    # an HTML report's time went to them). A whole campaign's is built with collections on.
    with nullcontext() if whole else collector_paused():
        data = build_report(t, t.campaign_id(ctx.campaign), turn, "md" if fmt in ("bbcode", "discord") else fmt, bar)
        text = render(data, fmt)
    _write(ctx, text, output, what, fmt, as_json)


def _split(ctx: Context, turn: int | None, fmt: str, limit: int, output: str | None, as_json: bool) -> None:
    """`report --split`: the post cut into parts, printed after separator lines, as JSON, or
    written to numbered files."""
    from pathlib import Path

    from tracker.reports.bbcode import BBCODE
    from tracker.reports.markdown import DISCORD, MARKDOWN
    from tracker.reports.report import build_report, render, stream_report
    from tracker.reports.split import Markup, SplitError, split_post

    markups: dict[str, Markup] = {"md": MARKDOWN, "discord": DISCORD, "bbcode": BBCODE}
    if fmt not in markups:
        raise click.UsageError(f"--split cuts a forum post: give --format md, discord or bbcode, not {fmt}")
    markup = markups[fmt]
    if output is not None:
        ctx.check_output(output)
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    if turn is None:
        # Held whole, unlike the report printed as it is drawn: the parts are numbered "of N".
        text = "".join(stream_report(t, cid, fmt, partial(progress, label="Building the report")))
    else:
        with collector_paused():
            text = render(build_report(t, cid, turn, "md"), fmt)
    try:
        cut = split_post(text, markup, limit)
    except SplitError as e:
        raise InputError(str(e)) from None
    for warning in cut.warnings:
        click.echo(f"Warning: {warning}", err=True)
    parts, total = cut.parts, len(cut.parts)
    if output is None or output == "-":
        if as_json:
            emit_json([{"part": k, "of": total, "characters": len(p), "text": p} for k, p in enumerate(parts, 1)])
            return
        for k, p in enumerate(parts, 1):
            if k > 1:
                click.echo()  # a blank line after the part before, for the eye
            # Neither Markdown nor BBCode: no forum reads it as markup, should it be pasted.
            click.echo(f"%%%% part {k} of {total}: {len(p):,} characters %%%%")
            click.echo(p, nl=False)
        return
    # FILE-1.md, FILE-2.md...: numbered before the suffix, so each part keeps the file's type,
    # with as many digits for each that the files sort in order of their parts.
    path = Path(output)
    names = [str(path.with_name(f"{path.stem}-{k:0{len(str(total))}d}{path.suffix}")) for k in range(1, total + 1)]
    for name in names:
        ctx.check_output(name)
    written = []
    for k, (name, p) in enumerate(zip(names, parts, strict=True), 1):
        size = ctx.write(name, p)
        written.append({"file": name, "format": fmt, "bytes": size, "characters": len(p), "part": k, "of": total})
    _warn_of_older_parts(path, {Path(n).name for n in names})
    if as_json:
        emit_json(written)
        return
    for w in written:
        click.echo(f"Wrote part {w['part']} of {total} to {w['file']} ({w['characters']:,} characters).")


def _warn_of_older_parts(path: Any, written: set[str]) -> None:
    """Name the files beside the parts just written that an earlier cut of the same FILE into
    more parts (or numbered with more digits) left: posted with them, they would tell an old
    story. They are the player's files: named, never removed."""
    import re

    numbered = re.compile(rf"{re.escape(path.stem)}-\d+{re.escape(path.suffix)}")
    try:
        left = sorted(f.name for f in path.parent.iterdir() if numbered.fullmatch(f.name) and f.name not in written)
    except OSError:
        return
    if left:
        shown = ", ".join(left[:5]) + (", ..." if len(left) > 5 else "")
        click.echo(
            f"Warning: {len(left)} files of an earlier --split are left beside these parts in "
            f"{path.parent}: {shown}; they are not part of this report",
            err=True,
        )


@click.command(name="stats")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (one row per nation per played turn).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON rows instead of a table.")
@_output_option
@click.pass_obj
def stats(ctx: Context, as_csv: bool, as_json: bool, output: str | None) -> None:
    """Per nation per national turn: resources, NTR at sea, NTR lost, units, fleet cost, technology
    (the figures at the end of each turn; the current turn so far).

    CSV columns: turn, round, turn_nation (the phasing nation), seq (the turn's last event),
    complete (yes/no), nation, balance, ntr_at_sea, ntr_lost (total so far), units, damaged,
    fleet_cost, then tech_<technology> levels.

    Example: tracker stats --csv -o stats.csv
    """
    from tracker.reports.report import STAT_FIELDS, stats_csv, stats_rows

    if as_csv and as_json:
        raise click.UsageError("give --csv or --json, not both")
    if output is not None:
        ctx.check_output(output)
    t = ctx.tracker
    rows, tech_columns = stats_rows(t, t.campaign_id(ctx.campaign))
    if as_csv:
        _write(ctx, stats_csv(rows, tech_columns), output, "the statistics (CSV)", "csv")
        return
    if as_json:
        # With -o the rows go to the file and stdout says, in JSON, what was written.
        rows_text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
        _write(ctx, rows_text, output, "the statistics (JSON)", "json", as_json=True)
        return
    drawn, width = _stats_table(rows, [c for c in STAT_FIELDS if c in _STAT_LABELS] + tech_columns)
    if output in (None, "-") and _wider_than_the_terminal(width):
        # The terminal would wrap every line into the next: page it with long lines cut
        # instead (less -S; the arrow keys scroll sideways), unless the player set LESS. Set
        # for the pager alone: a shell's process goes on after this command.
        chosen = "LESS" in os.environ
        os.environ.setdefault("LESS", "-FRSX")
        try:
            click.echo_via_pager(drawn)
        finally:
            if not chosen:
                del os.environ["LESS"]
        return
    _write(ctx, drawn, output, "the statistics table", "text")


# The statistics table's column headings; technologies are named by `tech_name`.
_STAT_LABELS = {
    "turn": "Turn",
    "round": "Round",
    "turn_nation": "Phasing",
    "nation": "Nation",
    "balance": "Resources",
    "ntr_at_sea": "NTR at sea",
    "ntr_lost": "NTR lost (total)",
    "units": "Units",
    "damaged": "Damaged",
    "fleet_cost": "Fleet cost",
}


def _stats_table(rows: list[dict[str, Any]], columns: list[str]) -> tuple[str, int]:
    """`stats` as a table, drawn at its own width, and that width."""
    import io

    from rich.console import Console
    from rich.table import Table

    from tracker.reports.text import tech_name

    table = Table(title="Figures at the end of each national turn", title_justify="left")
    for c in columns:
        text = c in ("turn_nation", "nation")
        label = _STAT_LABELS.get(c) or tech_name(c.removeprefix("tech_"))
        table.add_column(label, justify="left" if text else "right", no_wrap=text)
    for i, row in enumerate(rows):
        cells = [str(row[c]) for c in columns]
        if i and rows[i - 1]["turn"] == row["turn"]:
            cells[:3] = ["", "", ""]
        elif not row["complete"]:
            cells[0] += "*"
        last_of_turn = i + 1 == len(rows) or rows[i + 1]["turn"] != row["turn"]
        table.add_row(*cells, end_section=last_of_turn)
    buffer = io.StringIO()
    # Drawn at its own width, whatever the terminal's: a column per figure, never squeezed.
    # Names (nations, technologies) as written, never read as markup: see common.console.
    width = Console(file=io.StringIO(), width=1000, markup=False, emoji=False).measure(table).maximum
    out = Console(
        file=buffer,
        width=width,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
        force_terminal=False,
        color_system=None,
    )
    out.print(table)
    if rows and not rows[-1]["complete"]:
        out.print("* the current turn, still being played: its figures so far.")
    return buffer.getvalue(), width


def _wider_than_the_terminal(width: int) -> bool:
    return sys.stdout.isatty() and width > shutil.get_terminal_size().columns
