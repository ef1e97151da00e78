"""The state of a procedure in progress (a convoy battle, an interception, ASW combat or a naval
battle), as the events fold it: every field named and typed, which procedures have it, and the
steps a procedure goes through. It is plain JSON-like data (snapshots and undo store it as is).
"""

# No `from __future__ import annotations` here: the required and optional keys of a TypedDict
# are read from its annotations at run time (NotRequired must not be a string).
from typing import Literal, NotRequired, TypedDict

Kind = Literal["convoy", "interception", "asw", "naval"]
Side = Literal["attacker", "defender"]
SIDES: tuple[Side, Side] = ("attacker", "defender")

# The steps a procedure waits at (BattleAdvanced.step); "declared" and "started" only until the
# first step opens.
Step = Literal[
    "declared",
    "started",
    "merchant_defence",  # CV2
    "merchant_casualty",  # CV2
    "search",  # CV3, SM2, AS2
    "detect",  # SM3
    "opening_targets",  # NC2
    "opening_screening",  # NC2, HA1
    "opening_fire",  # NC2
    "targets",  # HA1, HA3
    "screening",  # HA1, HA3
    "fire",  # NC3, AS4, SM4, CV4
    "casualties",  # HA4-HA7
    "decide",  # SM4, AS5, NC4
    "continue",  # SM5
    "convoy_table",  # CV5
]


class Shot(TypedDict):
    """HA1, HA3: a selective shot's target, and the escort screening it (if any)."""

    target: str
    screen: str | None


class SideHits(TypedDict):
    """CV2: hits scored on a side, the units they may fall on, and who places them."""

    hits: int
    candidates: list[str]
    nation: str


# HA4-HA6: non-selective hits of one firing class on a side ("class" is the key recorded).
HitGroup = TypedDict("HitGroup", {"side": str, "nation": str, "class": str, "hits": int})


class Procedure(TypedDict):
    """One procedure in progress. The fields every procedure has come first; the others belong
    to the procedures named beside them."""

    id: int
    kind: Kind
    zone: str
    attacker: str  # the moving nation (a convoy battle's attacker, the submarines' owner)
    defender: str  # the nation that decides for the other side
    step: Step
    waiting: list[str]  # the nations the step waits for
    rule: str
    round: int
    hits: dict[str, SideHits]  # CV2, per side
    chosen: dict[str, list[str]]  # casualties chosen this volley, per side
    shots: dict[str, Shot]  # this volley's selective shots, by firer
    pending_hits: list[str]  # units hit this volley, taken together after it
    groups: list[HitGroup]  # this volley's non-selective hits
    submerged: list[str]
    retreated: NotRequired[list[str]]  # interception, ASW, naval
    subs: NotRequired[list[str]]  # convoy, interception, ASW: the submarines attacking or hunted
    detecting: NotRequired[list[str]]  # convoy: the searchers that detected (CV3, CV4)
    searchers: NotRequired[list[str]]  # convoy, interception, ASW
    route: NotRequired[list[str]]  # interception: the group's whole path (SM2)
    index: NotRequired[int]  # interception: where on the route it paused
    retreat: NotRequired[bool]  # interception: started by a retreat (SM4)
    found: NotRequired[int]  # interception: submarines found (SM3)
    found_by: NotRequired[list[str]]  # interception
    free_detected: NotRequired[list[str]]  # interception: detected, going on past their hunters (SM5)
    hunters: NotRequired[list[str]]  # interception, ASW: the units fighting the submarines
    detected: NotRequired[list[str]]  # interception, ASW
    undetected: NotRequired[list[str]]  # interception, ASW
    attackers: NotRequired[list[str]]  # naval
    defenders: NotRequired[list[str]]  # naval
    opening: NotRequired[list[str]]  # naval: the submarines firing first (NC2)
    cancelled: NotRequired[list[str]]  # naval: opening fire cancelled by escorts (NC2)
