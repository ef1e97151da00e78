"""The wording turn reports, the shell and the browser viewer share: technology, phase and unit-type
names, dice and targets, moves, undos, battle headings and results, table rows."""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from domain.rules.tech import technology_name
from domain.text import phase_name as phase_name
from domain.text import plural, possessive
from domain.text import type_name as type_name
from projections.positions import turn_position
from projections.summary import spans
from tracker.service.history import TECH_NAMES

# F8: how `tracker state` and the reports name the nations still neutral.
NEUTRAL_LABEL = "Neutral (F8)"

# ----- names -----


def tech_name(tech: str) -> str:
    return TECH_NAMES.get(tech) or technology_name(tech)


# ----- shared wording -----


def target_text(roll: dict[str, Any], ascii_only: bool = True) -> str:
    """'<=4 (base 3; TE4 Advanced ASW +1)', '>=9', or '' for a roll with no target."""
    if roll["target"] is None:
        if roll["modifiers"]:
            return "; ".join(_modifier_text(m) for m in roll["modifiers"])
        return ""
    at_most = roll["success_when"] == "at_most"
    op = ("<=" if at_most else ">=") if ascii_only else ("\u2264" if at_most else "\u2265")
    text = f"{op}{roll['target']}"
    if roll["modifiers"]:
        text += f" (base {roll['base_target']}; " + "; ".join(_modifier_text(m) for m in roll["modifiers"]) + ")"
    return text


def _modifier_text(m: dict[str, Any]) -> str:
    change = f"set {m['set']}" if m.get("set") is not None else f"{m.get('add', 0):+d}"
    return f"{m['rule']} {tech_name(m['technology'])} {change}"


def dice_text(roll: dict[str, Any]) -> str:
    text = f"D{roll['faces']}: " + ", ".join(str(v) for v in roll["values"])
    if roll["source"] == "manual":
        text += " (manual" + (f", ref {roll['reference']}" if roll["reference"] else "") + ")"
    return text


def move_text(m: dict[str, Any]) -> str:
    text = f"{m['nation']} moves {', '.join(m['units'])}: {' -> '.join(m['path'])}"
    if m["hostile_passed"]:
        text += f" (through hostile {', '.join(m['hostile_passed'])})"
    if m["carried"]:
        text += f", carrying {', '.join(m['carried'])}"
    return text


def research_result(entry: dict[str, Any]) -> str:
    if entry["roll"] is None:
        return "no roll recorded"
    if entry["success"]:
        level = f"level {entry['level']}" if entry["level"] is not None else "advances"
        return f"success: {level}" + (" (acquired)" if entry["acquired"] else "")
    return "failure"


def undo_text(u: dict[str, Any]) -> str:
    span = (
        f"event {u['undone_from']}"
        if u["undone_from"] == u["undone_to"]
        else f"events {u['undone_from']}-{u['undone_to']}"
    )
    text = f"event {u['seq']} undid {span}"
    if u["rolls"]:
        rolls = "dice roll" if len(u["rolls"]) == 1 else "dice rolls"
        text += f", taking back {rolls} {spans(u['rolls'])}"
    if u.get("agreed_by"):
        text += f", agreed by {', '.join(u['agreed_by'])}"
    return text


def override_notice(overrides: list[dict[str, Any]]) -> str:
    """What a turn's override undos took back, for the notice above the turn (RK3): dice rolls
    only where one of them did."""
    if any(u["rolls"] for u in overrides):
        return "dice rolls were taken back in this turn"
    return "actions were taken back in this turn by agreement, no dice roll among them"


