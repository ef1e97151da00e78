"""The browser viewer: read-only HTML pages over the campaigns the server holds.

Pages: the campaign list; the board (now, at the end of any national turn or phase, or after
any event) drawn as a map; the timeline with the filters of `tracker log`; the battles, each
roll by roll; `explain` for any event; charts of the figures across the rounds; a zone, with
the odds of taking, holding and guarding it. Every page follows the campaign's event stream
(`/api/campaigns/{name}/events/stream`) and reloads when something is recorded, so a table
watching the board sees each action as it happens.

A bad URL (unknown campaign, event or battle, a turn not played, a number beyond 2^31 - 1, an
unknown phase, nation, zone, kind or query parameter) is a 400 or 404 page: one line says why.

Who reads: the token of the viewer's cookie, set once by a link carrying it (`?token=`, see
`tracker.server.access`), or an `Authorization: Bearer` header. The list shows the campaigns
it may read and the public ones; any other campaign is "no such campaign", as one that does
not exist.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Match, Route

from domain.errors import InputError, TrackerError
from domain.ruleset import KNOWN_PHASES
from domain.text import unit_order
from tracker.cli.params import shorten_echoes
from tracker.server import viewer_words
from tracker.server.access import Denied, Gate, forget_cookie, sign_in
from tracker.server.log_pages import timeline_page
from tracker.server.paths import name_segment
from tracker.server.served import NO_SUCH_CAMPAIGN, NotFound
from tracker.server.viewer_params import PageError, known_query, number, page_bounds, phase_param, text_param
from tracker.server.zone_odds import zone_odds
from tracker.service.application import Tracker
from tracker.service.players import Player
from tracker.storage.mapper import DamagedLogError

T = TypeVar("T")
# The events of one page of the timeline (the latest, or those before or after an event).
TIMELINE_LIMIT = 500


class Service(Protocol):
    """What the pages need from the server: a call on its tracker, one request at a time."""

    def call(self, fn: Callable[[Any], T], name: str | None = None, player: Player | None = None) -> Awaitable[T]: ...


def _environment() -> jinja2.Environment:
    from tracker.reports.html import template_environment

    env = template_environment("tracker.server")
    viewer_words.install(env)
    return env


_ENV: jinja2.Environment | None = None


def render(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return HTMLResponse(_ENV.get_template(template).render(**context), status_code=status)


def error_page(status: int, message: str, name: str | None = None, link: tuple[str, str] | None = None) -> HTMLResponse:
    title = {
        400: "Bad request", 401: "Token refused", 404: "Not found", 405: "Not a page to send to",
        413: "Request too large", 429: "Too many tries",
    }.get(status, "The campaign cannot be read")  # fmt: skip
    # A campaign that is not there (or not the reader's) gets no links of its own.
    name = None if message == NO_SUCH_CAMPAIGN else name
    message = shorten_echoes(message)
    return render(
        "viewer_error.html.j2", status=status, title=title, message=message, name=name, link=link, version=None
    )


# ----- reading the URL (its parameters: `tracker.server.viewer_params`) -----


# The most turns a turn picker lists one by one; a longer campaign's is a number field. A
# menu of every turn of a long league (thousands) made most of the board page's bytes, and
# is scrolled through, not read.
TURN_MENU = 200


# ----- what the pages read (run on the server's tracker, one request at a time) -----


def turn_menu(campaign: Any, last: int) -> dict[int, str] | None:
    """The turn picker's entries up to turn `last`, each named by its nation and round (T1), as
    the pages' own messages name a turn; None when there are too many to list (`TURN_MENU`)."""
    from projections.positions import turn_position

    if last > TURN_MENU:
        return None
    order = campaign.scenario.turn_order
    return {k: "{1}, round {0}".format(*turn_position(order, k)) for k in range(1, last + 1)}


