"""Turn reports (`tracker report`: Markdown, HTML with SVG charts, JSON) and `tracker stats`."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import DiceSource
from tests.support import advance as advance_passing
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.history import log_records

CNS = "Central North Sea"
BATTLE_TURN = 2  # the demo's convoy battle is fought in Britain's turn, round 1


@pytest.fixture(scope="module")
def demo_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    run_demo(str(path), lambda line: None)
    return path


@pytest.fixture
def demo_db(demo_source: Path, tmp_path: Path) -> str:
    """A private copy of the demo campaign, free to be changed by the test."""
    target = tmp_path / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        source = Path(str(demo_source) + suffix)
        if source.exists():
            shutil.copy(source, str(target) + suffix)
    return str(target)


def invoke(db: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result


def run(db: str, *args: str) -> str:
    return str(invoke(db, *args).stdout)


def report_json(db: str, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(db, "report", *args, "--format", "json"))
    return data


def current_turn(db: str) -> int:
    return int(json.loads(run(db, "state", "--json"))["turn"])


# ----- the turn with the convoy battle -----


def test_the_battle_turn_in_json_matches_the_log_and_the_board(demo_db: str) -> None:
    data = report_json(demo_db, "--turn", str(BATTLE_TURN))
    assert set(data) == {"schema", "scope", "campaign", "position", "neutral", "start", "series", "turns", "luck"}
    assert data["schema"] == 1 and data["scope"] == "turn"
    assert data["campaign"]["name"] == "demo"
    assert [s["turn"] for s in data["series"]] == [1, 2]
    (turn,) = data["turns"]
    assert set(turn) == {
        "turn", "round", "nation", "complete", "first_seq", "last_seq", "events", "moves", "ntr_placed",
        "research", "battles", "rolls", "casualties", "ntr_lost", "resources", "undos", "dice_record", "other",
        "end", "purchases", "unplaced", "adjustments", "neutrality", "war_entries", "passed_over",
    }  # fmt: skip
    assert (turn["turn"], turn["round"], turn["nation"], turn["complete"]) == (2, 1, "Britain", True)

    with Tracker(demo_db) as t:
        cid = t.campaign_id("demo")
        log = log_records(t, cid, turn=BATTLE_TURN, with_data=True)
        board = t.board_at(cid, turn=BATTLE_TURN)
    assert [e["seq"] for e in turn["events"]] == [r["seq"] for r in log]

    (battle,) = turn["battles"]
    declared = next(r["data"] for r in log if r["kind"] == "ConvoyAttackDeclared")
    assert (battle["attacker"], battle["defender"], battle["zone"]) == ("Germany", "Britain", CNS)
    assert battle["submarines"] == declared["submarines"] == ["DE-SS1", "DE-SS2"]
    assert battle["ntr"] == declared["ntr"] and battle["ended"]

    rolls = [r for r in log if r["kind"] == "DiceRolled"]
    battle_rolls = [r for r in rolls if r["battle"] == battle["battle"]]
    assert [(r["roll"], r["roller"], r["rule"], r["values"], r["target"], r["outcome"]) for r in battle["rolls"]] == [
        (d["roll"], d["roller"], d["rule"], d["values"], d["target"], d["outcome"])
        for d in (r["data"] for r in battle_rolls)
    ]
    assert {r["rule"] for r in battle["rolls"]} >= {"CV2", "CV3", "CV5"}
    assert any(r["target"] is not None for r in battle["rolls"])
    assert len(turn["rolls"]) == len(rolls)

    hits = [r["data"] for r in log if r["kind"] == "UnitHit"]
    assert hits, "the demo's battle sinks or damages something"
    assert [(c["unit"], c["result"]) for c in turn["casualties"]] == [
        (h["unit"], "sunk" if h["sunk"] else "damaged") for h in hits
    ]
    assert {c["type"] for c in turn["casualties"]} <= {"submarine", "destroyer", "cruiser", "fighter", "bomber"}

    destroyed = [r["data"] for r in log if r["kind"] == "NtrDestroyed"]
    assert [(n["nation"], n["zone"], n["count"]) for n in turn["ntr_lost"]] == [
        (d["nation"], d["zone"], d["count"]) for d in destroyed
    ]
    assert battle["ntr_destroyed"] == sum(d["count"] for d in destroyed) > 0

    (collected,) = turn["resources"]
    recorded = next(r["data"] for r in log if r["kind"] == "ResourcesCollected")
    assert collected["nation"] == "Britain"
    for key in ("ntr_value", "income", "lost", "collected", "balance"):
        assert collected[key] == recorded[key]
    assert collected["lost"] == battle["ntr_destroyed"]

    (paid,) = turn["research"]
    assert (paid["nation"], paid["technology"]) == ("Britain", "advanced_asw")
    assert paid["roll"]["values"] and paid["roll"]["target"] is not None

    end = turn["end"]["nations"]
    assert turn["end"]["seq"] == board["seq"]
    for nation, f in end.items():
        assert f["balance"] == board["balances"][nation]
        assert f["ntr"] == board["ntr"].get(nation, {})
        assert f["ntr_lost"] == board["ntr_lost"][nation]
        assert f["units"] == sum(1 for u in board["units"] if u["nation"] == nation)
        assert f["tech"] == board["tech"][nation]
    assert end["Britain"]["ntr_lost"] == battle["ntr_destroyed"]


def test_markdown_has_the_battle_dice_and_the_tables_and_no_html(demo_db: str) -> None:
    text = run(demo_db, "report", "--turn", str(BATTLE_TURN))  # Markdown is the default
    data = report_json(demo_db, "--turn", str(BATTLE_TURN))
    (turn,) = data["turns"]
    (battle,) = turn["battles"]
    assert text.startswith("# demo: Turn 2: Britain, round 1\n")
    assert f"## Convoy battle {battle['battle']} in {CNS}" in text
    assert "Germany attacks Britain's" in text and "DE-SS1, DE-SS2" in text
    assert text.splitlines()[2].startswith("Report of turn 2 (Britain, round 1), events ")
    # Each battle once: one line per roll and step, in order, no table of its dice beside them.
    assert "| Roll |" not in text
    section = text[text.index(f"## Convoy battle {battle['battle']}") :]
    section = section[: section.index("**Result:**")]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == len(battle["rolls"]) + len(battle["steps"])
    for roll in battle["rolls"]:
        values = ", ".join(map(str, roll["values"]))
        line = next(line for line in lines if line.startswith(f"- {roll['purpose']}: {values}"))
        assert line.endswith(f"({roll['rule']})")
        if roll["target"] is not None:
            op = "<=" if roll["success_when"] == "at_most" else ">="
            assert f"({op}{roll['target']})" in line
    for heading in (
        "## Moves",
        "## Resources collected",
        "## Research",
        "## Forces at the end of the turn",
        "## Trade and resources at the end of the turn",
    ):
        assert heading in text
    # The battle's casualties and NTR lost are in its result, not told again.
    assert "## Casualties" not in text and "## NTR lost" not in text and "## Other casualties" not in text
    assert f"**Result:** sunk: {', '.join(c['unit'] for c in turn['casualties'])}" in text
    assert "| Nation | From NTR | Other income | NTR lost to convoys | Collected | Balance | Event |" in text
    assert "| Nation | NTR at sea | NTR by zone | NTR lost | Resources | Advanced Submarine | Advanced ASW |" in text
    # Tables are well formed: every row of a table has as many cells as its header.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            width = lines[i - 1].count(" | ")
            j = i + 1
            while j < len(lines) and lines[j].startswith("| "):
                assert lines[j].count(" | ") - lines[j].count("\\|") == width, lines[j]
                j += 1
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", text), "no HTML in the forum post"


# ----- HTML -----


class _Page(HTMLParser):
    """Everything the checks need from a page: tags, attributes, style text, visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1] == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)


def parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def assert_self_contained(page: _Page) -> None:
    assert page.count("script") == 0 and page.count("link") == 0 and page.count("img") == 0
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name in ("src", "href", "xlink:href", "action", "data", "poster") and value:
                assert value.startswith("#"), f"<{tag} {name}={value!r}> points outside the page"
            if name == "style" and value:
                assert "url(" not in value
    css = " ".join(page.styles)
    assert "@import" not in css and "url(" not in css


def test_html_is_one_self_contained_page_with_svg_charts(demo_db: str) -> None:
    html = run(demo_db, "report", "--turn", str(BATTLE_TURN), "--format", "html")
    (battle,) = report_json(demo_db, "--turn", str(BATTLE_TURN))["turns"][0]["battles"]
    page = parse(html)
    assert html.startswith("<!DOCTYPE html>")
    assert page.count("svg") == 6, "the map, NTR at sea, resources, units, fleet cost and luck"
    assert {attrs.get("id") for tag, attrs in page.tags if tag == "figure"} == {
        "board-map",
        "chart-ntr_at_sea",
        "chart-balance",
        "chart-units",
        "chart-fleet_cost",
        "chart-luck",
    }
    assert page.count("style") >= 1 and page.count("table") >= 7
    assert_self_contained(page)
    text = " ".join(" ".join(page.text).split())
    for nation in ("Germany", "Britain", "Austria-Hungary", "France"):
        assert nation in text  # legends are text in the SVG, and table headers
    assert f"Convoy battle {battle['battle']} in {CNS}" in text
    assert "Resources collected" in text and "Trade and resources at the end of the turn" in text
    assert "\u2264" in text  # targets shown as "≤4"
    # SVG element IDs stay unique across the charts of one page.
    ids = [attrs["id"] for _, attrs in page.tags if attrs.get("id")]
    assert len(ids) == len(set(ids))


