"""One-line statements of every rule ID, for `explain`, reports and error help. Where a rule
has numbers, they are taken from the campaign's ruleset, so a house ruleset reads true."""

from __future__ import annotations

from collections.abc import Callable

from domain.ruleset import Ruleset
from domain.text import type_name

RULES: dict[str, str] = {
    "D1": "Every roll is a D10 (faces 1..10) unless the ruleset says otherwise for that roll.",
    "D2": "'Rolls at N' succeeds on N or less; modifiers change N (clamped to 0..faces), never the die.",
    "D3": "Every die is recorded with who rolled it, why, the target number and the result.",
    "D4": "A campaign's dice source is fixed: auto refuses typed dice, manual refuses generated ones; it changes "
    "only by a recorded switch with a reason, and a typed roll in an auto campaign needs the RK3 override.",
    "F1": "Unit types: submarine, destroyer, cruiser, battleship, aircraft_carrier, transport; fighter, bomber, "
    "transport_plane.",
    "F2": "Escorts are destroyers and cruisers; capital ships are battleships and aircraft carriers.",
    "F3": "Battleships and carriers take 2 hits to sink (the first damages them); other units take 1.",
    "F4": "Combat values, movement and cost are ruleset data; units move along adjacent zones within movement.",
    "F5": "Nations belong to sides; an enemy is a nation of another side.",
    "F6": "NTR are markers in sea zones, each worth one resource when its owner collects.",
    "F7": "Air range counts every zone flown per turn; one search or battle per phase; on its own turn an air unit "
    "fights only where it flew in combat movement, or aboard a carrier of its side in the carrier's zone, and must "
    "end noncombat movement on its side's territory or a friendly carrier with room, or is lost.",
    "F8": "Before its entry round a nation is neutral: its turns are passed over, it buys, moves, fights and "
    "collects nothing, is nobody's enemy or ally, and no other nation's unit enters or stands on its land; an "
    "adjustment (AD1) may bring the entry forward.",
    "T1": "A round gives every nation one turn, in the scenario's turn order.",
    "T2": "A turn's phases: research, purchase, combat_movement, naval_combat, land_combat, noncombat_movement, "
    "placement, collect_resources.",
    "T3": "An action is legal only in its phase and for the nation whose turn it is (convoy attacks and "
    "interception searches excepted).",
    "CV1": "In a nation's collect_resources phase, each enemy with submarines in a zone holding its NTR may attack "
    "there, once per zone per phase; every such enemy declares or passes before the phase ends.",
    "CV2": "Merchant defence: the NTR owner rolls 2D10; a total of 20 destroys one taking-part submarine.",
    "CV3": "Escort search: the owner's and allies' ships in the zone and aircraft in range may search, each at its "
    "convoy search value.",
    "CV4": "Detecting units fight one round against all the attacker's submarines there; fire is selective, "
    "submarines hit only detecting ships, whose hits their owner places (HA7); dice go in the order pending "
    "lists: detecting units by ID, then submarines by ID.",
    "CV5": "Each surviving taking-part submarine rolls the convoy table (1-3: 0, 4-6: 1, 7-8: 2, 9-10: 3 NTR), "
    "capped at the NTR present.",
    "CV6": "Destroyed NTR are lost from the collection in progress until placed again in a placement phase.",
    "CV7": "A convoy battle lasts one round; if merchant defence leaves no taking-part submarine it ends there; "
    "commands for an ended battle are refused.",
    "SM1": "Submarines may move through hostile zones; other naval units are stopped by them.",
    "SM2": "For each hostile zone passed, the enemy's destroyers and cruisers there may roll interception searches.",
    "SM3": "Interception search: destroyer/cruiser 2, air unit (TE4) 4; each success detects one submarine.",
    "SM4": "Detected submarines fight at least one ASW round, then fight on, submerge or retreat; a submarine that "
    "submerged or retreated moves no more this turn.",
    "SM5": "Undetected submarines continue to their destination or stop and attack: their move ends and a naval "
    "battle is due there.",
    "NC1": "A naval battle is due where the moving nation moved naval or air units in with enemy surface ships "
    "(submarines included), or stopped submarines to attack (SM5); fleets merely sharing a zone may fight.",
    "NC2": "Opening fire: submarines fire first in round one, except one cancelled per enemy escort present.",
    "NC3": "After opening fire all remaining units fire together; casualties are removed after the round.",
    "NC4": "Submarines may submerge at the end of any round and leave the battle.",
    "NC5": "Damaged capital ships fight on; a second hit sinks them.",
    "AS1": "In its naval_combat phase a nation with escorts, aircraft it flew there in combat movement or aircraft "
    "aboard its carriers there may start ASW combat against enemy submarines.",
    "AS2": "Search: each escort rolls against each submarine at 2; bombers and transport planes at 3 "
    "(TE4: all air at 4).",
    "AS3": "Each escort (and under TE4 each air unit) picks a detected submarine before any attack die is rolled.",
    "AS4": "Attack at 2 (TE4: escorts 3, air 4); each detected submarine fires back once at its defense value.",
    "AS5": "Submarines may submerge at the end of any ASW round; otherwise another round starts.",
    "HA1": "Submarine hits are selective; a screening escort may take the hit instead, at most one shot per volley.",
    "HA2": "Submarine hits can never be assigned to aircraft.",
    "HA3": "Air unit hits are selective too, and screening escorts may take them instead.",
    "HA4": "In the main rounds, hits from naval units go to naval units before any air unit.",
    "HA5": "Hits from battleships and carriers go first to battleships and carriers, then escorts, then transports.",
    "HA6": "Hits from cruisers and destroyers go first to escorts, then capital ships, then transports.",
    "HA7": "Within HA1-HA6 the owner of the units hit chooses the losses, placing non-selective hits one at a time "
    "in an order of its choosing; the cheapest legal choice is the default.",
    "TE1": "One research roll per technology per turn in the research phase, 10 resources each; 9-10 advances a level.",
    "TE2": "A technology is acquired at level 3; scenarios may give a head start of 1 or 2.",
    "TE3": "Advanced Submarine: sub attack and defense +1, convoy table +1; searches and attacks against them "
    "one less.",
    "TE4": "Advanced ASW: escorts search and attack submarines at 3, air units at 4; convoy search +1.",
    "TE5": "Technology modifiers stack.",
    "RK1": "Every move, roll, choice, hit, casualty, placement and loss is one appended event.",
    "RK2": "An action that breaks a rule is refused with the rule ID and appends nothing.",
    "RK3": "Undo appends a compensating event; once dice were rolled or the other side answered, the actions "
    "before are undone only with an override, a reason and the agreement of the other side; a roll made again "
    "is listed as a reroll.",
    "RK4": "Redo re-records the most recently undone action with the dice it rolled, until something new is recorded.",
    "T4": "A phase ends only when nothing it requires is open: procedures, naval battles due, convoy attacks "
    "declared or passed, units placed, air units landed.",
    "PU1": "In its purchase phase a nation buys units at their cost from its resources (never below 0).",
    "PU2": "In its placement phase the nation places every unit bought this turn: ships next to its ports, air "
    "units in its ports or on a friendly carrier with room; a unit it could place nowhere is not bought; new "
    "units get the next unused ID.",
    "PU3": "Unit caps set by the scenario or the ruleset are checked at purchase.",
    "AD1": "What the tracker does not model enters the record only as an explicit adjustment with a reason.",
    "D5": "No player can know an auto die before it is recorded: the seed is kept where players cannot read it, "
    "and revealed for checking (`dice reveal`) at the latest when the group asks.",
    "NC6": "In a naval battle only destroyers and cruisers (and air units with Advanced ASW) hit submarines, as "
    "their last target tier, and enemy submarines once the target's side has no other naval unit left in the "
    "battle; a unit with no legal target rolls no die.",
    "PL1": "Every event records who recorded it and the nation acted for.",
    "PL2": "A player acts only for the nations assigned to them; the referee may act for any.",
}


