"""The actions a player can ask for, by name, with typed inputs: the one way anything is recorded.

Each action takes the values the user typed (JSON-able strings, numbers, flags and lists,
before any name is resolved), resolves them against the campaign and calls the aggregate.
The command line, a JSON API and `verify` (which runs every recorded action again) all go
through this registry, so what was asked is recorded the same way everywhere and can be
re-refereed. A bad input is an InputError (exit 2) naming the action and the input.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from domain.errors import InputError, RuleViolation
from domain.rules.economy import Adjustment
from tracker.service import undo_log
from tracker.service.inputs import ACTIONS as ACTIONS
from tracker.service.inputs import Action as Action
from tracker.service.inputs import Field, action
from tracker.service.inputs import get as get
from tracker.service.names import Names, fold, split_units

if TYPE_CHECKING:
    from domain.campaign import Campaign
    from domain.dice import DiceSource
    from tracker.service.undo_log import Log


def _n(c: Campaign) -> Names:
    return Names(c)


def _acting(c: Campaign, nation: str | None) -> str:
    return Names(c).nation(nation) if nation else c.nation


def _waiting(c: Campaign, battle: int, nation: str | None) -> str:
    """The nation named, or the only one the battle waits for."""
    if nation is not None:
        return Names(c).nation(nation)
    c.require_not_ended(battle)  # CV7: an ended battle is refused, not asked about
    b = c.battles.get(str(battle))
    if b is None:
        active = ", ".join(f"{x['id']} ({x['kind']})" for x in c.battles.values()) or "none"
        raise InputError(f"no battle {battle} in progress (active: {active})")
    waiting = list(b["waiting"])
    if len(waiting) > 1 and any(p.get("battle") == battle and p.get("dice") for p in c.pending()):
        # Both sides roll: no choice is open, and the referee says what the battle waits for.
        return str(waiting[0])
    if len(waiting) != 1:
        raise InputError(f"say which nation chooses with --nation (waiting for: {', '.join(waiting) or 'nobody'})")
    return str(waiting[0])


def _pairs(c: Campaign, text: str | None, option: str) -> dict[str, str] | None:
    """'A=B,C=D' (or 'A=B C=D') as {A: B, C: D}, unit IDs in any case; '' as {}."""
    if text is None:
        return None
    n = _n(c)
    pairs: dict[str, str] = {}
    for part in split_units(text) or []:
        left, sep, right = part.partition("=")
        if not sep or not left.strip() or not right.strip():
            raise InputError(f"{option} takes UNIT=UNIT pairs separated by commas, got {part!r}")
        firer = n.unit(left)
        if firer in pairs:
            raise InputError(f"{firer} is named twice in {option}")
        pairs[firer] = n.unit(right)
    return pairs


NATION = Field("nation", "text", help="Acting nation (default: the nation whose turn it is).")
CHOOSER = Field("nation", "text", help="The nation choosing (default: the only one the battle waits for).")
BATTLE = Field("battle", "int", required=True, low=1)
# PL2: the nations whose steps an auto or step action takes (None: every nation's, as one person
# recording for all, or the referee); a league server gives the asking player's own.
DECIDING = Field(
    "deciding",
    "texts",
    help="The nations whose steps it takes (default: all; through a server: the asker's).",
    added=True,
)


def _deciding(c: Campaign, i: dict[str, Any]) -> list[str] | None:
    """The nations of the `deciding` input, by their names in the scenario (None: all)."""
    return None if i.get("deciding") is None else [_n(c).nation(x) for x in i["deciding"]]


def _units(name: str, help_text: str = "") -> Field:
    return Field(name, "units", help=help_text)


# ----- turn sequence, movement, economy -----


@action("next", Field("confirm_losses", "flag", default=False))
def _next(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Close the current phase and open the next (T2, T4)."""
    c.advance(i["confirm_losses"])


