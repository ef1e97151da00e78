"""Reading the history: filtered log records, `explain` of one event, board changes between events."""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from typing import Any
from uuid import UUID

from sqlalchemy import select

from domain.dice import derive_roll
from domain.errors import InputError
from domain.rules.catalog import statement
from domain.rules.tech import technology_name
from domain.ruleset import Ruleset
from domain.text import phase_name
from projections.schema import event_index
from projections.summary import as_record
from projections.views import Views
from tracker.service.application import Tracker
from tracker.service.shapes import Choice, DiceExplained, Explanation, LogRecord, SeedExplained, ValueExplained

TECH_NAMES = {"advanced_submarine": "Advanced Submarine", "advanced_asw": "Advanced ASW"}

# The events that record a player's choice (or the default taken for them): `explain` says whose.
CHOICE_KINDS = frozenset(
    {
        "CasualtiesChosen",
        "SearchersChosen",
        "HuntersChosen",
        "SubmarinesDetected",
        "TargetsChosen",
        "ScreeningChosen",
        "SubmarinesSubmerged",
        "SubmarinesRetreated",
        "SubmarinesContinued",
        "AttackerRetreated",
        "UnitsMoved",
        "NtrPlaced",
        "ConvoyAttackDeclared",
        "ActionUndone",
    }
)


def unplayed(t: Tracker, cid: UUID, turn: int | None, battle: int | None) -> str | None:
    """Why a listing of `turn` or `battle` names nothing there is (a turn not played yet, a
    battle the campaign never had), or None: an empty listing of one is a bad input, not a
    filter that happened to match nothing. Undone events still count: their turn or battle was."""
    from projections.positions import turn_number

    campaign = t.load(cid)
    name = t.name_of(campaign)
    if turn is not None:
        current = turn_number(campaign.scenario.turn_order, campaign.round, campaign.nation)
        if turn > current and not log_records(t, cid, turn=turn, tail=1, asked=True):
            return f"turn {turn} has not been played in campaign {name!r} (the current turn is {current})"
    if battle is not None and not log_records(t, cid, battle=battle, tail=1):
        last = campaign.battle_count
        had = f"the last is battle {last}" if last else "it has had no battle yet"
        return f"no battle {battle} in campaign {name!r} ({had})"
    return None


def log_records(
    t: Tracker,
    cid: UUID,
    *,
    turn: int | None = None,
    phase: str | None = None,
    nation: str | None = None,
    zone: str | None = None,
    kind: str | None = None,
    battle: int | None = None,
    seq: int | None = None,
    with_data: bool = False,
    tail: int | None = None,
    views: Views | None = None,
    asked: bool = False,
    before: int | None = None,
    after: int | None = None,
    head: int | None = None,
) -> list[LogRecord]:
    """Index rows matching every filter given, oldest first (from the projections; `views`
    when the caller caught up already); with `tail`, only the last that many (read from the
    end, not the whole log), with `head` only the first that many. `before` and `after` keep
    the events numbered below or above them: a page of a long log is read by its primary key
    from there, never counted through from the start. What was asked (ActionAsked) is listed
    only with `asked`, when that kind is named, or for one event by `seq`."""
    if views is None:
        with t.views(cid) as v:
            return log_records(
                t, cid, turn=turn, phase=phase, nation=nation, zone=zone, kind=kind, battle=battle, seq=seq,
                with_data=with_data, tail=tail, views=v, asked=asked, before=before, after=after, head=head,
            )  # fmt: skip
    filters = _index_filters(turn, phase, nation, zone, kind, battle, seq, asked)
    if before is not None:
        filters.append(event_index.c.seq < before)
    if after is not None:
        filters.append(event_index.c.seq > after)
    if head is None:
        rows = views.index_rows(filters, tail)
    else:
        query = select(event_index).where(event_index.c.c == views.key, *filters)
        rows = list(views.conn.execute(query.order_by(event_index.c.seq).limit(head)))
    records: list[LogRecord] = [
        {
            "seq": r.seq,
            "turn": r.turn,
            "round": r.round,
            "nation": r.nation,
            "phase": r.phase,
            "kind": r.kind,
            "rule": r.rule or "",
            "battle": r.battle,
            "zones": [z for z in r.zones.split("|") if z],
            "summary": r.summary,
            "undone_by": r.undone_by,
        }
        for r in rows
    ]
    if with_data and records:
        add_data(t, cid, records)
    return records


