"""A hand-off's message names the command `tracker pending` names for each item: what it keeps
of an item (`ITEM_KEYS`) holds everything that command is made of. A player playing by file
acts on the message alone: a landing flight (F7) cut to "move UNIT --to ZONE", or a placement
(PU2) cut to one unit of two, was refused as typed or left the phase open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import cli_on
from tracker.cli.common import next_command
from tracker.service.application import Tracker
from tracker.service.notify import describe, message_text


@pytest.fixture
def war(tmp_path: Path) -> tuple[str, Callable[..., str]]:
    """The whole war with manual dice at Germany's research phase: (database, CLI on it)."""
    db = str(tmp_path / "war.db")
    run = cli_on(db)
    run("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    return db, run


def _commands(db: str) -> tuple[list[str | None], list[str | None], str]:
    """Each `pending` item's command, each hand-off item's command, and the message's words."""
    with Tracker(db) as t:
        campaign = t.load(t.campaign_id("war"))
        payload = describe(campaign, "war")
        pending = [next_command(item) for item in campaign.pending()]
    told = [next_command(dict(item)) for item in payload["pending"] if item["kind"] != "turn"]
    return pending, told, message_text(payload, next_command, None)


def test_f7_a_message_names_the_flight_that_lands_a_stranded_air_unit(war: tuple[str, Callable[..., str]]) -> None:
    db, run = war
    run("next", "--to", "combat_movement")
    run("move", "DE-BM1", "--path", "Heligoland Bight,Skagerrak")
    run("next", "--to", "noncombat_movement")
    pending, told, text = _commands(db)
    assert told == pending
    landing = "tracker --campaign war move DE-BM1 --path 'Heligoland Bight,Northwest Germany'"
    assert f"  next: {landing}, or tracker --campaign war next --confirm-losses" in text.splitlines()
    assert "UNIT" not in text


def test_pu2_a_message_places_every_unit_bought(war: tuple[str, Callable[..., str]]) -> None:
    db, run = war
    run("next", "--to", "purchase")
    run("buy", "destroyer", "2")
    run("next", "--to", "placement")
    pending, told, text = _commands(db)
    assert told == pending
    assert "  next: tracker --campaign war place destroyer --count 2 --at 'Dover Strait'" in text.splitlines()


def test_nc4_a_message_names_the_options_of_a_battles_decision(war: tuple[str, Callable[..., str]]) -> None:
    db, run = war
    run("next", "--to", "naval_combat")
    run("battle", "start", "--zone", "East African Coast")
    run("battle", "fire", "1", "--dice", "7,7")
    pending, told, text = _commands(db)
    assert told == pending
    assert "  next: tracker --campaign war battle decide 1 [--retreat-to ZONE]" in text.splitlines()
