"""Positions alike but for which unit of a type is which, named alike (`Canon`), so that the
odds enumeration (`domain.procedures.odds`) meets each position once."""

from __future__ import annotations

from typing import Any

from domain.procedures.base import Piece, evolve

State = Any  # one of the procedure states


class Canon:
    """Order-preserving renaming of units, so that positions alike but for which unit of a type
    is which are one state.

    Units of one nation and type are renamed to the last names of that type in the root
    position, keeping their order (the defaults lose and target the first names first, so
    most positions are already in this form). The rules read a unit's ID only to tell units apart and to
    break ties by ID, so a renaming that keeps every comparison between IDs gives a position
    with the same future. That holds when the IDs of each nation and type are contiguous in
    the sorted IDs of the root (so renaming within a type never crosses another type's IDs);
    otherwise nothing is renamed."""

    def __init__(self, root: State) -> None:
        pieces: dict[str, Piece] = {}
        _collect_pieces(root, pieces)
        ordered = sorted(pieces)
        kinds = [(pieces[u].nation, pieces[u].type) for u in ordered]
        runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
        self.active = len(runs) == len(set(runs)) and len(ordered) > 1
        self.kind_of = {u: (p.nation, p.type) for u, p in pieces.items()}
        self.names: dict[tuple[str, str], list[str]] = {}
        for u in ordered:
            self.names.setdefault(self.kind_of[u], []).append(u)
        self.sides: dict[tuple[Piece, ...], tuple[Piece, ...]] = {}
        self.outside: dict[int, tuple[State, bool]] = {}
        self.kinds_of: dict[int, tuple[tuple[Piece, ...], frozenset[tuple[str, str]]]] = {}

    def forget(self) -> None:
        """Let go of the sides and contexts remembered (`side`, `apart`, `kinds`)."""
        self.sides.clear()
        self.outside.clear()
        self.kinds_of.clear()

    def side(self, pieces: tuple[Piece, ...]) -> tuple[Piece, ...]:
        """One side's units named as `__call__` names them in a position where no other unit of
        their kinds is named (see `apart`): by the side's own IDs alone."""
        found = self.sides.get(pieces)
        if found is None:
            found = self.sides[pieces] = _rename(pieces, self.mapping({p.id for p in pieces}))
        return found

    def apart(self, context: State, sides: tuple[tuple[Piece, ...], ...]) -> bool:
        """Whether `sides` can be named one by one (`side`): renaming is on, `context` (the
        position without them) names no unit at all, and no kind of unit is on two sides."""
        if not self.active:
            return False
        # By identity, the entry keeping the position alive: an id is another object's once
        # the first is gone, and a position freed mid-enumeration would lend it its answer.
        slot = self.outside.get(id(context))
        if slot is not None and slot[0] is context:
            found = slot[1]
        else:
            seen: set[str] = set()
            _collect_ids(context, self.kind_of, seen)
            found = not seen
            self.outside[id(context)] = (context, found)
        if not found:
            return False
        kinds = [self.kinds(pieces) for pieces in sides]
        return all(not (a & b) for i, a in enumerate(kinds) for b in kinds[i + 1 :])

    def kinds(self, pieces: tuple[Piece, ...]) -> frozenset[tuple[str, str]]:
        """The kinds (nation, type) of these units, looked up by identity first (the entry
        keeps the units alive, so the identity stays theirs)."""
        slot = self.kinds_of.get(id(pieces))
        if slot is not None and slot[0] is pieces:
            return slot[1]
        found = frozenset(self.kind_of[p.id] for p in pieces)
        self.kinds_of[id(pieces)] = (pieces, found)
        return found

    def mapping(self, seen: set[str]) -> dict[str, str]:
        """The renaming of the IDs `seen` in a position: each kind's, in order, to the last
        names of that kind in the root position."""
        by_kind: dict[tuple[str, str], list[str]] = {}
        for u in sorted(seen):
            by_kind.setdefault(self.kind_of[u], []).append(u)
        return {
            old: new
            for kind, ids in by_kind.items()
            for old, new in zip(ids, self.names[kind][len(self.names[kind]) - len(ids) :], strict=True)
            if old != new
        }

    def __call__(self, state: State) -> State:
        if not self.active:
            return state
        seen: set[str] = set()
        _collect_ids(state, self.kind_of, seen)
        mapping = self.mapping(seen)
        # Not remembered: the callers meet a position to rename once, or remember what it
        # settles to themselves (`Engine.settle`); a memo here met again 5% of a convoy
        # battle's positions and none of an ASW combat's 130,000, and kept each alive twice
        # (three quarters of that combat's memory).
        return _rename(state, mapping) if mapping else state


def pieces_in(state: State) -> dict[str, Piece]:
    """The units a position names, by ID."""
    found: dict[str, Piece] = {}
    _collect_pieces(state, found)
    return found


def _collect_pieces(x: object, out: dict[str, Piece]) -> None:
    if isinstance(x, Piece):
        out[x.id] = x
    elif type(x) is tuple:
        for y in x:
            _collect_pieces(y, out)
    elif hasattr(x, "__dataclass_fields__"):
        for name in x.__dataclass_fields__:
            _collect_pieces(getattr(x, name), out)


def _collect_ids(x: object, known: dict[str, Any], out: set[str]) -> None:
    if type(x) is str:
        if x in known:
            out.add(x)
    elif isinstance(x, Piece):
        out.add(x.id)
    elif type(x) is tuple:
        for y in x:
            _collect_ids(y, known, out)
    elif hasattr(x, "__dataclass_fields__"):
        for name in x.__dataclass_fields__:
            _collect_ids(getattr(x, name), known, out)


def _rename(x: Any, mapping: dict[str, str]) -> Any:
    if type(x) is str:
        return mapping.get(x, x)
    if isinstance(x, Piece):
        new = mapping.get(x.id)
        return x if new is None else x._replace(id=new)
    if type(x) is tuple:
        return tuple(_rename(y, mapping) for y in x)
    if hasattr(x, "__dataclass_fields__"):
        fields = x.__dataclass_fields__
        return evolve(x, **{name: _rename(getattr(x, name), mapping) for name in fields})
    return x