def undone_listing(u: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The events an undo took back, phase changes apart (only counted). What was asked is
    named by its command alone: its inputs, as the log's index keeps them (Python's words,
    `units=['DE-DD2']`), are told by the events it recorded, listed beside it."""
    events = [
        {**e, "summary": _asked_only(e["summary"])} if e["kind"] == "ActionAsked" else e
        for e in u["undone_events"]
        if e["kind"] != "PhaseAdvanced"
    ]
    return events, len(u["undone_events"]) - len(events)


def _asked_only(summary: str) -> str:
    """'asked by anna: move (units=[...], ...)' -> 'asked by anna: move'."""
    who, sep, rest = summary.partition(": ")
    return who + sep + rest.split(" (", 1)[0] if sep else summary


# Listed apart, so a group sees every exception to its dice (D4, RK3).
DICE_RECORD = frozenset({"DiceSourceSwitched", "TypedDiceAccepted", "DiceRerolled"})

# F8: the turns of neutral nations passed over and their entries into the war, listed apart
# (an entry brought forward by an adjustment is the adjustment's, AD1).
NEUTRALITY = frozenset({"TurnPassedOver", "WarEntered"})

# The first event of each kind of battle besides convoy battles (SM2, AS1, NC1).
BATTLE_STARTS = {"InterceptionStarted": "interception", "AswCombatStarted": "asw", "NavalBattleStarted": "naval"}
BATTLE_NAMES = {"convoy": "Convoy battle", "interception": "Interception", "asw": "ASW combat", "naval": "Naval battle"}
BATTLE_RULES = {"convoy": "CV1", "interception": "SM2", "asw": "AS1", "naval": "NC1"}


def roll_line(r: dict[str, Any]) -> str:
    """One roll on one line: 'GB-DD1 (destroyer) convoy search: 2 (<=4) -> success'."""
    values = ", ".join(str(v) for v in r["values"])
    if r["source"] == "manual":
        values += " (manual" + (f", ref {r['reference']}" if r["reference"] else "") + ")"
    target = target_text(r)
    text = f"{r['purpose']}: {values}" + (f" ({target})" if target else "")
    return text + (f" -> {r['outcome']}" if r["outcome"] else "")


_BATTLE_PREFIX = re.compile(r"^battle \d+: ")


def step_text(s: dict[str, Any]) -> str:
    """A battle step without the 'battle N: ' its heading already says."""
    return _BATTLE_PREFIX.sub("", s["summary"])


def battle_heading(b: dict[str, Any]) -> str:
    return f"{BATTLE_NAMES.get(b['kind'], 'Battle')} {b['battle']} in {b['zone']}"


def battle_declaration(b: dict[str, Any]) -> str:
    if b["attacker"] is None:
        return "declaration not in this turn"
    if b["kind"] == "interception":
        return f"{b['defender']} may search {possessive(b['attacker'])} {', '.join(b['submarines'])} passing through"
    if b["kind"] == "asw":
        return f"{b['attacker']} hunts {possessive(b['defender'])} {', '.join(b['submarines'])}"
    if b["kind"] == "naval":
        defenders = b.get("defending_nations") or [b["defender"]]
        return f"{b['attacker']} attacks {' and '.join(defenders)}"
    return (
        f"{b['attacker']} attacks {possessive(b['defender'])} {b['ntr']} NTR with "
        f"{plural(len(b['submarines']), 'submarine')}: "
        f"{', '.join(b['submarines'])}"
    )


def survivors_text(b: dict[str, Any]) -> str:
    """Who an ended battle left in its zone. An interception's or ASW combat's survivors are
    only the hunted submarines (SM4, SM5, AS2-AS5): its hunters stay too, so "still there:
    none" (after a retreat, say) would read as if every unit was gone."""
    left = ", ".join(b["survivors"])
    if b["kind"] == "naval":
        return f"still there: {left or 'none'}"
    return f"submarines still there: {left}" if left else "no submarine is still there"


def battle_result(b: dict[str, Any]) -> str:
    sunk = [c["unit"] for c in b["casualties"] if c["result"] == "sunk" and not c["undone_by"]]
    downed = [c["unit"] for c in b["casualties"] if c["result"] == "shot down" and not c["undone_by"]]
    # A capital ship damaged in one round and sunk in a later one is sunk, not still damaged.
    damaged = [
        c["unit"] for c in b["casualties"] if c["result"] == "damaged" and not c["undone_by"] and c["unit"] not in sunk
    ]
    parts = [f"sunk: {', '.join(sunk)}" if sunk else "nothing sunk"]
    if downed:
        parts.append(f"shot down: {', '.join(downed)}")
    if damaged:
        parts.append(f"damaged: {', '.join(damaged)}")
    if b["kind"] != "convoy":
        if not b["ended"]:
            return "; ".join([*parts, "not finished"])
        went_on = b.get("went_on", [])
        # SM5: submarines that went on are no longer there; saying "none" alone would hide them.
        if b["survivors"] or not went_on:
            parts.append(survivors_text(b))
        parts += [f"went on to {w['zone']}: {', '.join(w['units'])}" for w in went_on]
        return "; ".join(parts)
    parts.append(f"{b['ntr_destroyed']} NTR destroyed")
    if b["ended"]:
        parts.append(f"surviving submarines: {', '.join(b['survivors']) or 'none'}")
    else:
        parts.append("not finished")
    return "; ".join(parts)


