"""The viewer's zone page asks `odds need` to take a zone as `tracker odds need --zone` does,
with the zones where the phasing nation's submarines stopped to attack this turn (SM5): there a
naval battle on enemy submarines alone is due (NC1), so the page weighs it rather than refusing
it for ASW combat (AS1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import cli_on, served
from tests.test_scenario_tools import NORTH_SEA, edited
from tests.test_server import Reader
from tests.test_viewer_zone import panels
from tracker.server.zone_odds import PAGE_POSITIONS
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

SNS = "Southern North Sea"


def stopped_to_attack(tmp_path: Path) -> tuple[str, Callable[..., str]]:
    """A manual-dice north-sea-1914 campaign whose Southern North Sea holds one British
    destroyer (GB-DD3) and a British submarine (GB-SS1), and Heligoland Bight one German
    battleship, at Germany's combat movement: three U-boats pass through the Southern North
    Sea, GB-DD3 detects DE-SS4, which sinks it (SM2-SM4), and DE-SS5 stops there to attack
    (SM5), leaving the British submarine alone with it. Its database and CLI."""
    source = edited(
        NORTH_SEA, f'type = "destroyer"\nat = "{SNS}"\ncount = 3', f'type = "destroyer"\nat = "{SNS}"\ncount = 1'
    )
    source = edited(source, f'type = "cruiser"\nat = "{SNS}"', f'type = "submarine"\nat = "{SNS}"')
    # One German battleship fewer, so that the units that can be there are few enough for a page.
    old, new = (
        'type = "battleship"\nat = "Heligoland Bight"\ncount = 2',
        'type = "battleship"\nat = "Heligoland Bight"\ncount = 1',
    )
    source = edited(source, old, new)
    path = tmp_path / "lone-sub.toml"
    path.write_text(source)
    db = str(tmp_path / "c.db")
    run = cli_on(db)
    run("new", "autumn", "--scenario", str(path), "--dice", "manual")
    while "combat movement" not in run("pending"):
        run("next")
    run("move", "DE-SS3", "DE-SS4", "DE-SS5", "--path", f"{SNS},Dover Strait")
    run("intercept", "search", "1", "--units", "GB-DD3", "--dice", "1")
    run("intercept", "detect", "1", "--subs", "DE-SS4")
    assert "GB-DD3 sunk in battle 1" in run("battle", "fire", "1", "--dice", "1,9")
    run("intercept", "continue", "1", "--stop", "DE-SS5")
    return db, run


def test_nc1_sm5_the_zone_page_weighs_taking_a_zone_of_enemy_submarines_alone_where_a_sub_stopped_to_attack(
    tmp_path: Path,
) -> None:
    db, run = stopped_to_attack(tmp_path)
    shown = run("show", SNS)
    assert "DE-SS5" in shown and "GB-SS1" in shown and "GB-DD3" not in shown and "GB-CA" not in shown
    # `tracker odds need` weighs the naval battle due there (NC1, SM5) ...
    need = run("odds", "need", "--zone", SNS, "--win", "0.9", "--max-positions", str(PAGE_POSITIONS))
    assert need.startswith(f"Germany to take {SNS} with a chance of at least 90%"), need
    assert "DE-SS5 (there)" in need
    # ... and so does the zone page, rather than refusing it for ASW combat (AS1).
    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("autumn")), "anna", ["Germany"], False)
    with served(db, workdir=tmp_path) as server:
        status, html = Reader(server, token).page("/campaigns/autumn/zones/Southern%20North%20Sea")
    assert status == 200
    assert panels(html)[f"Germany to take {SNS}"] == ("answer", need)
