"""The rules amended after campaigns were recorded under them, and the ruleset key that says
which reading a campaign is refereed by: a new campaign plays the rule as it stands, a
campaign recorded before the key keeps the reading it was refereed by, so its log verifies
(`domain.ruleset.load_ruleset`, `ruleset_from_recorded`)."""

from __future__ import annotations

from typing import Any

# Rules amended after campaigns were recorded under them. Each key of a ruleset file, by name:
# its table, the value it takes when a ruleset file leaves it out (the rule as it stands), and
# the value it takes when a campaign's recorded ruleset leaves it out (recorded before the key
# existed, so refereed as then; see `load_ruleset` and `ruleset_from_recorded`).
AMENDED: dict[str, tuple[str, Any, Any]] = {
    # HA7: "owner-order" (as amended: hits placed one at a time in the owner's order, the
    # default the cheapest over every order) or "class-order" (as first written: each firing
    # class's hits in the ruleset's placing order, the default the cheapest under that order).
    "placement": ("hit_allocation", "owner-order", "class-order"),
    # CV4 ("everywhere"): the order searchers named for a search roll their dice in: "pending"
    # (as amended), the order `pending` lists them, by ID; "named" (as first refereed).
    "search_order": ("dice", "pending", "named"),
    # NC1: submarines moved in combat_movement among enemy surface ships make a naval battle
    # due there, as any naval unit does; recorded before, they lay there without one.
    "submarines_arriving_fight": ("naval_combat", True, False),
    # NC1, AS1: a zone holding only enemy submarines calls for ASW combat, not a naval battle,
    # unless the nation's own submarines stopped there to attack (SM5, NC6).
    "submarines_alone_call_for_asw": ("naval_combat", True, False),
    # F7, SM2: an air unit at sea that has not flown this turn takes part in a search or battle
    # only aboard a carrier of its side with room; recorded before, one whose carrier was sunk
    # fought and searched there.
    "aircraft_need_a_carrier": ("naval_combat", True, False),
    # F7, PU2: air units land on, are placed on and sit aboard any carrier of their side with
    # room ("a friendly carrier"); recorded before, the nation's own carriers only.
    "friendly_carriers": ("naval_combat", True, False),
    # SM1: a ship (not a submarine) that entered a hostile zone this turn stays there; recorded
    # before, a second move command took it on.
    "ships_stopped_stay": ("naval_combat", True, False),
    # PU1, PU2: a unit is bought only if the nation has somewhere to place it now (a unit
    # bought with nowhere to go held placement open for good, T4); recorded before, any was.
    "purchases_need_a_place": ("naval_combat", True, False),
    # F8, AD1, F7: no unit but a neutral's own stands on its territory: an adjustment neither
    # adds one there nor hands a neutral a territory holding one, and an air unit there must
    # leave by the end of noncombat_movement; recorded before, only an enemy's territory counted.
    "neutral_land_closed": ("naval_combat", True, False),
    # F7, CV3: an air unit of a nation other than the phasing one joins a convoy battle with its
    # whole range (it flies only in its own nation's turn); recorded before, what it flew in
    # its own nation's last turn was taken off the range it had left.
    "others_fly_afresh": ("naval_combat", True, False),
    # AD1, F7: an adjustment's owner changes come first: an air unit it adds on a territory is
    # checked against the territory's owner after the adjustment; recorded before, the owner
    # before it.
    "owners_change_first": ("naval_combat", True, False),
    # HA7: a hit with no legal target left is lost, cited as HA7 (NC6 where the side hit holds
    # only submarines); recorded before, it cited NC3 (the round's casualty removal).
    "hits_lost_by_ha7": ("naval_combat", True, False),
    # NC1, NC4: a naval battle ends once a side has no unit left in it, though a nation still
    # waits to decide after the round (a side's last submarine submerged, the other not yet
    # decided); recorded before, that nation still decided, and an attacker's retreat was taken.
    "gone_side_ends_battle": ("naval_combat", True, False),
    # RK3: every override undo needs a nation of the other side to agree, the undone actions
    # locked or not; recorded before, only locked actions asked it.
    "every_override_agreed": ("record", True, False),
    # RK3: an undo is no answer of the other side (it answers no choice, search, target or
    # screen); recorded before, an undo recorded after `next` opened the other side's turn
    # locked the action before it as answered.
    "undos_answer_nothing": ("record", True, False),
    # RK3, D5: a seed reveal a league server records by itself (at a round's end, or on its
    # first serve of a campaign) is nobody's action: it answers nothing, and a plain `undo`
    # passes over it to the last player's action; recorded before, it was the phasing
    # nation's, locking the action before it as answered, and `undo` took back the reveal
    # alone (which stays in effect).
    "reveals_answer_nothing": ("record", True, False),
    # F8: the record tells a neutral's entry into the war: a turn passed over names the round
    # its nation enters (TurnPassedOver's `enters`), and the start of that round records the
    # entry (WarEntered); recorded before, a turn passed over said only "until its entry" and
    # no event marked the entry.
    "entries_recorded": ("record", True, False),
    # PL2, RK3, F8: a turn passed over and an entry into the war name a nation that did not
    # act: the `next` that records them is the phasing nation's; recorded before, a `next`
    # whose first event naming a nation was one of them (a turn's end in a ruleset without
    # collect_resources) was that neutral's, answering the actions before it for its side.
    "neutrals_do_not_act": ("record", True, False),
    # NC1, F5: the words a battle records name a side by the nations of its units: a die fires
    # at "Britain's and France's units" (at "United States' units"), and "Britain and France
    # have no unit left in the battle"; recorded before, by the nation deciding for the side
    # alone ("Britain's units", "United States's units", "Britain has no unit left").
    "sides_named_whole": ("record", True, False),
    # RK3, NC4: a decision after a battle's round to go on (fight on, submerge nothing), which
    # records no event of its own, is the deciding nation's action; recorded before, it was the
    # nation the battle's next events named (the next round's first chooser, or the phasing
    # nation), so an undo over it asked no override of the decider's side.
    "deciders_decide": ("record", True, False),
    # D3, TE1, NC1: the words the referee records read as a person reads them: a die is for
    # "GB-CV1 (aircraft carrier) fires at ..." and a "research roll for Advanced ASW", and a
    # naval battle in which both sides lost their last units at once ends as "neither side has a
    # unit left in the battle"; recorded before, by the IDs ("(aircraft_carrier)", "research
    # roll for advanced_asw"), and the attacking side alone ("Germany has no unit left").
    "purposes_in_words": ("record", True, False),
    # SM5: an interception whose detected submarines are free to go on (their hunters sunk)
    # ends as "the free submarines went on or stayed"; recorded before, as "the submarines not
    # detected went on or stayed", as if none had been detected.
    "detected_survivors_named": ("record", True, False),
}
AS_IT_STANDS: dict[str, Any] = {key: now for key, (_, now, _) in AMENDED.items()}
AS_RECORDED_BEFORE: dict[str, Any] = {key: before for key, (_, _, before) in AMENDED.items()}
