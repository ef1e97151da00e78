"""The browser viewer's words: the filters and helpers its templates write text with (names in a
URL, unit IDs kept whole, counts of unit types) and the pending panel's rows, so a page says
what the CLI says."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from domain.text import plural, possessive
from tracker.server.paths import name_segment
from tracker.service.undo_log import stays_in_effect

# A unit's ID ("DE-CA12", "GB-SS1") or a range of rules ("HA4-HA7"): capitals and digits joined
# by hyphens, holding a digit. A browser breaks a line after a hyphen, which split "DE-" from
# "CA12" on a phone: such a word is kept on one line. Nations' and zones' names are not matched
# (lower-case letters), so "Austria-Hungary" may still wrap where a narrow column needs it.
_WHOLE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![\w-])")


def whole_ids(text: object) -> Markup:
    """`text` escaped, each unit ID in it (see `_WHOLE`) in a span the page keeps on one line."""
    escaped = str(escape(str(text)))
    return Markup(_WHOLE.sub(lambda m: f'<span class="id">{m.group(0)}</span>', escaped))


def counts(types: Mapping[str, int]) -> list[str]:
    """Counts of unit types in words ("1 destroyer", "3 submarines", "2 aircraft carriers"), as
    the CLI's `pending` counts them; a type counted 0 is left out."""
    return [plural(count, unit_type) for unit_type, count in sorted(types.items()) if count]


def unplaced_counts(unplaced: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
    """PU2: per nation, what it bought this turn and has not placed (`counts`); a nation with
    nothing left to place is left out."""
    return {nation: counts(types) for nation, types in unplaced.items() if any(types.values())}


def waiting_rows(campaign: Any, mine: set[str]) -> dict[str, Any]:
    """What the game waits for now (`pending`), each item with the command that answers it, and
    whether it waits for the reader, whose nations are `mine` ("your move")."""
    from tracker.service.describe import command, recorder

    items = []
    for item in campaign.pending(turn=True):
        waiting = list(item.get("waiting") or [])
        # NC3: a volley several nations are waited for is typed by one of them (`recorder`), as
        # the hand-off messages and `tracker inbox` label its command.
        row = {"text": item["text"], "waiting": waiting, "command": command(item), "recorder": recorder(item)}
        items.append({**row, "yours": bool(mine & set(waiting))})
    return {"items": items, "your_move": any(i["yours"] for i in items)}


def nation_rows(
    board: Mapping[str, Any], scenario: Any, neutral: set[str], entries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The board page's row of each nation, in turn order: its side, whether it is neutral and
    until when or when it entered (F8), its units, NTR, resources and technology."""
    rows = []
    for nation in scenario.turn_order:
        units = [u for u in board["units"] if u["nation"] == nation]
        rows.append(
            {
                "name": nation,
                "code": scenario.nations[nation].code,
                "side": scenario.nations[nation].side,
                "neutral_until": scenario.nations[nation].entry_round if nation in neutral else None,
                "entered": next((e for e in entries if e["nation"] == nation), None),
                "units": len(units),
                "damaged": sum(1 for u in units if u["damage"]),
                "ntr": sum(board["ntr"].get(nation, {}).values()),
                "ntr_lost": board["ntr_lost"].get(nation, 0),
                "balance": board["balances"].get(nation, 0),
                "tech": board["tech"].get(nation, {}),
            }
        )
    return rows


def install(env: jinja2.Environment) -> None:
    """The viewer's filters and globals, beside the reports' (`template_environment`)."""
    env.filters["q"] = lambda text: quote(str(text), safe="")
    # A campaign's name in a path: "." and ".." too, which browsers would fold away.
    env.filters["segment"] = lambda name: name_segment(str(name))
    env.filters["possessive"] = lambda name: possessive(str(name))
    env.filters["ids"] = whole_ids
    env.filters["counts"] = counts
    # D5: what an event an undo took back leaves in effect all the same, as `explain` says.
    env.globals["stays_in_effect"] = stays_in_effect
