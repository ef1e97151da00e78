"""What a scenario must also get right to start a new campaign: names the commands can print on
one line and type back (zones, nations, sides, codes, the title), and starting forces F8 lets
stand. `tracker new` and `scenario check` apply these; a campaign already recorded is read
without them, since it cannot be changed and must stay readable."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from domain.errors import DataFileError
from domain.schema import SameNameTwice, control_character, name_problem
from domain.text import possessive

if TYPE_CHECKING:
    from domain.scenario import Scenario, UnitGroup

Report = Callable[[DataFileError], None]

# A nation code makes its units' IDs (DE-SS1): commands split unit lists at spaces and commas,
# and reports read the code back as the letters before the first '-'. Capitals, as the IDs, the
# map and the guide show them (a code in small letters is told its capitals).
NATION_CODE = re.compile(r"[A-Z]{1,8}")
_FOLD = re.compile(r"[\s_\-]+")
# The longest zone name (see `_unaddressable`).
MAX_ZONE_NAME = 100
# Characters that commands split a value at, so that a name holding one could not be typed
# there, by what splits at it (a comma is `name_problem`'s). '|' keeps names apart in the log's
# index of events, where "A|B" would be the zones A and B.
_ZONE_SEPARATORS = {
    ":": "`adjust --add NATION:TYPE:ZONE`, `--ntr` and `--owner` split their values at it",
    "|": "the log's index of events separates zones with it, so `log --zone` would mistake it for two",
}
_NATION_SEPARATORS = {
    ":": "`adjust --add NATION:TYPE:ZONE`, `--ntr`, `--tech` and `odds --attacker` split their values at it",
    "=": "`adjust --resources NATION=CHANGE` and `--owner TERRITORY=NATION` split their values at it",
    "|": "the log's index of events separates nations with it, so `log --nation` would mistake it for two",
}


def fold_name(text: str) -> str:
    """A name as the commands compare what a player types (`tracker.service.names.fold`): case,
    surrounding spaces, runs of spaces, '-' and '_' inside, and the Unicode form (NFKC) do not
    count."""
    return unicodedata.normalize("NFKC", _FOLD.sub(" ", unicodedata.normalize("NFKC", text).strip()).casefold())


def check_new_campaign(
    data: dict[str, Any], scenario: Scenario, placed: list[tuple[str, UnitGroup]], source: str, report: Report
) -> None:
    """Every check of this module; `placed` pairs each starting group with its key (`units[3]`)."""
    _texts(data, source, report)
    _zone_names(scenario, source, report)
    _nation_names(data, scenario, source, report)
    _side_names(data, source, report)
    _owners(data, scenario, source, report)
    _start_in_neutral_territory(scenario, placed, source, report)


def _owners(data: dict[str, Any], scenario: Scenario, source: str, report: Report) -> None:
    """A territory's owner is a nation: an empty name passed for "no owner" and failed at the
    first check of who is whose enemy there (a campaign's `next` into collect_resources). A
    missing owner is the loader's to report."""
    land = data.get("map", {}).get("land") if isinstance(data.get("map"), dict) else None
    if not isinstance(land, dict):
        return
    nations = ", ".join(scenario.nations)
    for zone, table in land.items():
        if isinstance(table, dict) and table.get("owner") == "":
            problem = f"is empty: a territory's owner is one of the nations ({nations})"
            report(DataFileError(source, f"map.land.{zone}.owner", problem))


def _texts(data: dict[str, Any], source: str, report: Report) -> None:
    """The title and name are shown in reports, prompts and on the map: one line each."""
    meta = data.get("scenario")
    if not isinstance(meta, dict):
        return  # the loader reports a missing or malformed table
    for key in ("name", "title"):
        value = meta.get(key)
        if isinstance(value, str) and not value.strip():
            report(
                DataFileError(source, f"scenario.{key}", f"the {key} is empty (it names the board in logs and reports)")
            )
            continue
        bad = control_character(value) if isinstance(value, str) else None
        if bad is not None:
            problem = f"the {key} may not contain control characters such as {bad!r} (it is shown on one line)"
            report(DataFileError(source, f"scenario.{key}", problem))


def _zone_names(scenario: Scenario, source: str, report: Report) -> None:
    """Zone names a player can type: `move --path` splits at commas, and the commands find a
    zone whatever its case, so two names alike but for case or spaces would be one zone."""
    game_map = scenario.game_map
    # In the file's order (seas, then lands), so that messages say the same every time.
    keys = {zone: f"map.{'sea' if game_map.is_sea(zone) else 'land'}.{zone}" for zone in game_map.adjacency}
    typable = {}
    for zone, key in keys.items():
        problem = name_problem("zone", zone, "`move --path` separates zones with commas") or _unaddressable(
            "zone", zone, _ZONE_SEPARATORS
        )
        if problem is not None:
            report(DataFileError(source, key, problem))
        else:
            typable[zone] = key
    # A name reported above ("Kattegat " beside "Kattegat") is not reported again as alike.
    _alike("zones", typable, source, report, "commands that name a zone could not tell them apart")


def _nation_names(data: dict[str, Any], scenario: Scenario, source: str, report: Report) -> None:
    """Nation names and codes a player can type: lists of nations are split at commas, codes
    make unit IDs, and both are found whatever their case."""
    names = {name: f"nations.{name}" for name in scenario.nations}
    tables = data.get("nations")
    typable = {}
    for name, key in names.items():
        problem = name_problem("nation", name, "lists of nations in commands are split at commas") or _unaddressable(
            "nation", name, _NATION_SEPARATORS
        )
        if problem is not None:
            report(DataFileError(source, key, problem))
        else:
            typable[name] = key
        table = tables.get(name) if isinstance(tables, dict) else None
        if not isinstance(table, dict) or not isinstance(table.get("code"), str):
            continue  # missing or not a string: the loader reports it, and '' here would say it twice
        problem = _code_problem(name, scenario)
        if problem is not None:
            report(DataFileError(source, f"{key}.code", problem))
    _alike("nations", typable, source, report, "commands that name a nation could not tell them apart")
    codes = {
        n.code: f"nations.{name}.code"
        for name, n in scenario.nations.items()
        if NATION_CODE.fullmatch(n.code) or _in_small_letters(n.code)
    }
    _alike("codes", codes, source, report, "unit IDs typed in commands could not tell their units apart")


def _code_problem(name: str, scenario: Scenario) -> str | None:
    """What is wrong with a nation's code, if anything: one not of 1 to 8 letters, or one in
    small letters (`se` passed and made IDs such as `se-DD1`), unless its capitals are another
    nation's code (the codes alike are the error told then: the capitals would be that one's)."""
    code = scenario.nations[name].code
    if _in_small_letters(code):
        if _shared_but_for_case(name, scenario):
            return None
        return f"{code!r}: a nation code is written in capitals (A-Z), as DE or GB (did you mean {code.upper()!r}?)"
    if not NATION_CODE.fullmatch(code):
        return (
            f"{code!r}: a nation code is 1 to 8 letters (A-Z), as DE or GB: it begins the "
            "IDs of the nation's units (DE-SS1), which commands split at spaces and commas"
        )
    return None


def _in_small_letters(code: str) -> bool:
    """A code of the form but for small letters: 'se' or 'Se' for 'SE' (ASCII only, as A-Z: 'ß'
    is made 'SS' by capitals)."""
    return code.isascii() and not NATION_CODE.fullmatch(code) and NATION_CODE.fullmatch(code.upper()) is not None


def _shared_but_for_case(name: str, scenario: Scenario) -> bool:
    """Another nation's code is this nation's but for case (or the same)."""
    code = scenario.nations[name].code.upper()
    return any(n.code.upper() == code for other, n in scenario.nations.items() if other != name)


def _side_names(data: dict[str, Any], source: str, report: Report) -> None:
    sides = data.get("sides")
    if not isinstance(sides, dict):
        return  # the loader reports it
    for side in sides:
        problem = name_problem("side", side)
        if problem is not None:
            report(DataFileError(source, f"sides.{side}", problem))


def _unaddressable(what: str, name: str, separators: dict[str, str]) -> str | None:
    """Why a name holding a character some command splits its value at could not be typed
    there, or one too long for the viewer's page of it, or None."""
    if what == "zone" and len(name) > MAX_ZONE_NAME:
        # The viewer answers a zone's page only for a name of at most 200 characters (a bound
        # on what a URL makes it look up): well under that, a board's names stay readable.
        return f"{name[:40]!r}...: a {what} name has at most {MAX_ZONE_NAME} characters (this one {len(name)})"
    for ch, why in separators.items():
        if ch in name:
            return f"{name!r}: a {what} name may not contain {ch!r} ({why})"
    return None


def _alike(what: str, keys: dict[str, str], source: str, report: Report, why: str) -> None:
    """Names that differ only in what `fold_name` leaves out, each pair once (exact repeats are
    the loader's to report)."""
    first: dict[str, str] = {}
    for name in keys:
        folded = fold_name(name)
        if folded not in first:
            first[folded] = name
            continue
        other = first[folded]
        if _FOLD.sub(" ", other.strip()).casefold() == _FOLD.sub(" ", name.strip()).casefold():
            problem = f"{what} {other!r} and {name!r} differ only in case, spaces, '-' or '_': {why}"
        else:
            # Alike on screen: one writes a letter with its accent as one character, the other as
            # a letter and a combining accent (or a full-width letter, a ligature).
            problem = (
                f"{what} {other!r} and {name!r} look alike and differ only in how their letters are "
                f"encoded in Unicode ({_escaped(other)} and {_escaped(name)}): {why}"
            )
        report(SameNameTwice(source, (keys[name], keys[other]), problem))


def _escaped(name: str) -> str:
    """A name with every character outside ASCII as its code point, to show what sets two
    look-alike names apart ('Cre\\u0300te')."""
    return "".join(ch if ch.isascii() else f"\\u{ord(ch):04x}" for ch in name)


def _start_in_neutral_territory(
    scenario: Scenario, placed: Iterable[tuple[str, UnitGroup]], source: str, report: Report
) -> None:
    """F8: no unit of a belligerent may be on a neutral's territory, so none may start on one:
    a unit whose nation is at war before the territory's owner enters the war. Nor may a
    neutral's unit start on any territory but its own (an enemy's is the loader's to refuse)."""
    nations = scenario.nations
    for key, group in placed:
        owner = scenario.game_map.land.get(group.at)
        if owner not in nations or owner == group.nation or group.nation not in nations:
            continue
        enters, owner_enters = nations[group.nation].entry_round, nations[owner].entry_round
        if owner_enters <= enters:
            if enters > 1:
                report(_neutral_abroad(group, owner, enters, source, f"{key}.at"))
            continue
        at_war = "at war from the start" if enters == 1 else f"at war from round {enters}"
        report(
            DataFileError(
                source,
                f"{key}.at",
                f"{group.nation} ({at_war}) cannot start in {group.at}, {possessive(owner)} territory: {owner} is "
                f"neutral until round {owner_enters} and no unit of a belligerent may be there (F8)",
            )
        )


def _neutral_abroad(group: UnitGroup, owner: str, enters: int, source: str, key: str) -> DataFileError:
    """F8: a neutral is nobody's ally and moves nothing until it enters the war, so its units
    start on its own territory or at sea: one on an ally's land would stand in a belligerent's
    war, one on another neutral's land abroad."""
    return DataFileError(
        source,
        key,
        f"{group.nation} (neutral until round {enters}) cannot start in {group.at}, {possessive(owner)} "
        f"territory: a neutral is nobody's ally, and until it enters the war its units may be on its own "
        "territory only, or at sea (F8)",
    )
