"""Text renderings shared by `state`, `replay` and `explain`: the board as terminal tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from domain.scenario import Scenario
from projections.positions import turn_number

if TYPE_CHECKING:
    from domain.campaign import Campaign


def board_now(campaign: Campaign) -> dict[str, Any]:
    """The current board in the same shape as `projections.board.board_at`."""
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
    }


def heading(name: str, data: dict[str, Any]) -> str:
    position = f"Round {data['round']} · turn {data['turn']} · {data['nation']} · {data['phase']}"
    return f"{name} · {position}  (after event {data['seq']})"


def render_board(out: Console, data: dict[str, Any], scenario: Scenario, title: str = "Forces") -> None:
    by_zone: dict[str, list[str]] = {}
    for u in data["units"]:
        by_zone.setdefault(u["at"], []).append(u["id"] + (" (damaged)" if u["damage"] else ""))
    table = Table(title=title)
    table.add_column("Zone")
    table.add_column("Units")
    game_map = scenario.game_map
    for zone in sorted(by_zone, key=lambda z: (not game_map.is_sea(z), z)):
        table.add_row(zone, " ".join(by_zone[zone]))
    out.print(table)
    nations = Table(title="Nations")
    for col in ("Nation", "Side", "Resources", "NTR at sea", "NTR lost", "Technology"):
        nations.add_column(col)
    for nation in scenario.turn_order:
        ntr = data["ntr"].get(nation, {})
        ntr_text = ", ".join(f"{z} {c}" for z, c in sorted(ntr.items())) or "-"
        tech = ", ".join(f"{t} {lvl}" for t, lvl in data["tech"].get(nation, {}).items() if lvl) or "-"
        nations.add_row(
            nation,
            scenario.nations[nation].side,
            str(data["balances"].get(nation, 0)),
            ntr_text,
            str(data["ntr_lost"].get(nation, 0)),
            tech,
        )
    out.print(nations)
