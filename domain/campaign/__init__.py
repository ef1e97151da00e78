"""The Campaign aggregate: the whole board as one consistency boundary, and its events.

Commands check legality with the rule functions, then record events; each event carries
the hash of the one before it (tamper evidence) and its own hash. Dice are rolled in the
command and recorded as data, so replaying the log never rolls again.

The aggregate is assembled here from one module per part; a rule is found by its ID in the
docstring of the function that applies it:

- `events`, `battle_events`: the events and how each folds into the state (stored as
  `domain.campaign:Campaign.<Name>`, whatever module defines them);
- `state`: the starting state, what undo restores, what older snapshots lack;
- `base`: recording an event, reading the board and the ruleset, finding a procedure;
- `record`: one action at a time, all or nothing (RK2); undo (RK3) and redo (RK4);
- `rolls`: dice (D1-D4); `gates`: the turn sequence and its gates (T1, T2, T4);
- `economy`: moves, NTR, purchases, placement, adjustments, research;
- `convoy` (CV), `interception` (SM), `asw` (AS), `naval` (NC): the four procedures;
- `referee`: the procedures that run on their pure transitions (`domain.procedures`): a step's
  input goes to the procedure, and the facts it returns are recorded as events;
- `volley`: targets, screening, fire and casualties shared by all of them (HA, NC2-NC6);
- `auto`: playing on with the defaults; `waiting`: what the game waits for, as facts (the
  words are the tracker's, `tracker.describe`), and why a procedure ended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.campaign import battle_events, events
from domain.campaign.asw import AswCombat
from domain.campaign.auto import AutoPlay
from domain.campaign.base import CampaignBase
from domain.campaign.convoy import ConvoyBattles
from domain.campaign.economy import Economy
from domain.campaign.gates import Gates
from domain.campaign.interception import Interceptions
from domain.campaign.naval import NavalBattles
from domain.campaign.record import Undoing, one_action
from domain.campaign.rolls import Rolling
from domain.campaign.volley import Volleys
from domain.campaign.waiting import Waiting
from domain.chain import GENESIS, event_content, event_hash
from domain.dice import SCHEME
from domain.errors import InputError

__all__ = ["Campaign", "one_action"]


class Campaign(
    Undoing,
    Rolling,
    Gates,
    Economy,
    ConvoyBattles,
    Interceptions,
    AswCombat,
    NavalBattles,
    Volleys,
    AutoPlay,
    Waiting,
    CampaignBase,
    Aggregate,
):
    """One campaign: scenario, ruleset, turn position, units, NTR, resources, tech, dice."""

    # The events, reachable (and stored) as Campaign.<Name>, as they were when they were
    # defined in this class's body: every recorded topic names them so.
    if TYPE_CHECKING:
        # Aggregate has classes of these names: say these are types, not variables.
        Event: TypeAlias = events.Event
        Created: TypeAlias = events.Created
    else:
        Event = events.Event
        Created = events.Created
    PhaseAdvanced = events.PhaseAdvanced
    TurnPassedOver = events.TurnPassedOver
    WarEntered = events.WarEntered
    UnitsMoved = events.UnitsMoved
    NtrPlaced = events.NtrPlaced
    UnitsPurchased = events.UnitsPurchased
    UnitsPlaced = events.UnitsPlaced
    Adjusted = events.Adjusted
    ConvoyPassed = events.ConvoyPassed
    AircraftLost = events.AircraftLost
    PurchasesForfeited = events.PurchasesForfeited
    DiceRolled = events.DiceRolled
    ResearchPaid = events.ResearchPaid
    TechnologyAdvanced = events.TechnologyAdvanced
    ResourcesCollected = events.ResourcesCollected
    ActionUndone = events.ActionUndone
    ActionRedone = events.ActionRedone
    DiceRerolled = events.DiceRerolled
    TypedDiceAccepted = events.TypedDiceAccepted
    DiceSourceSwitched = events.DiceSourceSwitched
    SeedRevealed = events.SeedRevealed
    ActionAsked = events.ActionAsked
    ConvoyAttackDeclared = battle_events.ConvoyAttackDeclared
    BattleAdvanced = battle_events.BattleAdvanced
    SearchersChosen = battle_events.SearchersChosen
    DetectionsRecorded = battle_events.DetectionsRecorded
    HitsScored = battle_events.HitsScored
    CasualtiesChosen = battle_events.CasualtiesChosen
    UnitHit = battle_events.UnitHit
    NtrDestroyed = battle_events.NtrDestroyed
    BattleEnded = battle_events.BattleEnded
    InterceptionStarted = battle_events.InterceptionStarted
    AswCombatStarted = battle_events.AswCombatStarted
    NavalBattleStarted = battle_events.NavalBattleStarted
    HuntersChosen = battle_events.HuntersChosen
    SearchesResolved = battle_events.SearchesResolved
    SubmarinesDetected = battle_events.SubmarinesDetected
    RoundStarted = battle_events.RoundStarted
    OpeningFire = battle_events.OpeningFire
    TargetsChosen = battle_events.TargetsChosen
    ScreeningChosen = battle_events.ScreeningChosen
    TargetHit = battle_events.TargetHit
    NavalHitsScored = battle_events.NavalHitsScored
    FireWithheld = battle_events.FireWithheld
    HitsLost = battle_events.HitsLost
    SubmarinesSubmerged = battle_events.SubmarinesSubmerged
    SubmarinesRetreated = battle_events.SubmarinesRetreated
    SubmarinesContinued = battle_events.SubmarinesContinued
    AttackerRetreated = battle_events.AttackerRetreated

    @classmethod
    def create(
        cls,
        campaign_id: UUID,
        name: str,
        scenario: dict[str, Any],
        ruleset: dict[str, Any],
        dice_mode: str,
        seed_commitment: str,
        created_by: str | None = None,
    ) -> Campaign:
        if dice_mode not in ("auto", "manual"):
            raise InputError(f"dice mode must be auto or manual, got {dice_mode!r}")
        fields = {
            "name": name,
            "scenario": scenario,
            "ruleset": ruleset,
            "dice_mode": dice_mode,
            "dice_scheme": SCHEME,
            "seed_commitment": seed_commitment,
            "created_by": created_by,
            "action": cls.INITIAL_VERSION,
        }
        timestamp = cls.Created.create_timestamp()
        digest = event_hash(GENESIS, "Created", cls.INITIAL_VERSION, timestamp, event_content(fields))
        campaign = cls._create(
            cls.Created, id=campaign_id, timestamp=timestamp, prev_hash=GENESIS, hash=digest, **fields
        )
        campaign.open_first_turn()
        return campaign
