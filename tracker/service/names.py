"""Names as players type them, resolved to the campaign's canonical spelling.

Nations, zones, unit types, technologies, event kinds and unit IDs match case-insensitively
(and with `-`, `_` and spaces alike: "advanced asw", "aircraft-carrier"); nations also match
their scenario code (`gb`, `DE`), unit types their abbreviation (`dd`); a name typed without
its accents ("oresund" for "Öresund") matches when no other name is spelt so. An unknown name is
refused naming the closest matches and the full list, so the domain only ever sees
canonical names. Unit lists accept commas and spaces alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from domain.campaign import Campaign
from domain.errors import InputError
from domain.ruleset import Ruleset
from domain.scenario import Scenario
from domain.scenario_slips import fold_name

_UNIT_SEPARATORS = re.compile(r"[,\s]+")

# The key names are compared by: case, runs of spaces, '-' and '_' do not count, nor the
# Unicode form ('è' typed as one character or as 'e' and a combining accent, as some keyboards
# and systems send it; a full-width 'Ａ' from an input method is 'A'). One function with the
# scenario check's, which refuses two names of a board that fold alike.
fold = fold_name


def split_units(texts: str | Iterable[str] | None) -> list[str] | None:
    """Unit IDs separated by commas and/or spaces, from one string or several arguments:
    'A,B', 'A B' and ('A', 'B') are all [A, B]; '' is []; None (no option) stays None."""
    if texts is None:
        return None
    parts = [texts] if isinstance(texts, str) else list(texts)
    return [p for text in parts for p in _UNIT_SEPARATORS.split(text) if p]


def once_each(unit_ids: Iterable[str], where: str = "") -> None:
    """Refuse a list that names a unit twice (in any case: 'de-ss1' is DE-SS1), naming the
    unit, before the referee's own check, which says only that one is ("a unit is named
    twice"). `where` names the option, for a command that takes several lists."""
    seen: set[str] = set()
    for uid in unit_ids:
        key = uid.strip().casefold()
        if key in seen:
            raise InputError(f"{uid.strip()} is named twice{' in ' + where if where else ''}")
        seen.add(key)


def unknown(what: str, text: str, known: Sequence[str]) -> InputError:
    """An error naming the closest matches (names it begins, then names holding it, then
    look-alikes) and every known name, or for a long list of zones the command listing them."""
    by_fold = {fold(k): k for k in known}
    typed = fold(text)
    starting = [k for f, k in by_fold.items() if typed and f.startswith(typed)]
    # A part of a name ("Red Sea" for "Northern Red Sea", "Southern Red Sea").
    holding = [k for f, k in by_fold.items() if len(typed) > 2 and typed in f]
    import difflib  # only on this error path: not paid by every command that names something

    alike = [by_fold[f] for f in difflib.get_close_matches(typed, list(by_fold), n=3, cutoff=0.6)]
    suggestions = (starting or holding or alike)[:3]
    hint = f"did you mean {' or '.join(repr(s) for s in suggestions)}? " if suggestions else ""
    listed_by = _LISTED_BY.get(what)
    if listed_by is not None and len(known) > _LISTED_AT_MOST:
        # A whole war's map has 150 names: a line of them all hides the suggestion.
        return InputError(f"unknown {what} {text!r} ({hint}{len(known)} known: {listed_by} lists them)")
    return InputError(f"unknown {what} {text!r} ({hint}known: {', '.join(known)})")


# Kinds of name a command lists, for an error on a map too large to list in one line.
_LISTED_BY = {"zone": "`tracker map`", "sea zone": "`tracker map`"}
_LISTED_AT_MOST = 24


def bare(text: str) -> str:
    """`fold`, and without accents: 'oresund' for 'Öresund' (NFKD, combining marks dropped), as
    a player types a name on a keyboard without them."""
    return "".join(c for c in unicodedata.normalize("NFKD", fold(text)) if not unicodedata.combining(c))


