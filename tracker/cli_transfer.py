"""`tracker export` and `tracker import`: a campaign's events with their hashes as JSON lines.

The file format is described in `tracker.transfer`.
"""

from __future__ import annotations

import json
import sys
from functools import partial

import click

from domain.errors import InputError
from tracker.cli_common import Context, emit_json, json_option, progress

DICE_NOTE = (
    "The secret dice seed stays in the source database: in the imported campaign, roll "
    "physical dice and record them with --dice."
)


@click.command(name="export")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@json_option
@click.pass_obj
def export_command(ctx: Context, file: str, as_json: bool) -> None:
    """Write the campaign's events with their hashes to FILE as JSON lines ('-' for stdout).

    Secret dice seeds are not exported; seeds revealed with `tracker dice reveal` are in the log.

    Example: tracker --campaign autumn export autumn.jsonl
    """
    from tracker.transfer import FORMAT, FORMAT_VERSION, export_campaign

    ctx.check_output(file)
    t = ctx.tracker
    # A bar on stderr only when it is a terminal: the export itself may be going to stdout.
    result = export_campaign(t, t.campaign_id(ctx.campaign), partial(progress, label="Exporting events"))
    to_stdout = file == "-"
    if to_stdout:
        sys.stdout.flush()
        sys.stdout.buffer.write(result.text.encode("utf-8"))
        sys.stdout.buffer.flush()
    else:
        ctx.write(file, result.text)
    if as_json:
        data = {
            "campaign": result.campaign,
            "file": file,
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "events": result.events,
            "last_hash": result.last_hash,
            "dice": result.dice_mode,
            "rolls_unrevealed": result.rolls_unrevealed,
        }
        if to_stdout:
            click.echo(_compact(data), err=True)
        else:
            emit_json(data)
        return
    where = "stdout" if to_stdout else file
    click.echo(
        f"Exported campaign {result.campaign!r}: {result.events} events to {where} "
        f"(head {result.events}:{result.last_hash}; check it later with `tracker verify --head`).",
        err=to_stdout,
    )
    if result.rolls_unrevealed:
        click.echo(
            f"{result.rolls_unrevealed} auto roll(s) used a seed not yet revealed: an importer can check "
            "them by the hash chain only (`tracker dice reveal` first to let anyone re-derive them).",
            err=to_stdout,
        )


@click.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--as", "as_name", metavar="NAME", help="Campaign name in this database (default: the name in the file).")
@json_option
@click.pass_obj
def import_command(ctx: Context, file: str, as_name: str | None, as_json: bool) -> None:
    """Verify an export FILE ('-' for stdin) and record it as a new campaign in this database.

    Refuses a file whose events or hash chain do not verify, naming the line; writes all
    events in one transaction.

    Example: tracker --db postgresql://me@db/league import autumn.jsonl --as autumn-league
    """
    from tracker.transfer import import_campaign

    ctx.may_create = True
    t = ctx.tracker
    t.require_writable()
    bar = partial(progress, label="Checking events")
    if file == "-":
        result = import_campaign(t, sys.stdin.buffer, "<stdin>", as_name, bar)
    else:
        try:
            stream = open(file, "rb")  # noqa: SIM115 - closed below, after the import read it
        except OSError as e:
            raise InputError(f"cannot read {file}: {e.strerror or e}") from None
        with stream:
            result = import_campaign(t, stream, file, as_name, bar)
    if as_json:
        emit_json(
            {
                "campaign": result.campaign,
                "exported_as": result.exported_as,
                "database": t.safe_url,
                "events": result.events,
                "last_hash": result.last_hash,
                "dice": result.dice_mode,
                "rolls_checked": result.rolls_checked,
                "rolls_unchecked": result.rolls_unchecked,
            }
        )
        return
    click.echo(
        f"Imported campaign {result.campaign!r}: {result.events} events into {t.safe_url}; "
        f"hash chain intact, {result.rolls_checked} auto roll(s) re-derived from revealed seeds."
    )
    if result.rolls_unchecked:
        click.echo(f"{result.rolls_unchecked} auto roll(s) not re-derived: their seed was never revealed.")
    if result.dice_mode == "auto":
        click.echo(DICE_NOTE)


def _compact(data: dict[str, object]) -> str:
    return json.dumps(data, ensure_ascii=False)


COMMANDS: list[click.Command] = [export_command, import_command]