def _index_filters(
    turn: int | None,
    phase: str | None,
    nation: str | None,
    zone: str | None,
    kind: str | None,
    battle: int | None,
    seq: int | None,
    asked: bool,
) -> list[Any]:
    """The event index conditions for `log_records`' filters, all of which must hold."""
    filters = []
    if turn is not None:
        filters.append(event_index.c.turn == turn)
    if phase is not None:
        filters.append(event_index.c.phase == phase)
    if nation is not None:
        # autoescape: a name is matched as written, never as a LIKE pattern (`--zone %`).
        involved = event_index.c.nations.contains(f"|{nation}|", autoescape=True)
        filters.append(involved | (event_index.c.nation == nation))
    if zone is not None:
        filters.append(event_index.c.zones.contains(f"|{zone}|", autoescape=True))
    if kind is not None:
        filters.append(event_index.c.kind == kind)
    if battle is not None:
        filters.append(event_index.c.battle == battle)
    if seq is not None:
        filters.append(event_index.c.seq == seq)
    if not asked and kind is None and seq is None:
        filters.append(event_index.c.kind != "ActionAsked")
    return filters


def add_data(t: Tracker, cid: UUID, records: list[LogRecord]) -> None:
    """Each record's timestamp and recorded data, read from the log in one range: the records
    (oldest first) become the events as `log --json` lists them (`replay --json` too)."""
    first, last = records[0]["seq"], records[-1]["seq"]
    wanted = {r["seq"] for r in records}
    data = {
        s.originator_version: as_record(s.originator_version, t.decode(s))
        for s in t.app.recorder.select_events(cid, gt=first - 1, lte=last)
        if s.originator_version in wanted
    }
    for r in records:
        full = data[r["seq"]]
        r["timestamp"] = full["timestamp"]
        r["data"] = full["data"]


def event_at(t: Tracker, cid: UUID, seq: int) -> Any:
    stored = t.app.recorder.select_events(cid, gt=seq - 1, lte=seq)
    if not stored:
        raise InputError(f"no event {seq} in this campaign (the last is event {t.recorder.last_version(cid)})")
    return t.decode(stored[0])


# How a unit leaves the board, by the kind of event that took it off (any other: a casualty).
_GONE = {
    "Adjusted": "removed by the adjustment",
    "AircraftLost": "lost (no place to land)",
    "ActionUndone": "taken back",
}


def board_changes(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], kind: str = "", air: Container[str] = ()
) -> list[str]:
    """What an event of `kind` changed on the board, as readable lines; a unit of a type in
    `air` lost to a casualty is shot down, a ship sunk."""
    gone = _GONE.get(kind)
    lines: list[str] = []
    old_units = {u["id"]: u for u in (before or {"units": []})["units"]}
    new_units = {u["id"]: u for u in after["units"]}
    for uid in sorted(set(old_units) | set(new_units)):
        o, n = old_units.get(uid), new_units.get(uid)
        if o and not n:
            lines.append(f"{uid} {gone or ('shot down' if o['type'] in air else 'sunk')} from {o['at']}")
        elif n and not o:
            lines.append(f"{uid} appears in {n['at']}")
        elif o and n:
            if o["at"] != n["at"]:
                lines.append(f"{uid}: {o['at']} -> {n['at']}")
            if o["damage"] != n["damage"]:
                lines.append(f"{uid}: damage {o['damage']} -> {n['damage']}")
    old_ntr = (before or {"ntr": {}})["ntr"]
    for nation in sorted(set(old_ntr) | set(after["ntr"])):
        zones = set(old_ntr.get(nation, {})) | set(after["ntr"].get(nation, {}))
        for zone in sorted(zones):
            a, b = old_ntr.get(nation, {}).get(zone, 0), after["ntr"].get(nation, {}).get(zone, 0)
            if a != b:
                lines.append(f"{nation} NTR in {zone}: {a} -> {b}")
    for key, label in (("balances", "resources"), ("ntr_lost", "NTR lost")):
        old = (before or {key: {}})[key]
        for nation, value in after[key].items():
            if old.get(nation, value if before else 0) != value:
                lines.append(f"{nation} {label}: {old.get(nation, 0)} -> {value}")
    old_tech = (before or {"tech": {}})["tech"]
    for nation, techs in after["tech"].items():
        for tech, level in techs.items():
            was = old_tech.get(nation, {}).get(tech, level if before else 0)
            if was != level:
                # In words, as the log's summary of the advance says it ("Advanced Submarine").
                lines.append(f"{nation} {TECH_NAMES.get(tech) or technology_name(tech)}: level {was} -> {level}")
    if before and (before["turn"], before["phase"]) != (after["turn"], after["phase"]):
        start, end = phase_name(before["phase"]), phase_name(after["phase"])
        lines.append(f"turn position: {before['nation']} {start} -> {after['nation']} {end}")
    return lines