def unit_type_columns(report: dict[str, Any], turn: dict[str, Any]) -> list[str]:
    """The unit types of a turn's fleet table: those any nation has at its end, and those any had
    at its start, so that the last cruisers lost in the turn are shown going to 0 (-2)."""
    present = {t for f in turn["end"]["nations"].values() for t in f["by_type"]}
    present |= {t for f in _previous(report, turn).values() for t in f.get("by_type", {})}
    return [t for t in report["campaign"]["unit_types"] if t in present]


def _change(now: int, before: int | None) -> str:
    if before is None or now == before:
        return str(now)
    return f"{now} ({now - before:+d})"


def _previous(report: dict[str, Any], turn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    k = turn["turn"]
    if k == 1:
        nations: dict[str, dict[str, Any]] = report["start"]["nations"]
        return nations
    series = report["series"]
    # The whole campaign's series holds every played turn in order: no search through it per
    # turn where no turn was passed over.
    if 0 <= k - 2 < len(series) and series[k - 2]["turn"] == k - 1:
        found: dict[str, dict[str, Any]] = series[k - 2]["nations"]
        return found
    # The last turn played before (a neutral nation's turns are passed over, F8), else the
    # start: found by bisection, the series being in turn order (a scan per turn would make a
    # whole campaign's report quadratic in its length).
    at = bisect_left(series, k, key=lambda entry: entry["turn"])
    previous: dict[str, dict[str, Any]] = series[at - 1]["nations"] if at else report["start"]["nations"]
    return previous


def fleet_rows(report: dict[str, Any], turn: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Units per nation and type at the end of a turn, with changes since the turn before."""
    types = unit_type_columns(report, turn)
    before = _previous(report, turn)
    header = ["Nation", *[type_name(t) for t in types], "Units", "Damaged", "Cost"]
    rows = []
    for nation, f in turn["end"]["nations"].items():
        b = before.get(nation, {})
        rows.append(
            [
                nation,
                *[_change(f["by_type"].get(t, 0), b.get("by_type", {}).get(t, 0) if b else None) for t in types],
                _change(f["units"], b.get("units")),
                # A ship damaged (or repaired, or sunk once damaged) this turn shows as the others.
                _change(f["damaged"], b.get("damaged")),
                _change(f["fleet_cost"], b.get("fleet_cost")),
            ]
        )
    return header, rows


def trade_rows(report: dict[str, Any], turn: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """NTR, losses, resources and technology per nation at the end of a turn."""
    techs = report["campaign"]["technologies"]
    names = report["campaign"]["tech_names"]
    before = _previous(report, turn)
    header = ["Nation", "NTR at sea", "NTR by zone", "NTR lost", "Resources", *[names[t] for t in techs]]
    rows = []
    for nation, f in turn["end"]["nations"].items():
        b = before.get(nation, {})
        zones = ", ".join(f"{z} {c}" for z, c in f["ntr"].items()) or "-"
        rows.append(
            [
                nation,
                _change(f["ntr_at_sea"], b.get("ntr_at_sea")),
                zones,
                _change(f["ntr_lost"], b.get("ntr_lost")),
                _change(f["balance"], b.get("balance")),
                *[_change(f["tech"][t], b.get("tech", {}).get(t)) for t in techs],
            ]
        )
    return header, rows


def passed_over_turns(report: dict[str, Any]) -> list[tuple[int, int, str]]:
    """F8: the national turns a campaign report covers that no nation played, (turn, round,
    nation) in order: a neutral nation's turns are passed over with no events, so they are the
    turns up to the last reported missing from its series (which holds every played turn)."""
    order, series = report["campaign"]["turn_order"], report["series"]
    played = {e["turn"] for e in series}
    last = series[-1]["turn"] if series else 0
    return [(k, *turn_position(order, k)) for k in range(1, last + 1) if k not in played]


PASSED_OVER = "passed over (F8)"


def progress_rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """A campaign report's progress: per turn, each nation's resources / NTR at sea / units at
    the end of the turn; a turn passed over (F8) in its place, said so, with no figures."""
    nations = report["campaign"]["turn_order"]
    # Turn 1 passed over as the campaign was created has events, the creation's, and the
    # opening figures: said so, with them.
    rows = [
        (
            e["turn"],
            [str(e["turn"]), str(e["round"]), f"{e['nation']}: {PASSED_OVER}" if e.get("passed_over") else e["nation"]]
            + [_figures_cell(e["nations"][n]) for n in nations],
        )
        for e in report["series"]
    ]
    passed = [
        (k, [str(k), str(round_), f"{nation}: {PASSED_OVER}", *("-" for _ in nations)])
        for k, round_, nation in passed_over_turns(report)
    ]
    if passed:
        # Both lists are in turn order: merged, not sorted again.
        rows = list(heapq.merge(rows, passed, key=lambda entry: entry[0]))
    return ["Turn", "Round", "Phasing", *nations], [row for _, row in rows]


def _figures_cell(f: dict[str, Any]) -> str:
    return f"{f['balance']} / {f['ntr_at_sea']} / {f['units']}"


def neutral_line(report: dict[str, Any]) -> str:
    """F8: 'Neutral (F8) at the end of turn 10: Italy until round 4, ...', as `tracker state`
    lists them, or '' when no nation is neutral then."""
    neutral = report.get("neutral") or {}
    if not neutral.get("nations"):
        return ""
    listed = ", ".join(f"{n['nation']} until round {n['until']}" for n in neutral["nations"])
    return f"{NEUTRAL_LABEL} at the end of turn {neutral['turn']}: {listed}"


def entries_line(turn: dict[str, Any]) -> str:
    """F8: the nations at war from the turn's round (on the first turn played in it), each with
    the event that recorded its entry, or the scenario's entry round where the log records none;
    '' for another turn."""
    entries = turn.get("war_entries") or []
    return ", ".join(
        f"{e['nation']} (event {e['seq']})"
        if e["seq"] is not None
        else f"{e['nation']} (its entry round in the scenario)"
        for e in entries
    )


def turn_title(turn: dict[str, Any]) -> str:
    status = f", {PASSED_OVER}" if turn.get("passed_over") else "" if turn["complete"] else " (in progress)"
    return f"Turn {turn['turn']}: {turn['nation']}, round {turn['round']}{status}"


def numbered_span(noun: str, first: int, last: int) -> str:
    """'turn 1', 'turns 1-4', 'event 7', 'events 7-12': one number alone is not a range."""
    return f"{noun} {first}" if first == last else f"{noun}s {first}-{last}"


def campaign_turns(report: dict[str, Any]) -> str:
    """The turns a campaign report covers, "turns 1-N" with N the number of its last turn
    ("turn 1" alone): a neutral nation's turns are passed over and have no entry of their own
    (F8), so N is not the count."""
    series = report.get("series") or []
    return numbered_span("turn", 1, series[-1]["turn"] if series else len(report["turns"]))


def report_meta(report: dict[str, Any], escape: Callable[[object], str]) -> str:
    """The line under a report's title: what the report covers first, then where the campaign is
    now; `escape` makes the names safe for the format (the Markdown or HTML report)."""
    c, pos = report["campaign"], report["position"]
    if report["scope"] == "turn":
        turn = report["turns"][0]
        covers = f"turn {turn['turn']} ({turn['nation']}, round {turn['round']})"
        if turn.get("passed_over"):
            covers += f", {PASSED_OVER}"
        if turn["first_seq"] is not None:
            covers += f", {numbered_span('event', turn['first_seq'], turn['last_seq'])}"
    else:
        covers = campaign_turns(report)
    now = f"turn {pos['turn']}, {pos['nation']}, {phase_name(pos['phase'])} (event {pos['seq']})"
    return (
        f"Report of {escape(covers)} · {escape(c['scenario_title'])} · ruleset {escape(c['ruleset'])} · "
        f"{escape(c['dice_mode'])} dice · the campaign is now at {escape(now)}"
    )


def has_actions(turn: dict[str, Any]) -> bool:
    keys = (
        "moves",
        "ntr_placed",
        "research",
        "purchases",
        "adjustments",
        "battles",
        "casualties",
        "ntr_lost",
        "resources",
        "undos",
        "dice_record",
        "neutrality",
        "other",
    )
    return any(turn.get(k) for k in keys)
