"""Random play through the application service (hypothesis state machine): legal and illegal
actions by name, as the command line asks for them, typed dice, undos with and without
override, in any order. Never an exception other than a refusal, a refusal appends nothing,
and the log always verifies, every action re-run by the referee."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from domain.errors import TrackerError
from domain.scenario import read_scenario
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign

_scenario, _ = read_scenario("north-sea-1914")
ZONES = sorted(_scenario["map"]["sea"]) + sorted(_scenario["map"]["land"]) + ["Atlantis", "%"]
NATIONS = list(_scenario["scenario"]["turn_order"]) + ["Narnia"]
TECHS = ["advanced_submarine", "advanced_asw", "death_ray"]
DIE = st.integers(min_value=-1, max_value=12)


class Play(RuleBasedStateMachine):
    steps = 0
    refused = 0
    recorded = 0

    @initialize()
    def open(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tracker-play-"))
        self.t = Tracker(str(self.folder / "play.db"))
        self.cid = self.t.create("play", "north-sea-1914", dice="manual").id
        self.version = 1

    def act(self, name: str, inputs: dict[str, Any]) -> None:
        Play.steps += 1
        try:
            self.t.perform(self.cid, name, inputs)
        except TrackerError as e:
            assert "\n" not in str(e)
            Play.refused += 1
            after = len(self.t.stored_events(self.cid))
            assert after == self.version, f"a refused action recorded {after - self.version} event(s): {e}"
            return
        Play.recorded += 1
        after = len(self.t.stored_events(self.cid))
        assert after > self.version
        self.version = after

    @rule()
    def advance(self) -> None:
        for nation in self.t.load(self.cid).convoy_attacks_open():
            self.act("convoy pass", {"by": nation})
        self.act("next", {})

    @rule(nation=st.sampled_from(NATIONS), tech=st.sampled_from(TECHS), die=DIE)
    def research(self, nation: str, tech: str, die: int) -> None:
        self.act("research", {"technology": tech, "nation": nation, "dice": [die]})

    @rule(data=st.data(), steps=st.lists(st.sampled_from(ZONES), min_size=1, max_size=3))
    def move(self, data: st.DataObject, steps: list[str]) -> None:
        units = sorted(self.t.load(self.cid).units) + ["XX-SS9"]
        chosen = data.draw(st.lists(st.sampled_from(units), min_size=1, max_size=3, unique=True))
        self.act("move", {"units": chosen, "path": steps})

    @rule(zone=st.sampled_from(ZONES), count=st.integers(min_value=-3, max_value=2**31 - 1))
    def place_ntr(self, zone: str, count: int) -> None:
        self.act("ntr place", {"zone": zone, "count": count})

    @rule(zone=st.sampled_from(ZONES), attacker=st.sampled_from(NATIONS))
    def declare_convoy(self, zone: str, attacker: str) -> None:
        self.act("convoy declare", {"by": attacker, "zone": zone})

    @rule(override=st.booleans())
    def undo(self, override: bool) -> None:
        Play.steps += 1
        try:
            self.t.perform(self.cid, "undo", {"override": override, "reason": "slip" if override else ""})
        except TrackerError:
            Play.refused += 1
            assert len(self.t.stored_events(self.cid)) == self.version
            return
        Play.recorded += 1
        self.version = len(self.t.stored_events(self.cid))

    @precondition(lambda self: hasattr(self, "t"))
    @invariant()
    def loads_where_it_ends(self) -> None:
        assert self.t.load(self.cid).version == self.version

    def teardown(self) -> None:
        if hasattr(self, "t"):
            report = verify_campaign(self.t, self.cid)
            assert report.ok, report.problem
            assert report.actions_unasked == 0
            self.t.close()
            shutil.rmtree(self.folder, ignore_errors=True)


def test_random_play_never_breaks_the_record(figures: Any, size: Any) -> None:
    Play.steps = Play.refused = Play.recorded = 0
    examples, steps = size(20, 100), size(30, 50)
    test = Play.TestCase()
    test.settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    test.runTest()
    figures.add("state machine", steps=Play.steps, refused=Play.refused, recorded=Play.recorded)
    if size(0, 1):
        assert Play.steps >= 2000