def _campaign(t: Tracker, name: str) -> tuple[Any, Any]:
    """(campaign id, campaign) of a campaign named in the URL; 404 when there is none, or when
    the reader may not read it (the server's tracker checks)."""
    if len(name) > 200:
        raise PageError(404, NO_SUCH_CAMPAIGN)
    try:
        cid = t.campaign_id(name)
    except NotFound:
        raise PageError(404, NO_SUCH_CAMPAIGN) from None
    return cid, t.load(cid)


def _position(campaign: Any) -> dict[str, Any]:
    from projections.positions import turn_number

    return {
        "seq": campaign.version,
        "round": campaign.round,
        "nation": campaign.nation,
        "phase": campaign.phase,
        "turn": turn_number(campaign.scenario.turn_order, campaign.round, campaign.nation),
    }


def _check_turn(turn: int | None, position: dict[str, Any]) -> None:
    if turn is not None and turn > position["turn"]:
        raise PageError(404, f"turn {turn} has not been played (the campaign is in turn {position['turn']})")


def _check_seq(seq: int | None, position: dict[str, Any]) -> None:
    if seq is not None and seq > position["seq"]:
        raise PageError(404, f"no event {seq} in this campaign (it has {position['seq']})")


def waiting_data(t: Tracker, name: str, player: Player | None) -> dict[str, Any]:
    """What the game waits for now and from whom, shown on every page of the campaign, and
    whether it waits for the reader ("your move": a player one of whose nations is waited for)."""
    _, campaign = _campaign(t, name)
    return viewer_words.waiting_rows(campaign, set(player.nations) if player is not None else set())


def campaigns_data(t: Tracker) -> list[dict[str, Any]]:
    """Each readable campaign and where it stands; a campaign whose log was damaged outside the
    tracker is listed with its problem (as `verify` names it), never hiding the others."""
    rows: list[dict[str, Any]] = []
    for name in t.campaign_names():
        try:
            campaign = t.load(t.campaign_id(name))
        except DamagedLogError as e:
            rows.append({"name": name, "problem": str(e)})
            continue
        rows.append({"name": name, "problem": None, "title": campaign.scenario.title, **_position(campaign)})
    return rows


def board_data(t: Tracker, name: str, turn: int | None, phase: str | None, at: int | None) -> dict[str, Any]:
    from tracker.reports.board_map import board_svg, map_focus
    from tracker.reports.views import board_now
    from tracker.server.viewer_neutral import board_then, passed_over_turns, turn_passed_over, war_entries
    from tracker.service.turn_played import played_now

    cid, campaign = _campaign(t, name)
    position = _position(campaign)
    # A phase with the turn left at "now" (the form's default) is that phase of the turn now.
    turn = turn or (position["turn"] if phase and not at else None)
    _check_turn(turn, position)
    _check_seq(at, position)
    said = turn_passed_over(t, cid, campaign, turn) if turn else None
    if said is not None:
        # F8: the board then is the last played turn's, or the opening one when no turn was
        # played before it (as `state --turn` says); a link to it, not a command to type.
        query, then = board_then(t, cid, said)
        raise PageError(404, f"{said}", (f"/campaigns/{name_segment(name)}/board?{query}", f"the board then: {then}"))
    try:
        board = t.board_at(cid, turn=turn, phase=phase, at=at) if turn or at else board_now(campaign)
    except InputError as e:
        # A phase of a played turn that was never entered (or only by undone events).
        raise PageError(404, str(e)) from None
    scenario, ruleset = campaign.scenario, campaign.ruleset
    link = f"/campaigns/{name_segment(name)}/zones/{{zone}}"  # the zone's page, which links to its log
    open_battles = [
        {"id": b["id"], "kind": b["kind"], "zone": b["zone"], "step": b["step"]}
        for b in sorted(campaign.battles.values(), key=lambda b: b["id"])
    ]
    # F8: a neutral nation's side is the one it will join; the board says so, as `state` does.
    neutral = set(board.get("neutral") or ())
    entries = war_entries(t, cid, campaign, board["seq"])
    nations = viewer_words.nation_rows(board, scenario, neutral, entries)
    # F8: a neutral nation's turn passed over has no board of its own (its page is a 404), so
    # the previous and next turn links step over it, and the turn selector offers it disabled.
    # After an event (`at`), the next turn's board is the end of the turn that event is in.
    skipped = passed_over_turns(t, cid, campaign)
    shown = turn or board["turn"]
    previous = next((k for k in range(shown - 1, 0, -1) if k not in skipped), None)
    after = shown + 1 if turn else shown if at else position["turn"] + 1
    following = next((k for k in range(after, position["turn"] + 1) if k not in skipped), None)
    return {
        "name": name,
        "title": scenario.title,
        "position": position,
        "board": board,
        "passed_over": skipped,
        "turn_menu": turn_menu(campaign, position["turn"]),
        "previous_turn": previous,
        "next_turn": following,
        "pinned": bool(turn or at),
        # T1: whether the turn (and phase) asked for is still being played, as `state --turn` says.
        "played_now": played_now(campaign, turn, phase) if turn else (False, False),
        "turn": turn,
        "phase": phase,
        "at": at,
        "phases": list(KNOWN_PHASES),
        "nations": nations,
        # F8: who is neutral at this moment and until when (as `state` says), who entered later.
        "neutral": [(n, scenario.nations[n].entry_round) for n in scenario.turn_order if n in neutral],
        "entries": entries,
        "technologies": list(ruleset.technologies),
        # The game now, beside a board of any moment: what is open and what waits to be placed.
        "open_battles": open_battles,
        # A board of an earlier moment opens on its own acting nation, not on today's battles.
        "focus": map_focus(board, scenario, [] if turn or at else open_battles),
        "unplaced": viewer_words.unplaced_counts(campaign.unplaced),
        "svg": Markup(board_svg(board, scenario, ruleset, link=link)),  # names escaped by board_map
    }


