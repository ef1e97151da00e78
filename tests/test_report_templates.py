"""The forum-post template: a hand-built report renders to its reference Markdown, and the same
document in BBCode; each dialect escapes players' text for its own markup, never for HTML, while
HTML templates stay HTML-escaped."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from importlib.resources import files
from typing import Any

from tracker.reports.html import template_environment
from tracker.reports.post import Dialect, Marked, Row, render_post
from tracker.reports.report import render


def figures(balance: int, ntr: dict[str, int], submarines: int) -> dict[str, Any]:
    return {
        "balance": balance,
        "ntr_at_sea": sum(ntr.values()),
        "ntr": ntr,
        "ntr_lost": 0,
        "units": submarines,
        "damaged": 0,
        "fleet_cost": 6 * submarines,
        "by_type": {"submarine": submarines},
        "tech": {"advanced_submarine": 0},
    }


def roll(seq: int, number: int, value: int, undone_by: int | None = None) -> dict[str, Any]:
    return {
        "seq": seq,
        "roll": number,
        "roller": "Germany",
        "unit": None,
        "rule": "TE1",
        "purpose": "research",
        "kind": "research",
        "faces": 10,
        "values": [value],
        "target": 9,
        "base_target": 9,
        "success_when": "at_least",
        "modifiers": [],
        "outcome": "success" if value >= 9 else "failure",
        "source": "auto",
        "reference": None,
        "battle": None,
        "undone_by": undone_by,
    }


def research(seq: int, value: int, undone_by: int | None = None) -> dict[str, Any]:
    return {
        "seq": seq,
        "nation": "Germany",
        "technology": "advanced_submarine",
        "cost": 10,
        "roll": roll(seq + 1, seq, value, undone_by),
        "success": value >= 9,
        "level": 1 if value >= 9 else None,
        "acquired": False,
        "undone_by": undone_by,
    }


def step(seq: int, summary: str, rule: str, undone_by: int | None = None) -> dict[str, Any]:
    return {"seq": seq, "kind": "Adjusted", "rule": rule, "summary": summary, "undone_by": undone_by}


def taken_back(seq: int, kind: str, rule: str, summary: str) -> dict[str, Any]:
    return {"seq": seq, "turn": 1, "phase": "research", "kind": kind, "rule": rule, "summary": summary}


def a_turn() -> dict[str, Any]:
    """Germany's turn 1: a research roll taken back by an override undo and rolled again, a move
    taken back by a plain undo, a casualty outside any battle, an adjustment with a player's
    reason, and the log's head."""
    return {
        "turn": 1,
        "round": 1,
        "nation": "Germany",
        "complete": False,
        "first_seq": 2,
        "last_seq": 12,
        "events": [],
        "moves": [
            {
                "seq": 8,
                "phase": "combat_movement",
                "nation": "Germany",
                "units": ["DE-SS1"],
                "path": ["Heligoland Bight", "Southern North Sea"],
                "hostile_passed": [],
                "carried": [],
                "undone_by": 9,
            }
        ],
        "ntr_placed": [],
        "research": [research(2, 4, undone_by=4), research(5, 9)],
        "battles": [],
        "rolls": [],
        "casualties": [
            {
                "seq": 10,
                "unit": "GB-DD1",
                "type": "destroyer",
                "nation": "Britain",
                "result": "sunk",
                "battle": None,
                "rule": "AD1",
                "undone_by": None,
            }
        ],
        "ntr_lost": [],
        "resources": [],
        "undos": [
            {
                "seq": 4,
                "turn": 1,
                "undone_from": 2,
                "undone_to": 3,
                "override": True,
                "reason": "rolled for the *wrong* technology",
                "rolls": [2],
                "agreed_by": ["Britain"],
                "summary": "",
                "undone_by": None,
                "undone_events": [
                    taken_back(2, "ResearchPaid", "TE1", "paid"),
                    taken_back(3, "PhaseAdvanced", "", "next"),
                ],
            },
            {
                "seq": 9,
                "turn": 1,
                "undone_from": 8,
                "undone_to": 8,
                "override": False,
                "reason": "",
                "rolls": [],
                "agreed_by": [],
                "summary": "",
                "undone_by": None,
                "undone_events": [
                    taken_back(8, "UnitsMoved", "", "move"),
                ],
            },
        ],
        "purchases": [],
        "unplaced": {},
        "adjustments": [{**step(11, "Britain resources -3", "AD1"), "reason": "a land battle"}],
        "dice_record": [],
        "neutrality": [],
        "other": [step(1, "campaign created", "T1")],
        "war_entries": [],
        "end": {
            "seq": 12,
            "phase": "purchase",
            "nations": {"Germany": figures(7, {"Skagerrak": 2}, 3), "Britain": figures(30, {}, 2)},
            "hash": "ab12",
        },
    }


