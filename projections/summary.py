"""One-line, human-readable summaries of campaign events and their rule IDs, for `log` and reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from domain.chain import UPCAST_ADDED
from domain.rules.tech import technology_name
from domain.text import listed, phase_name, plural, possessive, side_nations, type_name, unit_order

# The rule each kind of event is recorded under (a kind not here names its own `rule`).
_RULES = {
    "Created": "T1",
    "PhaseAdvanced": "T2",
    "NtrPlaced": "CV6",
    "ResearchPaid": "TE1",
    "TechnologyAdvanced": "TE2",
    "ResourcesCollected": "F6",
    # D5: rolls are revealed for checking; D3 is the record of each die, not its reveal.
    "SeedRevealed": "D5",
    "ActionAsked": "RK1",
    "ActionUndone": "RK3",
    "ActionRedone": "RK4",
    "DiceRerolled": "RK3",
    "DiceSourceSwitched": "D4",
    "TypedDiceAccepted": "D4",
    "ConvoyAttackDeclared": "CV1",
    "SearchersChosen": "CV3",
    "DetectionsRecorded": "CV3",
    "NtrDestroyed": "CV5",
    "UnitsPurchased": "PU1",
    "UnitsPlaced": "PU2",
    "PurchasesForfeited": "PU2",
    "Adjusted": "AD1",
    "ConvoyPassed": "CV1",
}


def rule_of(event: Any) -> str:
    """The rule ID an event was recorded under."""
    kind = type(event).__name__
    if kind == "UnitsMoved":
        return "SM1" if getattr(event, "hostile_passed", None) else "F4"
    found = _RULES.get(kind)
    return found if found is not None else getattr(event, "rule", "")


def rule_of_kind(kind: str) -> str | None:
    """The rule every event of this kind is recorded under, or None when each event says
    (`rule_of` reads it then)."""
    return None if kind == "UnitsMoved" else _RULES.get(kind)


def _ids(units: Sequence[str]) -> str:
    """Unit IDs as a player counts them, GB-BB8 before GB-BB10: events keep the order they were
    recorded in (`sorted`, the order dice are rolled in), and each die's line names its unit."""
    if len(units) < 2:
        return ", ".join(units)
    return ", ".join(sorted(units, key=unit_order))


def _in_order(units: Iterable[str]) -> str:
    """Unit IDs whose order is a rule's, shown as recorded: the order searchers roll in (CV4)
    and the owner's order of placing hits one at a time (HA7), which decides what is lost."""
    return ", ".join(units)


@cache
def _air_abbreviations() -> frozenset[str]:
    """The abbreviations of the built-in rulesets' air unit types (FT, BM, TP), read once: what
    a summary goes by where no campaign is at hand (`summary` without its ruleset)."""
    from domain.ruleset import builtin_names, load_ruleset

    found: set[str] = set()
    for name in builtin_names("rulesets"):
        found |= _air_of(load_ruleset(name)[0])
    return frozenset(found)


def _air_of(ruleset: Any) -> frozenset[str]:
    """The abbreviations of a ruleset's air unit types: a unit's ID holds its type's (GB-FT1),
    and an event names the unit alone."""
    return frozenset(t.abbr for t in ruleset.units.values() if t.is_air)


def _unit_hit(e: Any, air: frozenset[str] | None = None) -> str:
    """F3, NC5: a ship hit is sunk or damaged; an aircraft is shot down, not "sunk". Its type is
    read from the abbreviation its ID holds (GB-FT1), by the campaign's ruleset's `air`
    abbreviations when given: a house ruleset may call its fighters anything."""
    rest = e.unit.partition("-")[2]
    known = _air_abbreviations() if air is None else air
    # An abbreviation may end with a digit ("F2"), so the ID's number is what follows it.
    shot = any(rest.startswith(a) and rest[len(a) :].isdigit() for a in known)
    lost = "shot down" if shot else "sunk"
    return f"{e.unit} " + (lost if e.sunk else "damaged") + (f" in battle {e.battle}" if e.battle else "")


def _placed(units: list[str], unit_type: str) -> str:
    """PU2: the type of the units placed, "destroyer" for one, "2 aircraft carriers" for more."""
    return type_name(unit_type) if len(units) == 1 else plural(len(units), unit_type)