def explain(t: Tracker, cid: UUID, seq: int) -> Explanation:
    """Everything about one event: rule(s), dice, choices, what it changed, undo status."""
    event = event_at(t, cid, seq)
    campaign = t.load(cid)
    ruleset = campaign.ruleset
    record = as_record(seq, event, campaign.scenario, ruleset)
    kind = type(event).__name__
    with t.views(cid) as v:
        found = log_records(t, cid, seq=seq, views=v)
        after = v.board_at(seq)
        before = v.board_at(seq - 1) if seq > 1 else None
        air = {name for name, u in ruleset.units.items() if u.is_air}
        changes = board_changes(before, after, kind, air)
        if kind == "Adjusted" and event.owners:
            # AD1: territory owners are no part of the board rows compared above.
            held = t.owners_at(v, seq - 1)
            changes += [f"{zone}: held by {held.get(zone)} -> {owner}" for zone, owner in sorted(event.owners.items())]
        if kind == "Adjusted" and event.enter:
            # F8: nor is neutrality: an entry brought forward would otherwise show no change.
            changes += [f"{nation}: neutral -> at war (F8)" for nation in event.enter]
        rerolls = _rerolls(t, cid, v, event.roll) if kind == "DiceRolled" else (None, None)
        seed = _seed_explained(t, cid, v, event, campaign) if kind == "DiceRolled" else None
        value = _value_explained(t, cid, v, event, campaign, before) if kind == "DiceRolled" else None
    volley = _volley(t, cid, event) if kind == "DiceRolled" else []
    index = found[0] if found else None
    rules = [r for r in {record["rule"], getattr(event, "rule", "")} if r]
    if kind == "Adjusted" and event.enter:
        rules.append("F8")  # AD1 brought a neutral nation's entry into the war forward
    dice: DiceExplained | None = None
    if kind == "DiceRolled":
        dice = _dice_explained(event, ruleset)
        dice["reroll_of"], dice["rerolled_as"] = rerolls
        dice["seed"], dice["volley"], dice["value"] = seed, volley, value
        rules.extend(m["rule"] for m in event.modifiers)
    if kind == "CasualtiesChosen":
        rules.append("HA7")  # within the tier rule cited, the owner of the units hit chooses
    choice: Choice | None = None
    # AS2 pools an ASW search's detections (and CV3's convoy search): nobody picks which are
    # found. Only an interception's searcher chooses among the submarines (SM3).
    if kind in CHOICE_KINDS and not (kind == "SubmarinesDetected" and getattr(event, "rule", "") != "SM3"):
        who = getattr(event, "nation", None) or getattr(event, "attacker", None) or index and index["nation"]
        hits = _hits_placed(t, cid, event, campaign) if kind == "CasualtiesChosen" else []
        choice = {"by": who, "default": getattr(event, "default", False), "hits": hits}
    ordered = list(dict.fromkeys(rules))
    return {
        "seq": seq,
        "kind": kind,
        "timestamp": record["timestamp"],
        "summary": record["summary"],
        "turn": index["turn"] if index else None,
        "round": index["round"] if index else None,
        "phase": index["phase"] if index else None,
        "rules": [{"id": r, "statement": statement(r, ruleset)} for r in ordered],
        "dice": dice,
        "choice": choice,
        "changes": changes,
        "undone_by": index["undone_by"] if index else None,
        "hash": event.hash,
        "prev_hash": event.prev_hash,
        "data": record["data"],
    }


