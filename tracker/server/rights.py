"""Who may take which action through the server (PL2), told from the campaign before an action
runs and from the events it recorded: the referee's own actions, the nations that could take
an action now, who rolls a volley several nations fire or types another nation's dice, and the
refusal of an override the other side has not approved yet (RK3)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from domain.errors import RuleViolation
from domain.rules.record import action_actor
from domain.text import possessive
from tracker.service import actions
from tracker.service.describe import naming_campaign
from tracker.service.players import Forbidden, Player

if TYPE_CHECKING:
    from domain.campaign import Campaign

# What only the referee records (PL2): adjustments (AD1) and the dice source and seeds (D4, D5).
REFEREE_ONLY = {"Adjusted": "adjustments (AD1)", "DiceSourceSwitched": "dice source switches (D4)",
                "SeedRevealed": "dice seed reveals (D5)"}  # fmt: skip

# The actions that record them, refused to any other player before they run: a reveal stores
# the next epoch's seed in the key store, and a switch to auto dice may move the seed there,
# while the action runs, and a refused action changes nothing.
REFEREE_ACTIONS = {"adjust": REFEREE_ONLY["Adjusted"], "dice switch": REFEREE_ONLY["DiceSourceSwitched"],
                   "dice reveal": REFEREE_ONLY["SeedRevealed"]}  # fmt: skip

# The actions besides a battle's steps that another nation than the phasing one takes (T3, CV1).
ENEMY_ACTIONS = frozenset({"convoy declare", "convoy pass"})

# The actions whose nation is whose actions they take back (or re-record), not who may act now:
# a rule's refusal of them stays the rule's.
TAKING_BACK = frozenset({"undo", "redo"})


class NeedsApproval(RuleViolation):
    """An override (RK3) that the other side or the referee has not approved yet: recorded as
    a request, nothing else recorded (HTTP 409)."""

    def __init__(self, request: int, agreed_by: Sequence[str], campaign: str, server: str | None = None) -> None:
        who = ", ".join(agreed_by) or "the other side"
        # To paste as it stands: the server as the asker reached it, and the campaign by name.
        command = naming_campaign(f"tracker approve {request}", campaign)
        if server:
            command = command.replace("tracker ", f"tracker --server {shlex.quote(server)} ", 1)
        super().__init__(
            "RK3",
            f"an override needs the agreement of {who} given through the server: override request {request} "
            f"is recorded; a player of {who} (or the referee) approves it with `{command}`",
        )
        self.request = request


def out_of_turn(
    player: Player, campaign: Campaign, owed: dict[str, tuple[str, ...]], asking: str | None
) -> Forbidden | None:
    """PL2: the refusal a player gets instead of a rule's when they may act for none of the
    nations that could take the action `asking` now: the phasing nation (T3), and for a
    battle's step or a convoy declaration the nations a battle (`owed`: each battle's waiting
    nations) or else the phase (T4) waits for. None when they may, for the referee, and for an
    undo or redo (whose nation is whose actions it takes back)."""
    phasing = campaign.nation
    if player.referee or asking is None or asking in TAKING_BACK or player.may_act_for(phasing):
        return None
    waited: list[str] = []
    if asking in ENEMY_ACTIONS and any(player.may_act_for(n) for n in _enemies(campaign, phasing)):
        # CV1: a convoy attack is an enemy's to declare or pass in this turn, waited for or
        # not (passed already, or not its phase): the convoy rule says why not now.
        return None
    if asking in ENEMY_ACTIONS or any(f.name == "battle" for f in actions.get(asking).fields):
        waited = [n for nations in owed.values() for n in nations]
        if not owed:
            # No battle: what the phase still waits for (an enemy that may declare a convoy
            # attack), asked only of a player out of turn.
            waited = [n for item in campaign.open_items() for n in item["waiting"]]
        if any(player.may_act_for(n) for n in waited):
            return None
    could = list(dict.fromkeys([phasing, *waited]))
    others = [n for n in could if n != phasing]
    waits = f" and the game waits for {', '.join(others)}" if others else ""
    return Forbidden(
        f"{player.name} plays {player.describe()}, not {' or '.join(could)}; it is {possessive(phasing)} turn{waits}"
    )


def _enemies(campaign: Campaign, phasing: str) -> list[str]:
    """The nations at war with the phasing nation's side now (F8: a neutral is no one's enemy)."""
    scenario = campaign.scenario
    side = scenario.side_of(phasing)
    return [n for n in scenario.turn_order if scenario.side_of(n) != side and campaign.at_war(n)]


def volley_roller(
    player: Player, campaign: Campaign, events: Sequence[Any], owed: dict[str, tuple[str, ...]]
) -> str | None:
    """NC3, PL2: a volley several nations fire together is waited on from each of them (as
    `pending` says), so the player of any of them may ask for it: the first of the player's
    nations that the battle was waiting on and whose side rolls in it, or None when the action
    is not such a volley. An ally's units fire in it under the nation the battle waits for on
    their side (CV3, CV4: "France rolls FR-BM1; ... Britain records them"). Typed dice of
    an enemy still need a roll id (`check_typed_dice`)."""
    rolls = [e for e in events if type(e).__name__ == "DiceRolled"]
    if not rolls or any(e.battle is None or e.battle != rolls[0].battle for e in rolls):
        return None
    waiting = owed.get(str(rolls[0].battle), ())
    side_of = campaign.scenario.side_of
    rolling = {side_of(e.roller) for e in rolls}
    if len(waiting) < 2 or not rolling <= {side_of(n) for n in waiting}:
        return None
    return next((n for n in waiting if side_of(n) in rolling and player.may_act_for(n)), None)


def acting_nation(
    player: Player,
    campaign: Campaign,
    events: Sequence[Any],
    phasing: str,
    battles: dict[str, tuple[str, str, str]],
    owed: dict[str, tuple[str, ...]],
) -> str:
    """PL2: the nation an action's `events` are for: as `action_actor` tells it, the `player`'s
    nation in a volley several nations fire together (`volley_roller`), or the nation whose
    decision after a round of a naval battle was to fight on (`fought_on`)."""
    nation = fought_on(events, owed) or action_actor(events, phasing, battles)
    return nation if player.may_act_for(nation) else volley_roller(player, campaign, events, owed) or nation


def fought_on(events: Sequence[Any], owed: dict[str, tuple[str, ...]]) -> str | None:
    """NC4: the nation whose decision after a round of a naval battle, the first thing an action
    did, was to fight on; `owed` holds each battle's waiting nations before the action. Fighting
    on records no event of its own (RK1 records a submerge or a retreat): the action's first
    event is what follows it, the decide step waiting for fewer nations, or the next round, and
    names another nation (the next round's forced choices) or none."""
    first = events[0]
    kind = type(first).__name__
    if kind == "BattleAdvanced" and first.step == "decide" and first.rule == "NC4":
        still = tuple(first.waiting)
    elif kind == "RoundStarted" and first.rule == "NC3":
        # NC3: another round, which only a decide step's last decision starts as its first event.
        still = ()
    else:
        return None
    decided = [n for n in owed.get(str(first.battle), ()) if n not in still]
    return decided[0] if len(decided) == 1 else None


def check_typed_dice(
    player: Player, campaign: Campaign, events: Sequence[Any], owed: dict[str, tuple[str, ...]]
) -> None:
    """PL2, D3: a player types the dice of the nations they play, and of an ally whose units fire
    under one of them in a battle step waiting for it and not for the ally (CV3, CV4: "France
    rolls FR-BM1; ... Britain records them"): that nation's player would type its own units'
    dice as freely. Dice of another nation (a volley both sides fire, rolled at once) need the
    dice server's roll id (`--ref`), which that nation's player can check against the roll; the
    referee may type any. Redone dice (RK4) were typed when first recorded."""
    if player.referee or any(type(e).__name__ == "ActionRedone" for e in events):
        return
    for e in events:
        if type(e).__name__ != "DiceRolled" or e.source != "manual" or e.reference:
            continue
        if not player.may_act_for(e.roller) and not _fires_under(player, campaign, e, owed):
            raise Forbidden(
                f"{player.name} plays {player.describe()}, not {e.roller}: {possessive(e.roller)} dice need the dice "
                f"server's roll id (--ref) so its player can check them (D3), or the referee enters them"
            )


def _fires_under(player: Player, campaign: Campaign, die: Any, owed: dict[str, tuple[str, ...]]) -> bool:
    """CV3, CV4, NC3: whether the die `die` is an ally's, rolled in a battle step that waited for
    a nation of the player's on the ally's side and not for the ally itself."""
    waiting = owed.get(str(die.battle), ()) if die.battle is not None else ()
    if die.roller in waiting:
        return False
    side_of = campaign.scenario.side_of
    return any(player.may_act_for(n) and side_of(n) == side_of(die.roller) for n in waiting)
