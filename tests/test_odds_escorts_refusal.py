"""`tracker odds escorts` refuses a convoy attack too large to weigh naming that attack, of the
several its search weighs, and what to do."""

from __future__ import annotations

import pytest

from domain.procedures.odds import TooManyPositions
from tests.test_odds_advise import board_of
from tracker.analysis import escorts


def test_a_convoy_attack_beyond_the_limit_is_named_in_the_refusal_CV3() -> None:
    board = board_of([("Germany", "submarine", "Dogger Bank", 0), ("Britain", "destroyer", "Dogger Bank", 0)])
    defenders = {"Britain": {"destroyer": 3, "cruiser": 2}}
    with pytest.raises(TooManyPositions) as refused:
        escorts.convoy_odds(board, "Germany", 4, defenders, 2, limit=1)
    message = str(refused.value)
    assert "Germany:submarine=4 against Britain:cruiser=2,destroyer=3 on 2 NTR" in message
    assert message.endswith("weigh fewer types (--type) or raise --max-positions")
    assert "\n" not in message
