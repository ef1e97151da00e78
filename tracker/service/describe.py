"""What the game waits for, in the words a player reads: `pending`, the gates of `next` and the
refusals of a step out of turn, and the command that answers each item (`command`). The domain
gives the facts (`Campaign.waiting_facts`, the items of `Campaign.open_items`); this module
turns them into sentences and is installed as the aggregate's describer by the tracker
application (`install_describer`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from domain.campaign import Campaign
from domain.text import listed, phase_name, plural, possessive

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
        if not f["searchers"]:
            # CV3: units that could search when the battle opened may have searched since (F7).
            return (
                "to choose which ships and aircraft search (eligible: none, so nobody searches: "
                f"`tracker convoy search {f['battle']}` goes on to the convoy table)"
            )
        return f"to choose which ships and aircraft search (eligible: {_units_at(f['searchers'])}; default: all)"
    return (
        f"to roll the convoy table, 1D{f['faces']} for each taking-part submarine "
        f"in this order: {', '.join(f['submarines'])}"
    )


def _shared_volley(order: list[str], rollers: Mapping[str, str], waiting: list[str]) -> str:
    """D3: who rolls which dice of a volley where an ally of a waiting nation fires too (the
    battle names one nation per side, the dice are their units' nations'); empty otherwise."""
    nations = list(dict.fromkeys(rollers.get(u, "") for u in order))
    if set(nations) <= set(waiting):
        return ""
    dice = [f"{n} rolls {', '.join(u for u in order if rollers.get(u, '') == n)}" for n in nations]
    return f" ({'; '.join(dice)})"


# The steps that are one roll of the dice of every side whose units fire (NC2, NC3: a volley).
_VOLLEYS = ("fire", "opening_fire")


def recorder(item: Mapping[str, Any]) -> str | None:
    """NC3, D3: the nation that records a volley several nations are waited for (each side's
    units fire), one command rolling or typing every side's dice: the first waited for, whose
    step the referee takes the roll as (`battle auto`, PL2). Played by file, copies on which
    each side recorded it fork; so one is told to type it, the others what is awaited. None
    for a step that one nation answers."""
    waiting = item.get("waiting") or []
    if item.get("step") not in _VOLLEYS or len(waiting) < 2:
        return None
    return str(waiting[0])


def _recorded_by(f: Mapping[str, Any]) -> str:
    """NC3: who records a volley of several nations (`recorder`), e.g. "; Germany records them,
    Britain's too"; empty where one nation is waited for."""
    first = recorder(f)
    if first is None:
        return ""
    others = [possessive(n) for n in dict.fromkeys(f["waiting"]) if n != first]
    return f"; {first} records them, {listed(others)} too"


def _deciding(nation: str, units: list[str], nations: Mapping[str, str]) -> str:
    """NC1, F5: who a nation decides for, as the battle lines say it ("Britain targets for
    France"): "Britain, for France" where the units it names are an ally's, "Britain, for
    Britain and France" where they are both; the nation alone where they are all its own (or
    their nations are not known)."""
    found = list(dict.fromkeys(nations.get(u, nation) for u in units))
    if not found or found == [nation]:
        return nation
    names = list(dict.fromkeys([nation, *found])) if nation in found else found
    return f"{nation}, for {listed(names)}"


def _placing(placement: str | None) -> str:
    """HA7: how the hits of a casualties step are placed, under the campaign's reading of it."""
    if placement == "owner-order":
        return (
            "HA7, the owner's order: hits placed one at a time in any order you like, each on the highest "
            "tier its firer's rule (HA4-HA6, NC6) still finds, one with none left lost; the default is the "
            "cheapest legal choice over every order"
        )
    return "HA4-HA6 order; the default is the cheapest legal choice"


