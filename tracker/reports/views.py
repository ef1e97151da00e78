"""Text renderings shared by `state`, `replay` and `explain`: the board as terminal tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from domain.scenario import Scenario
from domain.text import phase_name, plural, unit_order
from projections.positions import turn_number
from projections.views import BoardView
from tracker.reports.text import NEUTRAL_LABEL, tech_name

if TYPE_CHECKING:
    from domain.campaign import Campaign


class CurrentBoard(BoardView):
    """The board now (`board_now`): a `BoardView` and what each nation bought and has not placed yet (PU2)."""

    unplaced: dict[str, dict[str, int]]  # nation -> unit type -> count (nations with none left out)


def board_now(campaign: Campaign) -> CurrentBoard:
    """The current board in the same shape as `projections.views.board_at`."""
    return {
        "seq": campaign.version,
        "turn": turn_number(campaign.scenario.turn_order, campaign.round, campaign.nation),
        "round": campaign.round,
        "nation": campaign.nation,
        "phase": campaign.phase,
        "units": [
            {"id": uid, "type": u["type"], "nation": u["nation"], "at": u["at"], "damage": u["damage"]}
            for uid, u in sorted(campaign.units.items())
        ],
        "ntr": {
            n: dict(sorted((z, c) for z, c in zones.items() if c))
            for n, zones in sorted(campaign.ntr.items())
            if any(zones.values())
        },
        "balances": dict(sorted(campaign.balances.items())),
        "ntr_lost": dict(sorted(campaign.ntr_lost.items())),
        "tech": {n: dict(t) for n, t in sorted(campaign.tech.items())},
        "owners": dict(sorted(campaign.owners.items())),
        "neutral": [n for n in campaign.scenario.turn_order if not campaign.at_war(n)],
        "unplaced": {n: dict(sorted(b.items())) for n, b in sorted(campaign.unplaced.items()) if b},
    }


# One colour per side, in the order the sides first appear in the turn order; plain text
# wherever the output is not a terminal (rich drops styles there).
SIDE_STYLES = ("bold red", "bold blue", "bold green", "bold magenta", "bold yellow", "bold cyan")


def side_style(scenario: Scenario, nation: str) -> str:
    sides = list(dict.fromkeys(scenario.nations[n].side for n in scenario.turn_order))
    side = scenario.nations[nation].side if nation in scenario.nations else None
    return SIDE_STYLES[sides.index(side) % len(SIDE_STYLES)] if side in sides else ""


def nation_text(scenario: Scenario, nation: str, label: str | None = None) -> Text:
    """A nation's name (or `label`) in its side's colour."""
    return Text(label if label is not None else nation, style=side_style(scenario, nation))


def units_text(scenario: Scenario, units: Sequence[Mapping[str, Any]]) -> Text:
    """Unit IDs separated by spaces, each in its nation's side colour, damage marked."""
    text = Text()
    for i, u in enumerate(units):
        if i:
            text.append(" ")
        text.append(u["id"] + (" (damaged)" if u["damage"] else ""), style=side_style(scenario, u["nation"]))
    return text


def heading(name: str, data: BoardView) -> str:
    """`state`'s heading: the campaign, its position (the phase in words) and the last event."""
    position = f"Round {data['round']} · turn {data['turn']} · {data['nation']} · {phase_name(data['phase'])}"
    return f"{name} · {position}  (after event {data['seq']})"


# A mapping, not a `Board`: the current board adds what waits to be placed (`CurrentBoard`).
def render_board(out: Console, data: Mapping[str, Any], scenario: Scenario, title: str = "Forces") -> None:
    by_zone: dict[str, list[dict[str, Any]]] = {}
    for u in data["units"]:
        by_zone.setdefault(u["at"], []).append(u)
    table = Table(title=title)
    table.add_column("Zone", no_wrap=True)
    table.add_column("Units")
    game_map = scenario.game_map
    for zone in sorted(by_zone, key=lambda z: (not game_map.is_sea(z), z)):
        here = sorted(by_zone[zone], key=lambda u: unit_order(u["id"]))
        table.add_row(zone, units_text(scenario, here))
    out.print(table)
    # The nations' numbers in one table that fits 80 columns; their lists (NTR by zone,
    # technology), which grow with the board, each in a table of their own, a line per nation.
    nations = Table(title="Nations")
    nations.add_column("Nation", no_wrap=True)
    nations.add_column("Side")
    nations.add_column("Resources", justify="right")
    nations.add_column("NTR at sea", justify="right")
    nations.add_column("NTR lost", justify="right")
    at_sea: list[tuple[str, str]] = []
    techs: list[tuple[str, str]] = []
    for nation in scenario.turn_order:
        ntr = data["ntr"].get(nation, {})
        nations.add_row(
            nation_text(scenario, nation),
            nation_text(scenario, nation, scenario.nations[nation].side),
            str(data["balances"].get(nation, 0)),
            str(sum(ntr.values())),
            str(data["ntr_lost"].get(nation, 0)),
        )
        if ntr:
            at_sea.append((nation, ", ".join(f"{z} {c}" for z, c in sorted(ntr.items()))))
        tech = ", ".join(f"{tech_name(t)} {lvl}" for t, lvl in data["tech"].get(nation, {}).items() if lvl)
        if tech:
            techs.append((nation, tech))
    out.print(nations)
    neutral = data.get("neutral") or []
    if neutral:
        # F8: a neutral nation's side is the one it will join; until then it is nobody's enemy.
        entries = ", ".join(f"{n} until round {scenario.nations[n].entry_round}" for n in neutral)
        out.print(f"{NEUTRAL_LABEL}: {entries}")
    for title, heading, rows in (("NTR at sea", "Zones", at_sea), ("Technology", "Levels", techs)):
        if rows:
            table = Table(title=title)
            table.add_column("Nation", no_wrap=True)
            table.add_column(heading)
            for nation, listed in rows:
                table.add_row(nation_text(scenario, nation), listed)
            out.print(table)
    start = scenario.game_map.land
    changed = {t: n for t, n in data.get("owners", {}).items() if start.get(t) != n}
    if changed:
        # AD1: territory owners decide ports (PU2) and landing (F7); show what moved.
        out.print(
            "Territories changed hands: " + ", ".join(f"{t} {start[t]} -> {n}" for t, n in sorted(changed.items()))
        )
    for nation, bought in data.get("unplaced", {}).items():
        what = ", ".join(plural(c, t) for t, c in bought.items())
        out.print(f"Bought by {nation}, not yet placed (PU2): {what}")