def a_report() -> dict[str, Any]:
    return {
        "schema": 1,
        "scope": "turn",
        "campaign": {
            "name": "Autumn <b>1914</b> & *co*",
            "scenario": "north-sea-1914",
            "scenario_title": "The North Sea",
            "ruleset": "twtea-3e",
            "dice_mode": "auto",
            "turn_order": ["Germany", "Britain"],
            "sides": {"Germany": "Central Powers", "Britain": "Entente"},
            "technologies": ["advanced_submarine"],
            "tech_names": {"advanced_submarine": "Advanced Submarine"},
            "unit_types": {"submarine": {"abbr": "SS", "category": "naval", "cost": 6}},
        },
        "position": {"seq": 12, "turn": 1, "round": 1, "nation": "Germany", "phase": "purchase"},
        "neutral": {"turn": 1, "seq": 12, "nations": []},
        "start": {"seq": 1, "nations": {"Germany": figures(17, {"Skagerrak": 2}, 2), "Britain": figures(30, {}, 2)}},
        "series": [],
        "turns": [a_turn()],
        "luck": None,
    }


REFERENCE_MARKDOWN = """\
# Autumn \\<b>1914\\</b> & \\*co\\*: Turn 1: Germany, round 1 (in progress)

Report of turn 1 (Germany, round 1), events 2-12 · The North Sea · ruleset twtea-3e · auto dice · \
the campaign is now at turn 1, Germany, purchase (event 12)

> **Override undo:** dice rolls were taken back in this turn (see *Undos*).

## Research

| Nation | Technology | Cost | Dice | Needed | Result | Event |
|---|---|---|---|---|---|---|
| ~~Germany~~ | ~~Advanced Submarine~~ | ~~10~~ | ~~D10: 4~~ | ~~>=9~~ | ~~failure~~ | ~~2~~ *(undone by event 4)* |
| Germany | Advanced Submarine | 10 | D10: 9 | >=9 | success: level 1 | 5 |

## Moves

- combat movement: ~~Germany moves DE-SS1: Heligoland Bight -> Southern North Sea~~ *(undone by event 9)* (event 8)

## Adjustments

- Britain resources -3 (AD1, event 11)

## Other casualties

| Unit | Type | Nation | Result | Rule | Event |
|---|---|---|---|---|---|
| GB-DD1 | destroyer | Britain | sunk | AD1 | 10 |

## Undos

- **OVERRIDE undo**: event 4 undid events 2-3, taking back dice roll 2, agreed by Britain. \
Reason: *rolled for the \\*wrong\\* technology*
  - ~~paid~~ (turn 1, TE1, event 2)
  - ~~1 phase change~~
- Undo: event 9 undid event 8
  - ~~move~~ (turn 1, UnitsMoved, event 8)

## Other events

- campaign created (T1, event 1)

## Forces at the end of the turn (after event 12)

| Nation | submarine | Units | Damaged | Cost |
|---|---|---|---|---|
| Germany | 3 (+1) | 3 (+1) | 0 | 18 (+6) |
| Britain | 2 | 2 | 0 | 12 |

## Trade and resources at the end of the turn

| Nation | NTR at sea | NTR by zone | NTR lost | Resources | Advanced Submarine |
|---|---|---|---|---|---|
| Germany | 2 | Skagerrak 2 | 0 | 7 (-10) | 0 |
| Britain | 0 | - | 0 | 30 | 0 |

Log head after event 12: `12:ab12` (check with `tracker verify --head 12:ab12`)
"""


def test_a_turn_renders_to_its_reference_markdown() -> None:
    assert render(a_report(), "md") == REFERENCE_MARKDOWN