def _adjustment_text(e: Any) -> str:
    """AD1: every part an adjustment changed, then its reason."""
    parts = []
    if e.added:
        parts.append(
            "adds "
            + ", ".join(
                f"{u['id']} ({type_name(u['type'])}, {u['nation']}) in {u['at']}"
                for u in sorted(e.added, key=lambda u: unit_order(u["id"]))
            )
        )
    if e.removed:
        parts.append("removes " + _ids(e.removed))
    for nation, change in e.resources.items():
        parts.append(f"{nation} resources {change:+d}")
    for n in e.ntr:
        parts.append(f"{n['nation']} NTR in {n['zone']} {n['change']:+d}")
    for territory, nation in e.owners.items():
        parts.append(f"{territory} now held by {nation}")
    for t in e.tech:
        parts.append(f"{t['nation']} {technology_name(t['technology'])} set to level {t['level']}")
    for nation in getattr(e, "enter", ()):
        parts.append(f"{nation} enters the war now (F8)")
    return f"ADJUSTMENT: {'; '.join(parts)} (reason: {e.reason})"


def _dice_text(e: Any) -> str:
    values = ", ".join(str(v) for v in e.values)
    text = f"roll {e.roll}: {e.purpose}: D{e.faces} x{len(e.values)} = {values}"
    if e.target is not None:
        op = "<=" if e.success_when == "at_most" else ">="
        mods = ""
        if e.modifiers:
            parts = []
            for m in e.modifiers:
                parts.append(
                    f"{m['rule']} {technology_name(m['technology'])} "
                    + (f"set {m['set']}" if m["set"] is not None else f"{m['add']:+d}")
                )
            mods = f" (base {e.base_target}; {'; '.join(parts)})"
        text += f" vs {op}{e.target}{mods}: {e.outcome}"
    elif e.outcome:
        mods = ""
        if e.modifiers:
            changes = "; ".join(f"{m['rule']} {technology_name(m['technology'])} {m['add']:+d}" for m in e.modifiers)
            mods = f" ({changes})"
        text += f"{mods}: {e.outcome}"
    if e.source == "manual":
        text += " [manual" + (f", ref {e.reference}" if e.reference else "") + "]"
    return text


# Inputs left out of what was asked (a tuple made once: it holds a list, so it is no constant).
_UNSHOWN: tuple[Any, ...] = (None, False, [], "")


def _asked(e: Any) -> str:
    # `verify` compares this line with the event index that databases already hold (who asked
    # is the point): keep its words as they are.
    given = []
    for k, v in e.inputs.items():
        # No value `_UNSHOWN` holds is truthy: most inputs are shown without comparing them.
        if v or v not in _UNSHOWN:
            given.append(f"{k}={v!r}")
    text = f"asked by {e.player}: {e.name}" if e.player else f"asked: {e.name}"
    return f"{text} ({', '.join(given)})" if given else text


def _created(e: Any) -> str:
    name = e.scenario.get("scenario", {}).get("name", "?")
    rs = e.ruleset.get("ruleset", {}).get("name", "?")
    return (
        f"campaign {e.name!r} created from scenario {name} with ruleset {rs}, {e.dice_mode} dice "
        f"(seed commitment {e.seed_commitment[:12]}...)" + (f" by {e.created_by}" if e.created_by else "")
    )


def _passed_over(e: Any) -> str:
    # F8: the entry round is recorded under the ruleset's `entries_recorded` (None before it).
    enters = getattr(e, "enters", None)
    until = "its entry into the war" if enters is None else f"it enters the war in round {enters}"
    return f"round {e.round}, {e.nation}: turn passed over, neutral until {until}"


def _moved(e: Any) -> str:
    text = f"{e.nation} moves {_ids(e.units)}: {' -> '.join(e.path)}"
    if e.hostile_passed and e.path[0] in e.hostile_passed:
        # A submarine group going on after an interception (SM5) from the zone it paused in.
        text += f" (on through hostile {', '.join(e.hostile_passed)})"
    elif e.hostile_passed:
        text += f" (through hostile {', '.join(e.hostile_passed)})"
    if e.carried:
        text += f", carrying {_ids(e.carried)}"
    return text


def _collected(e: Any) -> str:
    # `lost` counts NTR destroyed this phase (CV6), not resources: a house ruleset's NTR may
    # be worth more than one each (`ntr_value`), so the count is said as NTR.
    return (
        f"{e.nation} collects {e.collected} ({e.ntr_value} from NTR, {e.income} other income"
        + (f", {e.lost} NTR lost to convoy attacks" if e.lost else "")
        + f"); balance {e.balance}"
    )


