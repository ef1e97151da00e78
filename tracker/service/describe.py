"""What the game waits for, in the words a player reads: `pending`, the gates of `next` and the
refusals of a step out of turn. The domain gives the facts (`Campaign.waiting_facts`, the items
of `Campaign.open_items`); this module turns them into sentences and is installed as the
aggregate's describer by the tracker application (`install_describer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.campaign import Campaign
from domain.text import plural

_CONVOY_STEPS = ("merchant_defence", "merchant_casualty", "search", "convoy_table")


def _units_at(searchers: list[dict[str, Any]]) -> str:
    return ", ".join(f"{s['unit']} at {s['target']}" if s["target"] is not None else s["unit"] for s in searchers)


def _convoy_step(f: Mapping[str, Any]) -> str:
    """CV2-CV5: what a convoy battle's own steps wait for."""
    step = f["step"]
    if step == "merchant_defence":
        dice = f["dice"]
        return (
            f"to roll merchant defence ({dice['count']}D{dice['faces']}; a total of {dice['sinks_on_total']} "
            "sinks one submarine)"
        )
    if step == "merchant_casualty":
        return f"to choose the submarine sunk by merchant defence among {', '.join(f['submarines'])}"
    if step == "search":
        options = _units_at(f["searchers"])
        return f"to choose which ships and aircraft search (eligible: {options or 'none'}; default: all)"
    return (
        f"to roll the convoy table, 1D{f['faces']} for each taking-part submarine "
        f"in this order: {', '.join(f['submarines'])}"
    )


def _procedure_step(f: Mapping[str, Any]) -> str:
    """What an interception, ASW combat, naval battle or a convoy battle's round waits for, with
    what a player needs to answer: the eligible units and their target numbers, the legal
    choices, the dice order."""
    step, kind = f["step"], f["kind"]
    if step == "search" and kind == "interception":
        return (
            f"to choose which units search for {f['attacker']}'s {', '.join(f['submarines'])} passing through "
            f"(eligible: {_units_at(f['searchers'])}; default: all; none may search)"
        )
    if step == "search":
        dice = plural(f["dice"]["count"], "die")
        return (
            f"to choose the units searching for {', '.join(f['submarines'])}, each rolling once per submarine "
            f"(eligible: {_units_at(f['searchers'])}; default: all, {dice} in the order listed, each unit against "
            "each submarine)"
        )
    if step == "detect":
        subs, found = f["submarines"], f["found"]
        return (
            f"to name the {plural(found, 'submarine')} found among {', '.join(subs)} "
            f"(default: {', '.join(subs[:found])})"
        )
    if step in ("targets", "opening_targets"):
        per = {
            n: ", ".join(f"{t['unit']} at {'/'.join(t['legal'])}" for t in shots) for n, shots in f["targets"].items()
        }
        choices = "; ".join(f"{n}: {per[n]}" for n in f["waiting"] if n in per)
        return f"to choose targets: {choices} (default: spread, most valuable first)"
    if step in ("screening", "opening_screening"):
        parts = [
            f"{s['firer']}'s shot at {s['target']} may be taken by {'/'.join(s['options'])}"
            for n in f["waiting"]
            for s in f["screens"].get(n, [])
        ]
        return f"to choose screening escorts: {'; '.join(parts)} (default: the cheapest loss)"
    if step in ("fire", "opening_fire"):
        order = f["firing"]
        return f"to roll {plural(len(order), 'die')}, one per firing unit in this order: {', '.join(order)}"
    if step == "casualties":
        parts = [
            f"{n} places {plural(c['hits'], 'hit')} among {', '.join(c['units'])}" for n, c in f["casualties"].items()
        ]
        return f"to choose casualties: {'; '.join(parts)} (HA4-HA6 order; default: the cheapest legal choice)"
    if step == "decide" and kind == "interception":
        retreat = f" or retreat to {f['back']}" if f["back"] else ""
        return f"to choose for {', '.join(f['detected'])}: fight on, submerge{retreat} (default: submerge)"
    if step == "decide" and kind == "asw":
        return f"to choose which of {', '.join(f['detected'])} submerge (default: all; the others fight on)"
    if step == "decide":
        parts = []
        for n, d in f["decisions"].items():
            options = [f"submerge {'/'.join(d['submerge'])}"] if d["submerge"] else []
            if d["retreat"]:
                options.append(f"retreat to {'/'.join(d['retreat'])}")
            parts.append(f"{n}: {' or '.join(options)}")
        return f"to decide: {'; '.join(parts)} (default: fight on)"
    if step == "continue":
        return (
            f"to choose whether {', '.join(f['free'])} go on to {f['destination']} or stop in {f['zone']} "
            "(default: go on)"
        )
    return str(step).replace("_", " ")


def _gate(f: Mapping[str, Any]) -> str:
    """T4: what the phase still requires before it may end."""
    kind, phasing = f["kind"], f["phasing"]
    if kind == "naval_due":
        return (
            f"naval battle due in {f['zone']}: {phasing} moved units in or stopped submarines to attack ({f['holds']})"
        )
    if kind == "convoy_open":
        return f"{f['nation']} may declare a convoy attack on {phasing}'s NTR in {', '.join(f['zones'])}, or pass"
    if kind == "unplaced":
        where = ", ".join(f["legal"]) or "none"
        return f"{phasing} has {plural(f['count'], f['unit_type'])} bought and not placed (legal: {where})"
    if kind == "air_landing":
        return (
            f"{', '.join(f['units'])} cannot land when noncombat_movement ends (no territory of its side "
            "or carrier with room): move it, or confirm the loss"
        )
    return str(kind).replace("_", " ")


class EnglishDescriber:
    """The tracker's sentences for what the game waits for."""

    def waiting(self, facts: Mapping[str, Any]) -> str:
        who = " and ".join(facts["waiting"]) or "nobody"
        if facts["kind"] == "convoy" and facts["step"] in _CONVOY_STEPS:
            what = _convoy_step(facts)
        else:
            what = _procedure_step(facts)
        return f"waiting for {who} {what} [{facts['rule']}]"

    def item(self, facts: Mapping[str, Any]) -> str:
        if facts.get("battle") is not None:
            return f"battle {facts['battle']} ({facts['kind']}, {facts['zone']}): {self.waiting(facts)}"
        return f"{_gate(facts)} [{facts['rule']}]"


def install_describer() -> None:
    """Make the tracker's words the ones every campaign uses (pending, gates, refusals)."""
    Campaign.describer = EnglishDescriber()