def roll_events(t: Tracker, cid: UUID, roll: int) -> list[int]:
    """The events that recorded roll number `roll` (D3: the campaign's dice, numbered from 1;
    not an event number), oldest first: a redo (RK4) records a roll again under its number.
    Refused (one line) for a roll the campaign has not made yet."""
    campaign = t.load(cid)
    if roll > campaign.roll_count:
        last = f"the last is roll {campaign.roll_count}" if campaign.roll_count else "no die has been rolled yet"
        raise InputError(f"roll {roll} has not been rolled in campaign {t.name_of(campaign)!r} ({last}) [D3]")
    with t.views(cid) as v:
        # The index row's summary opens with the roll's number (`_dice_text`): it narrows the
        # rows read; the number each event records decides.
        prefix = event_index.c.summary.startswith(f"roll {roll}:", autoescape=True)
        rows = v.index_rows([event_index.c.kind == "DiceRolled", prefix])
    found = [r.seq for r in rows if event_at(t, cid, r.seq).roll == roll]
    if not found:
        # A summary written otherwise (an index projected by an older version): every roll's data.
        rolled = log_records(t, cid, kind="DiceRolled", with_data=True)
        found = [r["seq"] for r in rolled if r["data"].get("roll") == roll]
    if not found:
        raise InputError(
            f"no event records roll {roll} in campaign {t.name_of(campaign)!r} (tracker verify checks the log)"
        )
    return found


def _dice_explained(event: Any, ruleset: Ruleset) -> DiceExplained:
    """A roll as `explain` shows it: the dice, the target and each modifier with its cause."""
    return {
        "roll": event.roll,
        "roller": event.roller,
        "reason": event.rule,
        "purpose": event.purpose,
        "faces": event.faces,
        "values": list(event.values),
        "source": event.source,
        "reference": event.reference,
        "base_target": event.base_target,
        "target": event.target,
        "success_when": event.success_when,
        "outcome": event.outcome,
        "reroll_of": None,
        "rerolled_as": None,
        "seed": None,
        "volley": [],
        "value": None,
        "modifiers": [
            {
                **m,
                "cause": f"{TECH_NAMES.get(m['technology'], m['technology'])} of the "
                + ("roller" if m["holder"] == "actor" else "submarines' owner"),
                "statement": statement(m["rule"], ruleset),
            }
            for m in event.modifiers
        ],
    }


# The battles' first events, naming who attacks: the kind of battle, and the attacking nation's field.
_BATTLE_STARTS = {
    "NavalBattleStarted": ("naval", "nation"),
    "ConvoyAttackDeclared": ("convoy", "attacker"),
    "AswCombatStarted": ("asw", "nation"),
    "InterceptionStarted": ("interception", "nation"),
}
# A search die's value (CV3, AS2, SM3), by the roll's kind: the unit type's search key, in words.
_SEARCHES = {
    "convoy_search": ("convoy", "convoy search", "CV3"),
    "asw_search": ("asw", "ASW search", "AS2"),
    "interception_search": ("interception", "interception search", "SM3"),
}


def _value_explained(
    t: Tracker, cid: UUID, v: Views, event: Any, campaign: Any, board: Mapping[str, Any] | None
) -> ValueExplained | None:
    """F4, NC1, CV3, CV4, AS2, AS4, SM3, SM4: which of the rolling unit's values its base target
    is, and why that one: a unit fires at its attack value on the attacking side of a naval
    battle and at its defense value on the defending side; a convoy's detecting units at their
    attack value and its submarines back at their defense value; hunters at their ASW attack
    value. None for a roll of no unit (research, merchant defence, the convoy table), or where
    the unit's value in the campaign's ruleset is not the base recorded."""
    unit = next((u for u in (board or {"units": []})["units"] if u["id"] == event.unit), None)
    if unit is None or event.battle is None or event.base_target is None:
        return None
    ut = campaign.ruleset.units.get(unit["type"])
    if ut is None:
        return None
    side: str | None = None
    if event.kind in _SEARCHES:
        key, value, rule = _SEARCHES[event.kind]
        base, why = ut.search.get(key, 0), f"a searching unit rolls at its {value} value ({rule})"
    else:
        started = log_records(t, cid, battle=event.battle, head=1, views=v)
        first = event_at(t, cid, started[0]["seq"]) if started else None
        if first is None or type(first).__name__ not in _BATTLE_STARTS:
            return None
        battle, field = _BATTLE_STARTS[type(first).__name__]
        attacking = not campaign.scenario.are_enemies(unit["nation"], getattr(first, field))
        side = "attacker" if attacking else "defender"
        value, base, why = _fire_value(battle, attacking, ut, unit["nation"], event.battle)
    if base != event.base_target:
        return None
    return {
        "unit": unit["id"],
        "type": unit["type"],
        "value": value,
        "base": base,
        "side": side,
        "why": why,
    }