def log_data(t: Tracker, name: str, filters: dict[str, Any]) -> dict[str, Any]:
    from tracker.server.viewer_neutral import board_then, opening_board, passed_over_turns, turn_passed_over
    from tracker.service.history import log_records
    from tracker.service.names import Names, event_kind, event_kinds

    cid, campaign = _campaign(t, name)
    position = _position(campaign)
    try:
        names = Names(campaign)
        nation = names.optional_nation(filters["nation"])
        zone = names.optional_zone(filters["zone"])
        kind = event_kind(filters["kind"]) if filters["kind"] is not None else None
    except InputError as e:
        raise PageError(400, str(e)) from None
    # The timeline of a turn not played yet is not there (as that turn's board), not empty.
    _check_turn(filters["turn"], position)
    battle = filters["battle"]
    if battle is not None and not log_records(t, cid, battle=battle, tail=1):
        # As the battle's own page: a battle nobody fought is not there, not an empty timeline.
        raise PageError(404, f"no battle {battle} in this campaign")
    before, after = filters["bounds"]
    filters = {**filters, "nation": nation, "zone": zone, "kind": kind}
    shown = timeline_page(t, cid, filters, position["seq"], TIMELINE_LIMIT, before, after)
    # F8: a turn passed over has no events; the page says why and where its TurnPassedOver is.
    skipped = passed_over_turns(t, cid, campaign)
    turn = filters["turn"]
    said = turn_passed_over(t, cid, campaign, turn) if turn in skipped else None
    return {
        "name": name,
        "position": position,
        "passed_over": skipped,
        "said": said,
        # The board page's query and name of the board standing then (`board_then`).
        "board_then": board_then(t, cid, said) if said is not None else None,
        # F8: the query of the board the campaign opened with, when its turn 1 was passed over:
        # that turn's events (the creation's) link there, not to a board it never had.
        "opening": opening_board(t, cid, campaign) if 1 in skipped else None,
        **shown,
        # A page of older events (or a full page of newer ones) stays as it is when news comes.
        "pinned": shown["before"] is not None or (shown["after"] is not None and shown["newer"] is not None),
        "filters": filters,
        "choices": {
            "turn": turn_menu(campaign, position["turn"]),
            "phase": list(KNOWN_PHASES),
            "nation": list(campaign.scenario.turn_order),
            "zone": list(campaign.scenario.game_map.adjacency),
            "kind": event_kinds(),
        },
    }


