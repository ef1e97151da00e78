"""Strangers learn nothing (issue 24, section 2), on a real `tracker serve`: an anonymous
request, or one with a token of another campaign, gets the same answer for a private campaign
as for a name nobody uses, on every GET route of the API and the viewer, and never a campaign
name, the database's path or an event; a spectator reads and cannot act; a public campaign is
read without a token; the viewer's link keeps its token in an HttpOnly, SameSite=Strict cookie
only; bodies over 1 MiB are 413, JSON nested 100,000 deep is 400, an argument that is not
UTF-8 is bad usage; failed tokens are rate-limited per address (429 with Retry-After); tokens
are stored as SHA-256 (scrypt hashes of older rows upgraded on first use) and compared in
constant time.

The leak check ends with the line "leaks to an anonymous or wrong-campaign token: N"."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import sqlite3
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER, Server, in_process, served

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

# Private campaigns (their names must never reach a stranger), a public one, and a name nobody uses.
ALPHA, BETA, OPEN, NOBODY = "hidden-alpha", "hidden-beta", "open-house", "no-such-name"


def tracker(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A command run in this process, locally or as the `--server` client, with no TRACKER_
    setting of this environment but those `env` gives (an argument that is not UTF-8 comes
    from a real process's command line, and is sent by one)."""
    return in_process(*args, env=env)


def token_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


