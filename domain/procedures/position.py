"""The pure state of a procedure in progress in a campaign, at its current step, built from the
campaign's recorded battle state and board (for the odds from here)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain.board import Board
from domain.errors import InputError
from domain.procedures import asw, convoy, interception, naval, volley
from domain.procedures.base import Context, Piece, Side, evolve
from domain.procedures.fight import Fight, Kind, Shot, VolleyStep
from domain.procedures.fight import volley as firers
from domain.rules import asw as asw_rules
from domain.rules import combat
from domain.rules import convoy as convoy_rules
from domain.rules import interception as interception_rules

_VOLLEY_STEPS = {
    "targets": (VolleyStep.TARGETS, "main"),
    "opening_targets": (VolleyStep.TARGETS, "opening"),
    "screening": (VolleyStep.SCREENING, "main"),
    "opening_screening": (VolleyStep.SCREENING, "opening"),
    "fire": (VolleyStep.FIRE, "main"),
    "opening_fire": (VolleyStep.FIRE, "opening"),
    "casualties": (VolleyStep.CASUALTIES, "main"),
}


class Position:
    """A campaign's board and one of its battles, read into pure procedure values."""

    def __init__(
        self, board: Board, battle: Mapping[str, Any], committed: frozenset[str], ctx: Context | None = None
    ) -> None:
        self.board = board
        self.b = battle
        self.committed = committed
        self.ctx = ctx or Context(board.ruleset, board.scenario, {n: dict(t) for n, t in board.tech.items()})

    def piece(self, uid: str) -> Piece:
        u = self.board.units[uid]
        return Piece(u.id, u.type, u.nation, u.damage)

    def pieces(self, ids: Any) -> tuple[Piece, ...]:
        return tuple(sorted(self.piece(u) for u in ids if u in self.board.units))

    def side(self, nation: str) -> Side:
        return "attacker" if nation == self.b["attacker"] else "defender"

    def fight(self, kind: Kind, attackers: tuple[Piece, ...], defenders: tuple[Piece, ...]) -> Fight:
        """The fight with the volley in progress: its step, shots, hits and choices so far."""
        b = self.b
        f = Fight(kind, b["attacker"], b["defender"], attackers, defenders, tuple(b.get("opening", ())))
        step, stage = _VOLLEY_STEPS.get(b["step"], (VolleyStep.DONE, "main"))
        if step == VolleyStep.DONE:
            return f
        if step == VolleyStep.TARGETS:
            begun = volley.begin(f, self.ctx, stage)  # type: ignore[arg-type]
            if begun is None:
                return f
            f = begun[0]
            recorded = {k: Shot(k, s["target"]) for k, s in b["shots"].items()}
            shots = {s.firer: s for s in f.shots} | recorded
            return evolve(
                f,
                shots=tuple(shots[k] for k in sorted(shots)),
                waiting=tuple(self.side(n) for n in b["waiting"]),
            )
        # Only this volley's selective firers have shots: a volley without any opens no targets
        # step, so the log still holds the last volley's shots (spent: the procedure has none).
        aiming = {x.unit for x in firers(f, self.ctx, stage) if x.legal is not None}  # type: ignore[arg-type]
        recorded_shots = tuple(Shot(k, s["target"], s["screen"]) for k, s in sorted(b["shots"].items()) if k in aiming)
        # A volley's dice wait for nobody's choice: the sides that roll are its firers' (the
        # recorded step names them), not a waiting the volley keeps.
        waiting = () if step == VolleyStep.FIRE else tuple(self.side(n) for n in b["waiting"])
        f = evolve(f, stage=stage, step=step, shots=recorded_shots, waiting=waiting)
        if step == VolleyStep.CASUALTIES:
            f = evolve(
                f,
                hits=tuple(sorted(b["pending_hits"])),
                groups=tuple((g["side"], g["class"], g["hits"]) for g in b["groups"]),
                chosen=tuple((side, tuple(units)) for side, units in b["chosen"].items()),
            )
        return f


# The convoy procedure's steps by the names the log gives them; any other is its volley's.
_CONVOY_STEPS = {
    "declared": convoy.ConvoyStep.MERCHANT_DEFENCE,
    "merchant_defence": convoy.ConvoyStep.MERCHANT_DEFENCE,
    "merchant_casualty": convoy.ConvoyStep.MERCHANT_CASUALTY,
    "search": convoy.ConvoyStep.SEARCHERS,
    "convoy_table": convoy.ConvoyStep.CONVOY_TABLE,
}
# The interception procedure's steps after its search, by their logged names; any other is its
# volley's.
_INTERCEPTION_STEPS = {
    "detect": interception.InterceptionStep.DETECT,
    "decide": interception.InterceptionStep.DECIDE,
    "continue": interception.InterceptionStep.CONTINUE,
}


def from_battle(
    board: Board, battle: Mapping[str, Any], committed: frozenset[str], ctx: Context | None = None
) -> tuple[Any, Context, int]:
    """(the procedure's pure state, its context, the rounds fought so far). `ctx`, if given, is a
    context of the same ruleset, scenario and technology (its memo shared with earlier states)."""
    p = Position(board, battle, committed, ctx)
    b = battle
    kind, step = b["kind"], b["step"]
    zone = b["zone"]
    rounds = int(b.get("round", 0))
    read = _READERS.get(kind)
    if read is None:
        raise InputError(f"battle {b['id']} is a {kind}, which has no odds")
    return read(p, step, zone), p.ctx, rounds