def battles_data(t: Tracker, name: str) -> dict[str, Any]:
    from projections.schema import event_index

    cid, campaign = _campaign(t, name)
    battles: dict[int, dict[str, Any]] = {}
    with t.views(cid) as v:
        for r in v.index_rows([event_index.c.battle.is_not(None)]):
            b = battles.setdefault(
                r.battle,
                {"battle": r.battle, "seq": r.seq, "turn": r.turn, "round": r.round, "nation": r.nation,
                 "zone": next((z for z in r.zones.split("|") if z), ""), "first": r.summary, "events": 0,
                 "rolls": 0, "last": r.summary, "undone_by": r.undone_by},
            )  # fmt: skip
            b["events"] += 1
            # RK3: a roll or step an undo took back is struck through on the battle's page;
            # the list counts and ends on what stands (a battle undone whole keeps its own).
            if r.undone_by is None or b["undone_by"] is not None:
                b["rolls"] += 1 if r.kind == "DiceRolled" else 0
                b["last"] = r.summary
    return {"name": name, "position": _position(campaign), "battles": [battles[k] for k in sorted(battles)]}


def battle_data(t: Tracker, name: str, number: int) -> dict[str, Any]:
    from tracker.reports import report as rp
    from tracker.reports import text as rt
    from tracker.service.history import log_records

    cid, campaign = _campaign(t, name)
    records = log_records(t, cid, battle=number)
    if not records:
        raise PageError(404, f"no battle {number} in this campaign")
    turn = records[0]["turn"]
    # The report's story of the battle's turn ("md": only the series entries it shows).
    report = rp.build_report(t, cid, turn=turn, fmt="md")
    battle = next(b for b in report["turns"][0]["battles"] if b["battle"] == number)
    return {
        "name": name,
        "position": _position(campaign),
        "battle": battle,
        "turn": turn,
        "heading": rt.battle_heading(battle),
        "declaration": rt.battle_declaration(battle),
        "rule": rt.BATTLE_RULES.get(battle["kind"], "CV1"),
        "result": rt.battle_result(battle),
        "rolls": [
            {**r, "dice": rt.dice_text(r), "target": rt.target_text(r, ascii_only=False)} for r in battle["rolls"]
        ],
        "steps": [{**s, "text": rt.step_text(s)} for s in battle["steps"]],
    }


def explain_data(t: Tracker, name: str, seq: int) -> dict[str, Any]:
    from tracker.service.history import explain

    cid, campaign = _campaign(t, name)
    position = _position(campaign)
    _check_seq(seq, position)
    data = explain(t, cid, seq)
    battle = data["data"].get("battle") if isinstance(data["data"], dict) else None
    return {"name": name, "position": position, "event": data, "battle": battle}


def charts_data(t: Tracker, name: str) -> dict[str, Any]:
    from tracker.reports import report as rp
    from tracker.reports.html import chart_svgs

    cid, campaign = _campaign(t, name)
    position = _position(campaign)
    report = rp.build_report(t, cid, turn=position["turn"], fmt="html")
    charts = [{**c, "svg": Markup(c["svg"])} for c in chart_svgs(report)]  # charts.py escapes every text it draws
    return {"name": name, "position": position, "charts": charts, "sides": report["campaign"]["sides"],
            "first": report["campaign"]["turn_order"][0]}  # fmt: skip


# ----- what a page's URL asks: the read to run on the tracker -----

Read = Callable[[Tracker], dict[str, Any]]


def board_read(request: Request) -> Read:
    name = request.path_params["name"]
    turn, at, phase = number(request, "turn"), number(request, "at"), phase_param(request)
    if at and (turn or phase):
        raise PageError(400, "give a turn or an event, not both" if turn else "a phase goes with a turn, not an event")
    return lambda t: board_data(t, name, turn, phase, at)