def _fire_value(battle: str, attacking: bool, ut: Any, nation: str, number: int) -> tuple[str, int, str]:
    """(which value, the unit type's value, why) of a unit firing in a battle of kind `battle`
    on the attacking side or not (see `_value_explained`)."""
    if battle == "naval":
        if attacking:
            why = f"{nation} attacks in battle {number} (NC1), and an attacking unit fires at its attack value (F4)"
            return "attack", ut.attack, why
        why = f"{nation} defends in battle {number} (NC1), and a defending unit fires at its defense value (F4)"
        return "defense", ut.defense, why
    if battle == "convoy":
        if attacking:
            return "defense", ut.defense, "a submarine attacking a convoy fires back at its defense value (CV4)"
        return "attack", ut.attack, "a unit that detected the submarines fires at its attack value (CV4)"
    hunting = attacking == (battle == "asw")  # the ASW nation attacks (AS1); interceptors defend (SM2)
    rule = "AS4" if battle == "asw" else "SM4, AS4"
    if hunting:
        return "ASW attack", ut.asw_attack, f"a detecting unit attacks its submarine at its ASW attack value ({rule})"
    if battle == "asw":
        return "defense", ut.defense, "a detected submarine fires back at its defense value (AS4)"
    return "attack", ut.attack, "a detected submarine that is moving fires at its attack value (SM4)"


def _rerolls(t: Tracker, cid: UUID, v: Views, roll: int) -> tuple[dict[str, int] | None, dict[str, int] | None]:
    """RK3: the roll that `roll` makes again after an override undo, and the roll that made
    `roll` again, each as {roll, event, undo} (or None): what a dispute over a reroll asks
    first. Rerolls are few (one per die of an override undo made again), so every one is read;
    one standing is preferred to one undone since (a redo records it again)."""
    found: dict[str, tuple[bool, dict[str, int]]] = {}
    for row in v.index_rows([event_index.c.kind == "DiceRerolled"]):
        event = event_at(t, cid, row.seq)
        standing = row.undone_by is None
        for key, mine, other in (("reroll_of", event.roll, event.rerolls), ("rerolled_as", event.rerolls, event.roll)):
            if mine == roll and (key not in found or standing or not found[key][0]):
                found[key] = (standing, {"roll": other, "event": row.seq, "undo": event.undo})
    of, made = found.get("reroll_of"), found.get("rerolled_as")
    return (of[1] if of else None), (made[1] if made else None)


def _seed_explained(t: Tracker, cid: UUID, v: Views, event: Any, campaign: Any) -> SeedExplained | None:
    """D5: an auto roll's seed as a dispute checks it: its epoch, the event that committed to
    it (the creation, or the reveal of the epoch before) and the one that revealed it, and the
    roll re-derived from the revealed seed, as anyone holding the log can. Only a revealed seed
    is used: a seed still secret proves nothing to the players. None for typed dice."""
    if event.source != "auto":
        return None
    epoch = int(getattr(event, "epoch", 0))
    commitments, revealed = campaign.commitments, campaign.revealed_seeds
    reveals = _reveal_events(t, cid, v, tuple(e for e in (epoch - 1, epoch) if 0 <= e < len(revealed)))
    seed = revealed[epoch] if epoch < len(revealed) else None
    derived = derive_roll(seed, event.roll, len(event.values), event.faces) if seed is not None else None
    return {
        "epoch": epoch,
        "commitment": commitments[epoch] if epoch < len(commitments) else None,
        "committed_at": 1 if epoch == 0 else reveals.get(epoch - 1),
        "revealed_at": reveals.get(epoch),
        "derived": derived,
        "matches": None if derived is None else derived == list(event.values),
    }


