"""What the tracker answers from the projections rather than from the log: the projections
brought up to its end (refused, naming where, when they stopped on damaged data), and the board
at a point of a campaign's history (a national turn, one of its phases, or an event) with the
territories' owners as adjustments left them (AD1) and the nations neutral then (F8).

The functions of `Tracker.catch_up`, `board_from`, `adjusted_at` and `passed_over`, which call
them, and of the reports' neutral nations (`neutral_at`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import sqlalchemy.exc

from domain.errors import InputError
from domain.scenario import Scenario
from domain.text import phase_name
from projections.schema import ADJUSTED, event_index
from projections.views import BoardView, Views, stopped_at
from tracker.storage.event_app import DamagedLogError

if TYPE_CHECKING:
    from tracker.service.application import Tracker
    from tracker.service.passed_over import PassedOver


def catch_up(t: Tracker, cid: UUID | None = None) -> None:
    """Bring the projections up to the end of the log before anything is read from them;
    with `cid`, refuse when that campaign's projections stopped (naming where and why)."""
    try:
        t.projector.catch_up(last_id=t.max_notification_id)
    except (OverflowError, sqlalchemy.exc.DataError, sqlalchemy.exc.StatementError) as e:
        # A damaged row holding a number no column can take (2^63 on SQLite, 2^31 on
        # PostgreSQL): the log itself is wrong, and `verify` names the event.
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DamagedLogError(
            f"the projections cannot be brought up to date: a stored event holds a value the views "
            f"cannot take ({type(e).__name__}: {reason[:200]}); run `tracker verify`"
        ) from None
    if cid is not None:
        with t.engine.connect() as conn:
            problem = stopped_at(conn, cid)
        if problem is not None:
            # Damaged data, not bad usage: exit 1, as a failed verify.
            raise DamagedLogError(
                f"the history of this campaign cannot be read past event {problem[0]} ({problem[1]}); "
                "run `tracker verify`"
            )


def board_in(v: Views, turn: int | None = None, phase: str | None = None, at: int | None = None) -> BoardView:
    """The board at the end of a national turn (or one of its phases), or after an event."""
    if turn is not None:
        seq = v.seq_at_end_of(turn, phase)
        if seq is None:
            what = f"phase {phase_name(phase)} of turn {turn}" if phase else f"turn {turn}"
            raise InputError(f"{what} has not been played in this campaign")
    else:
        assert at is not None
        seq = at
    try:
        return v.board_at(seq)
    except LookupError:
        raise InputError(f"no event {seq} in this campaign") from None


def board_from(
    t: Tracker,
    v: Views,
    turn: int | None = None,
    phase: str | None = None,
    at: int | None = None,
    scenario: Scenario | None = None,
) -> BoardView:
    """`board_in` with the owners and the neutral nations of that point (`adjusted_at`), on
    views a command already caught up; `scenario`, the campaign's, when the caller holds it."""
    if turn == 1:
        scenario = scenario or t.load(v.cid, version=1).scenario
        # F8: the first nation neutral in round 1. Its turn holds the events of `new` (the
        # campaign's creation, this TurnPassedOver) but was never played: refused as any
        # other turn passed over, not shown as a research phase the nation never had.
        neutral = scenario.nations[scenario.turn_order[0]].entry_round > 1
        if neutral and (said := t.passed_over(v.cid, 1, v)) is not None:
            raise _passed_over_refusal(t, v, said)
    try:
        board = board_in(v, turn=turn, phase=phase, at=at)
    except InputError as refused:
        # F8: the board of a national turn passed over is refused as such (`passed_over`).
        said = None if turn is None else t.passed_over(v.cid, turn, v)
        if said is not None:
            raise _passed_over_refusal(t, v, said) from None
        raise InputError(f"{refused} ({_where_now(t, v)})") from None
    if scenario is None:
        scenario = t.load(v.cid, version=1).scenario
    board["owners"], entered = adjusted_at(t, v, board["seq"], scenario)
    board["neutral"] = _neutral_in(scenario, board["round"], entered)
    return board