def log_read(request: Request) -> Read:
    name = request.path_params["name"]
    order = text_param(request, "order")
    if order not in (None, "newest", "oldest"):
        raise PageError(400, f"order must be newest or oldest, not {order[:40]!r}")
    filters = {
        "turn": number(request, "turn"),
        "battle": number(request, "battle"),
        "phase": phase_param(request),
        "nation": text_param(request, "nation"),
        "zone": text_param(request, "zone"),
        "kind": text_param(request, "kind"),
        "order": order,
        "bounds": page_bounds(request),
    }
    return lambda t: {**log_data(t, name, filters), "newest_first": order == "newest"}


def battles_read(request: Request) -> Read:
    name = request.path_params["name"]
    return lambda t: battles_data(t, name)


def battle_read(request: Request) -> Read:
    name = request.path_params["name"]
    n = number(request, "battle", request.path_params["number"])
    assert n is not None
    return lambda t: battle_data(t, name, n)


def event_read(request: Request) -> Read:
    name = request.path_params["name"]
    seq = number(request, "event", request.path_params["seq"])
    assert seq is not None
    return lambda t: explain_data(t, name, seq)


def charts_read(request: Request) -> Read:
    name = request.path_params["name"]
    return lambda t: charts_data(t, name)


# ----- the zone page: what is there, and the odds of taking, holding and guarding it -----


def zone_data(t: Tracker, name: str, zone_text: str) -> dict[str, Any]:
    """A zone now: its units, NTR and owner, and (a sea zone) the odds panel."""
    from tracker.service.names import Names

    _, campaign = _campaign(t, name)
    try:
        zone = Names(campaign).zone(zone_text)
    except InputError as e:
        raise PageError(404, str(e)) from None
    board = campaign.board()
    sea = board.scenario.game_map.is_sea(zone)
    units = sorted(board.units_at(zone), key=lambda u: (u.nation, u.type, unit_order(u.id)))
    # SM4, SM5: submarines whose movement ended stay, and where they stopped to attack a naval
    # battle on submarines alone is due (NC1), as `tracker odds need` weighs them.
    ended, attacking = frozenset(campaign.movement_ended), frozenset(campaign.attack_zones)
    return {
        "name": name,
        "position": _position(campaign),
        "zone": zone,
        "sea": sea,
        "owner": None if sea else board.owners.get(zone),
        "units": [{"id": u.id, "type": u.type, "nation": u.nation, "damage": u.damage} for u in units],
        "ntr": {n: zones[zone] for n, zones in sorted(board.ntr.items()) if zones.get(zone)},
        "odds": zone_odds(board, zone, ended, attacking) if sea else [],
    }


def zone_read(request: Request) -> Read:
    # The server routes on the path with %2F and %25 still encoded (`tracker.server.paths`), so
    # that a zone holding "/" stays one segment: they are decoded here, as a campaign's name is.
    name, zone = request.path_params["name"], unquote(request.path_params["zone"])
    if len(zone) > 200:
        raise PageError(404, f"unknown zone {zone[:40]!r}")
    return lambda t: zone_data(t, name, zone)


# ----- routes -----


Endpoint = Callable[[Request], Awaitable[Response]]
# A page's work once its reader is known (None: no token).
Serve = Callable[[Request, Player | None], Awaitable[Response]]


def signed(gate: Gate, serve: Serve, takes: str | None) -> Endpoint:
    """A page's endpoint that knows its reader: a URL with `?token=` sets the cookie and sends
    the browser on without it; otherwise the header's or the cookie's token (a bad one is a
    401 page that drops the cookie, too many bad ones a 429 page); none: an anonymous reader.
    First, a 400 page for a query parameter the page `takes` not (`PAGE_QUERIES`; None: the
    address of no page, whose query is not read)."""

    async def endpoint(request: Request) -> Response:
        response = await answer(request)
        # What a page says depends on the cookie (a campaign's board, or "no such campaign"),
        # which a caching proxy keyed on the URL does not see: no shared cache may keep it.
        response.headers.setdefault("Cache-Control", "private")
        return response

    async def answer(request: Request) -> Response:
        link = "token" in request.query_params
        try:
            if takes is not None:
                known_query(request, takes)
            if link:
                return await sign_in(gate, request)
            player = await gate.player(request)
        except PageError as e:
            return error_page(e.status, e.message, request.path_params.get("name"))
        except Denied as e:
            response = error_page(e.status, e.message)
            response.headers.update(e.headers)
            # A stale link leaves a good cookie alone; a cookie refused is dropped.
            return forget_cookie(response) if e.status == 401 and not link else response
        return await serve(request, player)

    return endpoint


