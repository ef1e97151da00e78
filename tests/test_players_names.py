"""Players' names as a group types them (PL1, PL2): `--player alice` finds the player `players
add` registered as `Alice` (the registered spelling is what is kept and printed), a name that
differs from a live player's only by case is no new player, and two registered names that
differ only by case are refused naming both. Tab completion offers the campaign's players to
`inbox --player`, `notify add --player` and `players revoke`, the nations to `players add
--nations`, and only the nation whose turn it is to `battle start --nation` and `asw start
--nation` (T3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.completion import completions
from tracker.cli.main import cli
from tracker.cli.shell_prompt import completer


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run = cli_on(path)
    run("new", "autumn", "--scenario", "north-sea-1914")
    run("--campaign", "autumn", "players", "add", "Alice", "--nations", "Germany")
    run("--campaign", "autumn", "players", "add", "Bert Brown", "--nations", "Britain")
    return path


def _shell(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def _bash(*words: str, incomplete: str = "") -> list[str]:
    return [str(c.value) for c in completions(cli, list(words), incomplete)]


# ----- names typed in another case (PL1, PL2) -----


def test_pl1_a_name_typed_in_another_case_finds_the_registered_player(db: str) -> None:
    # `alice` for the player registered as `Alice` was refused: "--player 'alice' does not play".
    run = cli_on(db)
    assert "autumn · round 1 · Germany · research" in run("inbox", "--player", " ALICE ")
    assert "autumn · round 1 · Germany" in run("wait", "--player", "alice", "--timeout", "60")
    # The channel keeps the registered spelling, by which its hand-offs find her nations.
    said = run("--campaign", "autumn", "notify", "add", "email", "a@example.org", "--player", "alice")
    assert "for player Alice." in said
    (channel,) = json.loads(run("--campaign", "autumn", "notify", "list", "--json"))
    assert channel["player"] == "Alice"
    assert run("--campaign", "autumn", "players", "revoke", "bert brown") == "Token of 'Bert Brown' revoked.\n"
    said = run("--campaign", "autumn", "players", "revoke", "ALICE", "--json")
    assert json.loads(said)["player"] == "Alice"
    listed = json.loads(run("--campaign", "autumn", "players", "list", "--json"))
    assert [(p["name"], p["revoked"]) for p in listed] == [("Alice", True), ("Bert Brown", True)]


def test_pl1_players_add_refuses_a_name_that_differs_from_a_live_players_only_by_case(db: str) -> None:
    # `alice` was added next to `Alice`: two people a group cannot tell apart in the log.
    run = cli_on(db)
    said = run("--campaign", "autumn", "players", "add", " alice", "--nations", "Britain", code=2)
    assert said.count("\n") == 1
    assert "player 'Alice' already has a token and 'alice' differs from it only by case" in said
    assert [p["name"] for p in json.loads(run("--campaign", "autumn", "players", "list", "--json"))] == [
        "Alice",
        "Bert Brown",
    ]
    # A name given up (its token revoked) may be taken, in the spelling now given.
    run("--campaign", "autumn", "players", "revoke", "Alice")
    assert "Player 'alice' (Britain) added" in run(
        "--campaign", "autumn", "players", "add", "alice", "--nations", "Britain"
    )


def test_pl1_a_league_player_and_a_campaign_player_may_not_share_a_name_in_another_case(db: str) -> None:
    run = cli_on(db)
    run("players", "add", "Rita", "--referee", "--league")
    said = run("--campaign", "autumn", "players", "add", "rita", "--nations", "Germany", code=2)
    assert "a player named 'Rita' already plays in the league" in said
    said = run("players", "add", "ALICE", "--spectator", "--league", code=2)
    assert "a player named 'Alice' already plays in a campaign of this league" in said


def test_pl1_two_registered_names_that_differ_only_by_case_are_refused_naming_both(db: str) -> None:
    # A database from before names were compared whatever their case may hold both.
    from tracker.service.application import Tracker
    from tracker.service.players import Players, players_table, token_digest

    t = Tracker(db, create=False)
    try:
        cid = str(t.campaign_id("autumn"))
        Players(t.engine)  # its tables
        with t.engine.begin() as conn:
            conn.execute(
                players_table.insert().values(
                    campaign_id=cid,
                    name="alice",
                    nations=json.dumps(["Britain"]),
                    referee=False,
                    token_id="0123456789abcdef",
                    salt="",
                    token_hash=token_digest("x"),
                )
            )
    finally:
        t.close()
    run = cli_on(db)
    both = "player name 'ALICE' could be 'Alice' or 'alice', which differ only by case"
    for args in (
        ("inbox", "--player", "ALICE"),
        ("--campaign", "autumn", "notify", "add", "email", "a@example.org", "--player", "ALICE"),
        ("--campaign", "autumn", "players", "revoke", "ALICE"),
    ):
        said = run(*args, code=2)
        assert both in said and said.count("\n") == 1, args
    # Each name spelled as registered is still that player, as before.
    assert "Britain" not in run("inbox", "--player", "Alice")
    assert "waiting for Germany" not in run("inbox", "--player", "alice")
    assert run("--campaign", "autumn", "players", "revoke", "alice") == "Token of 'alice' revoked.\n"
    # One left with a live token: the name in any case is hers.
    assert "Germany" in run("inbox", "--player", "ALICE")


# ----- tab completion (PL1, T3) -----


@pytest.fixture
def session(db: str) -> Iterator[Context]:
    run = cli_on(db)
    run("new", "spring", "--scenario", "north-sea-1914")
    run("--campaign", "spring", "players", "add", "Cleo", "--spectator")
    run("--campaign", "autumn", "players", "add", "Dora", "--referee")
    run("--campaign", "autumn", "players", "revoke", "Dora")
    obj = Context(db, "autumn")
    obj.load()
    yield obj
    obj.close()


def test_pl1_tab_completes_the_players_of_inbox_notify_and_revoke(db: str, session: Context) -> None:
    # Nothing was offered. The players with a live token, as registered: not Dora (revoked).
    assert _shell(session, "players revoke ") == ["Alice", "'Bert Brown'"]
    assert _shell(session, "players revoke b") == ["'Bert Brown'"]
    assert _shell(session, "notify add email a@example.org --player a") == ["Alice"]
    assert _shell(session, "inbox --player ") == ["Alice", "'Bert Brown'"]
    # Shell completion of a command line (bash): `inbox` without --campaign reads every
    # campaign, so its `--player` is anyone's; with --campaign, that campaign's.
    assert _bash("--db", db, "inbox", "--player") == ["Alice", "Bert Brown", "Cleo"]
    assert _bash("--db", db, "--campaign", "spring", "wait", "--player") == ["Cleo"]
    assert _bash("--db", db, "--campaign", "spring", "players", "revoke") == ["Cleo"]
    assert _bash("--db", db, "--campaign", "autumn", "notify", "add", "email", "x@y.org", "--player") == [
        "Alice",
        "Bert Brown",
    ]
    # No database: nothing, and none made.
    missing = str(Path(db).with_name("none.db"))
    assert _bash("--db", missing, "players", "revoke") == []
    assert not Path(missing).exists()


def test_pl2_tab_completes_the_nations_of_players_add(session: Context) -> None:
    assert _shell(session, "players add eve --nations Ger") == ["Germany"]
    assert "Germany,Britain" in _shell(session, "players add eve --nations Germany,")


def test_t3_battle_and_asw_start_tab_offer_only_the_nation_whose_turn_it_is(session: Context) -> None:
    # Every nation was offered; only the phasing nation starts a battle (T3), in its
    # naval_combat phase and while no battle is open.
    assert _shell(session, "battle start --nation ") == []
    CliRunner().invoke(cli, ["--db", session.db or "", "--campaign", "autumn", "next", "--to", "naval_combat"])
    obj = Context(session.db, "autumn")
    try:
        obj.load()
        assert obj.load().phase == "naval_combat"
        assert _shell(obj, "battle start --nation ") == ["Germany"]
        assert _shell(obj, "asw start --nation g") == ["Germany"]
        assert _shell(obj, "asw start --nation b") == []
    finally:
        obj.close()


def test_t3_a_shell_on_a_server_offers_the_phasing_nation_and_no_players(
    session: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.cli import shell

    db = session.db or ""
    run = cli_on(db)
    run("--campaign", "autumn", "next", "--to", "naval_combat")

    def remote_json(base: str, campaign: str | None, args: list[str]) -> Any:
        return json.loads(run("--campaign", "autumn", *args, "--json"))

    monkeypatch.setattr(shell, "remote_json", remote_json)
    remote = shell.RemoteContext("http://league.example", "autumn")
    assert _shell(remote, "battle start --nation ") == ["Germany"]
    # The league's players are read by its referee alone: nothing, and no local database opened.
    assert _shell(remote, "players revoke ") == []
    assert _shell(remote, "inbox --player ") == []


def test_pl2_through_the_server_names_in_another_case_are_the_registered_players(db: str, tmp_path: Path) -> None:
    """The server runs the same commands: a player's `--player` in another case is their own
    name, and a referee's `players revoke` in another case revokes the registered player."""
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    from tracker.server.commands import run_command
    from tracker.server.served import ServedTracker

    t = ServedTracker(db, keys=str(tmp_path / "keys.db"))
    try:
        cid = t.registry.lookup("autumn")
        assert cid is not None
        t.players.add(cid, "Ref", [], referee=True)
        alice, ref = t.players.player(cid, "Alice"), t.players.player(cid, "Ref")
        url = "http://127.0.0.1:9/alice"
        added = run_command(t, alice, "autumn", ["notify", "add", "webhook", url, "--player", "alice"])
        assert added["exit"] == 0 and "for player Alice." in added["stdout"], added
        revoked = run_command(t, ref, "autumn", ["players", "revoke", "bert brown"])
        assert revoked["stdout"] == "Token of 'Bert Brown' revoked.\n", revoked
    finally:
        t.close()