def test_blank_lines_stay_single_whatever_sections_a_turn_has() -> None:
    report = a_report()
    turn = report["turns"][0]
    for key in ("research", "moves", "casualties", "undos", "adjustments", "other"):
        turn[key] = []
    turn["end"]["hash"] = None
    md = render(report, "md")
    assert "\n\n\n" not in md and md.endswith("| 0 |\n")
    assert "Nothing but phase changes was recorded in this turn.\n\n## Forces" in md


def test_markdown_escapes_for_markdown_and_never_for_html() -> None:
    md = render(a_report(), "md")
    assert "&amp;" not in md and "&lt;" not in md and "&#" not in md
    assert "Autumn \\<b>1914\\</b> & \\*co\\*" in md


def test_markdown_keeps_a_character_reference_a_player_typed_as_typed() -> None:
    """ "Herbst &amp; Winter" was put in the Markdown as it stands, which a forum shows as
    "Herbst & Winter"; an "&" before a name and ";" is escaped, a plain one is not."""
    report = a_report()
    report["campaign"]["name"] = "Herbst &amp; Winter &#169; & Co"
    md = render(report, "md")
    assert "Herbst \\&amp; Winter \\&#169; & Co" in md


def test_bbcode_tells_the_same_turn_in_forum_tags() -> None:
    bb = render(a_report(), "bbcode")
    # No "<" BoardGameGeek would strip the post from: players' text spaced, comparisons as signs.
    assert bb.startswith(
        "[size=150][b]Autumn < b>1914< /b> & *co*: Turn 1: Germany, round 1 (in progress)[/b][/size]\n"
    )
    assert "[quote][b]Override undo:[/b] dice rolls were taken back in this turn (see [i]Undos[/i]).[/quote]" in bb
    assert "[size=120][b]Undos[/b][/size]\n\n[list]\n[*][b]OVERRIDE undo[/b]: event 4 undid" in bb
    assert "[list]\n[*][s]paid[/s] (turn 1, TE1, event 2)\n[*][s]1 phase change[/s]\n[/list]\n" in bb
    assert "[code]\nUnit    Type       Nation   Result  Rule  Event\n" in bb
    assert "Germany  Advanced Submarine  10    D10: 4  \u22659      failure           2 (undone by event 4)\n" in bb
    assert "Log head after event 12: 12:ab12 (check with tracker verify --head 12:ab12)\n" in bb


def test_bbcode_table_cells_keep_what_players_typed() -> None:
    """A manual dice reference in a table cell reaches BBCode as typed: its `*`, `~~`, backticks
    and backslashes are text there, not Markdown to strip (the report once lost them)."""
    report = a_report()
    typed = "x *y* z ~~w~~ `v` a\\b [b]"
    report["turns"][0]["research"][1]["roll"].update(source="manual", reference=typed)
    bb = render(report, "bbcode")
    cells = "Germany  Advanced Submarine  10    D10: 9 (manual, ref x *y* z ~~w~~ `v` a\\b [\u200bb])  \u22659"
    assert cells in bb
    block = bb[bb.index("[code]\nNation") :]
    assert block.index(cells) < block.index("[/code]")
    md = render(report, "md")
    assert "| D10: 9 (manual, ref x \\*y\\* z \\~\\~w\\~\\~ \\`v\\` a\\\\b \\[b\\]) |" in md


class Tagged(Dialect):
    """A markup of angle-bracket tags, to show which constructs the template asks for."""

    def escape(self, text: object) -> Marked:
        return text if isinstance(text, Marked) else Marked(" ".join(str(text).split()))

    def bold(self, text: object) -> Marked:
        return Marked(f"<b>{text}</b>", str(text))

    def italic(self, text: object) -> Marked:
        return Marked(f"<i>{text}</i>", str(text))

    def struck(self, text: object) -> Marked:
        return Marked(f"<s>{text}</s>", str(text))

    def code(self, text: object) -> Marked:
        return Marked(f"<code>{text}</code>", str(text))

    def heading(self, level: int, text: object) -> str:
        return f"<h{level}>{text}</h{level}>"

    def item(self, caller: Callable[[], str]) -> str:
        return f"<li>{caller()}</li>\n"

    def quote(self, caller: Callable[[], str]) -> str:
        return f"<q>{caller()}</q>\n"

    def bullets(self, caller: Callable[[], str], nested: bool = False) -> str:
        return f"<ul>\n{caller()}</ul>\n"

    def layout(self, header: list[Marked], rows: list[Row]) -> str:
        lines = [f"<tr>{''.join(f'<th>{h}</th>' for h in header)}</tr>"]
        for row in rows:
            cells = [self.cell(c) for c in row.cells]
            lines.append(f"<tr undone='{row.undone_by or ''}'>{''.join(f'<td>{c}</td>' for c in cells)}</tr>")
        return "\n".join(["<table>", *lines, "</table>"]) + "\n"


