"""`tracker export` and `tracker import`: a campaign's events with their hashes as JSON lines.

The file format is described in `tracker.export_format`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from domain.errors import InputError
from domain.text import plural
from tracker.cli.common import Context, emit_json, json_option, progress, quoted, suggested
from tracker.cli.params import CAMPAIGN, MAX_INT, FilePath, Whole

if TYPE_CHECKING:
    from tracker.interchange.pbem import Continued, Mended


def dice_note(campaign: str) -> str:
    """What an imported auto campaign needs before its next roll: its secret seed stayed in the
    source database (or its server's key store), so the tracker cannot roll here, and typed
    dice are refused until the group records a switch (D4)."""
    return (
        "The secret dice seed stays where the campaign was exported from (its database, or its "
        "server's key store), so this copy cannot roll the campaign's auto dice (D4): to go on with "
        "physical dice, record the switch first, "
        f"`{suggested('tracker dice switch manual --reason TEXT', campaign)}`, "
        "then type each roll with --dice; or, where that database is at hand, bring the seed over: "
        f"`{suggested('tracker dice adopt --from DB', campaign)}`."
    )


@click.command(name="export")
@click.argument("file", type=FilePath(dir_okay=False, allow_dash=True))
@click.option(
    "--since",
    type=Whole(0, MAX_INT),
    default=0,
    metavar="SEQ",
    help="Only the events after event SEQ (a continuation for PBEM by file; `import` fast-forwards with it).",
)
@json_option
@click.pass_obj
def export_command(ctx: Context, file: str, since: int, as_json: bool) -> None:
    """Write the campaign's events with their hashes to FILE as JSON lines ('-' for stdout).

    A FILE ending in .gz is written gzip-compressed (stdout stays plain).
    Secret dice seeds are not exported; seeds revealed with `tracker dice reveal` are in the log.
    With --since SEQ, only the events after SEQ, with the hash of event SEQ they continue.

    Example: tracker --campaign autumn export autumn.jsonl
    """
    from tracker.interchange.compression import for_file
    from tracker.interchange.format import FORMAT, FORMAT_VERSION
    from tracker.interchange.transfer import export_campaign

    ctx.check_output(file)
    t = ctx.tracker
    # A bar on stderr only when it is a terminal: the export itself may be going to stdout.
    result = export_campaign(t, t.campaign_id(ctx.campaign), partial(progress, label="Exporting events"), since)
    to_stdout = file == "-"
    if to_stdout:
        sys.stdout.flush()
        for chunk in result.chunks():
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    else:
        ctx.write(file, for_file(file, result.chunks()))
    if as_json:
        data = {
            "campaign": result.campaign,
            "file": file,
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "events": result.events,
            "since": result.since,
            "head": f"{result.head_seq}:{result.last_hash}",
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
    first = result.since + 1
    span = f"event {first}" if first == result.head_seq else f"events {first}-{result.head_seq}"
    what = f"{span}, after event {result.since}," if result.since else plural(result.events, "event")
    click.echo(
        f"Exported campaign {quoted(result.campaign)}: {what} to {where} "
        f"(head {result.head_seq}:{result.last_hash}; check it later with `{suggested('tracker verify --head')}`).",
        err=to_stdout,
    )
    if result.since and not to_stdout:
        # PBEM by file: what the sender does with the file, and what the others check.
        click.echo(
            f"Send {file} to the other players: each runs `tracker import {shlex.quote(file)}`, which must end "
            f"at Head: {result.head_seq}:{result.last_hash}."
        )
    if result.rolls_unrevealed:
        click.echo(
            f"{plural(result.rolls_unrevealed, 'auto roll')} used a seed not yet revealed: an importer can check "
            f"them by the hash chain only (`{suggested('tracker dice reveal')}` first to let anyone re-derive them).",
            err=to_stdout,
        )


@click.command(name="import")
@click.argument("file", type=FilePath(dir_okay=False, allow_dash=True))
@click.option(
    "--as",
    "as_name",
    type=CAMPAIGN,
    metavar="NAME",
    help="Campaign name in this database (default: --campaign when given, else the name in the file).",
)
@click.option(
    "--resolve",
    type=click.Choice(["theirs", "mine"]),
    help="At a fork (PBEM): theirs: this copy gives way, its events after the fork kept as campaign "
    "NAME-fork-SEQ, and the campaign goes on from the file's; mine: this copy goes on, and the file the "
    "other side imports with --resolve theirs is written (--reply).",
)
@click.option(
    "--reply",
    type=FilePath(dir_okay=False),
    help="With --resolve mine: where to write the other side's file (default NAME-since-SEQ.jsonl, "
    "or .jsonl.gz when FILE's name ends in .gz; a name ending in .gz is written gzip-compressed).",
)
@json_option
@click.pass_obj
def import_command(
    ctx: Context, file: str, as_name: str | None, resolve: str | None, reply: str | None, as_json: bool
) -> None:
    """Verify an export FILE ('-' for stdin) and record it as a new campaign in this database;
    a file for a campaign already here (a full export, or `export --since`) continues it.
    A gzip-compressed FILE is read as it is, whatever its name.

    Refuses a file whose events, hash chain or actions (re-run by the referee) do not verify,
    naming the line; writes all events in one transaction. Continuing: fast-forwards when the
    file continues the campaign's chain, refuses a fork naming the first differing event, and
    changes nothing for events already here; at a fork, names each copy's first differing
    action, and --resolve mends it (nothing is deleted: the copy that gives way keeps its
    history as a campaign of its own).

    Example: tracker --db postgresql://me@db/league import autumn.jsonl --as autumn-league
    """
    if reply is not None and resolve != "mine":
        raise click.UsageError("--reply goes with --resolve mine")
    root = click.get_current_context().find_root()
    if ctx.campaign is not None and root.get_parameter_source("campaign") == click.core.ParameterSource.COMMANDLINE:
        # `tracker --campaign mine import turn.jsonl` was taken as the file's own name without a
        # word (continuing another campaign, or importing a second copy): the name typed is
        # the one meant, as --as names it.
        if as_name is not None and as_name != ctx.campaign:
            raise click.UsageError(f"--campaign {ctx.campaign!r} and --as {as_name!r} name two campaigns: give one")
        as_name = ctx.campaign
    from tracker.storage.store import database_url, sqlite_file

    # A SQLite file this command brings into being is removed again if the import is refused.
    new_file = None if ctx.has_tracker else sqlite_file(database_url(ctx.db))
    if new_file is not None and new_file.exists():
        new_file = None
    try:
        result = _import(ctx, file, as_name, resolve)
    except BaseException:
        if new_file is not None:
            _discard(ctx, new_file)
        raise
    t = ctx.tracker
    from tracker.interchange.pbem import Continued, KeptMine, Mended

    if isinstance(result, Continued):
        _continued(t.safe_url, result, as_json)
        if result.appended and not as_json:
            _waiting_now(ctx, result.campaign, result.head_seq)
        return
    if isinstance(result, Mended):
        _mended(result, as_json)
        if not as_json:
            _waiting_now(ctx, result.campaign, result.head_seq)
        return
    if isinstance(result, KeptMine):
        _kept_mine(ctx, result, reply, as_json, file)
        return
    _imported(ctx, result, as_json)


def _imported(ctx: Context, result: Any, as_json: bool) -> None:
    """What a first import of a campaign says: what it recorded and checked, then whose move it
    is (`_waiting_now`)."""
    t = ctx.tracker
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
        f"Imported campaign {quoted(result.campaign)}: {plural(result.events, 'event')} into {t.safe_url}; "
        f"hash chain intact, {result.dice_checked}."
    )
    if result.rolls_unchecked:
        click.echo(f"{plural(result.rolls_unchecked, 'auto roll')} not re-derived: their seed was never revealed.")
    # PBEM by file: the player a full export was mailed to learns whose move it is, as from a
    # continuation. Where to send what they record goes with manual dice, the mode for play by
    # file; an auto campaign's copy cannot roll (its note says what to do first, and comes
    # last, beside the commands it changes).
    _waiting_now(ctx, result.campaign, result.events, send=result.dice_mode == "manual")
    if result.dice_mode == "auto":
        click.echo(dice_note(result.campaign))


def _import(ctx: Context, file: str, as_name: str | None, resolve: str | None = None) -> Any:
    from tracker.interchange.format import STDIN
    from tracker.interchange.transfer import import_campaign

    ctx.may_create = True
    t = ctx.tracker
    t.require_writable()
    bar = partial(progress, label="Checking events")
    if file == "-":
        return import_campaign(t, sys.stdin.buffer, STDIN, as_name, bar, resolve)
    try:
        stream = open(file, "rb")  # noqa: SIM115 - closed below, after the import read it
    except OSError as e:
        raise InputError(f"cannot read {file}: {e.strerror or e}") from None
    with stream:
        return import_campaign(t, stream, file, as_name, bar, resolve)


def _discard(ctx: Context, path: Path) -> None:
    """Remove the database file a refused import created, with its journal files, unless it
    holds events after all (a failure after the import's transaction committed)."""
    if ctx.has_tracker:
        try:
            holds_events = ctx.tracker.max_notification_id() > 0
        except Exception:  # noqa: BLE001 - an unreadable new file holds nothing worth keeping
            holds_events = False
        ctx.close()
        if holds_events:
            return
    for leftover in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)


def _continued(where: str, result: Continued, as_json: bool) -> None:
    head = f"{result.head_seq}:{result.head_hash}"
    if as_json:
        emit_json(
            {
                "campaign": result.campaign,
                "database": where,
                "since": result.since,
                "appended": result.appended,
                "head": head,
                "actions_refereed": result.actions_refereed,
            }
        )
        return
    if not result.appended:
        click.echo(
            f"Nothing to import: campaign {quoted(result.campaign)} already holds every event of this file "
            f"(it was exported from here, or imported before); head {head}."
        )
        return
    click.echo(
        f"Fast-forwarded campaign {quoted(result.campaign)}: events {result.first_new}-{result.head_seq} appended "
        f"after event {result.first_new - 1}; hash chain intact, {_refereed(result)}. Head: {head}"
    )


def _refereed(result: Continued | Mended) -> str:
    """What an import into an existing campaign re-refereed: every action of the log from the
    campaign's creation on (each runs on the state all before it fold to), of which the file
    brought `file_actions`; the count alone read as the file's."""
    total, brought = result.actions_refereed, result.file_actions
    return f"the whole log's {plural(total, 'action')} re-refereed, {brought} of them from this file"


def _waiting_now(ctx: Context, campaign: str, head: int, send: bool = True) -> None:
    """After an import, what the game now waits for and the command that answers it, as
    `tracker inbox` lists it: by file, the player who imports the turn (or the campaign's
    full export) is the one it hands the game to, and no server tells them. Then, with
    `send`, the export that sends what they record next: a `--since` past the others' head
    would be refused by every copy."""
    from tracker.cli.commands.inbox import show
    from tracker.service.inbox import as_json as inbox_json
    from tracker.service.inbox import owed

    items = inbox_json(owed(ctx.tracker, None, campaign))
    if items:
        click.echo("Waiting now:")
        show(items)
    if send:
        click.echo(
            "When you have recorded your part, send it to the others: "
            f"`{suggested(f'tracker export --since {head} FILE', campaign)}`."
        )


def _mended(result: Any, as_json: bool) -> None:
    head = f"{result.head_seq}:{result.head_hash}"
    if as_json:
        emit_json(
            {
                "campaign": result.campaign,
                "archive": result.archive,
                "fork": result.fork,
                "kept": result.kept,
                "head": head,
                "actions_refereed": result.actions_refereed,
            }
        )
        return
    click.echo(
        f"Mended the fork at event {result.fork}: campaign {quoted(result.campaign)} goes on from the file's history "
        f"(hash chain intact, {_refereed(result)}; head {head}); this copy's "
        f"{plural(result.kept, 'event')} after the fork {'is' if result.kept == 1 else 'are'} kept, with all before "
        f"them, as campaign {quoted(result.archive)}."
    )


def _kept_mine(ctx: Context, result: Any, reply: str | None, as_json: bool, read: str = "-") -> None:
    """--resolve mine: this copy goes on; the other side gets its events after the fork."""
    from tracker.interchange.compression import for_file
    from tracker.interchange.transfer import export_campaign

    # A group that mails its files gzipped gets its reply the same way.
    packed = ".gz" if read.lower().endswith(".gz") else ""
    path = reply or f"{result.campaign}-since-{result.since}.jsonl{packed}"
    ctx.check_output(path)
    if read != "-" and _same_file(path, read):
        # Both sides name their replies NAME-since-SEQ.jsonl: the file just imported would be
        # replaced by this copy's (nothing has changed here yet).
        raise InputError(f"{path}: is the file being imported; give the reply another name with --reply FILE")
    exported = export_campaign(ctx.tracker, result.campaign_id, None, result.since)
    ctx.write(path, for_file(path, exported.chunks()))
    head = f"{exported.head_seq}:{exported.last_hash}"
    if as_json:
        emit_json({"campaign": result.campaign, "fork": result.fork, "reply": path, "head": head})
        return
    click.echo(
        f"Kept this copy's history at the fork at event {result.fork}; nothing changed here. Send {path} (events "
        f"{result.since + 1}-{exported.head_seq}, head {head}): the other side runs "
        f"`tracker import {path} --resolve theirs`."
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False  # the reply does not exist yet


def _compact(data: dict[str, object]) -> str:
    return json.dumps(data, ensure_ascii=False)
