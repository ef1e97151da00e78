"""The odds panel of the viewer's zone page: `odds need` to take and to hold the zone, and
`odds escorts` for the NTR there, each weighed within bounds that keep a page to about a second."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from domain.errors import InputError, TrackerError
from domain.text import possessive

# The zone page weighs its odds within these bounds, so that a page takes about a second at
# most: positions a battle or convoy attack may reach (a search twice that in all), and forces
# a search may weigh (each costs some milliseconds, however small its battle), units a side.
PAGE_POSITIONS = 2_000
PAGE_FORCES = 40
PAGE_UNITS = 10
TOO_LARGE = "too large to weigh here: `tracker {command}` weighs it, taking longer"


def zone_odds(
    board: Any, zone: str, ended: Collection[str] = (), attacking: Collection[str] = ()
) -> list[dict[str, str]]:
    """The panel: `odds need` for the nation whose turn it is to take the zone and to hold it,
    and `odds escorts` if it holds that nation's NTR, each as its command prints it, or why not.
    `ended`: the units whose movement has ended this turn (the campaign's `movement_ended`,
    SM4, SM5); `attacking`: the zones where its submarines stopped to attack this turn (the
    campaign's `attack_zones`, SM5), as `tracker odds need` weighs them."""
    from tracker.analysis import escorts, reach

    nation, quoted = board.nation, f'"{zone}"' if " " in zone else zone
    panels = []
    take, hold = f"odds need --zone {quoted} --win 0.9", f"odds need --zone {quoted} --hold --win 0.9"
    asks = [
        ("take", take, lambda: reach.attack_question(board, nation, zone, ended, attacking)),
        ("hold", hold, lambda: reach.hold_question(board, nation, zone, ended)),
    ]
    for title, command, ask in asks:
        panels.append({"title": f"{nation} to {title} {zone}", "command": command, **_weighed(ask, _need_text)})
    if board.ntr.get(nation, {}).get(zone, 0) > 0:
        command = f"odds escorts --zone {quoted} --ntr-loss 1"
        panels.append(
            {
                "title": f"Escorts for {possessive(nation)} NTR in {zone}",
                "command": command,
                **_weighed(lambda: escorts.convoy_question(board, zone), _escorts_text),
            }
        )
    for panel in panels:
        if panel["kind"] == "too_large":
            panel["text"] = TOO_LARGE.format(command=panel["command"])
    return panels


def _weighed(ask: Callable[[], Any], answer: Callable[[Any], str]) -> dict[str, str]:
    """An answer within the page's bounds: its text, the one-line refusal of a question that
    does not arise (no enemy there, nothing can reach it), or "too large to weigh here"."""
    from domain.procedures.odds import TooManyPositions
    from tracker.analysis import advise

    try:
        question = ask()
    except TrackerError as e:
        return {"text": str(e), "kind": "refused"}
    try:
        return {"text": answer(question), "kind": "answer"}
    except (TooManyPositions, advise.SearchTooLong, InputError):
        return {"text": "", "kind": "too_large"}  # the caller names the command that weighs it


def _need_text(question: Any) -> str:
    from tracker.analysis import advise

    sizes = [len(question.pool) + len(question.allies), *(len(us) for us in question.others.values())]
    if max(sizes) > PAGE_UNITS:
        raise advise.SearchTooLong(f"more than {PAGE_UNITS} units a side")
    return advise.render(advise.answer(question, 0.9, PAGE_POSITIONS, most_forces=PAGE_FORCES))


def _escorts_text(question: Any) -> str:
    from tracker.analysis import advise, escorts

    if any(len(w.pool) > PAGE_UNITS for w in question.windows):
        raise advise.SearchTooLong(f"more than {PAGE_UNITS} searchers")
    return escorts.render(escorts.answer(question, 1.0, PAGE_POSITIONS, most_choices=PAGE_FORCES))