def test_the_post_template_writes_no_markup_of_its_own() -> None:
    """One document, two markups: every heading, list, quote, table and emphasis of the report
    comes from the dialect, so a third markup needs no template of its own."""
    report = a_report()
    report["scope"] = "campaign"
    report["series"] = [{"turn": 1, "round": 1, "nation": "Germany", "seq": 12, "complete": False}]
    report["series"][0] |= {"phase": "purchase", "nations": report["turns"][0]["end"]["nations"]}
    text = render_post(report, Tagged())
    assert "**" not in text and "~~" not in text and "`" not in text and "|" not in text
    assert not re.search(r"^(#|- |  - |> )", text, re.MULTILINE)
    # One turn is no range: the title said "turns 1-1".
    assert "<h1>Autumn <b>1914</b> & *co*: campaign report, turn 1</h1>" in text
    assert "<q><b>Override undo:</b> dice rolls were taken back in this turn (see <i>Undos</i>).</q>" in text
    assert "<li><b>OVERRIDE undo</b>: event 4 undid events 2-3" in text
    assert "<ul>\n<li><s>paid</s> (turn 1, TE1, event 2)</li>\n<li><s>1 phase change</s></li>\n</ul>\n" in text
    assert "<tr undone='4'><td>Germany</td><td>Advanced Submarine</td>" in text
    assert "<tr undone=''><td>1</td><td>1</td><td>Germany</td><td>7 / 2 / 3</td><td>30 / 0 / 2</td></tr>" in text
    assert "Log head after event 12: <code>12:ab12</code>" in text


def test_bbcode_writes_no_empty_list_and_no_markdown() -> None:
    report = a_report()
    report["turns"][0]["undos"][1]["undone_events"] = []  # an undo with nothing listed under it
    bb = render(report, "bbcode")
    assert "[list]\n[/list]" not in bb
    assert "[*]Undo: event 9 undid event 8\n[/list]\n" in bb
    assert not re.search(r"^(#|- |  - |> |\|)", bb, re.MULTILINE) and "**" not in bb and "~~" not in bb


def test_a_campaign_report_has_the_progress_table_and_each_turn_under_its_own_heading() -> None:
    report = a_report()
    report["scope"] = "campaign"
    second = copy.deepcopy(report["turns"][0])
    second.update(turn=2, nation="Britain", first_seq=None, last_seq=None, complete=True)
    report["turns"] = [{**report["turns"][0], "complete": True}, second]
    report["series"] = [
        {"turn": t["turn"], "round": 1, "nation": t["nation"], "seq": 12, "complete": True, "phase": "purchase"}
        | {"nations": t["end"]["nations"]}
        for t in report["turns"]
    ]
    md = render(report, "md")
    assert "## Progress\n\nEach cell: resources / NTR at sea / units at the end of the turn.\n\n" in md
    assert "| Turn | Round | Phasing | Germany | Britain |\n|---|---|---|---|---|\n" in md
    assert "| 2 | 1 | Britain | 7 / 2 / 3 | 30 / 0 / 2 |\n\n## Turn 1: Germany, round 1\n\n" in md
    assert "Phasing nation: **Britain** · round 1 · no events\n\n> **Override undo:**" in md
    assert "### Research\n\n" in md and "\n## Research" not in md


def test_post_templates_are_not_html_escaped_and_html_templates_are() -> None:
    env = template_environment()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert callable(env.autoescape)
    assert not env.autoescape("report.post.j2")
    assert env.autoescape("report.html.j2") and env.autoescape("viewer_board.html.j2")


def test_the_report_templates_ship_with_the_package() -> None:
    templates = files("tracker.reports") / "templates"
    assert (templates / "report.post.j2").is_file() and (templates / "report.html.j2").is_file()