def page(service: Service, template: str, read: Callable[[Request], Read]) -> Serve:
    """The endpoint of a campaign's page: `read` what its URL asks on the server's tracker and
    render `template` with it; an error page for what cannot be read."""

    async def endpoint(request: Request, player: Player | None) -> Response:
        name = request.path_params.get("name")
        try:
            fn = read(request)
            data = await service.call(lambda t: {**fn(t), "waiting": waiting_data(t, str(name), player)}, name, player)
        except PageError as e:
            return error_page(e.status, e.message, name, e.link)
        except TrackerError as e:
            # Bad input the reads refuse is a 400; a damaged log (exit 1 on the CLI) is the
            # server's problem, told in one line as `verify` would name it.
            return error_page(400 if e.exit_code == 2 else 500, str(e), name)
        return render(template, version=data["position"]["seq"], **data)

    return endpoint


def home_page(service: Service) -> Serve:
    """The endpoint of the list of campaigns: those the reader may read, and the public ones."""

    async def home(request: Request, player: Player | None) -> Response:
        rows = await service.call(campaigns_data, None, player)
        reader = f"{player.name} ({player.describe()})" if player is not None else None
        return render("viewer_campaigns.html.j2", campaigns=rows, reader=reader, name=None, version=None)

    return home


async def campaign_home(request: Request, player: Player | None) -> Response:
    return RedirectResponse(f"/campaigns/{name_segment(request.path_params['name'])}/board", status_code=307)


def not_found(pages: Sequence[BaseRoute]) -> Serve:
    """The page for an address no page has; one asked for with a slash after it goes to the
    page itself, as the API's addresses do."""

    async def serve(request: Request, player: Player | None) -> Response:
        path = request.url.path
        if len(path) > 1 and path.endswith("/"):
            # One leading slash, whatever was sent: the page on this server, never another host.
            bare = {**request.scope, "path": "/" + path.strip("/")}
            if any(page.matches(bare)[0] == Match.FULL for page in pages):
                raw = request.scope.get("raw_path", path.encode()).decode("latin-1")
                target = "/" + raw.strip("/") + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(target, status_code=307)
        return error_page(404, f"no page at {path[:200]}")

    return serve


def routes(service: Service, gate: Gate) -> list[BaseRoute]:
    """The viewer's pages, mounted at / by the server, each knowing its reader (see `signed`)."""

    def route(path: str, serve: Serve, takes: str | None) -> Route:
        return Route(path, signed(gate, serve, takes))

    def view(path: str, key: str, read: Callable[[Request], Read]) -> Route:
        """Page `key` (of `PAGE_QUERIES`), drawn by its template `viewer_{key}.html.j2`."""
        return route("/campaigns/{name:campaign}" + path, page(service, f"viewer_{key}.html.j2", read), key)

    # `{name:campaign}` (tracker.server.app.CampaignName): one segment, so a name holding "/"
    # (sent as %2F) or ending like a page ("x/board") is never read as another page's URL.
    pages = [
        route("/", home_page(service), "home"),
        view("/board", "board", board_read),
        view("/log", "log", log_read),
        view("/battles", "battles", battles_read),
        view("/battles/{number}", "battle", battle_read),
        view("/events/{seq}", "event", event_read),
        view("/charts", "charts", charts_read),
        view("/zones/{zone}", "zone", zone_read),
        route("/campaigns/{name:campaign}", campaign_home, "campaign"),
    ]
    # No page: a 404, or (with a slash after it) on to the page, which reads the query.
    return [*pages, route("/{path:path}", not_found(pages), None)]