def _convoy_declared(e: Any) -> str:
    return (
        f"convoy battle {e.battle} in {e.zone}: {e.attacker} ({plural(len(e.submarines), 'submarine')}: "
        f"{_ids(e.submarines)}) against {possessive(e.defender)} {e.ntr} NTR"
    )


def _detections(e: Any) -> str:
    found = _ids(e.detected) or "nobody"
    return f"battle {e.battle}: detected by {found}" + (f"; failed: {_ids(e.failed)}" if e.failed else "")


def _casualties(e: Any) -> str:
    how = "default, cheapest legal" if e.default else "chosen"
    return f"battle {e.battle}: {e.nation} takes hits on {_in_order(e.units)} ({how})"


def _ntr_destroyed(e: Any) -> str:
    capped = f" (rolled {e.rolled}, capped at the NTR present)" if e.rolled > e.count else ""
    return f"battle {e.battle}: {e.count} of {possessive(e.nation)} NTR destroyed in {e.zone}{capped}"


def _battle_ended(e: Any) -> str:
    left = _ids(e.survivors) or "none"
    reason = getattr(e, "reason", "")
    if e.rule == "CV7" and not e.survivors:
        return f"battle {e.battle} ends: {reason or 'no taking-part submarine is left'}"
    if e.rule == "CV7":
        return f"battle {e.battle} ends after one round; surviving submarines stay: {left}"
    why = reason or _ENDINGS.get(e.rule, e.rule)
    if e.rule == "SM5" and not e.survivors:
        # SM5: with none left in the zone, every free submarine went on; the event does not
        # name where (the move recorded next does), and "still there: none" read as lost.
        return f"battle {e.battle} ends ({why}); none stayed: the free submarines went on (the move follows)"
    if e.rule != "NC1":
        # SM4, SM5, AS2-AS5: an interception's or ASW combat's survivors are only the hunted
        # submarines left in the zone; the hunters stay too, so a bare "still there: none"
        # (after a retreat, say) read as if every unit was gone.
        return f"battle {e.battle} ends ({why}); " + (
            f"submarines still there: {left}" if e.survivors else "no submarine is still there"
        )
    return f"battle {e.battle} ends ({why}); still there: {left}"


