"""The timeline's pages, from a real `tracker serve`: a log longer than one page is read back to
its first event by "older events" links and forward again by "newer events", every filter kept
(`?before=SEQ` / `?after=SEQ`); a page says which events it shows; a bad `before` or `after` is
a 400 page with one line. The API's `/log` reads a page back the same way (`before` with `tail`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from domain.campaign import Campaign
from domain.dice import DiceSource
from tests.support import advance, served
from tests.test_server import Reader
from tracker.server import queries
from tracker.server.served import ServedTracker
from tracker.server.viewer import TIMELINE_LIMIT
from tracker.service.application import Tracker
from tracker.service.history import log_records
from tracker.service.players import Players

NAME = "long"
# Three pages and a bit: the server runs as its own process, so the page size is its own.
EVENTS = 3 * TIMELINE_LIMIT + 100


def many_phases(c: Campaign, _dice: DiceSource) -> None:
    for _ in range(150):
        advance(c)


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("paging") / "long.db")
    with Tracker(path) as t:
        cid = t.create(NAME, "north-sea-1914").id
        while t.load(cid).version < EVENTS:
            t.execute(cid, many_phases)
    return path


@pytest.fixture(scope="module")
def server(long_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    with Tracker(long_db) as t:
        token = Players(t.engine).add(str(t.campaign_id(NAME)), "watcher", [], False, spectator=True)
    with served(long_db, workdir=tmp_path_factory.mktemp("served")) as s:
        yield Reader(s, token)


def shown(html: str) -> list[int]:
    return [int(s) for s in re.findall(r'<tr data-seq="(\d+)"', html)]


def link(html: str, which: str) -> str | None:
    found = re.search(rf'id="{which}"[^>]* href="([^"]+)"', html)
    return unescape(found.group(1)) if found else None


def expected(db: str, **filters: str) -> list[int]:
    with Tracker(db) as t:
        return [r["seq"] for r in log_records(t, t.campaign_id(NAME), **filters)]  # type: ignore[arg-type]


def walk(server: Reader, start: str, which: str) -> list[list[int]]:
    """The events of each page from `start`, following the `which` link until there is none."""
    pages, path = [], start
    while path is not None:
        status, html = server.page(path)
        assert status == 200, html
        pages.append(shown(html))
        path = link(html, which)
        assert len(pages) < 20, "the links go round"
    return pages


def test_older_links_page_back_to_the_first_event_and_newer_links_forward(server: Reader, long_db: str) -> None:
    every = expected(long_db)
    assert len(every) > 3 * TIMELINE_LIMIT
    status, html = server.page(f"/campaigns/{NAME}/log")
    assert status == 200
    latest = shown(html)
    assert latest == every[-TIMELINE_LIMIT:]
    # The page names the event numbers it spans and the campaign's count of events.
    count = re.search(r'id="count">(.*?)</p>', html, re.DOTALL)
    assert (
        count and f'Events <span id="span">{latest[0]:,}&ndash;{latest[-1]:,}</span> of {every[-1]:,}' in count.group(1)
    )
    assert link(html, "newer") is None and link(html, "latest") is None

    back = walk(server, f"/campaigns/{NAME}/log", "older")
    assert [seq for page in reversed(back) for seq in page] == every
    assert all(len(page) == TIMELINE_LIMIT for page in back[:-1]) and back[-1][0] == every[0]

    # From the first page, newer links lead back to the latest events, page by page.
    first = f"/campaigns/{NAME}/log?before={back[-2][0]}"
    forward = walk(server, first, "newer")
    assert [seq for page in forward for seq in page] == every
    status, html = server.page(first)
    assert link(html, "older") is None and link(html, "latest") == f"/campaigns/{NAME}/log"


def test_a_page_keeps_every_filter_and_the_order(server: Reader, long_db: str) -> None:
    every = expected(long_db, kind="PhaseAdvanced")
    assert len(every) > 2 * TIMELINE_LIMIT
    status, html = server.page(f"/campaigns/{NAME}/log?kind=phaseadvanced&order=newest")
    assert status == 200 and shown(html) == every[-TIMELINE_LIMIT:][::-1]
    older = link(html, "older")
    assert older == f"/campaigns/{NAME}/log?kind=PhaseAdvanced&order=newest&before={every[-TIMELINE_LIMIT]}"
    status, html = server.page(older)
    assert status == 200 and shown(html) == every[-2 * TIMELINE_LIMIT : -TIMELINE_LIMIT][::-1]
    assert (
        link(html, "newer")
        == f"/campaigns/{NAME}/log?kind=PhaseAdvanced&order=newest&after={every[-TIMELINE_LIMIT - 1]}"
    )
    # Newest first, newer events come first on the line too.
    assert html.index('id="newer"') < html.index('id="older"')
    # An older page stays as it is when something is recorded (it does not reload itself).
    assert 'data-follow="pinned"' in html
    # Every filter goes along, spelled the campaign's way.
    query = "turn=5&phase=research&nation=gb&zone=skagerrak&kind=phaseadvanced&order=oldest&before=100"
    status, html = server.page(f"/campaigns/{NAME}/log?{query}")
    assert status == 200
    assert link(html, "latest") == (
        f"/campaigns/{NAME}/log?turn=5&phase=research&nation=Britain&zone=Skagerrak&kind=PhaseAdvanced&order=oldest"
    )


def test_an_empty_page_says_so_and_links_to_the_latest(server: Reader, long_db: str) -> None:
    last = expected(long_db)[-1]
    status, html = server.page(f"/campaigns/{NAME}/log?after={last}")
    assert status == 200 and shown(html) == []
    assert f"No events that match after event {last:,} yet." in html
    assert link(html, "latest") == f"/campaigns/{NAME}/log" and link(html, "older") is not None
    # Waiting for newer events, it follows the campaign as the latest page does.
    assert 'data-follow="now"' in html


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("before=abc", 400, "before must be a whole number from 1 to 2147483647, got &#39;abc&#39;"),
        ("before=0", 400, "before must be a whole number from 1 to 2147483647, got 0"),
        ("after=-3", 400, "after must be a whole number from 1 to 2147483647, got &#39;-3&#39;"),
        ("before=99999999999", 400, "before must be a whole number from 1 to 2147483647, got 99999999999"),
        ("before=9&after=3", 400, "give before or after, not both"),
        ("after=99999&kind=dicerolled", 404, "no event 99999 in this campaign"),
    ],
)
def test_a_bad_page_bound_is_a_one_line_error_page(server: Reader, query: str, status: int, message: str) -> None:
    got, html = server.page(f"/campaigns/{NAME}/log?{query}")
    assert got == status
    error = re.search(r'<p class="error" id="error">(.*?)</p>', html, re.DOTALL)
    assert error and message in error.group(1) and "\n" not in error.group(1)
    assert "Traceback" not in html


def test_the_api_log_reads_a_page_back_from_an_event(server: Reader, long_db: str, tmp_path: Path) -> None:
    # `server` adds the watcher; the key store is the test's own, never the working folder's.
    every = expected(long_db)
    with Tracker(long_db) as plain:
        reader = Players(plain.engine).player(str(plain.campaign_id(NAME)), "watcher")
    with ServedTracker(long_db, keys=str(tmp_path / "keys.db")) as t:
        page = t.acting_as(reader, lambda: queries.log_data(t, NAME, tail=10, before=every[-10]))
        later = t.acting_as(reader, lambda: queries.log_data(t, NAME, after=every[-3]))
    assert [r["seq"] for r in page] == every[-20:-10] and all("data" in r for r in page)
    assert [r["seq"] for r in later] == every[-2:]


def test_a_page_deep_in_the_log_is_read_from_its_event_not_counted_to(long_db: str, tmp_path: Path) -> None:
    """The page before event N reads rows from N down (the primary key), as many as it shows and
    one more: never the rows after it, nor an OFFSET through the rows before."""
    from sqlalchemy import event

    from tracker.server.log_pages import log_page

    every = expected(long_db)
    middle = every[len(every) // 2]
    statements: list[tuple[str, tuple[object, ...]]] = []
    with Tracker(long_db) as t:
        cid = t.campaign_id(NAME)
        with t.views(cid):
            pass  # caught up before listening
        event.listen(t.engine, "before_cursor_execute", lambda *a: statements.append((a[2], tuple(a[3]))))
        filters = {"turn": None, "phase": None, "nation": None, "zone": None, "kind": None, "battle": None}
        page = log_page(t, cid, filters, 50, before=middle)
    assert [r["seq"] for r in page.records] == [s for s in every if s < middle][-50:]
    reads = [(sql, params) for sql, params in statements if "FROM tracker_event_index" in sql]
    assert reads
    for sql, params in reads:
        # SQLite is sent "LIMIT ? OFFSET ?" whatever the query: the offset must be 0.
        assert "LIMIT ?" in sql and (" OFFSET ?" not in sql or params[-1] == 0), (sql, params)
        assert "tracker_event_index.seq < ?" in sql or "tracker_event_index.seq > ?" in sql


def test_the_api_log_takes_before_and_after_over_http(server: Reader, long_db: str) -> None:
    every = expected(long_db)
    status, page = server.get(f"/api/campaigns/{NAME}/log?tail=10&before={every[-10]}")
    assert status == 200, page
    assert [r["seq"] for r in page] == every[-20:-10]
    status, later = server.get(f"/api/campaigns/{NAME}/log?after={every[-3]}")
    assert status == 200 and [r["seq"] for r in later] == every[-2:]