def _casualties(nation: str, c: Mapping[str, Any], placement: str | None, nations: Mapping[str, str]) -> str:
    """HA4-HA7, NC6: the hits a nation places and where they may fall, as the referee checks
    them (`legal`, the words of its refusals): "1 hit among A, B" where every hit may fall on
    any of the units listed, else the hits per firing class and each legal outcome."""
    hits, units, legal = c["hits"], c["units"], c.get("legal")
    # NC1, F5: the side's hits may fall on an ally's units, placed by the nation deciding.
    who = _deciding(nation, units, nations)
    nation = nation if who == nation else f"{who},"
    default = f" (default: {', '.join(c['default'])})" if c.get("default") else ""
    if legal is None or legal == [f"{plural(hits, 'hit')} among {'/'.join(units)}"]:
        return f"{nation} places {plural(hits, 'hit')} among {', '.join(units)}{default}"
    if placement == "class-order":
        return f"{nation} places {legal[0]}{default}"
    # HA5, HA6: hits of different firing classes may fall on different units.
    return f"{nation} places {c.get('from') or plural(hits, 'hit')}, legal: {' | '.join(legal)}{default}"


def _screening(nation: str, shot: Mapping[str, Any], nations: Mapping[str, str]) -> str:
    """NC1, F5: "Britain, for France: " before a shot at an ally's unit or one its escorts may
    take, which the deciding nation screens; nothing where every unit is its own."""
    who = _deciding(nation, [shot["target"], *shot["options"]], nations)
    return "" if who == nation else f"{who}: "


