"""The viewer's zone page (issue 29): a zone now, its units and NTR, and the odds panel, the
`tracker odds need` and `tracker odds escorts` answers for the nation whose turn it is, within
bounds that keep a page quick ("too large to weigh here" beyond them); the board's map links
each zone to it, and it links to the zone's timeline."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from html import unescape
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from tests.support import served
from tests.test_server import Reader
from tracker.cli.main import cli
from tracker.server.zone_odds import PAGE_POSITIONS
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Reader]]:
    """A north-sea-1914 campaign at Germany's first combat movement, served, and its reader."""
    work = tmp_path_factory.mktemp("zone")
    db = str(work / "c.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    while "combat movement" not in run(db, "pending"):
        run(db, "next")
    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("autumn")), "anna", ["Germany"], False)
    with served(db, workdir=work) as server:
        yield db, Reader(server, token)


def panels(html: str) -> dict[str, tuple[str, str]]:
    """The odds panel: title -> (what it shows: answer, too-large or refused, its text)."""
    section = re.search(r'<section id="odds">(.*?)</section>', html, re.DOTALL)
    assert section, "a sea zone's page has an odds panel"
    out = {}
    for title, body in re.findall(r"<h3>(.*?)</h3>(.*?)(?=<h3>|$)", section.group(1), re.DOTALL):
        if m := re.search(r'<pre class="odds">(.*?)</pre>', body, re.DOTALL):
            out[unescape(title)] = ("answer", unescape(m.group(1)))
        elif m := re.search(r'<p class="notice too-large">(.*?)</p>', body, re.DOTALL):
            out[unescape(title)] = ("too large", unescape(m.group(1)))
        else:
            m = re.search(r'<p class="refused">(.*?)</p>', body, re.DOTALL)
            assert m, body
            out[unescape(title)] = ("refused", unescape(m.group(1)))
    return out


def test_nc1_cv1_a_zone_page_shows_its_units_ntr_and_the_odds_tracker_odds_gives(site: tuple[str, Reader]) -> None:
    db, reader = site
    status, html = reader.page("/campaigns/autumn/zones/Heligoland%20Bight")
    assert status == 200
    assert re.search(r"<td class=\"id\">DE-BB1</td><td>battleship</td><td>Germany</td>", html)
    assert "<li>Germany: 2</li>" in html
    assert 'href="/campaigns/autumn/log?zone=Heligoland%20Bight"' in html
    shown = panels(html)
    limit = str(PAGE_POSITIONS)
    guard = run(db, "odds", "escorts", "--zone", "Heligoland Bight", "--ntr-loss", "1", "--max-positions", limit)
    assert shown["Escorts for Germany's NTR in Heligoland Bight"] == ("answer", guard)
    # British submarines alone there: no naval battle to take it (NC1, AS1), its one-line refusal.
    kind, text = shown["Germany to take Heligoland Bight"]
    assert kind == "refused" and text.startswith("NC1: Heligoland Bight holds only enemy submarines")
    # Thirteen German ships can be there, more than a page weighs: the command that does is named.
    kind, text = shown["Germany to hold Heligoland Bight"]
    assert kind == "too large" and text.startswith("too large to weigh here")
    assert 'tracker odds need --zone "Heligoland Bight" --hold --win 0.9' in text


def test_nc1_f4_a_question_that_does_not_arise_is_its_one_line_refusal(site: tuple[str, Reader]) -> None:
    db, reader = site
    status, html = reader.page("/campaigns/autumn/zones/english%20channel")
    assert status == 200 and "<h1>English Channel" in html
    shown = panels(html)
    assert shown["Germany to hold English Channel"] == (
        "refused",
        "F4: no unit of Germany can be in English Channel at the end of this phase",
    )
    take = run(db, "odds", "need", "--zone", "English Channel", "--win", "0.9", "--max-positions", str(PAGE_POSITIONS))
    assert shown["Germany to take English Channel"] == ("answer", take)
    assert not any(title.startswith("Escorts") for title in shown), "Germany has no NTR there"


def test_a_land_territory_has_no_odds_and_an_unknown_zone_is_a_404(site: tuple[str, Reader]) -> None:
    _, reader = site
    status, html = reader.page("/campaigns/autumn/zones/Northern%20Germany")
    assert status == 200 and "held by Germany" in html and 'id="odds"' not in html
    status, html = reader.page("/campaigns/autumn/zones/Atlantis")
    assert status == 404 and "unknown zone 'Atlantis'" in unescape(html)


def test_the_board_map_links_each_zone_to_its_page(site: tuple[str, Reader]) -> None:
    _, reader = site
    _, html = reader.page("/campaigns/autumn/board")
    links = set(re.findall(r'<a href="(/campaigns/autumn/zones/[^"]+)"', html))
    assert "/campaigns/autumn/zones/Heligoland%20Bight" in links and len(links) > 10
    assert "log?zone=" not in html.split('class="board-map"', 1)[1].split("</svg>", 1)[0]


def test_a_zone_named_with_a_slash_a_percent_sign_or_unicode_opens_from_the_boards_link(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The board's link quotes "/" as %2F and "%" as %25, which the server routes on still
    encoded (a zone is one segment): the zone page reads them back as the zone's name."""
    from domain.scenario import scenario_text

    work = tmp_path_factory.mktemp("odd-zones")
    text, _ = scenario_text("north-sea-1914")
    text = text.replace('"Skagerrak"', '"Skagerrak/Kattegat 100%"').replace('"Dover Strait"', '"Straße von Dover ⚓"')
    (work / "odd.toml").write_text(text, encoding="utf-8")
    db = str(work / "c.db")
    run(db, "new", "odd", "--scenario", str(work / "odd.toml"), "--dice", "manual")
    run(db, "campaign", "public", "on")
    with served(db, workdir=work) as server:

        def page(path: str) -> tuple[int, str]:  # a public campaign: read without a token
            try:
                with urllib.request.urlopen(server.url + path, timeout=60) as resp:
                    return resp.status, resp.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        _, html = page("/campaigns/odd/board")
        links = set(re.findall(r'<a href="(/campaigns/odd/zones/[^"]+)"', html))
        for zone in ("Skagerrak/Kattegat 100%", "Straße von Dover ⚓"):
            link = f"/campaigns/odd/zones/{quote(zone, safe='')}"
            assert link in links
            status, text = page(link)
            assert status == 200, unescape(text)
            assert f"<h1>{zone} " in unescape(text)
        status, text = page("/campaigns/odd/zones/Skagerrak%2FNowhere")
        assert status == 404 and "unknown zone 'Skagerrak/Nowhere'" in unescape(text)