@action("move", Field("units", "units", required=True), Field("path", "zones", required=True), NATION)
def _move(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Move units together along a path of adjacent zones (F4, SM1)."""
    n = _n(c)
    return c.move(_acting(c, i["nation"]), n.units(i["units"]) or [], n.zones(i["path"]) or [])


@action("ntr place", Field("zone", "text", required=True), Field("count", "int", default=1, low=1), NATION)
def _ntr_place(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Place NTR in a sea zone (CV6)."""
    c.place_ntr(_acting(c, i["nation"]), _n(c).zone(i["zone"]), i["count"])


@action("research", Field("technology", "text", required=True), NATION, rolls=True)
def _research(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """A research roll (TE1)."""
    return c.research(_acting(c, i["nation"]), _n(c).technology(i["technology"]), d)


@action("buy", Field("unit_type", "text", required=True), Field("count", "int", default=1, low=1, high=1000), NATION)
def _buy(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Buy units (PU1, PU3)."""
    return c.buy(_acting(c, i["nation"]), _n(c).unit_type(i["unit_type"]), i["count"])


@action(
    "place",
    Field("unit_type", "text", required=True),
    Field("zone", "text", required=True),
    Field("count", "int", default=1, low=1, high=1000),
    NATION,
)
def _place(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Place units bought this turn (PU2)."""
    n = _n(c)
    return c.place(_acting(c, i["nation"]), n.unit_type(i["unit_type"]), n.zone(i["zone"]), i["count"])


@action(
    "adjust",
    Field("reason", "text", required=True),
    Field("add", "texts", default=[]),
    Field("remove", "text"),
    Field("resources", "texts", default=[]),
    Field("ntr", "texts", default=[]),
    Field("owner", "texts", default=[]),
    Field("tech", "texts", default=[]),
    Field("enter", "texts", default=[], added=True),
)
def _adjust(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """An adjustment for what the tracker does not model (AD1); entries brought forward (F8)."""
    a = build_adjustment(
        tuple(i["add"]), i["remove"], tuple(i["resources"]), tuple(i["ntr"]), tuple(i["owner"]), tuple(i["tech"])
    )
    n = _n(c)
    c.adjust(
        Adjustment(
            add=tuple((n.nation(x), n.unit_type(t), n.zone(z), k) for x, t, z, k in a.add),
            remove=tuple(n.unit(u) for u in a.remove),
            resources={n.nation(x): k for x, k in a.resources.items()},
            ntr=tuple((n.nation(x), n.zone(z), k) for x, z, k in a.ntr),
            owners={n.zone(t): n.nation(x) for t, x in a.owners.items()},
            tech=tuple((n.nation(x), n.technology(t), k) for x, t, k in a.tech),
            enter=tuple(n.nation(x) for x in i.get("enter", [])),
        ),
        i["reason"],
    )


def _parse(option: str, text: str, parts: int, form: str) -> list[str]:
    """'A:B=C' style values: split on ':' and one '=' into `parts` pieces."""
    left, sep, right = text.rpartition("=")
    pieces = [p.strip() for p in left.split(":")] + [right.strip()] if sep else []
    if len(pieces) != parts or not all(pieces):
        raise InputError(f"{option} takes {form}, got {text!r}")
    return pieces


def _number(option: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{option}: {text!r} is not a whole number") from None
    if abs(value) > 1_000_000_000:
        raise InputError(f"{option}: {text} is out of range")
    return value


def build_adjustment(
    add: tuple[str, ...],
    remove: str | None,
    resources: tuple[str, ...],
    ntr: tuple[str, ...],
    owner: tuple[str, ...],
    tech: tuple[str, ...],
) -> Adjustment:
    """The adjustment the options describe (AD1), each value checked for its form."""
    added = []
    for text in add:
        pieces = [p.strip() for p in text.split(":")]
        if len(pieces) not in (3, 4) or not all(pieces):
            raise InputError(f"--add takes NATION:TYPE:ZONE[:COUNT], got {text!r}")
        count = _number("--add", pieces[3]) if len(pieces) == 4 else 1
        added.append((pieces[0], pieces[1], pieces[2], count))
    changes: dict[str, int] = {}
    for text in resources:
        nation, change = _parse("--resources", text, 2, "NATION=CHANGE (e.g. Germany=-5)")
        changes[nation] = changes.get(nation, 0) + _number("--resources", change)
    ntr_changes = []
    for text in ntr:
        nation, zone, change = _parse("--ntr", text, 3, "NATION:ZONE=CHANGE (e.g. 'Britain:Irish Sea=+1')")
        ntr_changes.append((nation, zone, _number("--ntr", change)))
    owners: dict[str, str] = {}
    for text in owner:
        territory, nation = _parse("--owner", text, 2, "TERRITORY=NATION")
        if any(fold(t) == fold(territory) for t in owners):
            raise InputError(f"--owner names {territory.strip()!r} twice: give each territory one new owner")
        owners[territory] = nation
    levels = []
    for text in tech:
        nation, technology, level = _parse("--tech", text, 3, "NATION:TECHNOLOGY=LEVEL")
        levels.append((nation, technology, _number("--tech", level)))
    return Adjustment(
        add=tuple(added),
        remove=tuple(p.strip() for p in (remove or "").split(",") if p.strip()),
        resources=changes,
        ntr=tuple(ntr_changes),
        owners=owners,
        tech=tuple(levels),
    )


# ----- convoy battles (CV1-CV7) -----


@action(
    "convoy declare",
    Field("by", "text", required=True),
    Field("zone", "text", required=True),
    _units("subs"),
    Field("auto", "flag", default=False),
    DECIDING,
    rolls=True,
)
def _convoy_declare(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> int:
    """Declare a convoy attack (CV1); with auto, resolve it with default choices."""
    n = _n(c)
    number = c.declare_convoy_attack(n.nation(i["by"]), n.zone(i["zone"]), n.units(i["subs"]))
    if i["auto"]:
        c.convoy_auto(number, d, _deciding(c, i), declared=True)
    return number


@action("convoy pass", Field("by", "text", required=True))
def _convoy_pass(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """An enemy declares no (more) convoy attacks (CV1, T4)."""
    return c.convoy_pass(_n(c).nation(i["by"]))


@action("convoy roll", BATTLE, rolls=True)
def _convoy_roll(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Roll what the convoy battle waits for (CV2, CV4, CV5)."""
    return c.convoy_roll(i["battle"], d)


@action("convoy search", BATTLE, _units("units"), rolls=True)
def _convoy_search(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Choose the searchers and roll their searches (CV3)."""
    return c.convoy_search(i["battle"], _n(c).units(i["units"]), d)


@action("convoy casualties", BATTLE, CHOOSER, _units("units"))
def _convoy_casualties(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Choose which units take the hits (CV2, CV4, HA7)."""
    return c.convoy_choose_casualties(i["battle"], _waiting(c, i["battle"], i["nation"]), _n(c).units(i["units"]))


@action("convoy auto", BATTLE, DECIDING, rolls=True)
def _convoy_auto(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Resolve a convoy battle's remaining steps with default choices."""
    c.convoy_auto(i["battle"], d, _deciding(c, i))


# ----- interceptions (SM2-SM5), ASW (AS1-AS5), naval battles (NC1-NC5) -----


@action("intercept search", BATTLE, _units("units"), rolls=True)
def _intercept_search(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """The enemy's searches of a passing submarine group (SM2, SM3)."""
    return c.intercept_search(i["battle"], _n(c).units(i["units"]), d)


@action("intercept detect", BATTLE, _units("subs"))
def _intercept_detect(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Name the submarines found (SM3)."""
    return c.intercept_detect(i["battle"], _n(c).units(i["subs"]))


@action("intercept decide", BATTLE, _units("submerge"), _units("retreat"))
def _intercept_decide(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Fight on, submerge or retreat, per detected submarine (SM4)."""
    n = _n(c)
    c.intercept_decide(i["battle"], n.units(i["submerge"]), n.units(i["retreat"]))


@action("intercept continue", BATTLE, _units("stop"))
def _intercept_continue(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Undetected submarines go on or stop (SM5)."""
    return c.intercept_continue(i["battle"], _n(c).units(i["stop"]))


def _battle_auto(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Resolve a battle's remaining steps with default choices."""
    return c.battle_auto(i["battle"], d, _deciding(c, i))


for _name in ("intercept auto", "asw auto", "battle auto"):
    action(_name, BATTLE, DECIDING, rolls=True)(_battle_auto)


@action("battle step", BATTLE, DECIDING, rolls=True)
def _battle_step(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Take the default for the one step a battle waits for, whoever's it is: a choice, or the
    roll with auto dice or the dice given (SM2-SM5, AS2-AS5, NC2-NC4, CV3-CV5)."""
    c.auto_step(i["battle"], d, _deciding(c, i))


@action(
    "asw start",
    Field("zone", "text", required=True),
    NATION,
    Field("auto", "flag", default=False),
    DECIDING,
    rolls=True,
)
def _asw_start(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> int:
    """Start ASW combat in a zone (AS1)."""
    number = c.asw_start(_acting(c, i["nation"]), _n(c).zone(i["zone"]))
    if i["auto"]:
        c.battle_auto(number, d, _deciding(c, i), started=True)
    return number


@action("asw search", BATTLE, _units("units"), rolls=True)
def _asw_search(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """ASW searches (AS2)."""
    return c.asw_search(i["battle"], _n(c).units(i["units"]), d)


@action("asw submerge", BATTLE, _units("subs"))
def _asw_submerge(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Detected submarines submerge (AS5)."""
    c.asw_submerge(i["battle"], _n(c).units(i["subs"]))


@action(
    "battle start",
    Field("zone", "text", required=True),
    NATION,
    Field("auto", "flag", default=False),
    DECIDING,
    rolls=True,
)
def _battle_start(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> int:
    """Start a naval battle (NC1, NC2)."""
    number = c.naval_start(_acting(c, i["nation"]), _n(c).zone(i["zone"]))
    if i["auto"]:
        c.battle_auto(number, d, _deciding(c, i), started=True)
    return number


@action("battle targets", BATTLE, CHOOSER, Field("targets", "text"))
def _battle_targets(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Pick targets (HA1-HA3, AS3, SM4)."""
    b = i["battle"]
    return c.choose_targets(b, _waiting(c, b, i["nation"]), _pairs(c, i["targets"], "--targets"))


@action("battle screen", BATTLE, CHOOSER, Field("screens", "text"))
def _battle_screen(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Escorts take shots aimed at other ships (HA1, HA3)."""
    b = i["battle"]
    return c.choose_screens(b, _waiting(c, b, i["nation"]), _pairs(c, i["screens"], "--screens"))


@action("battle fire", BATTLE, rolls=True)
def _battle_fire(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Roll the volley the fight waits for (SM4, AS4, NC2, NC3)."""
    return c.fire(i["battle"], d)


@action("battle casualties", BATTLE, CHOOSER, _units("units"))
def _battle_casualties(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Place the hits on one's units (HA4-HA7)."""
    b = i["battle"]
    return c.choose_casualties(b, _waiting(c, b, i["nation"]), _n(c).units(i["units"]))


@action("battle decide", BATTLE, CHOOSER, _units("submerge"), Field("retreat_to", "text"))
def _battle_decide(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Submerge (NC4) or retreat (NC1) at the end of a round."""
    b, n = i["battle"], _n(c)
    retreat = None if i["retreat_to"] is None else n.zone(i["retreat_to"])
    c.naval_decide(b, _waiting(c, b, i["nation"]), n.units(i["submerge"]), retreat)


# ----- undo (RK3), redo (RK4), dice source (D3, D4) -----


@action(
    "undo",
    Field("to", "int", low=1),
    Field("override", "flag", default=False),
    Field("reason", "text", default=""),
    Field("agreed_by", "texts", default=[]),
)
def _undo(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> Any:
    """Undo the last action, or every action after event `to` (RK3)."""
    from domain.dice import Override

    top = action_start(c) - 1
    first, events = undo_log.undo_span(log, top, i["to"], c.ruleset.reveals_answer_nothing)
    restored = log.state_before(first)
    given = Override(i["reason"], tuple(i["agreed_by"])) if i["override"] else None
    plan = c.undo(first, events, restored, given, i["reason"])
    log.confirm(plan)
    return plan


@action("redo", Field("all", "flag", default=False))
def _redo(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> list[list[Any]]:
    """Re-record the most recently undone action, or all of the last undo's (RK4)."""
    top = action_start(c) - 1
    stack = undo_log.redo_stack(log, top)
    if not stack:
        raise RuleViolation("RK4", undo_log.nothing_to_redo(log, top))
    undo, actions = stack[-1]
    todo = actions if i["all"] else actions[:1]
    events = undo_log.actions_events(log, todo, undo)
    done = []
    for original in todo:
        before = len(c.pending_events)
        c.redo(undo, original, events.get(original, []))
        done.append([e for e in c.pending_events[before:] if type(e).__name__ != undo_log.ASKED])
    return done


@action("dice switch", Field("mode", "text", required=True), Field("reason", "text", required=True))
def _dice_switch(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> None:
    """Switch the campaign's dice source (D4)."""
    from domain.dice import commitment

    if i["mode"] == "auto" and c.dice_mode != "auto" and not log.replaying:
        seed = log.seed(c.dice_epoch)
        if seed is None or commitment(seed) != c.commitments[c.dice_epoch]:
            raise RuleViolation(
                "D4",
                "this database does not hold the campaign's dice seed, so the tracker cannot "
                "roll its auto dice here; go on with manual dice",
            )
    c.switch_dice(i["mode"], i["reason"])


def _current_epoch(c: Campaign, i: dict[str, Any]) -> int:
    """D3: the seed a reveal publishes is the current epoch's."""
    return c.dice_epoch


@action("dice reveal", depends=_current_epoch)
def _dice_reveal(c: Campaign, d: DiceSource, i: dict[str, Any], log: Log) -> str:
    """Publish the current dice seed and commit to a fresh one (D3)."""
    seed = log.seed(c.dice_epoch)
    if seed is None:
        raise InputError("this database does not hold the campaign's dice seed")
    epoch = c.dice_epoch + 1
    c.reveal_seed(seed, lambda: log.next_commitment(epoch))
    return seed


def action_start(c: Campaign) -> int:
    """The version of the first event of the action running on `c` (what was asked)."""
    return int(c.__dict__.get("_action", c.version + 1))


def _step_answered(c: Campaign, i: dict[str, Any]) -> Any:
    """The step of the battle an action answers: which step it takes (whose choice, which
    volley or roll, whose casualties by default) rests on it. Only the nations the action
    answers for count among those the step waits for (the one named with --nation, or those
    `deciding`): the other side answering its part of the same step changes nothing here."""
    b = c.battles.get(str(i["battle"]))
    if b is None:
        return None
    named = [i["nation"]] if i.get("nation") is not None else i.get("deciding")
    if named is None:
        return (b["step"], b["round"], tuple(b["waiting"]))
    mine = set()
    for given in named:
        try:
            mine.add(_n(c).nation(given))
        except InputError:
            mine.add(given)  # the action refuses the name itself
    return (b["step"], b["round"], tuple(n for n in b["waiting"] if n in mine))


# Every action on a battle means what it means at the step the battle waits for: two players
# both answering one step (two `battle step`, two `convoy roll`) must not take two steps.
for _name, _action in list(ACTIONS.items()):
    if _action.depends is None and any(f.name == "battle" for f in _action.fields):
        ACTIONS[_name] = replace(_action, depends=_step_answered)