def _reveal_events(t: Tracker, cid: UUID, v: Views, epochs: tuple[int, ...]) -> dict[int, int]:
    """The events that revealed the seeds of `epochs`, all revealed (D5), by epoch. Reveals are few, one per
    epoch, and stay in effect when undone; their index summary names the epoch first, which
    narrows the rows read, and the event read decides."""
    found: dict[int, int] = {}
    rows = v.index_rows([event_index.c.kind == "SeedRevealed"])
    named = [r for r in rows if any(r.summary.startswith(f"dice seed of epoch {e} ") for e in epochs)]
    # A summary worded otherwise (an index projected by another version): every reveal is read.
    for row in named if len(named) >= len(epochs) else rows:
        epoch = event_at(t, cid, row.seq).epoch
        if epoch in epochs:
            found.setdefault(epoch, row.seq)
    return found


# How far around a roll its volley is looked for: a volley is one action's rolls of one step,
# recorded one after another (a naval round's fire, a convoy search).
_VOLLEY_REACH = 64


def _volley(t: Tracker, cid: UUID, event: Any) -> list[dict[str, Any]]:
    """CV4: the rolls recorded together with `event` (the same action, rule and battle, one
    after another, with the hits of selective shots among them), in the order they were
    rolled, which is the order `pending` listed them; empty for a roll made alone."""
    seq = event.originator_version
    events: dict[int, Any] = {}

    def step(e: Any) -> tuple[Any, ...]:
        return (e.action, e.rule, getattr(e, "battle", None))

    def same(n: int) -> bool:
        # A selective shot's hit is recorded as its die shows it (TargetHit): the volley goes on.
        e = events.get(n)
        return e is not None and type(e).__name__ in ("DiceRolled", "TargetHit") and step(e)[::2] == step(event)[::2]

    reach = _VOLLEY_REACH
    while True:
        low, high = max(seq - reach, 0), seq + reach
        stored = t.app.recorder.select_events(cid, gt=low, lte=high)
        events = {s.originator_version: t.decode(s) for s in stored}
        first = last = seq
        while same(first - 1):
            first -= 1
        while same(last + 1):
            last += 1
        # A volley reaching the edge of the events read may go on beyond it: read further.
        if (first > low + 1 or low == 0) and (last < high or high not in events):
            break
        reach *= 4
    rolls = [(n, events[n]) for n in range(first, last + 1) if type(events[n]).__name__ == "DiceRolled"]
    rolls = [(n, e) for n, e in rolls if e.rule == event.rule]
    if len(rolls) < 2:
        return []
    return [{"roll": e.roll, "event": n, "unit": getattr(e, "unit", None), "purpose": e.purpose} for n, e in rolls]


# The events of a battle that score the hits a casualty choice places (HA4-HA7).
_SCORED = ("HitsScored", "NavalHitsScored", "HitsLost")
# How far back from a casualty choice its hits are looked for (a round's events, and the
# actions recorded while the choice waited).
_HITS_REACH = 512


def _hits_placed(t: Tracker, cid: UUID, event: Any, campaign: Any) -> list[dict[str, Any]]:
    """HA7: the hits a casualty choice placed, as recorded: each event since the battle's last
    casualty choice (or round) that scored hits for the same side to take or lose, in the words
    `log` gives it (the sides by the campaign's nations)."""
    seq = event.originator_version
    found: list[dict[str, Any]] = []
    for e in _StepBack(t, cid, seq - 1, seq - _HITS_REACH):
        kind = type(e).__name__
        # An undo or a redo between them: what came before it is another telling of the step.
        if kind in ("ActionUndone", "ActionRedone"):
            break
        if getattr(e, "battle", None) != event.battle:
            continue  # what was asked, or another battle's step meanwhile
        if kind == "RoundStarted" or (kind == "CasualtiesChosen" and e.side == event.side):
            break
        if kind in _SCORED and e.side == event.side:
            record = as_record(e.originator_version, e, campaign.scenario, campaign.ruleset)
            found.append({"seq": e.originator_version, "summary": record["summary"]})
    return found[::-1]


class _StepBack:
    """The events of a campaign from `top` down to `bottom` (excluded), newest first, read a
    page at a time."""

    def __init__(self, t: Tracker, cid: UUID, top: int, bottom: int) -> None:
        self.t, self.cid, self.top, self.bottom = t, cid, top, max(bottom, 0)

    def __iter__(self) -> Iterator[Any]:
        top = self.top
        while top > self.bottom:
            page = self.t.app.recorder.select_events(self.cid, gt=self.bottom, lte=top, desc=True, limit=32)
            if not page:
                return
            for stored in page:
                yield self.t.decode(stored)
            top = page[-1].originator_version - 1