def _where_now(t: Tracker, v: Views) -> str:
    """Where the campaign is, for the refusal of a point it has not reached: the last event and
    its turn and phase, as `log --turn` and `explain` name them."""
    last = t.recorder.last_version(v.cid)
    now = v.position(last)
    if now is None:
        return f"the last is event {last}"
    return f"the last is event {last}, in turn {now.turn}, {phase_name(now.phase)}"


def _passed_over_refusal(t: Tracker, v: Views, said: PassedOver) -> InputError:
    """F8: the refusal of the board of a turn passed over, naming the board that stood then:
    the turn played last before it, or, when none was (the first nations in turn order neutral
    in round 1, passed over as the campaign was created), the board it opened with, as the first
    turn played began (its position is that turn's, not a neutral's)."""
    played = said.played
    if played >= 1:
        return InputError(f"{said}; the board then is turn {played}'s: tracker state --turn {played}")
    return InputError(
        f"{said}; no turn was played before it, so the board then is the one the campaign opened with: "
        f"tracker state --at {opening_seq(v)}"
    )


def opening_seq(v: Views) -> int:
    """F8: the event after which stands the board a campaign opened with when the first nations
    in turn order were neutral in round 1 (`PassedOver.played` 0): turn 1 holds the events `new`
    recorded for it, the next one opens the first turn played."""
    return (v.seq_at_end_of(1) or 0) + 1


def neutral_at(t: Tracker, v: Views, seq: int, scenario: Scenario, round_: int) -> list[str]:
    """F8: the nations neutral after event `seq` of round `round_`, in turn order: by their
    scenario's entry rounds, less the entries adjustments brought forward by then (AD1), as
    `state --turn` says them (`board_from`)."""
    return _neutral_in(scenario, round_, adjusted_at(t, v, seq, scenario)[1])


def _neutral_in(scenario: Scenario, round_: int, entered: tuple[str, ...]) -> list[str]:
    neutral = scenario.neutral(round_, entered)
    return [n for n in scenario.turn_order if n in neutral]


def adjusted_at(t: Tracker, v: Views, seq: int, scenario: Scenario) -> tuple[dict[str, str], tuple[str, ...]]:
    """AD1: every territory's owner after event `seq`, by territory, and the nations whose
    entry into the war an adjustment brought forward by then (F8): the scenario's, changed
    only by adjustments (few), so folded from those recorded by then and not undone by then,
    found through the index of adjustments alone (never a scan of the whole log)."""
    owners = dict(scenario.game_map.land)
    entered: list[str] = []
    for _turn, event in _adjustments(t, v, seq):
        owners.update(getattr(event, "owners", {}))
        entered.extend(getattr(event, "enter", ()))
    return dict(sorted(owners.items())), tuple(entered)


def entries_brought_forward(t: Tracker, v: Views) -> dict[str, int]:
    """F8, AD1: each nation whose entry into the war a standing adjustment brought forward, with
    the national turn that adjustment was recorded in: its turns after that one were played
    (`passed_over`), its turns before it passed over while its scenario has it neutral."""
    forward: dict[str, int] = {}
    for turn, event in _adjustments(t, v, None):
        for nation in getattr(event, "enter", ()):
            forward.setdefault(nation, turn)
    return forward


def _adjustments(t: Tracker, v: Views, seq: int | None) -> list[tuple[int, object]]:
    """The adjustments recorded by event `seq` and not undone by then (every one standing now
    for None), in order, each with the national turn it was recorded in."""
    # The kind written out, so that the partial index of adjustments answers (see its
    # schema); the numbers too, so that the statement needs no compiling.
    by = (
        "undone_by IS NULL"
        if seq is None
        else f"seq <= {int(seq):d} AND (undone_by IS NULL OR undone_by > {int(seq):d})"
    )
    rows = v.conn.exec_driver_sql(
        f"SELECT seq, turn FROM {event_index.name} WHERE c = {int(v.key):d} AND kind = '{ADJUSTED}'"
        f" AND {by} ORDER BY seq"
    ).all()
    found: list[tuple[int, object]] = []
    for version, turn in rows:
        for stored in t.app.recorder.select_events(v.cid, gt=version - 1, lte=version):
            found.append((turn, t.decode(stored)))
    return found
