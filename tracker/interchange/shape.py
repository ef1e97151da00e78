"""The shape of an imported event: the fields its class declares, each of the JSON type its
annotation names, checked before the event is hashed, replayed or refereed.

A line whose event and stored state agree, with a hash chain that holds (a file written by a
script, or edited and hashed again), may still hold a string where the event records a
number, a list where it records an object, null, or a field missing or more: without this
check the import stopped wherever the replay first tripped on it, with the interpreter's own
words ("'<=' not supported between instances of 'int' and 'NoneType'") instead of the line
and the field. Of its type, a value may still mean nothing (a dice mode the tracker does not
know, a negative cost, a die of 0): those known without the campaign's state are checked
here too (`_MEANINGS`), and the names an event holds where the referee runs no action again
by `names_problem`."""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator
from functools import cache
from typing import Any

from domain.chain import UPCAST_ADDED
from domain.dice import SCHEME

# Kept by every stored event beside its fields: what eventsourcing adds, and which fields an
# upcaster gave an event recorded before them (see `domain.chain`).
_BESIDE_FIELDS = frozenset({UPCAST_ADDED})
# The event's place, time and class, which its stored row holds and the import checks itself.
_NOT_CHECKED = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})
# The JSON the annotation's names are: a name not here (a Literal alias such as a battle's
# `Step`) is not checked by type, the referee then judges the value.
_SCALARS: dict[str, tuple[type, ...]] = {"int": (int,), "str": (str,), "bool": (bool,), "float": (int, float)}
_WORDS = {"int": "an integer", "str": "a string", "bool": "true or false", "float": "a number", "None": "null"}


def shape_problem(event: Any) -> str | None:
    """Why a decoded event is not of its class's shape, naming the field, or None when it is."""
    cls: type = event.__class__
    checked = _checks(cls)
    if checked is None:
        return None
    fields, checks = checked
    attrs = vars(event)
    for name in fields:
        if name not in attrs and name not in _NOT_CHECKED:
            return f"field {name!r} is missing"
    if len(attrs) != len(fields) + sum(1 for name in _BESIDE_FIELDS if name in attrs):
        for name in attrs:
            if name not in fields and name not in _BESIDE_FIELDS:
                return f"field {str(name)[:60]!r} is not a field of the {cls.__name__} event"
    for name, annotation, fits in checks:
        if name in attrs and not fits(attrs[name]):
            return f"field {name!r} must be {_words(annotation)}, got {_json_name(attrs[name])}"
    # Of its type: what the value means, where the tracker knows it whatever the log holds.
    for name, (means, words) in _MEANINGS.get(cls.__name__, {}).items():
        if name in attrs and not means(attrs[name]):
            return f"field {name!r} must be {words}, got {_shown(attrs[name])}"
    return None


Check = Callable[[Any], bool]
# A value's meaning: its test, and what the value must be in words (with the rule's ID).
Meaning = tuple[Check, str]


def _one_of(rule: str, *allowed: str) -> Meaning:
    words = " or ".join(repr(a) for a in allowed)
    return (lambda value: value in allowed), f"{words} ({rule})"


def _at_least(least: int, what: str = "") -> Meaning:
    return (lambda value: value >= least), f"{least} or more{what}"


def _each_at_least(least: int, what: str) -> Meaning:
    return (lambda value: all(v >= least for v in value)), what


def _matching(pattern: str, words: str) -> Meaning:
    compiled = re.compile(pattern)
    return (lambda value: compiled.fullmatch(value) is not None), words


_DICE_SOURCE = _one_of("D4", "auto", "manual")
_COUNT = _at_least(0)
_SHA256 = _matching("[0-9a-f]{64}", "64 lowercase hexadecimal digits (a SHA-256 commitment, D5)")
# Values of the right type that mean nothing, which a file written by a script or edited and
# hashed again may hold, by event class, then field: those the referee never judges (the
# campaign's creation, and the events of an action recorded before the log recorded what was
# asked, are applied as recorded) or would stop on in the interpreter's words. Known without
# the campaign's state, so checked for every event, cheaply; whether a value is the one an
# action records is the referee's to say, running the action again.
_MEANINGS: dict[str, dict[str, Meaning]] = {
    "Created": {
        "dice_mode": _DICE_SOURCE,
        # The only scheme rolls are derived with (D5): another would be checked as this one.
        "dice_scheme": _one_of("D5", SCHEME),
        "seed_commitment": _SHA256,
    },
    "DiceSourceSwitched": {"mode": _DICE_SOURCE, "previous": _DICE_SOURCE},
    "DiceRolled": {
        "roll": _at_least(1, " (D3: rolls are numbered from 1)"),
        "epoch": _at_least(0),
        "faces": _at_least(1, " (D1)"),
        "values": _each_at_least(1, "a list of dice of 1 or more (D1)"),
        "source": _DICE_SOURCE,
        "success_when": _one_of("D2", "at_most", "at_least", "total"),
    },
    "SeedRevealed": {
        "epoch": _at_least(0),
        "seed": _matching("(?:[0-9a-fA-F]{2})+", "hexadecimal digits, two a byte (D5)"),
        "next_commitment": _SHA256,
    },
    "ResearchPaid": {"cost": _COUNT},
    "UnitsPurchased": {"count": _COUNT, "cost": _COUNT},
    "NtrPlaced": {"count": _COUNT},
    "NtrDestroyed": {"count": _COUNT},
    "ConvoyAttackDeclared": {"ntr": _COUNT},
    "HitsScored": {"hits": _COUNT},
    "NavalHitsScored": {"hits": _COUNT},
    "HitsLost": {"hits": _COUNT},
}


