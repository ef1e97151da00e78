"""`tracker map`, `tracker units` and `tracker show ZONE`: the campaign's map, its unit types
and one zone, read from the campaign's own scenario and ruleset (house rules included)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from domain.campaign import Campaign
from domain.text import phase_name, type_name, unit_order
from tracker.cli.common import Context, console, emit_json, json_option, suggested
from tracker.cli.completion import complete_zones
from tracker.cli.params import ZONE
from tracker.cli.wrapping import wrapped_keeping_names
from tracker.reports.views import nation_text, units_text
from tracker.service.names import Names


def turn_heading(name: str, board: Mapping[str, Any], turn_now: bool, phase_now: bool, phase: str | None) -> str:
    """`state --turn`'s heading: the position as `state` heads it, saying whether the board is
    the end of the turn (or of `phase`) asked for, or the board now of a turn or phase still
    being played ("end of turn 4", "turn 5 in progress", "naval combat in progress")."""
    words = phase_name(str(board["phase"]))
    if phase is None:
        played = f"turn {board['turn']} in progress" if turn_now else f"end of turn {board['turn']}"
        stage = words
    else:
        played = f"turn {board['turn']}" + (" in progress" if turn_now and not phase_now else "")
        stage = f"{words} in progress" if phase_now else f"end of {words}"
    position = f"Round {board['round']} · {played} · {board['nation']} · {stage}"
    return f"{name} · {position}  (after event {board['seq']})"


def _forces(c: Campaign, zone: str) -> dict[str, dict[str, int]]:
    """Units in a zone by nation and type: {nation: {type: count}}."""
    counts: dict[str, Counter[str]] = {}
    for u in c.units.values():
        if u["at"] == zone:
            counts.setdefault(u["nation"], Counter())[u["type"]] += 1
    order = c.scenario.turn_order
    return {n: dict(sorted(counts[n].items())) for n in order if n in counts}


def _ntr(c: Campaign, zone: str) -> dict[str, int]:
    return {n: c.ntr.get(n, {}).get(zone, 0) for n in c.scenario.turn_order if c.ntr.get(n, {}).get(zone, 0)}


def zone_data(c: Campaign, zone: str) -> dict[str, Any]:
    """One zone: what it is, what it touches, who is there, NTR, battles open there."""
    game_map = c.scenario.game_map
    adjacent = sorted(game_map.adjacency[zone], key=lambda z: (not game_map.is_sea(z), z))
    sea = game_map.is_sea(zone)
    return {
        "zone": zone,
        "kind": "sea" if sea else "land",
        # AD1: the owner now, as adjusted (it decides ports and landing), not the scenario's.
        "owner": None if sea else c.owners.get(zone),
        # PU2: a territory the scenario marks as a port (every one, where it marks none).
        "port": None if sea else zone in game_map.ports,
        "adjacent": adjacent,
        # PU2: a sea zone's ports are the port territories beside it, where new ships are
        # placed from; a port's are the sea zones beside it (a territory that is none has none).
        "ports": [z for z in adjacent if game_map.is_sea(z) != sea and (z if sea else zone) in game_map.ports],
        "forces": _forces(c, zone),
        "ntr": _ntr(c, zone),
        "ntr_max": {n: nat.ntr_max[zone] for n, nat in c.scenario.nations.items() if nat.ntr_max.get(zone)},
    }


def _forces_text(c: Campaign, forces: dict[str, dict[str, int]]) -> Text:
    abbr = {name: u.abbr for name, u in c.ruleset.units.items()}
    text = Text()
    for i, (nation, types) in enumerate(forces.items()):
        if i:
            text.append("; ")
        code = c.scenario.nations[nation].code
        text.append_text(nation_text(c.scenario, nation, code))
        text.append(" " + " ".join(f"{n} {abbr.get(t, t)}" for t, n in types.items()))
    return text


@click.command(name="map")
@json_option
@click.pass_obj
def map_command(ctx: Context, as_json: bool) -> None:
    """Show the campaign's map: every zone, what it touches, its owner now and whether it is a
    port, who is there and the NTR.

    Example: tracker map --json
    """
    c = ctx.load()
    game_map = c.scenario.game_map
    zones = sorted(game_map.adjacency, key=lambda z: (not game_map.is_sea(z), z))
    data = [zone_data(c, z) for z in zones]
    if as_json:
        emit_json({"scenario": c.scenario.name, "zones": data})
        return
    table = Table(title=f"Map: {c.scenario.title}")
    # On a narrow terminal every column wraps, and a name longer than its column folds onto the
    # next line: a name is never cut.
    table.add_column("Zone", overflow="fold")
    table.add_column("Adjacent", overflow="fold")
    table.add_column("Units", overflow="fold")
    table.add_column("NTR", overflow="fold")
    for i, z in enumerate(data):
        zone = Text(z["zone"])
        if z["owner"]:
            zone.append(" (")
            zone.append_text(nation_text(c.scenario, z["owner"], c.scenario.nations[z["owner"]].code))
            zone.append(", port)" if z["port"] else ")")
        ntr = Text()
        for j, (nation, count) in enumerate(z["ntr"].items()):
            ntr.append(", " if j else "")
            ntr.append_text(nation_text(c.scenario, nation, f"{c.scenario.nations[nation].code} {count}"))
        last_sea = z["kind"] == "sea" and i + 1 < len(data) and data[i + 1]["kind"] != "sea"
        table.add_row(zone, ", ".join(z["adjacent"]), _forces_text(c, z["forces"]), ntr, end_section=last_sea)
    out = console()
    if out.measure(table, options=out.options.update_width(10**6)).maximum > out.width * 5 // 4:
        # Far too wide for the terminal: its width shared by weight, the adjacent zones' long
        # lists taking the most. Rich narrows the widest columns to the width of the next,
        # which left the lists a quarter of an 80-column terminal (most zones hold no units),
        # over 40% more lines. A little too wide, that narrowing takes only from the lists.
        table.expand = True
        for column, ratio in zip(table.columns, (3, 6, 3, 2), strict=True):
            column.ratio = ratio
    out.print(table)
    codes = ", ".join(f"{n.code} {name}" for name, n in c.scenario.nations.items())
    out.print(f"Units by nation code and type abbreviation ({codes}); `{suggested('tracker show ZONE')}` for one zone.")


def unit_type_rows(c: Campaign) -> list[dict[str, Any]]:
    return [
        {
            "type": name,
            "abbr": u.abbr,
            "category": u.category,
            "class": u.unit_class,
            "attack": u.attack,
            "defense": u.defense,
            "move": u.move,
            "hits": u.hits,
            "cost": u.cost,
            "screens": u.screens,
            "carries": u.carries,
            "search": dict(u.search),
            "asw_attack": u.asw_attack,
        }
        for name, u in c.ruleset.units.items()
    ]


@click.command(name="units")
@json_option
@click.pass_obj
def units_command(ctx: Context, as_json: bool) -> None:
    """Show the unit types of the campaign's ruleset: combat values, move or range, hits, cost, searches.

    Example: tracker units
    """
    c = ctx.load()
    rows = unit_type_rows(c)
    if as_json:
        emit_json({"ruleset": c.ruleset.name, "units": rows})
        return
    table = Table(title=f"Unit types: {c.ruleset.title}")
    for label in ("Type", "Abbr", "Kind", "Att", "Def", "Move", "Hits", "Cost", "Searches"):
        table.add_column(label, justify="right" if label in ("Att", "Def", "Move", "Hits", "Cost") else "left")
    for r in rows:
        searches = ", ".join(f"{k} {v}" for k, v in r["search"].items() if v)
        if r["asw_attack"]:
            searches += (", " if searches else "") + f"ASW attack {r['asw_attack']}"
        table.add_row(
            type_name(r["type"]),
            r["abbr"],
            r["category"],
            str(r["attack"]),
            str(r["defense"]),
            str(r["move"]),
            str(r["hits"]),
            str(r["cost"]),
            searches or "-",
        )
    out = console()
    out.print(table)
    out.print("Combat values hit on that value or less (D2); air units move by range in map steps (F7).")


def _listing(out: Console, label: str, names: list[str]) -> None:
    """`Label: a, b, c`, wrapped between words to the terminal with the later lines indented
    (rich's own wrapping leaves a space at the end of each broken line), never inside a name of
    several words ("North / Sea"), as prose is wrapped."""
    for line in wrapped_keeping_names(f"{label}: {', '.join(names)}", out.width, under="  "):
        out.print(line, soft_wrap=True, markup=False, highlight=False)


def _movement(c: Campaign, u: dict[str, Any]) -> str:
    """What a unit's movement this turn says to a player: only the phasing nation's units have
    one (another nation's count is its last turn's, cleared when its next turn opens), and a
    unit whose move an interception ended moves no further (SM4, SM5)."""
    if u["nation"] != c.nation:
        return ""
    ended = c.movement_ended.get(u["id"])
    if ended is not None:
        return f"move ended ({ended})"
    return f"moved {u['moved']}" if u["moved"] else ""


@click.command(name="show")
@click.argument("zone", type=ZONE, shell_complete=complete_zones)
@json_option
@click.pass_obj
def show_command(ctx: Context, zone: str, as_json: bool) -> None:
    """Show one zone: what it is, what it touches, every unit there, the NTR and the battles open there.

    Example: tracker show "heligoland bight"
    """
    c = ctx.load()
    name = Names(c).zone(zone)
    data = zone_data(c, name)
    here = [{"id": uid, **u} for uid, u in sorted(c.units.items(), key=lambda i: unit_order(i[0])) if u["at"] == name]
    data["units"] = [
        {"id": u["id"], "type": u["type"], "nation": u["nation"], "damage": u["damage"], "moved": u["moved"]}
        for u in here
    ]
    data["battles"] = [
        {"battle": b["id"], "kind": b["kind"], "step": b["step"], "waiting": list(b["waiting"])}
        for b in sorted(c.battles.values(), key=lambda b: b["id"])
        if b["zone"] == name
    ]
    if as_json:
        emit_json(data)
        return
    out = console()
    title = Text(f"{name}: ")
    if data["kind"] == "land":
        title.append("land territory of ")
        title.append_text(nation_text(c.scenario, data["owner"]))
        if data["port"]:
            title.append(", a port (PU2)")
    else:
        title.append("sea zone")
    out.print(title)
    _listing(out, "Adjacent", data["adjacent"])
    if data["ports"]:
        # PU2: "Coast: Crimea" beside a sea zone that also touches Northern Anatolia read as the
        # whole coast; it lists the ports only, where ships bought are placed from.
        _listing(out, "Ports (PU2)" if data["kind"] == "sea" else "Ships placed in (PU2)", data["ports"])
    if here:
        table = Table()
        for label in ("Unit", "Type", "Nation", "State"):
            table.add_column(label)
        for u in here:
            state = ", ".join(part for part in ("damaged" if u["damage"] else "", _movement(c, u)) if part)
            table.add_row(
                units_text(c.scenario, [u]),
                type_name(u["type"]),
                nation_text(c.scenario, u["nation"]),
                state or "-",
            )
        out.print(table)
    else:
        out.print("No units.")
    if data["ntr"]:
        limits = data["ntr_max"]
        out.print(
            "NTR: "
            + ", ".join(
                f"{n} {count}" + (f" (of {limits[n]})" if n in limits else "") for n, count in data["ntr"].items()
            )
        )
    for b in data["battles"]:
        out.print(f"Battle {b['battle']} ({b['kind']}): {b['step']}, waiting for {', '.join(b['waiting']) or 'nobody'}")
