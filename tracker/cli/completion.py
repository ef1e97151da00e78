"""Completion of what a player types, from the selected campaign: units, zones, nations,
technologies and battle numbers.

The functions are click `shell_complete` callbacks, used by the shell's tab completion
(`eval "$(_TRACKER_COMPLETE=bash_source tracker)"`) and by `tracker shell`. They read the
database named by `--db`/`TRACKER_DB` (never creating one) and answer nothing rather than
fail: a completion must never print an error into the middle of a command line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from click.shell_completion import CompletionItem

from domain.campaign import Campaign

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


@contextmanager
def _campaign(ctx: click.Context) -> Iterator[Campaign | None]:
    """The campaign the command line selects: from the open session when there is one
    (`tracker shell`), else from a database opened only for this completion."""
    from tracker.cli.context import Context
    from tracker.service.application import Tracker

    root = ctx.find_root()
    obj = root.obj
    if isinstance(obj, Context) and obj.has_tracker:
        try:
            yield obj.load()
        except Exception:  # noqa: BLE001 - no completion rather than an error
            yield None
        return
    db = root.params.get("db") or os.environ.get("TRACKER_DB")
    name = root.params.get("campaign") or os.environ.get("TRACKER_CAMPAIGN")
    try:
        t = Tracker(db, create=False)
    except Exception:  # noqa: BLE001
        yield None
        return
    try:
        try:
            campaign: Campaign | None = t.load(t.campaign_id(name))
        except Exception:  # noqa: BLE001
            campaign = None
        yield campaign
    finally:
        t.close()


def _matching(candidates: list[tuple[str, str]], incomplete: str) -> list[CompletionItem]:
    """Candidates (value, help) starting with what was typed, case-insensitively. The last word
    of a comma list is completed, keeping what comes before it."""
    head, sep, last = incomplete.rpartition(",")
    prefix = head + sep
    typed = last.casefold()
    return [
        CompletionItem(prefix + value, help=help_text or None)
        for value, help_text in candidates
        if value.casefold().startswith(typed)
    ]


def _completer(source: Callable[[Campaign], list[tuple[str, str]]]) -> Completer:
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with _campaign(ctx) as campaign:
            if campaign is None:
                return []
            try:
                return _matching(source(campaign), incomplete)
            except Exception:  # noqa: BLE001
                return []

    return complete


def _units(c: Campaign) -> list[tuple[str, str]]:
    return [(uid, f"{u['type']} in {u['at']}") for uid, u in sorted(c.units.items())]


def _nations(c: Campaign) -> list[tuple[str, str]]:
    sc = c.scenario
    return [(n, f"{sc.nations[n].code}, {sc.nations[n].side}") for n in sc.turn_order]


def _zones(c: Campaign) -> list[tuple[str, str]]:
    m = c.scenario.game_map
    return [(z, "sea") for z in sorted(m.sea)] + [(z, f"land, {m.land[z]}") for z in sorted(m.land)]


def _sea_zones(c: Campaign) -> list[tuple[str, str]]:
    return [(z, "sea") for z in sorted(c.scenario.game_map.sea)]


def _technologies(c: Campaign) -> list[tuple[str, str]]:
    return [(t, "") for t in c.ruleset.technologies]


def _unit_types(c: Campaign) -> list[tuple[str, str]]:
    return [(name, u.abbr) for name, u in c.ruleset.units.items()]


def _battles(c: Campaign) -> list[tuple[str, str]]:
    return [
        (str(b["id"]), f"{b['kind']} in {b['zone']}, waiting for {', '.join(b['waiting']) or 'nobody'}")
        for b in sorted(c.battles.values(), key=lambda b: b["id"])
    ]


complete_units = _completer(_units)
complete_nations = _completer(_nations)
complete_zones = _completer(_zones)
complete_sea_zones = _completer(_sea_zones)
complete_technologies = _completer(_technologies)
complete_unit_types = _completer(_unit_types)
complete_battles = _completer(_battles)


def complete_path(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Zones of a comma-separated path."""
    return complete_zones(ctx, param, incomplete)


def completions(group: click.Group, args: list[str], incomplete: str, obj: Any = None) -> list[CompletionItem]:
    """What click's shell completion offers after `args` for the word being typed, with `obj`
    (the open session) as the root context's object."""
    from click.shell_completion import _resolve_context, _resolve_incomplete

    ctx_args: dict[str, Any] = {} if obj is None else {"obj": obj}
    try:
        ctx = _resolve_context(group, ctx_args, "tracker", list(args))
        command, incomplete = _resolve_incomplete(ctx, list(args), incomplete)
        return command.shell_complete(ctx, incomplete)
    except Exception:  # noqa: BLE001 - no completion rather than an error
        return []


def complete_event_kinds(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from tracker.service.names import event_kinds

    return _matching([(k, "") for k in event_kinds()], incomplete)