def spans(numbers: list[int]) -> str:
    """Numbers as runs: [1, 2, 3, 7, 9, 10] -> "1-3, 7, 9-10". A long undo takes back thousands
    of consecutive rolls, which listed one by one fill a screen (and a log row)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _undone(e: Any) -> str:
    span = f"event {e.undone_from}" if e.undone_from == e.undone_to else f"events {e.undone_from}-{e.undone_to}"
    text = f"undo of {span}"
    if e.override:
        dice = "dice roll" if len(e.rolls) == 1 else "dice rolls"
        rolls = f"{dice} {spans(list(e.rolls))} undone" if e.rolls else "no dice undone"
        agreed = f"agreed by {', '.join(e.agreed_by)}; " if getattr(e, "agreed_by", None) else ""
        text += f" OVERRIDE ({rolls}; {agreed}reason: {e.reason})"
    elif e.reason:
        text += f" (reason: {e.reason})"
    return text


def _redone(e: Any) -> str:
    rolls = f", reusing its dice (roll {', '.join(map(str, e.rolls))})" if e.rolls else ""
    return f"redo of action {e.original} (undone by event {e.undo}){rolls}"


# The summary of each kind of event, by the event class's name; a procedure's kinds are
# summarised by `_procedure_summary`, and a kind known to neither by its name.
_SUMMARIES: dict[str, Callable[[Any], str]] = {
    "ActionAsked": _asked,
    "PhaseAdvanced": lambda e: f"round {e.round}, {e.nation}: {phase_name(e.phase)}",
    "TurnPassedOver": _passed_over,
    "WarEntered": lambda e: f"round {e.round}, {e.nation}: enters the war at its entry round",
    "Created": _created,
    "UnitsMoved": _moved,
    "NtrPlaced": lambda e: f"{e.nation} places {e.count} NTR in {e.zone}",
    "UnitsPurchased": lambda e: f"{e.nation} buys {plural(e.count, e.unit_type)} for {e.cost}",
    "UnitsPlaced": lambda e: f"{e.nation} places {_ids(e.units)} ({_placed(e.units, e.unit_type)}) in {e.zone}",
    "Adjusted": lambda e: _adjustment_text(e),
    "ConvoyPassed": lambda e: (
        f"{e.nation} passes on convoy attacks against {e.defender} this phase ({', '.join(e.zones)})"
    ),
    "AircraftLost": lambda e: f"{_verb(e.units, 'is', 'are')} lost: no place to land when noncombat movement ends",
    "PurchasesForfeited": lambda e: (
        f"{e.nation} gives up "
        + ", ".join(plural(n, t) for t, n in sorted(e.units.items()))
        + " bought this turn: no place to put them when placement ends"
    ),
    "DiceRolled": lambda e: _dice_text(e),
    "ResearchPaid": lambda e: f"{e.nation} pays {e.cost} for a research roll on {technology_name(e.technology)}",
    "TechnologyAdvanced": lambda e: (
        f"{e.nation} advances {technology_name(e.technology)} to level {e.level}"
        + (" (acquired)" if e.acquired else "")
    ),
    "ResourcesCollected": _collected,
    "ConvoyAttackDeclared": _convoy_declared,
    "BattleAdvanced": lambda e: (
        f"battle {e.battle}: next {e.step.replace('_', ' ')}, waiting for {' and '.join(e.waiting) or 'nobody'}"
    ),
    "SearchersChosen": lambda e: f"battle {e.battle}: searchers {_in_order(e.units) or 'none'}",
    "DetectionsRecorded": _detections,
    "HitsScored": lambda e: (
        f"battle {e.battle}: {plural(e.hits, 'hit')} on {e.nation} (can fall on {_ids(e.candidates)})"
    ),
    "CasualtiesChosen": _casualties,
    "UnitHit": _unit_hit,
    "NtrDestroyed": _ntr_destroyed,
    "BattleEnded": _battle_ended,
    "ActionUndone": _undone,
    "ActionRedone": _redone,
    "DiceRerolled": lambda e: (
        f"REROLL: roll {e.roll} ({e.roller}, {e.rule}) makes again roll {e.rerolls}, "
        f"taken back by override undo event {e.undo}"
    ),
    "TypedDiceAccepted": lambda e: (
        f"OVERRIDE: typed dice accepted in an auto-dice campaign from roll {e.roll} "
        f"(agreed by {', '.join(e.agreed_by)}; reason: {e.reason})"
    ),
    "DiceSourceSwitched": lambda e: f"dice source switched from {e.previous} to {e.mode} (reason: {e.reason})",
    "SeedRevealed": lambda e: (
        f"dice seed of epoch {e.epoch} revealed: {e.seed}; next commitment {e.next_commitment[:12]}..."
    ),
}


def summary(event: Any, scenario: Any = None, ruleset: Any = None) -> str:
    """The event in one line, as `log` and the reports print it. With the campaign's scenario,
    a side of a naval battle is named by the nations of its units (`SIDED`); with its ruleset,
    a unit by its type in that ruleset (`RULED`), else in the built-in ones."""
    kind = type(event).__name__
    if scenario is not None and kind in SIDED:
        return _sided(kind, event, {n.code: name for name, n in scenario.nations.items()}, scenario.turn_order)
    if ruleset is not None and kind in RULED:
        return _unit_hit(event, _air_of(ruleset))
    return summary_of_kind(kind)(event)


# The kinds whose summary says what a unit's type is (an aircraft shot down, a ship sunk: F3,
# NC5), read from the campaign's ruleset by the abbreviation the unit's ID holds.
RULED = frozenset({"UnitHit"})


# The kinds whose summary names a side of a battle, or the units the nation deciding for it
# chose: one nation decides for the side and is recorded (NC1, F5), but the side's units may be
# an ally's too; their nations are read from the units' IDs (the nation's code begins them,
# DE-SS1) with the scenario's codes. NavalHitsScored and HitsLost name no unit: they name the
# nation that places the side's hits (HA7), "for Britain to place", whoever else is on its side.
SIDED = frozenset(
    {
        "NavalBattleStarted",
        "OpeningFire",
        "HitsScored",
        "CasualtiesChosen",
        "HuntersChosen",
        "TargetsChosen",
        "ScreeningChosen",
    }
)


def _side(units: list[str], deciding: str, codes: dict[str, str], order: Sequence[str]) -> str:
    """'Britain and France': the nations of these units, the deciding nation first, then the
    others in turn order (as the words a battle records name a side, `side_nations`)."""
    return listed(side_nations([codes.get(u.split("-", 1)[0], deciding) for u in units], deciding, order))


def _sided(kind: str, e: Any, codes: dict[str, str], order: Sequence[str]) -> str:
    if kind == "NavalBattleStarted":
        attacking, defending = _side(e.attackers, e.nation, codes, order), _side(e.defenders, e.defender, codes, order)
        return (
            f"battle {e.battle}: naval battle in {e.zone}: {attacking} ({_ids(e.attackers)}) "
            f"attacks {defending} ({_ids(e.defenders)})"
        )
    if kind == "OpeningFire":
        # The submarines' nations, those whose fire was cancelled when none fire.
        return _opening_fire(e, _side(e.firing or e.cancelled, e.nation, codes, order))
    if kind == "HitsScored":
        # CV2: the hit falls on the side whose units are its candidates.
        side = _side(e.candidates, e.nation, codes, order)
        return f"battle {e.battle}: {plural(e.hits, 'hit')} on {side} (can fall on {_ids(e.candidates)})"
    # A choice the deciding nation made for its side (NC1, F5: the ruling stands): it keeps
    # the line's subject, and the ally whose units it chose for is named.
    if kind == "TargetsChosen":
        units = list(e.targets)  # the firers
    elif kind == "ScreeningChosen":
        units = list(e.screens.values())  # the escorts
    else:
        units = e.units
    whose = _side(units, e.nation, codes, order)
    if whose == e.nation:
        return summary_of_kind(kind)(e)
    how = "default" if e.default else "chosen"
    if kind == "CasualtiesChosen":
        how = "default, cheapest legal" if e.default else "chosen"
        return f"battle {e.battle}: {e.nation} places the side's hits on {_in_order(units)} of {whose} ({how})"
    if kind == "HuntersChosen":
        how = " (default: every eligible unit)" if e.default else ""
        return f"battle {e.battle}: {e.nation} searches with {_in_order(units)} of {whose}{how}"
    if kind == "TargetsChosen":
        return f"battle {e.battle}: {e.nation} targets for {whose}: {_pairs(e.targets)} ({how})"
    return f"battle {e.battle}: {e.nation} screens for {whose}: the shot of {_pairs(e.screens, 'falls on')} ({how})"


def summary_of_kind(kind: str) -> Callable[[Any], str]:
    """What `summary` does with every event of this kind, looked up once where many events of
    one class are summed up (the projector asks once per event class, not once per event)."""
    found = _SUMMARIES.get(kind)
    if found is not None:
        return found

    def of_procedure(event: Any) -> str:
        procedure = _procedure_summary(kind, event)
        return procedure if procedure is not None else kind

    return of_procedure


_ENDINGS = {
    "SM4": "the detected submarines are sunk, submerged or gone back",
    "SM5": "the interception is over",
    "AS2": "no submarine detected",
    "AS3": "nobody can attack",
    "AS5": "no detected submarine fights on",
    "NC1": "one side is gone, retreated or submerged, or nobody can hit",
}


def _verb(units: list[str], one: str, many: str) -> str:
    return f"{_ids(units)} {one if len(units) == 1 else many}"


def _pairs(mapping: dict[str, str], arrow: str = "->") -> str:
    return ", ".join(f"{k} {arrow} {mapping[k]}" for k in sorted(mapping, key=unit_order)) or "none"


def _procedure_summary(kind: str, e: Any) -> str | None:
    """Summaries of the interception, ASW and naval battle events (SM, AS, NC, HA)."""
    if kind == "InterceptionStarted":
        what = "retreating into" if e.retreat else "passing through"
        return (
            f"battle {e.battle}: interception in {e.zone}: {possessive(e.nation)} {_ids(e.submarines)} {what} "
            f"a hostile zone, on the way {' -> '.join(e.route)}; {e.defender} may search"
        )
    if kind == "AswCombatStarted":
        return f"battle {e.battle}: {e.nation} starts ASW combat in {e.zone} against {_ids(e.submarines)}"
    if kind == "NavalBattleStarted":
        return (
            f"battle {e.battle}: naval battle in {e.zone}: {e.nation} ({_ids(e.attackers)}) attacks "
            f"{e.defender} ({_ids(e.defenders)})"
        )
    if kind == "HuntersChosen":
        how = " (default: every eligible unit)" if e.default else ""
        return f"battle {e.battle}: {e.nation} searches with {_in_order(e.units) or 'nobody'}{how}"
    if kind == "SearchesResolved":
        found = _ids(e.found_by) or "nobody"
        searches, subs = plural(len(e.found_by), "search"), plural(e.found, "submarine")
        succeed = "succeeds" if len(e.found_by) == 1 else "succeed"
        return f"battle {e.battle}: {searches} {succeed} ({found}): {subs} found"
    if kind == "SubmarinesDetected":
        how = " (chosen)" if not e.default and e.rule == "SM3" else ""
        text = f"battle {e.battle}: detected {_ids(e.detected) or 'none'}{how}"
        return text + (f"; undetected {_ids(e.undetected)}" if e.undetected else "")
    if kind == "RoundStarted":
        return f"battle {e.battle}: round {e.round}"
    if kind == "OpeningFire":
        return _opening_fire(e, e.nation)
    if kind == "TargetsChosen":
        how = "default" if e.default else "chosen"
        return f"battle {e.battle}: {e.nation} targets {_pairs(e.targets)} ({how})"
    if kind == "ScreeningChosen":
        how = "default" if e.default else "chosen"
        if not e.screens:
            return f"battle {e.battle}: {e.nation} screens nothing ({how})"
        return f"battle {e.battle}: {e.nation} screens: the shot of {_pairs(e.screens, 'falls on')} ({how})"
    if kind == "TargetHit":
        if e.unit != e.target:
            return f"battle {e.battle}: {e.firer} hits {e.unit}, screening {e.target}"
        return f"battle {e.battle}: {e.firer} hits {e.unit}"
    if kind == "NavalHitsScored":
        # The event names the nation deciding for the side (HA7), not the side's units, which may
        # be an ally's too (NC1, F5): "on Britain" read as if France's ships in the battle were not
        # hit, and "on Germany's side" as if Germany had allies there when it fights alone.
        return f"battle {e.battle}: {plural(e.hits, 'hit')} from {e.firing_class} ships for {e.nation} to place"
    if kind == "SubmarinesSubmerged":
        how = " (default)" if e.default else ""
        return f"battle {e.battle}: {_verb(e.units, 'submerges and stays', 'submerge and stay')}{how}"
    if kind == "SubmarinesRetreated":
        return f"battle {e.battle}: {_verb(e.units, 'retreats', 'retreat')} to {e.zone}"
    if kind == "SubmarinesContinued":
        parts = []
        if e.continuing:
            parts.append(_verb(e.continuing, "goes on", "go on"))
        if e.stopping:
            parts.append(_verb(e.stopping, "stops here", "stop here"))
        how = " (default)" if e.default else ""
        return f"battle {e.battle}: {'; '.join(parts) or 'nobody moves on'}{how}"
    if kind == "FireWithheld":
        return f"battle {e.battle}: {_verb(e.units, 'has no target and rolls', 'have no target and roll')} no die"
    if kind == "HitsLost":
        # HA7: named, as NavalHitsScored is, by the nation placing the side's hits: "Britain
        # may place them on no unit there" read as a choice Britain made.
        are, them = ("is", "it") if e.hits == 1 else ("are", "them")
        lost = f"{plural(e.hits, 'hit')} for {e.nation} to place {are} lost"
        return f"battle {e.battle}: {lost}: no unit there may take {them}"
    if kind == "AttackerRetreated":
        return f"battle {e.battle}: {e.nation} retreats {_ids(e.units)} to {e.zone}"
    return None


def _opening_fire(e: Any, whose: str) -> str:
    if e.firing:
        text = f"battle {e.battle}: opening fire for {_ids(e.firing)} of {whose}"
    else:
        text = f"battle {e.battle}: no opening fire by the submarines of {whose}"
    if e.cancelled:
        # NC2: one escort cancels one submarine's opening fire; the event names every
        # escort present, so a reader is told how many of them it took.
        by = _ids(e.escorts)
        if len(e.escorts) > len(e.cancelled):
            by = f"{len(e.cancelled)} of the {plural(len(e.escorts), 'escort')} present ({by})"
        text += f"; cancelled for {_ids(e.cancelled)} by {by} (NC2: one escort for each submarine)"
    return text


def as_record(version: int, event: Any, scenario: Any = None, ruleset: Any = None) -> dict[str, Any]:
    """A JSON-ready dict of an event: position, kind, rule, summary (`summary`, with the
    campaign's scenario and ruleset if given) and its recorded fields."""
    data = {
        k: v
        for k, v in vars(event).items()
        if k not in ("originator_id", "originator_version", "timestamp", "originator_topic", UPCAST_ADDED)
    }
    if type(event).__name__ == "Created":
        data["scenario"] = data["scenario"].get("scenario", {}).get("name")
        data["ruleset"] = data["ruleset"].get("ruleset", {}).get("name")
    return {
        "seq": version,
        "kind": type(event).__name__,
        "timestamp": event.timestamp.isoformat(),
        "rule": rule_of(event),
        "summary": summary(event, scenario, ruleset),
        "data": data,
    }