def _procedure_step(f: Mapping[str, Any]) -> str:
    """What an interception, ASW combat, naval battle or a convoy battle's round waits for, with
    what a player needs to answer: the eligible units and their target numbers, the legal
    choices, the dice order."""
    step, kind = f["step"], f["kind"]
    if step == "search" and kind == "interception":
        return (
            f"to choose which units search for {possessive(f['attacker'])} {', '.join(f['submarines'])} "
            "passing through "
            # SM2: "none may search" read as a prohibition; the enemy may choose that nobody searches.
            f"(eligible: {_units_at(f['searchers'])}; default: all, or none at all)"
        )
    if step == "search":
        dice = plural(f["dice"]["count"], "die")
        # CV4: the order the dice are read in, shown by its first pairs ("each unit against
        # each submarine" left open whether a unit's dice or a submarine's come first).
        subs, units = f["submarines"], [s["unit"] for s in f["searchers"]]
        pairs = [f"{u} v {s}" for u in units for s in subs]
        shown = ", ".join(pairs[:3]) + (", ..." if len(pairs) > 3 else "")
        return (
            f"to choose the units searching for {', '.join(subs)}, each rolling once per submarine "
            f"(eligible: {_units_at(f['searchers'])}; default: all, {dice} in the order listed, a unit's die "
            f"against each submarine before the next unit's: {shown})"
        )
    if step == "detect":
        subs, found = f["submarines"], f["found"]
        return (
            f"to name the {plural(found, 'submarine')} found among {', '.join(subs)} "
            f"(default: {', '.join(subs[:found])})"
        )
    if step in ("targets", "opening_targets"):
        nations = f.get("nations", {})
        per = {
            n: ", ".join(f"{t['unit']} at {'/'.join(t['legal'])}" for t in shots) for n, shots in f["targets"].items()
        }
        # NC1, F5: the firers may be an ally's, whose targets the deciding nation chooses.
        choices = "; ".join(
            f"{_deciding(n, [t['unit'] for t in f['targets'][n]], nations)}: {per[n]}" for n in f["waiting"] if n in per
        )
        return f"to choose targets: {choices} (default: spread, most valuable first)"
    if step in ("screening", "opening_screening"):
        parts = [
            f"{_screening(n, s, f.get('nations', {}))}{s['firer']}'s shot at {s['target']} may be taken by "
            f"{'/'.join(s['options'])}"
            for n in f["waiting"]
            for s in f["screens"].get(n, [])
        ]
        return f"to choose screening escorts: {'; '.join(parts)} (default: the cheapest loss)"
    if step in ("fire", "opening_fire"):
        order = f["firing"]
        return (
            f"to roll {plural(len(order), 'die')}, one per firing unit in this order: {', '.join(order)}"
            + _shared_volley(order, f.get("rollers", {}), f["waiting"])
            + _recorded_by(f)
        )
    if step == "casualties":
        parts = [_casualties(n, c, f.get("placement"), f.get("nations", {})) for n, c in f["casualties"].items()]
        return f"to choose casualties: {'; '.join(parts)} ({_placing(f.get('placement'))})"
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
            parts.append(f"{_deciding(n, d['submerge'], f.get('nations', {}))}: {' or '.join(options)}")
        return f"to decide: {'; '.join(parts)} (default: fight on)"
    if step == "continue":
        return (
            f"to choose whether {', '.join(f['free'])} {'goes' if len(f['free']) == 1 else 'go'} on to "
            f"{f['destination']} or stop{'s' if len(f['free']) == 1 else ''} in {f['zone']} "
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
        zones = ", ".join(f["zones"])
        return f"{f['nation']} may declare a convoy attack on {possessive(phasing)} NTR in {zones}, or pass"
    if kind == "unplaced":
        where = ", ".join(f["legal"]) or "none"
        units = plural(f["count"], f["unit_type"])
        if f.get("phase", "placement") != "placement":
            # T3: placing is legal only in placement; say when, not a command refused now.
            return f"{phasing} has {units} bought this turn, to place in placement (legal now: {where})"
        if "legal" in f and not f["legal"]:
            # Nothing moves in placement: with no port of its own left, the units never can be placed.
            them = "it" if f["count"] == 1 else "them"
            return f"{phasing} has {units} bought and not placed, and no place to put {them} (no port of its own)"
        return f"{phasing} has {units} bought and not placed (legal: {where})"
    if kind == "turn":
        return f"waiting for {f['nation']} to finish {phase_name(f['phase'])} (tracker next)"
    if kind == "naval_may":
        return f"{phasing} may start a naval battle in {f['zone']}, or not ({f['holds']})"
    if kind == "asw_may":
        return f"{phasing} may start ASW combat in {f['zone']} against {', '.join(f['submarines'])}, or not"
    if kind == "air_landing":
        # Where they are now is no place to land; the range they have left may still reach one.
        one = len(f["units"]) == 1
        return (
            f"{', '.join(f['units'])} must land by the end of noncombat movement, on a territory of "
            f"{'its' if one else 'their'} side or a carrier with room, and {'is' if one else 'are'} not on one: "
            f"move {'it' if one else 'them'} there within the range left, or confirm the loss"
        )
    return str(kind).replace("_", " ")


def quoted(name: object) -> str:
    """A zone or nation as a command to copy writes it, for a POSIX shell, quoted only where the
    shell needs it: bare where `shlex.quote` leaves it bare (Germany, GB-DD1, 'A,B' of words
    without spaces); else in single quotes ('Dover Strait'); one holding a "'" in double quotes
    ("St. George's Channel") unless it also holds what a shell reads inside them; else as
    `shlex.quote` writes it. (The table of `_gate_command` is built for every item, so this also
    sees the None of an item without a zone.)"""
    text = str(name)
    if shlex.quote(text) == text:
        return text
    if "'" not in text:
        return f"'{text}'"
    if not any(ch in text for ch in '"$`\\!'):
        return f'"{text}"'
    return shlex.quote(text)


def _gate_command(item: Mapping[str, Any]) -> str | None:
    """T4: the command that closes what a phase still requires, or the turn item's `next`."""
    kind, nation = item["kind"], item.get("nation")
    if kind == "unplaced":
        # PU2, T3: the units are listed from purchase on, blocking (and placeable) only in
        # placement; an item without `blocking` (a hand-off message keeps fewer keys) was placeable.
        if not item.get("blocking", True):
            return None
        # A command that works as it stands: the first legal zone (the item's text lists them all).
        legal = item.get("legal") or []
        # All of them: the command closes the phase only if it places every unit bought.
        count = item.get("count", 1)
        several = f" --count {count}" if count > 1 else ""
        if legal:
            return f"tracker place {quoted(item.get('unit_type'))}{several} --at {quoted(legal[0])}"
        # T4: with nowhere to go (and the list known: a hand-off message may leave it out), the
        # units are given up, or an adjustment (AD1) gives the nation a port back.
        return "tracker next --confirm-losses" if "legal" in item else None
    return {
        "turn": "tracker next",
        "naval_due": f"tracker battle start --zone {quoted(item['zone'])}",
        "naval_may": f"tracker battle start --zone {quoted(item['zone'])}",
        "asw_may": f"tracker asw start --zone {quoted(item['zone'])}",
        "convoy_open": f"tracker convoy declare --by {quoted(nation)} --zone {quoted(item['zone'])}, "
        f"or tracker convoy pass --by {quoted(nation)}",
        "air_landing": f"{_landing_move(item)}, or tracker next --confirm-losses",
    }.get(kind)


def _stranded(item: Mapping[str, Any]) -> str:
    """F7: the air unit a landing move names, when one alone must land (several may be in
    different zones, and a move takes units that start together)."""
    units = item.get("units") or []
    return units[0] if len(units) == 1 else "UNIT"


def _landing_move(item: Mapping[str, Any]) -> str:
    """F7: the move that lands the first stranded air unit where its `landing` (the item's,
    `Campaign.landing_flight`) found it a place, else the move's form with ZONE to fill in:
    typed as it stands, "ZONE" was refused as an unknown zone (did you mean 'Panama Canal Zone'?)."""
    landing = item.get("landing")
    if not landing:
        return f"tracker move {_stranded(item)} --to ZONE"
    unit, path = landing["unit"], landing["path"]
    where = f"--to {quoted(path[0])}" if len(path) == 1 else f"--path {quoted(','.join(path))}"
    return f"tracker move {unit} {where}"


def naming_campaign(command: str, campaign: str) -> str:
    """`command` (one or several `tracker ...` commands) with `--campaign NAME` after each
    `tracker`: where a database or server holds several campaigns, the command to copy says
    which (hand-off messages, `inbox`, `wait`)."""
    named = f"tracker --campaign {shlex.quote(campaign)} "
    # A function, not a template: a name's backslash (a\q) is no escape of `re.sub`'s.
    return re.sub(r"\btracker ", lambda _: named, command)


def _decide_options(item: Mapping[str, Any]) -> str:
    """NC4, NC1: the options of `battle decide` the first nation it waits for has: submerging
    where it has submarines there, retreating where it is the attacker with a zone to go to."""
    decision = (item.get("decisions") or {}).get(item["waiting"][0], {}) if item["waiting"] else {}
    options = " [--submerge S1]" if decision.get("submerge") else ""
    return options + (" [--retreat-to ZONE]" if decision.get("retreat") else "")


def _back_option(item: Mapping[str, Any]) -> str:
    """SM4: `intercept decide`'s --retreat, where the submarines have a zone to go back to (an
    item without `back`, a hand-off message queued before items held it, keeps the option)."""
    return "" if "back" in item and item["back"] is None else " [--retreat S2]"


def command(item: Mapping[str, Any]) -> str | None:
    """The command that answers one item of `pending`: a procedure's step, what a phase still
    requires (T4), or the phasing nation's `next`; None when nothing answers it now."""
    n, step, kind = item["battle"], item["step"], item["kind"]
    if n is None:
        return _gate_command(item)
    who = f" --nation {quoted(item['waiting'][0])}" if len(item["waiting"]) > 1 else ""
    table = {
        ("convoy", "merchant_defence"): f"tracker convoy roll {n} [--dice V,V]",
        ("convoy", "merchant_casualty"): f"tracker convoy casualties {n} [--units S1]",
        ("convoy", "search"): f"tracker convoy search {n} [--units U1,U2] [--dice V,...]",
        ("convoy", "convoy_table"): f"tracker convoy roll {n} [--dice V,...]",
        ("convoy", "casualties"): f"tracker convoy casualties {n}{who} [--units U1,U2]",
        ("interception", "search"): f"tracker intercept search {n} [--units U1,U2] [--dice V,...]",
        ("interception", "detect"): f"tracker intercept detect {n} [--subs S1,S2]",
        ("interception", "decide"): f"tracker intercept decide {n} [--submerge S1]{_back_option(item)}",
        ("interception", "continue"): f"tracker intercept continue {n} [--stop S1]",
        ("asw", "search"): f"tracker asw search {n} [--units U1,U2] [--dice V,...]",
        ("asw", "decide"): f"tracker asw submerge {n} [--subs S1,S2]",
        ("naval", "decide"): f"tracker battle decide {n}{who}{_decide_options(item)}",
        ("naval", "casualties"): f"tracker battle casualties {n}{who} [--units U1,U2]",
    }
    generic = {
        "targets": f"tracker battle targets {n}{who} [--targets FIRER=TARGET,...]",
        "opening_targets": f"tracker battle targets {n}{who} [--targets FIRER=TARGET,...]",
        "screening": f"tracker battle screen {n}{who} [--screens FIRER=ESCORT,...]",
        "opening_screening": f"tracker battle screen {n}{who} [--screens FIRER=ESCORT,...]",
        "fire": f"tracker battle fire {n} [--dice V,...]",
        "opening_fire": f"tracker battle fire {n} [--dice V,...]",
    }
    found = table.get((kind, step)) or generic.get(step)
    if (kind, step) == ("convoy", "search") and item.get("eligible") == []:
        found = f"tracker convoy search {n}"  # CV3: no unit may search, no die is rolled
    return _with_dice(found, item.get("dice"))


# The typed-dice part of a command: bracketed (optional) until the dice mode is known.
_TYPED_DICE = re.compile(r" \[(--dice [^\]]*)\]")


def _with_dice(found: str | None, dice: object) -> str | None:
    """D4: the command's --dice as the campaign's dice mode has it (the item's `dice`, as
    `pending --json` gives it). Auto dice are rolled by the tracker: typing them takes an
    override, not a hint, so the option is left out. Manual dice must be given: a command run
    without them is refused (a person at a terminal is asked for each roll instead), so the
    option is shown as part of the command, not as optional, followed by the dice server's
    roll id (D3: `--ref`, optional; through a server a player typing another nation's dice
    must give it). An item without `dice` (a hand-off message queued before messages kept
    it) keeps the option bracketed; a step that rolls no die has none."""
    if found is None or not isinstance(dice, Mapping):
        return found
    if dice.get("typed") is False or dice.get("count") == 0:
        return _TYPED_DICE.sub("", found)
    if dice.get("typed") is True:
        return _TYPED_DICE.sub(r" \1 [--ref ROLL_ID]", found)
    return found


class EnglishDescriber:
    """The tracker's sentences for what the game waits for."""

    def waiting(self, facts: Mapping[str, Any], cite: bool = True) -> str:
        who = " and ".join(facts["waiting"]) or "nobody"
        if facts["kind"] == "convoy" and facts["step"] in _CONVOY_STEPS:
            what = _convoy_step(facts)
        else:
            what = _procedure_step(facts)
        rule = f" [{facts['rule']}]" if cite else ""
        return f"waiting for {who} {what}{rule}"

    def item(self, facts: Mapping[str, Any]) -> str:
        if facts.get("battle") is not None:
            return f"battle {facts['battle']} ({facts['kind']}, {facts['zone']}): {self.waiting(facts)}"
        return f"{_gate(facts)} [{facts['rule']}]"

    def command(self, item: Mapping[str, Any]) -> str | None:
        return command(item)


def install_describer() -> None:
    """Make the tracker's words the ones every campaign uses (pending, gates, refusals)."""
    Campaign.describer = EnglishDescriber()