@cache
def _checks(cls: type) -> tuple[frozenset[str], list[tuple[str, str, Check]]] | None:
    """A class's fields and each checked field's annotation and test, worked out once a class
    (an import reads every event of a log: the annotations are not parsed again for each)."""
    fields: tuple[str, ...] = getattr(cls, "__event_fields__", ())
    if not fields:
        return None
    annotations = _annotations(cls)
    checks = [
        (name, annotations[name], _compiled(annotations[name]))
        for name in fields
        if name not in _NOT_CHECKED and name in annotations
    ]
    return frozenset(fields), checks


# The fields that name something of the campaign's scenario or ruleset, by field name: a
# string, or a list of them.
_NAMED = {
    "nation": "nation",
    "roller": "nation",
    "attacker": "nation",
    "defender": "nation",
    "zone": "zone",
    "path": "zone",
    "zones": "zone",
    "route": "zone",
    "technology": "technology",
    "unit_type": "unit type",
    "phase": "phase",
}


def names_problem(event: Any, known: dict[str, Container[str]]) -> str | None:
    """Why an event of the right shape names what the campaign does not have (a nation, zone,
    technology, unit type or phase not in `known`, by `_NAMED`'s words), or None. For the
    events no action is run again for (the referee names what an action records itself)."""
    for name, what in _named_fields(event.__class__):
        value = getattr(event, name, None)
        for v in value if isinstance(value, list | tuple) else (value,):
            if v is not None and v not in known[what]:
                return f"field {name!r} names {_shown(v)}, which is no {what} of the campaign"
    return None


@cache
def _named_fields(cls: type) -> tuple[tuple[str, str], ...]:
    fields: tuple[str, ...] = getattr(cls, "__event_fields__", ())
    return tuple((name, _NAMED[name]) for name in fields if name in _NAMED)


def _annotations(cls: type) -> dict[str, str]:
    """Each field's annotation as written (the events' module postpones them: strings)."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for name, annotation in klass.__dict__.get("__annotations__", {}).items():
            found[name] = str(annotation)
    return found


def _parts(text: str, sep: str) -> Iterator[str]:
    """`text` split at `sep` outside brackets."""
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == sep and depth == 0:
            yield text[start:i].strip()
            start = i + 1
    yield text[start:].strip()


def _anything(value: Any) -> bool:
    return True


@cache
def _compiled(annotation: str) -> Check:
    """The test of a value against an annotation: any of its `|` parts fits."""
    tests = [_compiled_one(part) for part in _parts(annotation, "|")]
    if any(test is _anything for test in tests):
        return _anything
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _compiled_one(annotation: str) -> Check:
    name, _, inner = annotation.partition("[")
    inner = inner.removesuffix("]")
    if name == "None":
        return lambda value: value is None
    if name in _SCALARS:
        kinds = _SCALARS[name]
        if name == "bool":
            return lambda value: isinstance(value, bool)
        # true and false are not numbers in JSON, whatever Python makes of them.
        return lambda value: isinstance(value, kinds) and not isinstance(value, bool)
    if name in ("list", "tuple"):
        items = [p for p in _parts(inner, ",") if p and p != "..."] if inner else []
        if len(items) != 1:
            return lambda value: isinstance(value, list | tuple)
        item = _compiled(items[0])
        return lambda value: isinstance(value, list | tuple) and all(item(v) for v in value)
    if name == "dict":
        args = list(_parts(inner, ",")) if inner else []
        if len(args) != 2:
            return lambda value: isinstance(value, dict)
        entry = _compiled(args[1])
        return lambda value: isinstance(value, dict) and all(isinstance(k, str) and entry(v) for k, v in value.items())
    return _anything  # "Any", or a name this check does not read


def _words(annotation: str) -> str:
    return " or ".join(_word(part) for part in _parts(annotation, "|"))


def _word(annotation: str) -> str:
    name, _, inner = annotation.partition("[")
    if name in ("list", "tuple"):
        item = next(iter(_parts(inner.removesuffix("]"), ",")), "") if inner else ""
        return f"a list of {_plural(item)}" if item and item != "Any" else "a list"
    if name == "dict":
        return "an object"
    return _WORDS.get(name, name)


def _plural(annotation: str) -> str:
    word = _words(annotation)
    return {"an integer": "integers", "a string": "strings", "an object": "objects"}.get(word, word)


def _shown(value: Any) -> str:
    """A value as the refusal quotes it, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_name(value: Any) -> str:
    """The JSON type of a value as the file has it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