def _values(rs: Ruleset, value: Callable[[str], int]) -> str:
    return ", ".join(f"{type_name(name)} {value(name)}" for name in rs.units if value(name) > 0) or "none"


def _numbered(rs: Ruleset) -> dict[str, str]:
    """The statements whose numbers come from the ruleset."""
    units = rs.units
    table = ", ".join(
        f"{r.low}-{r.high}: {r.destroyed}" if r.low != r.high else f"{r.low}: {r.destroyed}" for r in rs.convoy_table
    )
    two_hit = [name for name, ut in units.items() if ut.hits > 1]
    return {
        "D1": f"Every roll is a D{rs.default_faces} (faces 1..{rs.default_faces}) unless the ruleset says otherwise "
        "for that roll.",
        "F3": (
            f"{', '.join(f'{type_name(n)} ({units[n].hits} hits)' for n in two_hit)} take more than one hit to sink "
            "(the first damages them); other units take 1."
            if two_hit
            else "Every unit sinks at its first hit."
        ),
        "CV2": f"Merchant defence: the NTR owner rolls {rs.merchant_defence_dice}D{rs.faces_for('merchant_defence')}; "
        f"a total of {rs.merchant_defence_sinks_on_total} or more destroys one taking-part submarine.",
        "CV3": "Escort search: the owner's and allies' ships in the zone and aircraft in range may search, each at its "
        f"convoy search value ({_values(rs, lambda n: units[n].search.get('convoy', 0))}).",
        "CV5": f"Each surviving taking-part submarine rolls the convoy table ({table} NTR), capped at the NTR present.",
        "SM3": "Interception search at "
        f"{_values(rs, lambda n: units[n].search.get('interception', 0))} (technology may change these); "
        "each success detects one submarine.",
        "NC2": "Opening fire: submarines fire first in round one, except "
        f"{rs.opening_fire_cancelled_per_escort} cancelled per enemy escort present.",
        "AS2": f"Search: each unit taking part rolls once against each submarine at "
        f"{_values(rs, lambda n: units[n].search.get('asw', 0))} (technology may change these).",
        "AS4": f"Attack at {_values(rs, lambda n: units[n].asw_attack)} (technology may change these); each detected "
        "submarine fires back once at its defense value.",
        "TE1": f"One research roll per technology per turn in the research phase, {rs.research_cost} resources each; "
        f"a roll of {rs.research_success_min} or more advances a level.",
        "TE2": f"A technology is acquired at level {rs.research_levels}; scenarios may give a head start of up to "
        f"{rs.max_head_start}.",
    }


def statement(rule: str, ruleset: Ruleset | None = None) -> str:
    """The rule's statement, with the numbers of `ruleset` where it has any."""
    if ruleset is not None:
        numbered = _numbered(ruleset).get(rule)
        if numbered is not None:
            return numbered
    return RULES.get(rule, "")
