"""PU2, T4: units bought with nowhere to be placed do not stop the turn for good.

A nation that loses its last port after buying (land combat is entered as an adjustment, AD1,
in the land_combat phase) could never end its placement phase: `next` was refused ("legal:
none") and only an undo of everything since the purchase got out. Nothing moves in placement,
so such units never can be placed: the player confirms their loss, as with air units that
cannot land (F7), and the turn goes on."""

from __future__ import annotations

from pathlib import Path

from domain.campaign import Campaign
from domain.errors import RuleViolation
from domain.rules.economy import Adjustment
from tests.support import cli_on
from tests.test_referee_integrity import campaign, refused, to

# Germany's territories on north-sea-1914 (Austria-Hungary holds none).
LOST = {"Northern Germany": "Britain", "Flanders": "France"}


def stuck_campaign() -> Campaign:
    c = campaign()
    to(c, "Germany", "purchase")
    c.buy("Germany", "destroyer")
    c.buy("Germany", "submarine", 2)
    to(c, "Germany", "land_combat")
    c.adjust(Adjustment(owners=dict(LOST)), "the Entente takes every German port")
    to(c, "Germany", "noncombat_movement")
    c.advance(confirm_losses=True)  # DE-BM1 and DE-FT1 have nowhere to land either (F7)
    assert c.phase == "placement"
    return c


def test_pu2_t4_units_with_no_place_are_given_up_only_when_confirmed() -> None:
    c = stuck_campaign()
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "no place to put it" in err.reason and "tracker next --confirm-losses" in err.reason
    balance = c.balances["Germany"]
    c.advance(confirm_losses=True)
    given_up = [e for e in c.pending_events if type(e).__name__ == "PurchasesForfeited"]
    assert [(e.nation, e.units, e.rule) for e in given_up] == [("Germany", {"destroyer": 1, "submarine": 2}, "PU2")]
    assert c.unplaced == {} and c.phase == "collect_resources"
    assert c.balances["Germany"] == balance  # what they cost stays spent


def test_pu2_t4_confirming_does_not_give_up_units_that_have_a_place() -> None:
    c = campaign()
    to(c, "Germany", "purchase")
    c.buy("Germany", "destroyer")
    to(c, "Germany", "placement")
    err = refused(c, RuleViolation, lambda: c.advance(confirm_losses=True), "T4")
    assert "legal: " in err.reason and "tracker place destroyer" in err.reason
    assert c.unplaced == {"Germany": {"destroyer": 1}}


def test_pu2_t4_given_up_purchases_in_pending_log_report_undo_and_verify(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "c.db")

    run("new", "w", "--scenario", "north-sea-1914", "--dice", "auto")
    run("next", "--to", "purchase")
    run("buy", "destroyer")
    run("next", "--to", "land_combat")
    run("adjust", *[f"--owner={t}={n}" for t, n in LOST.items()], "--reason", "the Entente takes every port")
    run("next", "--to", "noncombat_movement")
    run("next", "--confirm-losses")
    assert "next: tracker next --confirm-losses" in run("pending")
    refusal = run("next", code=1)
    assert "T4" in refusal and "no place to put it" in refusal
    run("next", "--confirm-losses")
    log = run("log", "--kind", "PurchasesForfeited")
    assert "[PU2]" in log and "Germany gives up 1 destroyer bought this turn" in log
    assert "gives up 1 destroyer" in run("report", "--turn", "1")
    run("verify")
    run("undo")
    assert "no place to put it" in run("pending")
