"""What the viewer's pages say where a group at the table reads them beside the CLI: units to
place counted in words, a battle's step in words, a volley's command labelled with the nation
that records it (NC3), unit IDs never split at their hyphen, an event's explanation as complete
as `tracker explain` (value, order of the volley, seed, who decided and how), and the board
after an event linking on to the next turn's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape

import pytest
from click.testing import CliRunner

from tests.support import served
from tests.test_server import Reader
from tracker.cli.main import cli
from tracker.server.viewer_words import whole_ids
from tracker.service.application import Tracker
from tracker.service.players import Players

CNS = "Central North Sea"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Reader]]:
    """North Sea 1914, manual dice: Germany buys 3 submarines, then its submarines attack in
    the Central North Sea, and the battle waits for both sides' fire; read by Bert (Britain)."""
    db = str(tmp_path_factory.mktemp("table") / "t.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "purchase")
    run(db, "buy", "submarine", "3")
    run(db, "next", "--to", "naval_combat")
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "1")
    run(db, "battle", "screen", "1", "--screens", "")
    # Auto dice in another campaign: a research roll, whose seed the explanation places (D5).
    run(db, "new", "winter", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "--campaign", "winter", "research", "advanced_asw")
    with Tracker(db) as t:
        players = Players(t.engine)
        token = players.add(str(t.campaign_id("autumn")), "bert", ["Britain"], False)
        players.add(str(t.campaign_id("winter")), "bert", ["Britain"], False)
    with served(db, workdir=tmp_path_factory.mktemp("served")) as server:
        yield db, Reader(server, token)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html))).strip()


def fact(html: str, label: str) -> str:
    """The text of the explanation's line `label` (its <dd>)."""
    found = re.search(rf"<dt>{re.escape(label)}</dt>\s*<dd[^>]*>(.*?)</dd>", html, re.DOTALL)
    assert found, f"no {label!r} on the page"
    return text_of(found.group(1))


def test_pu2_units_to_place_are_counted_in_words_and_a_battle_step_too(table: tuple[str, Reader]) -> None:
    _, reader = table
    status, html = reader.page("/campaigns/autumn/board")
    assert status == 200
    badge = re.search(r'<span class="badge" data-unplaced="Germany">([^<]*)</span>', html)
    assert badge and badge.group(1) == "Germany to place: 3 submarines", badge
    assert "battle 1: naval in Central North Sea, at fire</a>" in html


def test_nc3_the_pending_volley_names_who_records_it(table: tuple[str, Reader]) -> None:
    _, reader = table
    _, html = reader.page("/campaigns/autumn/board")
    item = re.search(r'<li data-waiting="Germany,Britain"[^>]*>(.*?)</li>', html, re.DOTALL)
    assert item, html
    # As `tracker inbox` and the hand-off messages label it: "next (Germany): ...".
    assert '<span class="recorder">Germany:</span> <code>tracker battle fire 1' in item.group(1)
    # Unit IDs are kept whole: "DE-" and "SS1" never on two lines.
    assert '<span class="id">DE-SS1</span>' in item.group(1) and '<span class="id">GB-DD2</span>' in item.group(1)


def test_whole_ids_keeps_unit_ids_and_escapes_the_rest() -> None:
    said = whole_ids("DE-CA12 & GB-SS1 of Austria-Hungary (HA4-HA7), <b>")
    assert str(said) == (
        '<span class="id">DE-CA12</span> &amp; <span class="id">GB-SS1</span> of Austria-Hungary '
        '(<span class="id">HA4-HA7</span>), &lt;b&gt;'
    )


def test_the_explain_page_says_what_explain_says_of_a_volley(table: tuple[str, Reader]) -> None:
    db, reader = table
    run(db, "--campaign", "autumn", "battle", "fire", "1", "--dice", "9,9,9,9,9")
    rolls = json.loads(run(db, "--campaign", "autumn", "log", "--kind", "DiceRolled", "--json"))
    second = rolls[1]["seq"]
    said = run(db, "--campaign", "autumn", "explain", str(second))
    _, html = reader.page(f"/campaigns/autumn/events/{second}")
    for label, line in (("Value", "Value"), ("Order (CV4)", r"Order \(CV4\)")):
        cli_line = re.search(rf"  {line}: (.*)", said)
        assert cli_line and fact(html, label) == cli_line.group(1).strip(), said
    # Each roll of the volley links to its event.
    assert f'href="/campaigns/autumn/events/{rolls[0]["seq"]}"' in html
    # A target's default follows its own rule: not "the cheapest legal" (HA7 is the casualties').
    targets = json.loads(run(db, "--campaign", "autumn", "log", "--kind", "TargetsChosen", "--json"))[0]["seq"]
    _, html = reader.page(f"/campaigns/autumn/events/{targets}")
    assert fact(html, "Decided") == "Germany took the default"
    assert "Decided: Germany took the default\n" in run(db, "--campaign", "autumn", "explain", str(targets))


def test_the_board_after_an_event_links_on_to_the_next_turn(table: tuple[str, Reader]) -> None:
    _, reader = table
    # Event 5 is in turn 1, which is being played: its board is the board now.
    _, html = reader.page("/campaigns/autumn/board?at=5")
    following = re.search(r'id="next-turn" href="([^"]+)"', html)
    assert following and following.group(1) == "/campaigns/autumn/board?turn=1"
    # The board now has no turn after it.
    _, html = reader.page("/campaigns/autumn/board")
    assert 'id="next-turn"' not in html


def test_d5_the_explain_page_says_where_an_auto_rolls_seed_stands(table: tuple[str, Reader]) -> None:
    db, reader = table
    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("winter")), "wanda", [], False, spectator=True)
    (roll,) = json.loads(run(db, "--campaign", "winter", "log", "--kind", "DiceRolled", "--json"))
    status, html = Reader(reader.server, token).page(f"/campaigns/winter/events/{roll['seq']}")
    assert status == 200
    cli_line = re.search(r"  Seed \(D5\): (.*)", run(db, "--campaign", "winter", "explain", str(roll["seq"])))
    assert cli_line and fact(html, "Seed (D5)") == cli_line.group(1).strip().replace("`", "")


@pytest.mark.parametrize("page", ["battles", "battles/1", "log?kind=NavalBattleStarted"])
def test_unit_ids_in_the_battles_and_the_timeline_are_kept_whole(table: tuple[str, Reader], page: str) -> None:
    _, reader = table
    status, html = reader.page(f"/campaigns/autumn/{page}")
    assert status == 200
    # "battle 1: naval battle in Central North Sea: Germany (DE-SS1, DE-SS2) attacks ..."
    assert '(<span class="id">DE-SS1</span>, <span class="id">DE-SS2</span>)' in html