def test_html_and_markdown_escape_what_players_typed(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    name = "<script>alert(1)</script> & *bold* | pipe"
    with Tracker(db) as t:
        cid = t.create(name, "north-sea-1914", dice="auto", seed=f"{5:064x}").id
        t.execute(cid, lambda c, d: c.research("Germany", "advanced_submarine", d))
        t.undo(cid, override=True, reason="<b>misclick</b> | *oops*", agreed_by=["Britain"])
    html = run(db, "report", "--turn", "1", "--format", "html")
    assert "<script>" not in html and "<b>misclick" not in html
    assert "&lt;b&gt;misclick&lt;/b&gt;" in html
    assert parse(html).count("script") == 0
    md = run(db, "report", "--turn", "1")
    assert not re.search(r"(?<!\\)<[A-Za-z/]", md), "every '<' of a tag is escaped"
    assert "\\<script>alert(1)\\</script> & \\*bold\\* \\| pipe" in md
    assert "\\<b>misclick\\</b> \\| \\*oops\\*" in md


# ----- the whole campaign -----


def test_all_reports_every_played_turn_in_every_format(demo_db: str) -> None:
    played = current_turn(demo_db)
    data = report_json(demo_db, "--all")
    assert data["scope"] == "campaign"
    assert [t["turn"] for t in data["turns"]] == list(range(1, played + 1))
    assert [s["turn"] for s in data["series"]] == list(range(1, played + 1))
    assert [t["complete"] for t in data["turns"]] == [True] * (played - 1) + [False]
    assert data["position"]["turn"] == played
    nations = data["campaign"]["turn_order"]
    assert [t["nation"] for t in data["turns"]] == [nations[(k - 1) % len(nations)] for k in range(1, played + 1)]
    with Tracker(demo_db) as t:
        everything = log_records(t, t.campaign_id("demo"))
    assert sum(len(t["battles"]) for t in data["turns"]) == len({r["battle"] for r in everything if r["battle"]})
    assert sum(len(t["events"]) for t in data["turns"]) == len(everything)

    md = run(demo_db, "report", "--all", "--format", "md")
    assert md.startswith(f"# demo: campaign report, turns 1-{played}\n")
    assert "## Progress" in md
    for k in range(1, played + 1):
        assert re.search(rf"^## Turn {k}: ", md, re.MULTILINE)
    assert md.count("### Forces at the end of the turn") == played
    assert "(in progress)" in md

    page = parse(run(demo_db, "report", "--all", "--format", "html"))
    assert page.count("svg") == 6, "the map now and five charts (luck included)"
    assert sum(1 for tag, attrs in page.tags if tag == "section" and (attrs.get("id") or "").startswith("turn-")) == (
        played
    )
    assert_self_contained(page)


def test_report_needs_exactly_one_of_turn_and_all(demo_db: str) -> None:
    assert "give --turn N or --all" in invoke(demo_db, "report", code=2).output
    invoke(demo_db, "report", "--turn", "1", "--all", code=2)


def test_a_turn_not_yet_played_exits_2_with_one_line(demo_db: str) -> None:
    played = current_turn(demo_db)
    result = invoke(demo_db, "report", "--turn", str(played + 1), code=2)
    assert result.output == f"Error: turn {played + 1} has not been played in campaign 'demo' " + (
        f"(played: turns 1-{played}; the current turn is {played})\n"
    )
    invoke(demo_db, "report", "--turn", "0", code=2)


def test_a_campaign_of_one_turn_is_reported_as_turn_1_not_turns_1_1(tmp_path: Path) -> None:
    """A one-number span is no range: "turn 1", "event 1"; "turns 1-1" read as a typo."""
    db = str(tmp_path / "one.db")
    run(db, "new", "one", "--scenario", "north-sea-1914", "--dice", "auto")
    md = run(db, "report", "--all")
    assert md.startswith("# one: campaign report, turn 1\n")
    assert "Report of turn 1 · " in md and "1-1" not in md
    assert "<title>one: campaign report, turn 1</title>" in run(db, "report", "--all", "--format", "html")
    bb = run(db, "report", "--all", "--format", "bbcode")
    assert "campaign report, turn 1" in bb and "1-1" not in bb
    assert "Report of turn 1 (Germany, round 1), event 1 · " in run(db, "report", "--turn", "1")
    out = invoke(db, "report", "--turn", "2", code=2).output
    assert out == "Error: turn 2 has not been played in campaign 'one' (played: turn 1; the current turn is 1)\n"


# ----- undo -----


def research(c: Campaign, d: DiceSource) -> None:
    c.research(c.nation, "advanced_submarine", d)


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def move_sub(c: Campaign, _d: DiceSource) -> None:
    c.move("Germany", ["DE-SS3"], ["Southern North Sea"])


def test_rk3_an_override_undo_without_dice_says_no_dice_roll_was_taken_back(tmp_path: Path) -> None:
    db = str(tmp_path / "undo.db")
    with Tracker(db) as t:
        cid = t.create("undo", "north-sea-1914", dice="auto", seed=f"{9:064x}").id
        t.execute(cid, advance)
        t.undo(cid, override=True, reason="a slip", agreed_by=["Britain"])
    (undo,) = report_json(db, "--turn", "1")["turns"][0]["undos"]
    assert undo["override"] and undo["rolls"] == []
    md = run(db, "report", "--turn", "1")
    notice = "actions were taken back in this turn by agreement, no dice roll among them (see *Undos*)."
    assert f"> **Override undo:** {notice}" in md
    assert "dice rolls were taken back" not in md
    page = run(db, "report", "--turn", "1", "--format", "html")
    assert "<strong>Override undo:</strong> actions were taken back in this turn by agreement, no dice" in page
    assert "dice rolls were taken back" not in page


def test_override_undo_is_highlighted_with_its_reason_and_undone_events_are_struck(tmp_path: Path) -> None:
    db = str(tmp_path / "undo.db")
    with Tracker(db) as t:
        cid = t.create("undo", "north-sea-1914", dice="auto", seed=f"{9:064x}").id
        t.execute(cid, research)
        override = t.undo(
            cid, override=True, reason="rolled for the wrong technology", agreed_by=["Britain"]
        ).originator_version
        t.execute(cid, research)
        t.execute(cid, advance)
        t.execute(cid, advance)
        t.execute(cid, move_sub)
        plain = t.undo(cid).originator_version
    data = report_json(db, "--turn", "1")
    (turn,) = data["turns"]
    first, second = turn["research"]
    assert first["undone_by"] == override and second["undone_by"] is None
    assert [r["undone_by"] for r in turn["rolls"]] == [override, None]
    assert turn["moves"][0]["undone_by"] == plain
    undos = {u["seq"]: u for u in turn["undos"]}
    assert undos[override]["override"] and undos[override]["reason"] == "rolled for the wrong technology"
    assert undos[override]["rolls"] == [first["roll"]["roll"]]
    assert [e["kind"] for e in undos[override]["undone_events"]] == ["ResearchPaid", "DiceRolled"]
    assert not undos[plain]["override"]

    md = run(db, "report", "--turn", "1")
    assert "> **Override undo:**" in md
    undid = f"event {override} undid events 2-3, taking back dice roll 1, agreed by Britain. "
    assert f"**OVERRIDE undo**: {undid}" in md
    assert "Reason: *rolled for the wrong technology*" in md
    assert f"- Undo: event {plain} undid event {plain - 2}" in md  # the event before it holds what was asked
    value = first["roll"]["values"][0]
    assert f"| ~~Germany~~ | ~~Advanced Submarine~~ | ~~10~~ | ~~D10: {value}~~ | ~~>=9~~ |" in md
    assert f"| ~~{first['seq']}~~ *(undone by event {override})* |" in md
    assert f"| Germany | Advanced Submarine | 10 | D10: {second['roll']['values'][0]} | >=9 |" in md
    assert f"~~Germany moves DE-SS3: Heligoland Bight -> Southern North Sea~~ *(undone by event {plain})*" in md

    html = run(db, "report", "--turn", "1", "--format", "html")
    page = parse(html)
    classes = [attrs.get("class") or "" for _, attrs in page.tags]
    assert classes.count("override") == 1 and classes.count("plain-undo") == 1
    assert sum(1 for c in classes if c == "undone") >= 3  # the research row, its roll, the move
    assert "rolled for the wrong technology" in html
    assert f"undone by event {override}" in html and f"undone by event {plain}" in html


def test_an_undo_back_into_an_earlier_turn_keeps_the_undone_turn_visible(demo_db: str) -> None:
    played = current_turn(demo_db)
    with Tracker(demo_db) as t:
        cid = t.campaign_id("demo")
        # Back to before the previous nation's collection: one action with entering this turn.
        collected = next(r for r in log_records(t, cid, turn=played - 1) if r["kind"] == "ResourcesCollected")
        # The undo starts where the collecting action does: at what was asked (PL1).
        asked = [r["seq"] for r in log_records(t, cid, kind="ActionAsked") if r["seq"] < collected["seq"]]
        to = asked[-1] - 1
        undo = t.undo(
            cid, to=to, override=True, reason="replay the end of the round", agreed_by=["Germany", "Britain"]
        ).originator_version
    assert current_turn(demo_db) == played - 1
    invoke(demo_db, "report", "--turn", str(played), code=2)
    data = report_json(demo_db, "--turn", str(played - 1))
    (u,) = data["turns"][0]["undos"]
    assert u["seq"] == undo and u["override"]
    assert {e["turn"] for e in u["undone_events"]} == {played - 1, played}
    assert any(e["kind"] == "DiceRolled" for e in u["undone_events"] if e["turn"] == played)
    md = run(demo_db, "report", "--all")
    assert f"(turn {played}, TE1, event" in md
    assert not re.search(rf"^## Turn {played}: ", md, re.MULTILINE)


# ----- files -----


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_output_file_holds_what_the_terminal_would_show(demo_db: str, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"turn2.{fmt}"
    shown = run(demo_db, "report", "--turn", "2", "--format", fmt)
    said = run(demo_db, "report", "--turn", "2", "--format", fmt, "-o", str(target))
    assert said.startswith(f"Wrote the {fmt} report of turn 2 to {target}")
    assert target.read_text(encoding="utf-8") == shown


def test_an_unwritable_output_file_exits_2(demo_db: str, tmp_path: Path) -> None:
    result = invoke(demo_db, "report", "--all", "-o", str(tmp_path / "missing" / "r.md"), code=2)
    assert result.output.startswith("Error: cannot write ") and result.output.count("\n") == 1


# ----- stats -----


def test_stats_csv_has_one_row_per_nation_per_turn_matching_the_board(demo_db: str, tmp_path: Path) -> None:
    played = current_turn(demo_db)
    rows = list(csv.DictReader(io.StringIO(run(demo_db, "stats", "--csv"))))
    with Tracker(demo_db) as t:
        cid = t.campaign_id("demo")
        campaign = t.load(cid)
        nations = list(campaign.scenario.turn_order)
        costs = {name: u.cost for name, u in campaign.ruleset.units.items()}
        techs = list(campaign.ruleset.technologies)
        boards = {k: t.board_at(cid, turn=k) for k in range(1, played + 1)}
    assert len(rows) == played * len(nations)
    assert [(int(r["turn"]), r["nation"]) for r in rows] == [(k, n) for k in range(1, played + 1) for n in nations]
    assert set(rows[0]) >= {"turn", "round", "nation", "balance", "ntr_at_sea", "ntr_lost", "units", "fleet_cost"}
    for r in rows:
        board = boards[int(r["turn"])]
        nation = r["nation"]
        units = [u for u in board["units"] if u["nation"] == nation]
        assert int(r["round"]) == board["round"] and r["turn_nation"] == board["nation"]
        assert int(r["balance"]) == board["balances"][nation]
        assert int(r["ntr_at_sea"]) == sum(board["ntr"].get(nation, {}).values())
        assert int(r["ntr_lost"]) == board["ntr_lost"][nation]
        assert int(r["units"]) == len(units)
        assert int(r["fleet_cost"]) == sum(costs[u["type"]] for u in units)
        for tech in techs:
            assert int(r[f"tech_{tech}"]) == board["tech"][nation][tech]
    assert [r["complete"] for r in rows if int(r["turn"]) == played] == ["no"] * len(nations)
    britain = {int(r["turn"]): r for r in rows if r["nation"] == "Britain"}
    assert int(britain[BATTLE_TURN]["ntr_lost"]) > int(britain[BATTLE_TURN - 1]["ntr_lost"])

    target = tmp_path / "stats.csv"
    assert run(demo_db, "stats", "--csv", "-o", str(target)).startswith("Wrote the statistics (CSV)")
    assert list(csv.DictReader(target.open(encoding="utf-8"))) == rows


def test_stats_without_csv_prints_a_table(demo_db: str) -> None:
    out = run(demo_db, "stats")
    assert "Figures at the end of each national turn" in out
    assert "Austria-Hungary" in out and "Resources" in out and "Submarine" in out and "ASW" in out
    rows = json.loads(run(demo_db, "stats", "--json"))
    assert len(rows) == 4 * current_turn(demo_db)
    invoke(demo_db, "stats", "--csv", "--json", code=2)


def test_bbcode_tells_the_markdown_story_in_forum_tags(demo_db: str) -> None:
    md = run(demo_db, "report", "--turn", str(BATTLE_TURN))
    bb = run(demo_db, "report", "--turn", str(BATTLE_TURN), "--format", "bbcode")
    assert bb.startswith("[size=150][b]demo: Turn 2: Britain, round 1[/b][/size]\n")
    assert "[size=120][b]Convoy battle 3 in Central North Sea[/b][/size]" in bb
    assert "[list]\n[*]Britain merchant defence in Central North Sea: 10, 2 -> total 12: no effect (CV2)" in bb
    assert "[b]Result:[/b] sunk: GB-DD1" in bb
    # Tables as fixed-width blocks with aligned columns, no Markdown left over.
    block = bb[bb.index("[code]\nNation   Technology") :]
    block = block[: block.index("[/code]")]
    assert "Britain  Advanced ASW  10" in block
    assert "**" not in bb and "|---" not in bb and "\n- " not in bb and "\n#" not in bb
    # The same events in both.
    assert md.count("(CV3)") == bb.count("(CV3)") > 0


def _move_undone(db: str, name: str, reason: str) -> None:
    """A campaign `name` whose first turn moved a submarine and took the move back, saying why."""
    with Tracker(db) as t:
        cid = t.create(name, "north-sea-1914", dice="auto", seed=f"{5:064x}").id
        t.execute(cid, lambda c, d: c.advance())
        t.execute(cid, lambda c, d: c.advance())
        t.execute(cid, lambda c, d: c.move("Germany", ["DE-SS3"], ["Southern North Sea"]))
        t.undo(cid, reason=reason)


def test_bbcode_strikes_undone_events_and_escapes_what_players_typed(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    _move_undone(db, "[b]loud[/b] *name*", "[url=http://x]click[/url]")
    bb = run(db, "report", "--turn", "1", "--format", "bbcode")
    assert "[\u200bb]loud[\u200b/b] *name*" in bb
    assert "[url=" not in bb and "[\u200burl=http://x]click" in bb
    assert "[s]Germany moves DE-SS3: Heligoland Bight -> Southern North Sea[/s]" in bb


def test_bbcode_leaves_no_less_than_sign_boardgamegeek_would_strip_the_post_from(tmp_path: Path) -> None:
    """BoardGameGeek drops the rest of a post from a "<" followed by anything but a space: every
    die's "(<=5)" and a reason typed with "<3" would cut the report off. In BBCode the
    comparisons are written as their signs and any other "<" is spaced; Markdown keeps them."""
    import re

    from tracker.reports.bbcode import bbcode

    db = str(tmp_path / "x.db")
    _move_undone(db, "lt", "<3 sorry, <b>misclick</b>")
    bb = run(db, "report", "--turn", "1", "--format", "bbcode")
    assert re.search(r"<\S", bb) is None, re.search(r".{20}<\S.{20}", bb)
    assert "< 3 sorry, < b>misclick< /b>" in bb
    assert "<3 sorry" in run(db, "report", "--turn", "1")
    assert bbcode("4 (<=5), 6 (>=5)") == "4 (\u22645), 6 (\u22655)"


def test_an_interception_whose_submarines_went_on_says_where_they_went_SM5(tmp_path: Path) -> None:
    """Britain lets three U-boats pass the Southern North Sea unsearched; they go on to the Dover
    Strait (the move after the interception), so none is still there, and the result says where
    they went."""
    db = str(tmp_path / "sm5.db")
    subs = ["DE-SS3", "DE-SS4", "DE-SS5"]
    with Tracker(db) as t:
        cid = t.create("sm5", "north-sea-1914", dice="auto", seed=f"{7:064x}").id
        t.execute(cid, advance)
        t.execute(cid, advance)
        t.execute(cid, lambda c, d: c.move("Germany", subs, ["Southern North Sea", "Dover Strait"]))
        battle = t.load(cid).battle_count
        t.execute(cid, lambda c, d: c.intercept_search(battle, [], d))
        t.execute(cid, lambda c, d: c.intercept_continue(battle, None))
        moved = log_records(t, cid, kind="UnitsMoved")[-1]["seq"]
    (b,) = report_json(db, "--turn", "1")["turns"][0]["battles"]
    assert (b["kind"], b["ended"], b["survivors"]) == ("interception", True, [])
    assert b["went_on"] == [{"units": subs, "zone": "Dover Strait", "seq": moved}]
    result = "nothing sunk; went on to Dover Strait: DE-SS3, DE-SS4, DE-SS5"
    assert f"**Result:** {result}\n" in run(db, "report", "--turn", "1")
    assert f"[b]Result:[/b] {result}\n" in run(db, "report", "--turn", "1", "--format", "bbcode")
    assert f"<strong>Result:</strong> {result}</p>" in run(db, "report", "--turn", "1", "--format", "html")


def test_an_interception_result_names_those_still_there_and_those_gone_on(demo_db: str) -> None:
    """The demo's interception: DE-SS4 submerged and stays, DE-SS3 went on undetected."""
    md = run(demo_db, "report", "--turn", "1")
    assert "**Result:** sunk: GB-DD3; submarines still there: DE-SS4; went on to Dover Strait: DE-SS3\n" in md


def test_sm4_an_interception_whose_submarine_retreated_says_no_submarine_is_still_there(tmp_path: Path) -> None:
    """DE-SS4 is found by GB-DD3, survives a round and goes back to the Heligoland Bight; the
    British searchers stay. The result said "still there: none", which read as if all were sunk."""
    db = str(tmp_path / "retreat.db")
    for args in (
        ("new", "r", "--scenario", "north-sea-1914", "--dice", "manual"),
        ("next",),
        ("next",),
        ("move", "DE-SS4", "--path", "Southern North Sea,Dover Strait"),
        ("intercept", "search", "1", "--units", "GB-DD3", "--dice", "1"),
        ("battle", "fire", "1", "--dice", "9,9"),
        ("intercept", "decide", "1", "--retreat", "de-ss4"),
    ):
        out = run(db, *args)
    assert out.splitlines()[-1].endswith("; no submarine is still there   [SM4]")
    md = run(db, "report", "--turn", "1")
    assert "**Result:** nothing sunk; no submarine is still there\n" in md
    assert "still there: none" not in md + run(db, "log")


def test_report_header_names_the_turn_it_reports(demo_db: str) -> None:
    for turn in (1, BATTLE_TURN):
        data = report_json(demo_db, "--turn", str(turn))
        (entry,) = data["turns"]
        line = run(demo_db, "report", "--turn", str(turn)).splitlines()[2]
        assert line.startswith(f"Report of turn {turn} ({entry['nation']}, round {entry['round']}), events ")
        html = run(demo_db, "report", "--turn", str(turn), "--format", "html")
        assert f"Report of turn {turn} ({entry['nation']}, round {entry['round']})" in html


def test_the_html_charts_say_the_last_point_is_the_turn_being_played(demo_db: str) -> None:
    """The demo ends in the middle of a round: its last chart point is that turn so far, not the
    end of a round, and a one-turn report's single point is the end of that turn."""
    from tracker.reports.html import figure_chart, luck_chart
    from tracker.reports.report import build_report

    with Tracker(demo_db) as t:
        cid = t.campaign_id(None)
        whole = build_report(t, cid, None, fmt="html")
        one = build_report(t, cid, BATTLE_TURN, fmt="html")
    now = whole["position"]["turn"]
    per_round = len(whole["campaign"]["turn_order"])
    assert now % per_round, "the demo is expected to stop in the middle of a round"
    chart = figure_chart(whole, "units", "Fleet strength (units)", "units")
    assert chart.xs[-1] == now / per_round
    assert chart.xlabel == f"round (0 = start; each point: the end of a round; the last: turn {now} so far)"
    assert luck_chart(whole).xlabel == "national turn (0 = start; each point: the end of a turn, the last so far)"
    single = figure_chart(one, "units", "Fleet strength (units)", "units")
    assert single.xlabel == f"round (0 = start; the point: the end of turn {BATTLE_TURN})"


def test_charts_count_rounds_and_keep_the_legend_off_the_lines(demo_db: str) -> None:
    import xml.etree.ElementTree as ET

    from tracker.reports.charts import layout, render_chart
    from tracker.reports.html import figure_chart
    from tracker.reports.report import build_report

    with Tracker(demo_db) as t:
        data = build_report(t, t.campaign_id(None), None)
    chart = figure_chart(data, "units", "Fleet strength (units)", "units")
    drawn = layout(chart)
    labels = [tick["label"] for tick in drawn["x_ticks"]]
    assert labels[0] == "start" and "R1" in labels
    assert "round" in chart.xlabel
    assert drawn["legend"]["x"] >= drawn["plot"]["right"]  # entirely to the right of the plotting area
    svg = ET.fromstring(render_chart(chart))
    (legend,) = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("id") == "chart-units-legend"]
    texts = [t.text for t in legend.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["nation", *data["campaign"]["turn_order"]]