def _naval(p: Position, step: str, zone: str) -> naval.NavalBattle:
    """A naval battle's pure state at its recorded step."""
    b = p.b
    attackers, defenders = p.pieces(b["attackers"]), p.pieces(b["defenders"])
    return naval.NavalBattle(
        p.fight("naval", attackers, defenders),
        naval.NavalStep.DECIDE if step == "decide" else naval.NavalStep.VOLLEY,
        retreat_zones=tuple(combat.retreat_zones(p.board, b["attacker"], zone)),
        waiting=tuple(p.side(n) for n in b["waiting"]) if step == "decide" else (),
        submerged=p.pieces(b["submerged"]),
        started=(len(attackers), len(defenders)),
    )


def _convoy(p: Position, step: str, zone: str) -> convoy.ConvoyBattle:
    """A convoy battle's pure state at its recorded step."""
    board, b = p.board, p.b
    zone_subs = p.pieces(
        u.id for u in board.units_at(zone) if u.nation == b["attacker"] and board.unit_type(u).is_submarine
    )
    eligible = tuple(
        sorted(p.piece(u.id) for u in convoy_rules.eligible_searchers(board, b["defender"], zone, p.committed))
    )
    detecting = p.pieces(b.get("detecting", ()))
    c = convoy.ConvoyBattle(
        _CONVOY_STEPS.get(step, convoy.ConvoyStep.VOLLEY),
        b["attacker"],
        b["defender"],
        tuple(u for u in b["subs"] if u in board.units),
        zone_subs,
        eligible if step in ("declared", "merchant_defence", "merchant_casualty", "search") else detecting,
        board.ntr.get(b["defender"], {}).get(zone, 0),
        searchers=detecting,
        detecting=tuple(x.id for x in detecting),
        started_subs=len(zone_subs),
    )
    if c.step == convoy.ConvoyStep.VOLLEY:
        c = evolve(c, fight=p.fight("convoy", zone_subs, detecting))
    return c


def _searchers_named(p: Position, step: str) -> tuple[list[str], frozenset[str]]:
    """AS2, SM2: the searchers already named at a search step whose dice are still to come (the
    board just before the first roll, as luck reads it), and the units taking part in a search
    or battle this phase as they were before they were named (F7: naming them commits the air
    units among them, which were eligible all the same)."""
    named = list(p.b.get("searchers") or ()) if step == "search" else []
    return named, p.committed - frozenset(named)


def _asw(p: Position, step: str, zone: str) -> asw.AswCombat:
    """An ASW combat's pure state at its recorded step (before its search, as it starts)."""
    b = p.b
    subs = p.pieces(b["subs"])
    if step in ("started", "search"):
        named, committed = _searchers_named(p, step)
        eligible = tuple(
            sorted(p.piece(u.id) for u in asw_rules.eligible_units(p.board, b["attacker"], zone, committed))
        )
        s = asw.start(p.ctx, b["attacker"], b["defender"], subs, eligible)
        return asw.decide(s, p.ctx, named)[0] if named else s
    hunters, detected = p.pieces(b["hunters"]), p.pieces(b["detected"])
    return asw.AswCombat(
        asw.AswStep.DECIDE if step == "decide" else asw.AswStep.VOLLEY,
        b["attacker"],
        b["defender"],
        subs,
        hunters,
        fight=p.fight("asw", hunters, detected),
        undetected=p.pieces(b["undetected"]),
        submerged=p.pieces(b["submerged"]),
        hunters=tuple(x.id for x in hunters),
        started=(len(hunters), len(subs)),
    )


def _interception(p: Position, step: str, zone: str) -> interception.Interception:
    """An interception's pure state at its recorded step (before its search, as it starts)."""
    board, b = p.board, p.b
    subs = tuple(p.piece(u) for u in b["subs"] if u in board.units)
    route, index = b["route"], b["index"]
    named, committed = _searchers_named(p, step)
    eligible = tuple(
        sorted(p.piece(u.id) for u in interception_rules.eligible_searchers(board, b["attacker"], zone, committed))
    )
    base = interception.start(p.ctx, b["attacker"], b["defender"], subs, eligible, index > 0, index < len(route) - 1)
    if step in ("started", "search"):
        return interception.decide(base, p.ctx, named)[0] if named else base
    hunters = p.pieces(b["hunters"])
    detected = p.pieces(b["detected"])
    return evolve(
        base,
        step=_INTERCEPTION_STEPS.get(step, interception.InterceptionStep.VOLLEY),
        searchers=p.pieces(b["searchers"]),
        found=int(b["found"]),
        hunters=tuple(x.id for x in hunters),
        # SM3: a search that found nothing leaves no fight (as the procedure has it).
        fight=p.fight("interception", detected, hunters) if int(b["found"]) else None,
        # SM5: the submarines not detected, in the group's order (they go on in it).
        undetected=tuple(x for x in subs if x.id in b["undetected"]),
        submerged=p.pieces(b["submerged"]),
        retreated=p.pieces(b["retreated"]),
    )


# How each kind of battle with odds is read into its procedure's pure state.
_READERS: dict[str, Callable[[Position, str, str], Any]] = {
    "naval": _naval,
    "convoy": _convoy,
    "asw": _asw,
    "interception": _interception,
}
