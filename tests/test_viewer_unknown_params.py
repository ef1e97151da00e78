"""The viewer's pages refuse a query parameter they do not take, or one given twice, with a 400
page naming it, as the API does: `/campaigns/NAME/board?trun=2` showed the board now without a
word instead of turn 2. What the pages themselves send (every link, every form's fields, the
sign-in link's `?token=`) is still taken: a crawl of the demo campaign meets no 400."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from typing import Any

import pytest

from tests.support import served
from tests.test_server import Reader
from tracker.cli.demo import run_demo
from tracker.service.application import Tracker
from tracker.service.players import Players


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    work = tmp_path_factory.mktemp("unknown-params")
    db = str(work / "demo.db")
    run_demo(db, lambda line: None)
    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("demo")), "watcher", [], False, spectator=True)
    # The server's key store goes under `work` (its working folder), never this repository.
    with served(db, workdir=work) as server:
        yield Reader(server, token)


def error_of(html: str) -> str:
    match = re.search(r'<p class="error" id="error">(.*?)</p>', html, re.DOTALL)
    assert match, html[:500]
    message = unescape(match.group(1))
    assert "\n" not in message.strip()
    return message


# Each page, with what it takes besides the sign-in link's token (an empty string: nothing).
PAGES = [
    ("/", ""),
    ("/campaigns/demo", ""),
    ("/campaigns/demo/board", "turn, phase, at"),
    ("/campaigns/demo/log", "turn, phase, nation, zone, kind, battle, order, before, after"),
    ("/campaigns/demo/battles", ""),
    ("/campaigns/demo/battles/1", ""),
    ("/campaigns/demo/events/5", ""),
    ("/campaigns/demo/charts", ""),
    ("/campaigns/demo/zones/Heligoland%20Bight", ""),
]


@pytest.mark.parametrize(("path", "takes"), PAGES)
def test_each_page_refuses_an_unknown_query_parameter_naming_it_and_what_the_page_takes(
    site: Reader, path: str, takes: str
) -> None:
    status, _ = site.page(path)
    assert status == 200, path
    status, html = site.page(path + "?trun=2")
    assert status == 400
    message = error_of(html)
    assert message.startswith("unknown query parameter 'trun' (this page takes ")
    assert (f"{takes}, and token" if takes else "only token") in message


@pytest.mark.parametrize("query", ["trun=2", "turn=2&trun=2", "trun", "=2", "Turn=2"])
def test_the_board_is_not_shown_for_a_misspelt_parameter(site: Reader, query: str) -> None:
    status, html = site.page("/campaigns/demo/board?" + query)
    assert status == 400 and 'class="board-map"' not in html
    assert "unknown query parameter" in error_of(html)


@pytest.mark.parametrize(
    "path",
    [
        "/campaigns/demo/board?turn=2&turn=3",
        "/campaigns/demo/board?at=5&at=5",
        "/campaigns/demo/log?zone=&zone=",
        "/campaigns/demo/log?turn=1&before=9&turn=2",
        "/campaigns/demo/charts?token=x&token=x",
    ],
)
def test_a_parameter_given_twice_is_refused(site: Reader, path: str) -> None:
    status, html = site.page(path)
    assert status == 400
    assert re.fullmatch(r"query parameter '\w+' is given more than once", error_of(html))


def test_a_slash_after_a_page_carries_the_query_to_the_page_that_refuses_it(site: Reader) -> None:
    status, html = site.page("/campaigns/demo/board/?trun=2")
    assert status == 400 and "'trun'" in error_of(html)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def first_answer(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def test_the_sign_in_links_token_is_still_taken_with_the_pages_parameters(site: Reader) -> None:
    status, headers, _ = first_answer(f"{site.url}/campaigns/demo/board?turn=2&token={site.token}")
    assert status == 303 and headers["location"] == "/campaigns/demo/board?turn=2"
    assert "tracker_token=" in headers.get("set-cookie", "")
    status, headers, html = first_answer(f"{site.url}/campaigns/demo/board?trun=2&token={site.token}")
    assert status == 400 and "set-cookie" not in {k.lower() for k in headers}
    assert "'trun'" in error_of(html)


class Links(HTMLParser):
    """The hrefs of a page and its forms (action, and each named field's values as sent)."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.forms: list[dict[str, Any]] = []
        self.select: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        elif tag == "form":
            assert a.get("method", "get").lower() == "get", a
            self.forms.append({"action": a["action"], "fields": []})
        elif tag == "input" and "name" in a:
            self.forms[-1]["fields"].append({"name": a["name"], "value": a.get("value", ""), "options": []})
        elif tag == "select":
            self.select = {"name": a["name"], "value": None, "options": []}
            self.forms[-1]["fields"].append(self.select)
        elif tag == "option" and self.select is not None and "disabled" not in a:
            self.select["options"].append(a["value"])
            if "selected" in a or self.select["value"] is None:
                self.select["value"] = a["value"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = None


def submissions(form: dict[str, Any]) -> list[str]:
    """The URLs a form sends: as it stands (empty fields too), and with each menu set to each
    of its choices in turn (the others as they stand)."""
    fields = form["fields"]
    standing = [(f["name"], f["value"] or "") for f in fields]
    urls = [form["action"] + "?" + urllib.parse.urlencode(standing)]
    for i, field in enumerate(fields):
        for option in field["options"]:
            sent = [*standing[:i], (field["name"], option), *standing[i + 1 :]]
            urls.append(form["action"] + "?" + urllib.parse.urlencode(sent))
    return urls


def test_a_crawl_of_every_link_and_form_of_the_demo_meets_no_400(site: Reader) -> None:
    seen: set[str] = set()
    todo = [("/", True)]  # (URL, whether a link: a link opens its page; a form may be a 404)
    forms: set[tuple[str, bool]] = set()
    forms_sent = 0
    while todo:
        url, linked = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        status, html = site.page(url)
        if status == 404 and not linked:
            continue  # a phase the turn chosen has not reached: the form offers every phase
        assert status == 200, (url, status, html[-600:])
        links = Links()
        links.feed(html)
        found = [(unescape(h), True) for h in links.hrefs]
        for form in links.forms:
            # Each menu's every choice once per form, with its fields empty and once with some
            # chosen (a board's phase with its turn); choices on choices would be every
            # combination of the filters. The pages they open send their own form as it stands.
            sent = submissions(form)
            key = (form["action"], any(f["value"] for f in form["fields"]))
            found += [(u, False) for u in (sent if key not in forms else sent[:1])]
            forms.add(key)
            forms_sent += 1
        for href, link in found:
            # Only this server's pages: not the page itself (`href=""`), an anchor or the API.
            if href.startswith("/") and not href.startswith(("//", "/api/")):
                todo.append((href.split("#")[0], link))
    paths = {urllib.parse.urlsplit(u).path.rsplit("/", 1)[0] for u in seen}
    # Every kind of page was reached, each of its links followed and each form sent.
    for kind in ("/campaigns/demo/events", "/campaigns/demo/battles", "/campaigns/demo/zones"):
        assert kind in paths
    assert any("?" in u and "/log" in u for u in seen) and any("?" in u and "/board" in u for u in seen)
    assert any("/board?turn=&phase=" in u for u in seen), "the board's form as it stands, its fields empty"
    assert forms_sent and len(seen) > 200