class League:
    """The served database, its path and the tokens of its players."""

    def __init__(self, server: Server, db: Path, tokens: dict[str, str]) -> None:
        self.server = server
        self.db = db
        self.tokens = tokens

    def fetch(
        self, method: str, path: str, token: str | None = None, body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:  # fmt: skip
        """(status, headers, body) of one request, redirects not followed; an event stream is
        not read (its headers say what it is)."""
        url = urllib.parse.urlsplit(self.server.url)
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
        sent = dict(headers or {})
        if body is not None:
            # Every body the API reads is JSON, and said to be (a form or plain text is a 415).
            sent.setdefault("Content-Type", "application/json")
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        try:
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            got = {k.lower(): v for k, v in resp.getheaders()}
            text = b"" if got.get("content-type", "").startswith("text/event-stream") else resp.read()
            return resp.status, got, text
        finally:
            conn.close()

    def command(self, token: str | None, campaign: str | None, *args: str) -> tuple[int, dict[str, Any]]:
        body = json.dumps({"args": list(args), "campaign": campaign}).encode()
        status, _headers, text = self.fetch("POST", "/api/command", token, body, {"Content-Type": "application/json"})
        return status, json.loads(text)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    work = tmp_path_factory.mktemp("strangers")
    db = work / "strangers.db"
    for name in (ALPHA, BETA, OPEN):
        assert tracker("--db", str(db), "new", name, "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    add = ("--db", str(db), "--campaign")
    tokens = {
        "anna": token_of(tracker(*add, ALPHA, "players", "add", "anna", "--nations", "Germany")),
        "ref": token_of(tracker(*add, ALPHA, "players", "add", "ref", "--referee")),
        "sam": token_of(tracker(*add, ALPHA, "players", "add", "sam", "--spectator")),
        "wendy": token_of(tracker(*add, BETA, "players", "add", "wendy", "--referee")),
        "bert": token_of(tracker(*add, BETA, "players", "add", "bert", "--spectator")),
    }
    # The administrator makes one campaign public, on the database.
    done = tracker(*add, OPEN, "campaign", "public", "on")
    assert done.returncode == 0 and "is public" in done.stdout, done.stderr
    with served(str(db), workdir=work) as server:
        yield League(server, db, tokens)


# ----- the leak check: every GET route, as a stranger -----


def get_routes() -> list[str]:
    """The path of every GET route the server has, API and viewer, as the routers list them."""
    from starlette.routing import Route

    from tracker.server import viewer
    from tracker.server.app import Api

    api = [r for r in Api(None, None).routes() if isinstance(r, Route)]  # type: ignore[arg-type]
    pages = [r for r in viewer.routes(None, None) if isinstance(r, Route)]  # type: ignore[arg-type]
    found = ["/api" + r.path for r in api if "GET" in (r.methods or ())]
    found += [r.path for r in pages if "GET" in (r.methods or ())]
    assert len(found) >= 18, found
    return found


def filled(route: str, name: str) -> str:
    """A route's path with its parameters filled in: the campaign `name` (quoted), 1, a zone."""
    values = {
        "name": urllib.parse.quote(name, safe=""), "seq": "1", "number": "1", "path": "no/such/page",
        "zone": "Heligoland%20Bight",
    }  # fmt: skip
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values[m.group(1)], route)


def secrets_of(league: League, allowed: set[str]) -> list[str]:
    """What a stranger must never see: the private campaigns' names (but those `allowed`), the
    database's path and name, the driver, every token and the players' names."""
    names = [n for n in (ALPHA, BETA) if n not in allowed]
    paths = [str(league.db), str(league.db.parent), league.db.name, "sqlite"]
    tokens = [t.split("_", 2)[2] for t in league.tokens.values()]
    return [*names, *paths, *tokens, *(n for n in ("anna", "wendy") if n not in allowed)]


def leaks_of(league: League, who: str, token: str | None, allowed: set[str]) -> list[str]:
    """Every way a stranger (`token`: None, or one of another campaign) learns anything of
    campaign ALPHA: an answer that differs from the one for a name nobody uses, a success on
    its routes, or any secret in any answer."""
    leaks: list[str] = []
    never = secrets_of(league, allowed)

    def seen(label: str, text: str, typed: str | None) -> None:
        shown = text.replace(urllib.parse.quote(typed, safe=""), "NAME").replace(typed, "NAME") if typed else text
        leaks.extend(f"{who} {label}: shows {s!r}" for s in never if s in shown)

    for route in get_routes():
        if "{name" not in route:
            status, _headers, body = league.fetch("GET", filled(route, NOBODY), token)
            seen(f"GET {route}", body.decode(errors="replace"), None)
            continue
        answers = []
        for name in (ALPHA, NOBODY):
            status, headers, body = league.fetch("GET", filled(route, name), token)
            text = body.decode(errors="replace").replace(urllib.parse.quote(name, safe=""), "NAME")
            text = text.replace(name, "NAME")
            location = headers.get("location", "").replace(name, "NAME")
            answers.append((status, headers.get("content-type"), location, text))
            if name == ALPHA and (status < 300 or headers.get("content-type", "").startswith("text/event-stream")):
                leaks.append(f"{who} GET {route}: {status} {headers.get('content-type')}")
            seen(f"GET {route}", text, name)
        if answers[0] != answers[1]:
            leaks.append(f"{who} GET {route}: {ALPHA!r} answered otherwise than a name nobody uses: {answers}")
    reads = (
        ["state", "--json"],
        ["log", "--json"],
        ["pending", "--json"],
        ["explain", "1"],
        ["verify"],
        ["report", "--turn", "1"],
    )
    for args in reads:
        answers = []
        for name in (ALPHA, NOBODY):
            status, body = league.command(token, name, *args)
            answers.append((status, json.dumps(body).replace(name, "NAME")))
        if answers[0] != answers[1] or answers[0][0] != 404:
            leaks.append(f"{who} command {args}: {answers}")
        seen(f"command {args}", answers[0][1], None)
    status, body = league.command(token, None, "campaigns", "--json")
    seen("command campaigns", json.dumps(body), None)
    return leaks


def test_strangers_learn_nothing_on_any_get_route(league: League, capsys: pytest.CaptureFixture[str]) -> None:
    leaks = leaks_of(league, "anonymous", None, set())
    # A referee and a spectator of another campaign see theirs, and nothing of ALPHA.
    leaks += leaks_of(league, "wendy (referee of another campaign)", league.tokens["wendy"], {BETA, "wendy"})
    leaks += leaks_of(league, "bert (spectator of another campaign)", league.tokens["bert"], {BETA})
    # The lists show what may be read: the public campaign, and the token's own.
    listed = {
        who: league.fetch("GET", "/api/campaigns", token)[2]
        for who, token in (("anonymous", None), ("wendy", league.tokens["wendy"]))
    }
    if json.loads(listed["anonymous"]) != [OPEN] or json.loads(listed["wendy"]) != [BETA, OPEN]:
        leaks.append(f"campaign lists: {listed}")
    home = league.fetch("GET", "/")[2].decode()
    if OPEN not in home:
        leaks.append("the public campaign is missing from the anonymous campaign list")
    with capsys.disabled():
        print(f"\nleaks to an anonymous or wrong-campaign token: {len(leaks)}")
    assert leaks == []


def test_a_404_says_no_such_campaign_and_nothing_more(league: League) -> None:
    for token in (None, league.tokens["wendy"], league.tokens["anna"]):
        status, _headers, body = league.fetch("GET", f"/api/campaigns/{NOBODY}/state", token)
        assert (status, json.loads(body)) == (404, {"error": "no such campaign", "rule": None})
        status, _headers, page = league.fetch("GET", f"/campaigns/{NOBODY}/board", token)
        error = re.search(rb'<p class="error" id="error">(.*?)</p>', page)
        assert status == 404 and error and error.group(1) == b"no such campaign"
    done = tracker("--server", league.server.url, "--campaign", NOBODY, "state", env={"TRACKER_CONFIG": "/nonexistent"})
    # The client adds that it sent no token, which it knows without the server: nothing more.
    assert (done.returncode, done.stderr) == (
        2,
        "Error: no such campaign (no token was sent: set TRACKER_TOKEN to the token `tracker players add` gave you, "
        'or write it as token = "trk_..." in /nonexistent)\n',
    )


# ----- who reads, who acts -----


def test_a_spectator_reads_and_cannot_act(league: League) -> None:
    sam = league.tokens["sam"]
    for path in (
        "/api/campaigns",
        f"/api/campaigns/{ALPHA}/state",
        f"/api/campaigns/{ALPHA}/log",
        f"/campaigns/{ALPHA}/board",
    ):
        status, _headers, body = league.fetch("GET", path, sam)
        assert status == 200, (path, body[:200])
    before = json.loads(league.fetch("GET", f"/api/campaigns/{ALPHA}/state", sam)[2])["seq"]
    body = json.dumps({"action": "next"}).encode()
    status, _headers, answer = league.fetch("POST", f"/api/campaigns/{ALPHA}/actions", sam, body)
    assert status == 403 and json.loads(answer)["rule"] == "PL2", answer
    for args in (["next"], ["research", "advanced_submarine"], ["campaign", "public", "on"], ["players", "list"]):
        status, answer = league.command(sam, ALPHA, *args)
        assert status == 403 and answer["exit"] == 1 and "PL2" in answer["stderr"], (args, answer)
    assert json.loads(league.fetch("GET", f"/api/campaigns/{ALPHA}/state", sam)[2])["seq"] == before


def test_a_public_campaign_is_read_without_a_token_and_acted_on_with_one(league: League) -> None:
    for path in (f"/api/campaigns/{OPEN}/state", f"/api/campaigns/{OPEN}/log", f"/campaigns/{OPEN}/board", "/"):
        status, _headers, body = league.fetch("GET", path)
        assert status == 200, (path, body[:200])
    status, headers, _body = league.fetch("GET", f"/api/campaigns/{OPEN}/events/stream")
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    status, _headers, body = league.fetch("POST", f"/api/campaigns/{OPEN}/actions", None, b'{"action": "next"}')
    assert status == 401, body


NEEDS_TOKEN = "an action needs a player's token: Authorization: Bearer TOKEN (see tracker players add)"


def test_an_action_without_a_token_is_401_through_either_route_whichever_campaign_it_names(league: League) -> None:
    """The command line's route answered 404 "no such campaign" where the action route said
    401: both now refuse before the campaign is looked up, the same words for every name, so
    the 401 tells a stranger nothing of which campaigns exist."""
    before = json.loads(league.fetch("GET", f"/api/campaigns/{ALPHA}/state", league.tokens["sam"])[2])["seq"]
    for name in (ALPHA, NOBODY, OPEN):
        for args in (["next"], ["move", "DE-SS3", "--to", "Skagerrak"], ["battle", "fire", "1"], ["undo"]):
            status, body = league.command(None, name, *args)
            assert (status, body) == (
                401,
                {"exit": 1, "stdout": "", "stderr": f"Error: {NEEDS_TOKEN}\n", "error": NEEDS_TOKEN, "rule": None},
            ), (name, args)
        status, _headers, answer = league.fetch("POST", f"/api/campaigns/{name}/actions", None, b'{"action": "next"}')
        assert (status, json.loads(answer)) == (401, {"error": NEEDS_TOKEN, "rule": None})
    # The command line says the same, as a refusal (exit 1), not as bad usage.
    done = tracker("--server", league.server.url, "--campaign", ALPHA, "next", env={"TRACKER_CONFIG": "/nonexistent"})
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: {NEEDS_TOKEN}\n")
    # An action's help is read without a token.
    status, body = league.command(None, ALPHA, "next", "--help")
    assert status == 200 and body["stdout"].startswith("Usage: tracker next")
    assert json.loads(league.fetch("GET", f"/api/campaigns/{ALPHA}/state", league.tokens["sam"])[2])["seq"] == before


def test_the_referee_makes_a_campaign_public_through_the_server(league: League) -> None:
    env = {"TRACKER_CONFIG": "/nonexistent"}

    def public(token: str | None, setting: str) -> subprocess.CompletedProcess[str]:
        given = {**env, "TRACKER_TOKEN": token} if token else env
        return tracker("--server", league.server.url, "--campaign", ALPHA, "campaign", "public", setting, env=given)

    assert league.fetch("GET", f"/api/campaigns/{ALPHA}/state")[0] == 404
    refused = {who: public(league.tokens.get(who), "on") for who in (None, "anna", "wendy")}
    assert refused[None].returncode == 1 and "needs a referee's token" in refused[None].stderr
    assert refused["anna"].returncode == 1 and "PL2" in refused["anna"].stderr
    assert (refused["wendy"].returncode, refused["wendy"].stderr) == (2, "Error: no such campaign\n")
    assert league.fetch("GET", f"/api/campaigns/{ALPHA}/state")[0] == 404
    done = public(league.tokens["ref"], "on")
    assert done.returncode == 0 and f"Campaign {ALPHA!r} is public" in done.stdout, done.stderr
    try:
        assert league.fetch("GET", f"/api/campaigns/{ALPHA}/state")[0] == 200
        assert ALPHA in json.loads(league.fetch("GET", "/api/campaigns")[2])
    finally:
        done = public(league.tokens["ref"], "off")
    assert done.returncode == 0 and "is private" in done.stdout, done.stderr
    assert league.fetch("GET", f"/api/campaigns/{ALPHA}/state")[0] == 404


# ----- the viewer's link and cookie -----


def test_a_link_with_a_token_sets_an_httponly_strict_cookie_and_drops_the_token(league: League) -> None:
    anna = league.tokens["anna"]
    status, headers, _body = league.fetch("GET", f"/?token={anna}")
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"tracker_token={anna};")
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags, cookie
    status, headers, _body = league.fetch("GET", f"/campaigns/{ALPHA}/board?turn=1&token={anna}&phase=research")
    assert status == 303 and headers["location"] == f"/campaigns/{ALPHA}/board?turn=1&phase=research"
    # Later pages read the cookie: the viewer and the stream its pages follow.
    sent = {"Cookie": f"tracker_token={anna}"}
    assert league.fetch("GET", f"/campaigns/{ALPHA}/board", headers=sent)[0] == 200
    assert ALPHA in league.fetch("GET", "/", headers=sent)[2].decode()
    status, headers, _body = league.fetch("GET", f"/api/campaigns/{ALPHA}/events/stream", headers=sent)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    # A cookie never records: an action needs the header.
    status, _headers, _body = league.fetch("POST", f"/api/campaigns/{ALPHA}/actions", None, b'{"action": "next"}', sent)
    assert status == 401
    # A link can never send the browser to another site.
    status, headers, _body = league.fetch("GET", f"//elsewhere.example/?token={anna}")
    assert status == 303 and not headers["location"].startswith("//")
    # A bad token sets nothing; the server's log never holds a token.
    status, headers, _body = league.fetch("GET", "/?token=trk_0123456789abcdef_nope")
    assert status == 401 and "tracker_token=trk_" not in headers.get("set-cookie", "")
    log = league.server.log()
    assert "GET /?token=[hidden]" in log
    assert all(t.split("_", 2)[2] not in log for t in league.tokens.values())