class Resolver:
    """One kind of name: canonical names and the aliases that also lead to them; a name typed
    without its accents leads to it too, when it leads to no other."""

    def __init__(self, what: str, names: Iterable[str], aliases: Mapping[str, str] | None = None) -> None:
        self.what = what
        self.names = list(names)
        self._keys = {fold(n): n for n in self.names}
        for alias, name in (aliases or {}).items():
            self._keys.setdefault(fold(alias), name)
        self._bare: dict[str, list[str]] = {}
        for key, name in self._keys.items():
            alike = self._bare.setdefault(bare(key), [])
            if name not in alike:
                alike.append(name)

    def __call__(self, text: str) -> str:
        found = self._keys.get(fold(text))
        if found is not None:
            return found
        alike = self._bare.get(bare(text), [])
        if len(alike) > 1:
            # 'Oresund' beside 'Öresund': the accents are the only difference, so the player's to type.
            named = " or ".join(repr(n) for n in sorted(alike))
            raise InputError(f"{self.what} {text!r} could be {named}: type it with its accents")
        if not alike:
            raise unknown(self.what, text, self.names)
        return alike[0]

    def get(self, text: str) -> str | None:
        """The name `text` leads to, or None (for one it leads to several by, too)."""
        found = self._keys.get(fold(text))
        alike = self._bare.get(bare(text), []) if found is None else [found]
        return alike[0] if len(alike) == 1 else None


# The resolvers of a scenario and ruleset, by their identity: both are parsed once per process
# and kept (see `domain.campaign.state`), and every action that names something makes a
# `Names`; the entry holds them, so their ids stay theirs.
_RESOLVERS: dict[tuple[int, int], tuple[Scenario, Ruleset, tuple[Resolver, ...]]] = {}


def _resolvers(scenario: Scenario, ruleset: Ruleset) -> tuple[Resolver, ...]:
    found = _RESOLVERS.get((id(scenario), id(ruleset)))
    if found is not None and found[0] is scenario and found[1] is ruleset:
        return found[2]
    game_map = scenario.game_map
    sea = sorted(game_map.sea)
    land = sorted(game_map.land)
    resolvers = (
        Resolver("nation", scenario.turn_order, {n.code: name for name, n in scenario.nations.items()}),
        Resolver("zone", sea + land),
        Resolver("sea zone", sea),
        Resolver("unit type", ruleset.units, {u.abbr: name for name, u in ruleset.units.items()}),
        Resolver("technology", ruleset.technologies),
    )
    if len(_RESOLVERS) >= 256:
        _RESOLVERS.clear()
    _RESOLVERS[(id(scenario), id(ruleset))] = (scenario, ruleset, resolvers)
    return resolvers


class Names:
    """Every kind of name a player types, for one campaign (its scenario and ruleset)."""

    def __init__(self, campaign: Campaign) -> None:
        scenario, ruleset = campaign.scenario, campaign.ruleset
        self.nation, self.zone, self.sea_zone, self.unit_type, self.technology = _resolvers(scenario, ruleset)
        self._units = {uid.casefold(): uid for uid in campaign.units}

    def unit(self, text: str) -> str:
        """A unit ID in its recorded spelling; one the board does not hold goes on as typed, so
        the referee can say why it is not there."""
        return self._units.get(text.strip().casefold(), text.strip())

    def units(self, texts: str | Iterable[str] | None) -> list[str] | None:
        listed = split_units(texts)
        return None if listed is None else [self.unit(u) for u in listed]

    def sea(self, text: str) -> str:
        """A sea zone; a land territory is refused as such."""
        found = self.sea_zone.get(text)
        if found is None and self.zone.get(text) is not None:
            raise InputError(f"{self.zone(text)} is a land territory, not a sea zone")
        return self.sea_zone(text)

    def optional_nation(self, text: str | None) -> str | None:
        return None if text is None else self.nation(text)

    def optional_zone(self, text: str | None) -> str | None:
        return None if text is None else self.zone(text)

    def zones(self, texts: Iterable[str] | None) -> list[str] | None:
        return None if texts is None else [self.zone(z) for z in texts]


def event_kinds() -> list[str]:
    """The kinds of event a campaign records (for `log --kind`)."""
    kinds = {
        name
        for name, value in vars(Campaign).items()
        if isinstance(value, type) and issubclass(value, Campaign.Event) and value is not Campaign.Event
    }
    return sorted(kinds)


def event_kind(text: str) -> str:
    return Resolver("event kind", event_kinds())(text)