def test_pages_read_with_a_cookie_are_kept_by_no_shared_cache(league: League) -> None:
    """A page read with the viewer's cookie is that reader's: a caching proxy in front of the
    server (which keys on the URL, not the cookie) must not hand it to the next stranger, nor
    a stranger's "no such campaign" to the campaign's players. The API's reads come with an
    Authorization header, which no shared cache keeps."""
    sent = {"Cookie": f"tracker_token={league.tokens['anna']}"}
    for path, who, status in (
        (f"/campaigns/{ALPHA}/board", sent, 200),
        (f"/campaigns/{ALPHA}/log", sent, 200),
        ("/", sent, 200),
        (f"/campaigns/{ALPHA}/board", {}, 404),
        ("/", {}, 200),
    ):
        got, headers, _body = league.fetch("GET", path, headers=who)
        assert got == status, path
        assert "private" in headers.get("cache-control", ""), (path, headers)


# ----- request limits -----


def test_a_body_over_one_mib_is_413_whether_its_length_is_said_or_streamed(league: League) -> None:
    anna = league.tokens["anna"]
    big = b"x" * (1024 * 1024 + 1)
    status, _headers, body = league.fetch("POST", "/api/command", anna, big)
    assert status == 413 and "1 MiB" in json.loads(body)["error"]

    def chunks() -> Iterator[bytes]:
        for _ in range(17):
            yield b" " * 65536

    url = urllib.parse.urlsplit(league.server.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    try:
        conn.request(
            "POST", "/api/command", body=chunks(), encode_chunked=True,
            headers={"Authorization": f"Bearer {anna}", "Content-Type": "application/json"},
        )  # fmt: skip
        resp = conn.getresponse()
        assert resp.status == 413 and "1 MiB" in json.loads(resp.read())["error"]
    finally:
        conn.close()
    # Just under the limit is read (and refused for what it is, not its size).
    status, _headers, body = league.fetch("POST", "/api/command", anna, b" " * (1024 * 1024 - 2) + b"{}")
    assert status == 400 and "args" in json.loads(body)["error"]


@pytest.mark.parametrize("path", ["/api/command", f"/api/campaigns/{ALPHA}/actions"])
def test_json_nested_100000_deep_is_a_400_that_says_so(league: League, path: str) -> None:
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"args": ' + b"[" * 100 + b"]" * 100 + b"}"):
        status, _headers, body = league.fetch("POST", path, league.tokens["anna"], deep)
        assert status == 400 and json.loads(body)["error"] == "the request body nests JSON deeper than 64 levels"
    assert "RecursionError" not in league.server.log()


def seq_of(league: League) -> int:
    return int(json.loads(league.fetch("GET", f"/api/campaigns/{ALPHA}/state", league.tokens["ref"])[2])["seq"])


BODIES = {"/api/command": {"args": ["next"], "campaign": ALPHA}, f"/api/campaigns/{ALPHA}/actions": {"action": "next"}}


@pytest.mark.parametrize("path", list(BODIES))
@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"])
def test_a_body_not_sent_as_json_is_415_and_records_nothing(league: League, path: str, kind: str) -> None:
    """What a page on another site can make a browser post without asking first (a form, plain
    text) is never read as an action, whatever it holds."""
    before = seq_of(league)
    body = json.dumps(BODIES[path]).encode()
    status, headers, answer = league.fetch("POST", path, league.tokens["ref"], body, {"Content-Type": kind})
    message = f"the request body must be JSON sent with Content-Type: application/json (got {kind!r})"
    assert (status, json.loads(answer)) == (415, {"error": message, "rule": None})
    assert headers["content-type"] == "application/json"
    assert seq_of(league) == before


def test_a_body_without_a_content_type_is_415_and_json_with_parameters_is_read(league: League) -> None:
    url = urllib.parse.urlsplit(league.server.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    try:
        # http.client adds no Content-Type of its own.
        body = json.dumps(BODIES["/api/command"]).encode()
        conn.request("POST", "/api/command", body=body, headers={"Authorization": f"Bearer {league.tokens['ref']}"})
        resp = conn.getresponse()
        answer = (resp.status, json.loads(resp.read()))
    finally:
        conn.close()
    message = "the request body must be JSON sent with Content-Type: application/json (got none)"
    assert answer == (415, {"error": message, "rule": None})
    read = json.dumps({"args": ["state", "--json"], "campaign": ALPHA}).encode()
    for kind in ("application/json; charset=utf-8", "application/vnd.tracker+json"):
        status, _headers, _body = league.fetch(
            "POST", "/api/command", league.tokens["sam"], read, {"Content-Type": kind}
        )
        assert status == 200, kind


@pytest.mark.parametrize("charset", ["latin-1", "utf-16"])
def test_a_json_body_said_to_be_in_another_charset_than_utf8_is_415_and_records_nothing(
    league: League, charset: str
) -> None:
    """JSON is UTF-8 (RFC 8259): a body sent as `charset=latin-1` was read as UTF-8 and its
    action recorded, whatever its sender meant by its bytes."""
    before = seq_of(league)
    path = f"/api/campaigns/{ALPHA}/actions"
    body = json.dumps(BODIES[path]).encode()
    kind = f"application/json; charset={charset}"
    status, _headers, answer = league.fetch("POST", path, league.tokens["ref"], body, {"Content-Type": kind})
    message = f"the request body must be JSON in UTF-8 (got charset={charset!r})"
    assert (status, json.loads(answer)) == (415, {"error": message, "rule": None})
    assert seq_of(league) == before


def test_an_over_long_input_says_the_limit_and_errors_quote_at_most_60_characters(league: League) -> None:
    """A unit name of 100,000 characters was answered "must be a list of strings, got [...]"
    with the whole of it; an input over the limit says the limit, and a value a message quotes
    is cut to 60 characters, whichever layer refused it."""
    anna, path = league.tokens["anna"], f"/api/campaigns/{ALPHA}/actions"
    before = seq_of(league)
    where = "move: input 'units'"
    cases = [
        ({"units": ["X" * 100_000]}, f"{where} has an item longer than 10000 characters"),
        ({"units": "X" * 100_000}, f"{where} is longer than 10000 characters"),
        ({"units": [1] * 900}, f"{where} must be a list of strings, got {repr([1] * 900)[:60]}..."),
    ]
    for inputs, message in cases:
        asked = json.dumps({"action": "move", "inputs": {**inputs, "path": ["Skagerrak"]}}).encode()
        status, _headers, body = league.fetch("POST", path, anna, asked)
        assert (status, json.loads(body)) == (400, {"error": message, "rule": None})
    # An unknown zone, named by the layer that looks zones up: the name quoted, cut.
    inputs = {"units": ["DE-SS3"], "path": ["Y" * 9000]}
    status, _headers, body = league.fetch("POST", path, anna, json.dumps({"action": "move", "inputs": inputs}).encode())
    error = json.loads(body)["error"]
    assert status == 400 and f"'{'Y' * 60}...'" in error and "Y" * 61 not in error, error[:200]
    assert len(body) < 2000 and "\n" not in error
    status, _headers, body = league.fetch(
        "POST", "/api/command", anna, json.dumps({"args": ["log", "--zone", "Z" * 1900], "campaign": ALPHA}).encode()
    )
    error = json.loads(body)["error"]
    assert status == 400 and f"'{'Z' * 60}...'" in error and "Z" * 61 not in error, error[:200]
    assert seq_of(league) == before


def test_an_argument_that_is_not_utf8_is_bad_usage(league: League) -> None:
    body = json.dumps({"args": ["log", "--zone", "\udcff"], "campaign": ALPHA}).encode()
    status, _headers, answer = league.fetch("POST", "/api/command", league.tokens["anna"], body)
    assert status == 400 and "argument 3 is not UTF-8 text" in json.loads(answer)["error"]
    body = json.dumps({"action": "move", "inputs": {"to": "\udcff"}}).encode()
    status, _headers, answer = league.fetch("POST", f"/api/campaigns/{ALPHA}/actions", league.tokens["anna"], body)
    assert status == 400 and "not UTF-8 text" in json.loads(answer)["error"]
    # The client says so before sending anything.
    env = {"TRACKER_CONFIG": "/nonexistent", "TRACKER_TOKEN": league.tokens["anna"]}
    done = subprocess.run(
        [*TRACKER, "--server", league.server.url, "--campaign", ALPHA, "log", "--zone", os.fsdecode(b"North\xff")],
        capture_output=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip
    assert done.returncode == 2 and b"argument 3 is not UTF-8 text: 'North\\xff'" in done.stderr, done.stderr
    assert b"UnicodeEncodeError" not in done.stderr


# ----- failed tokens: rate-limited per address -----


def test_failed_tokens_are_rate_limited_per_address_with_retry_after(tmp_path: Path) -> None:
    from tracker.server.access import FAILURES, WINDOW

    db = tmp_path / "limited.db"
    assert tracker("--db", str(db), "new", OPEN, "--scenario", "north-sea-1914").returncode == 0
    good = token_of(tracker("--db", str(db), "players", "add", "anna", "--spectator"))
    assert tracker("--db", str(db), "campaign", "public", "on").returncode == 0
    with served(str(db), workdir=tmp_path) as server:
        limited = League(server, db, {"anna": good})
        bad = "trk_0123456789abcdef_" + "x" * 43
        statuses = [limited.fetch("GET", "/api/campaigns", bad)[0] for _ in range(FAILURES)]
        assert statuses == [401] * FAILURES
        for path, token in (("/api/campaigns", bad), ("/api/campaigns", good), ("/", good), (f"/?token={good}", None)):
            status, headers, _body = limited.fetch("GET", path, token)
            assert status == 429, (path, status)
            assert 1 <= int(headers["retry-after"]) <= WINDOW
        # Reading without a token is no token check: the public campaign is still read.
        assert limited.fetch("GET", f"/api/campaigns/{OPEN}/state")[0] == 200


def test_the_failure_counts_are_bounded_and_forget_after_their_window() -> None:
    from tracker.server.access import FailedChecks

    now = [1000.0]
    checks = FailedChecks(limit=3, window=60.0, addresses=5, clock=lambda: now[0])
    for i in range(50):
        checks.failed(f"10.0.0.{i}")
    assert len(checks) == 5
    for _ in range(10):
        checks.failed("10.9.9.9")
    assert len(checks._failed["10.9.9.9"]) == 3
    assert checks.retry_after("10.9.9.9") == 60 and checks.retry_after("10.0.0.49") is None
    now[0] += 59.5
    assert checks.retry_after("10.9.9.9") == 1
    now[0] += 1
    assert checks.retry_after("10.9.9.9") is None


# ----- how tokens are kept and checked -----


def test_tokens_are_256_bit_secrets_stored_as_sha256_and_compared_in_constant_time(
    league: League, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    import hmac

    from tracker.service import players as module
    from tracker.service.application import Tracker

    with sqlite3.connect(league.db) as conn:
        rows = dict(conn.execute("SELECT token_id, token_hash || '|' || salt FROM tracker_players").fetchall())
    for token in league.tokens.values():
        _prefix, token_id, secret = token.split("_", 2)
        assert len(base64.urlsafe_b64decode(secret + "=")) == 32
        stored, salt = rows[token_id].split("|")
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", stored) and salt == ""
        assert stored == "sha256:" + hashlib.sha256(secret.encode()).hexdigest()
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def compare(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    def no_scrypt(*args: Any, **kwargs: Any) -> bytes:
        raise AssertionError("scrypt ran for a token stored as SHA-256")

    monkeypatch.setattr(module.hmac, "compare_digest", compare)
    monkeypatch.setattr(module.hashlib, "scrypt", no_scrypt)
    with Tracker(str(league.db)) as t:
        players = module.Players(t.engine)
        anna = league.tokens["anna"]
        assert players.authenticate(anna) is not None and players.authenticate(other_secret(anna)) is None
    assert len(compared) == 2 and all(isinstance(a, bytes) for pair in compared for a in pair)


def other_secret(token: str) -> str:
    """The token with the last character of its secret changed."""
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def test_a_token_kept_as_scrypt_is_checked_once_and_stored_as_sha256(
    db_url: str, unique_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.service import players as module
    from tracker.service.application import Tracker

    with Tracker(db_url) as t:
        t.create(unique_name, "north-sea-1914")
        players = module.Players(t.engine)
        token = players.add(str(t.campaign_id(unique_name)), "anna", ["Germany"], False)
        token_id, secret = token.split("_", 2)[1:]
        salt = os.urandom(16).hex()
        old = hashlib.scrypt(secret.encode(), salt=bytes.fromhex(salt), **module.SCRYPT).hex()
        # The row as an earlier tracker wrote it: a salted scrypt hash.
        with t.engine.begin() as conn:
            conn.execute(
                module.players_table.update()
                .where(module.players_table.c.token_id == token_id)
                .values(token_hash=old, salt=salt)
            )
        ran: list[int] = []
        real = module.hashlib.scrypt

        def counted(*args: Any, **kwargs: Any) -> bytes:
            ran.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(module.hashlib, "scrypt", counted)
        assert players.authenticate(other_secret(token)) is None
        assert players.authenticate(token) is not None
        assert players.authenticate(token) is not None
        monkeypatch.undo()
        assert len(ran) == 2  # the wrong secret, and the right one once
        with t.engine.connect() as conn:
            row = conn.execute(module.players_table.select().where(module.players_table.c.token_id == token_id)).first()
        assert row is not None and row.token_hash == module.token_digest(secret) and row.salt == ""


def test_a_campaign_is_made_public_and_private_once(db_url: str, unique_name: str) -> None:
    from tracker.service.application import Tracker
    from tracker.service.players import Players

    with Tracker(db_url) as t:
        t.create(unique_name, "north-sea-1914")
        cid = str(t.campaign_id(unique_name))
        players = Players(t.engine)
        assert not players.is_public(cid)
        assert players.set_public(cid, True, "rita") and not players.set_public(cid, True, "rita")
        assert players.is_public(cid) and cid in players.public_ids()
        assert players.set_public(cid, False) and not players.set_public(cid, False)
        assert not players.is_public(cid) and cid not in players.public_ids()
