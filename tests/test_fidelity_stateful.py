"""The state a command leaves is the state the log rebuilds: a hypothesis state machine plays
random legal commands through the application service (moves, purchases, placement,
research, reinforcements by adjustment, convoy battles, interceptions, ASW combat and naval
battles with their choices and rolls, undo, redo, next) and after every action compares the
campaign as the process that recorded it holds it with the same campaign rebuilt from the
stored log by a fresh tracker: the board, every battle's recorded state and what its procedure
asks for, and `pending` with its dice order. Every roll's dice go to the units in the order
`pending` listed them just before (CV4, and everywhere), and the log verifies at the end, every
action re-run by the referee.

Each game starts from the north-sea-1914 scenario in a generated position (units added
anywhere, AD1) at a phase where something happens. `TRACKER_RELIABILITY=heavy` (the CI's
heavy run) plays more and longer games.

`WorldFidelity` plays the same on the world map, great-war-1914: sides of several nations,
nations entering the war later (F8, also brought forward by AD1), carriers with aircraft of
their side aboard (F7). Its generated positions put ships of several allies beside several
enemies in one zone where the phasing nation trades or sails (convoy battles with allied
escorts, CV3; interceptions, SM2; ASW combat, AS1; battles whose hits fall on several owners'
units, HA1-HA7), and it checks T4 besides: the command a refused `next` names is accepted.
Both are derandomized unless a run names its seed (`--hypothesis-seed=N`), which they then play.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from domain.campaign import Campaign
from domain.campaign.referee import afresh
from domain.errors import TrackerError
from domain.rules.economy import placement_zones
from tests.reliability.conftest import size
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign

SCENARIO = "north-sea-1914"
# Where a game starts: where battles happen and units are bought and placed. British trade
# among German U-boats makes Britain's collect_resources the likeliest battle.
STOPS = [
    *[("Britain", "collect_resources")] * 6,
    ("France", "collect_resources"),
    ("Germany", "collect_resources"),
    ("Germany", "combat_movement"),
    ("Britain", "combat_movement"),
    ("Austria-Hungary", "combat_movement"),
    ("Germany", "naval_combat"),
    ("Britain", "naval_combat"),
    ("Germany", "purchase"),
    ("Germany", "placement"),
    ("Britain", "noncombat_movement"),
]
NAVAL = ["submarine", "submarine", "destroyer", "cruiser", "battleship", "aircraft_carrier"]
AIR = ["bomber", "fighter"]
TYPES = NAVAL[1:] + AIR
TECHS = ["advanced_submarine", "advanced_asw"]
NATIONS = ["Germany", "Britain", "Austria-Hungary", "France"]
ROLLS = {
    "merchant_defence": "convoy roll",
    "convoy_table": "convoy roll",
    "fire": "battle fire",
    "opening_fire": "battle fire",
}
SEARCHES = {"convoy": "convoy search", "interception": "intercept search", "asw": "asw search"}


# What a procedure's state keeps for the summary of its outcome only (the units that could have
# searched, how many started, those lost), or for a step that never outlives its command (the
# searchers, in the order their dice go): the recorded state does not hold it, nothing a
# player does later depends on it, and a procedure read back from the log has what is left.
SUMMARY_ONLY = {
    "ConvoyBattle": ("eligible", "searchers", "started_subs", "defender_sunk"),
    "Interception": ("eligible", "searchers", "hunters", "started"),
    "AswCombat": ("eligible", "hunters", "started"),
    "NavalBattle": ("started",),
}


def procedure(state: Any) -> dict[str, Any]:
    """A battle's procedure state as the referee runs its next step on it, every field but its
    summary's own. A volley's empty choice of casualties is no choice: the volley keeps one for
    a side all of whose hits were lost (NC6, HA7), the log records none."""
    kept = SUMMARY_ONLY[type(state).__name__]
    fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(state) if f.name not in kept}
    fight = fields.get("fight")
    if fight is not None and fight.chosen:
        fields["fight"] = dataclasses.replace(fight, chosen=tuple(c for c in fight.chosen if c[1]))
    return fields


def canonical(c: Campaign) -> dict[str, Any]:
    """What must not depend on where the campaign came from: its whole state (the board, the
    turn, every battle's recorded state), every battle's procedure state and what it asks for
    now, and `pending` as it reads (the dice and their order included)."""
    battles = sorted(c.battles, key=int)
    return {
        "version": c.version,
        "state": {k: v for k, v in vars(c).items() if not k.startswith("_")},
        "procedures": {b: procedure(c.procedure_state(int(b))) for b in battles},
        "asks": {b: repr(c.procedure_asks(int(b))) for b in battles},
        "pending": c.pending(),
    }


def difference(live: dict[str, Any], rebuilt: dict[str, Any]) -> str:
    """The first part where the two differ, for the failure message."""
    for part in ("version", "state", "procedures", "asks", "pending"):
        a, b = live[part], rebuilt[part]
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            key = next(k for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k))
            return f"{part}[{key!r}]: live {a.get(key)!r}\n  rebuilt {b.get(key)!r}"
        return f"{part}: live {a!r}\n  rebuilt {b!r}"
    return "no difference"


def now_and_then(data: st.DataObject, one_in: int, label: str) -> bool:
    """True once in `one_in` draws; False is the simplest value (the one hypothesis draws the
    most and shrinks to)."""
    return data.draw(st.integers(0, one_in - 1), label=label) == one_in - 1


def some(data: st.DataObject, units: list[str]) -> str | None:
    """None (the default) a quarter of the time, or some of `units` in any order (all of them,
    the simplest), as the command line names them."""
    if now_and_then(data, 4, "default"):
        return None
    chosen = data.draw(st.permutations(units), label="order")
    return ",".join(chosen[: len(chosen) - data.draw(st.integers(0, len(chosen)), label="fewer")])


def start_at(folder: Path, scenario: str, stop: tuple[int, str, str]) -> Path:
    """A database holding a new campaign of the scenario with `next` recorded (convoy attacks
    passed) up to `stop` (round, nation, phase): made once per test run, copied by every game
    that starts there (a walk of up to 30 actions is most of what a short game costs)."""
    path = folder / f"{scenario}-{stop[0]}-{stop[1]}-{stop[2]}.db"
    if not path.exists():
        with Tracker(str(path)) as t:
            cid = t.create("fidelity", scenario, dice="manual").id
            c = t.load(cid)
            while (c.round, c.nation, c.phase) != stop:
                for nation in c.convoy_attacks_open():
                    t.perform(cid, "convoy pass", {"by": nation})
                c = t.perform(cid, "next", {}).campaign
    return path


class Fidelity(RuleBasedStateMachine):
    examples = 0
    actions = 0

    # Where each game starts: a copy of a database walked there once (see `start_at`).
    starts: Path
    # The scenario played and its nations (those a generated unit, technology or agreement names).
    scenario = SCENARIO
    nations = NATIONS

    @initialize(data=st.data(), start=st.sampled_from(STOPS))
    def open(self, data: st.DataObject, start: tuple[str, str]) -> None:
        """A campaign of the scenario at a phase where battles, purchases or placement happen,
        in a generated position: some units added anywhere (AD1), and where trade lies among
        enemy submarines, a convoy attack declared (CV1) more often than not."""
        self.begin((1, *start))
        added = data.draw(st.lists(self.unit_anywhere(), max_size=4), label="added")
        nation, phase = start
        if phase == "collect_resources" and data.draw(st.booleans(), label="raider"):
            # CV1: an enemy submarine among the phasing nation's trade (alone there, often).
            scenario = self.c.scenario
            enemies = [n for n in self.nations if scenario.are_enemies(n, nation)]
            zones = sorted(z for z, count in self.c.ntr.get(nation, {}).items() if count)
            raider = data.draw(st.sampled_from(enemies), label="enemy")
            added.append(f"{raider}:submarine:{data.draw(st.sampled_from(zones), label='among trade')}")
        if added:
            self.act("adjust", {"reason": "a generated position", "add": added})
        if self.c.convoy_attacks_open() and not now_and_then(data, 4, "no convoy battle"):
            self.declare_convoy(data)

    def begin(self, start: tuple[int, str, str]) -> None:
        """A copy of the campaign walked to `start`, held by this process and read back by a
        fresh tracker."""
        type(self).examples += 1
        self.folder = Path(tempfile.mkdtemp(prefix="tracker-fidelity-"))
        db = self.folder / "fidelity.db"
        shutil.copyfile(start_at(self.starts, self.scenario, start), db)
        self.t = Tracker(str(db))
        # A second tracker on the same database: it reads the stored log and nothing else.
        self.fresh = Tracker(str(db))
        self.rebuilt: Campaign | None = None
        self.last = ""  # the last action recorded
        self.refusal = ""  # why the last action was refused, if it was
        self.cid = self.t.campaign_id(None)
        self.live = self.t.load(self.cid)
        self.compare()
        assert self.rebuilt is not None

    def unit_anywhere(self) -> st.SearchStrategy[str]:
        """NATION:TYPE:ZONE, a unit for an adjustment to add (AD1): a ship in a sea zone, an
        aircraft in a territory."""
        game_map = self.c.scenario.game_map
        naval = st.tuples(st.sampled_from(NAVAL), st.sampled_from(sorted(game_map.sea)))
        air = st.tuples(st.sampled_from(AIR), st.sampled_from(sorted(game_map.land)))
        return st.builds(lambda n, where: f"{n}:{where[0]}:{where[1]}", st.sampled_from(self.nations), naval | air)

    @property
    def c(self) -> Campaign:
        """The campaign as the log rebuilds it: what the players look at before they act (the
        same as the live one, or the last comparison failed)."""
        assert self.rebuilt is not None
        return self.rebuilt

    # ----- acting and comparing -----

    def act(self, name: str, inputs: dict[str, Any], data: st.DataObject | None = None) -> list[Any] | None:
        """Perform an action as a player asks for it (dice drawn as the rolls ask for them),
        then compare; a refusal records nothing. Returns the events recorded, None when refused."""
        type(self).actions += 1
        try:
            done = self.t.perform(self.cid, name, inputs, ask=None if data is None else self.dice(data))
        except TrackerError as e:
            assert "\n" not in str(e), e
            after = self.stored_version()
            assert after == self.c.version, f"a refused {name} recorded {after - self.c.version} event(s): {e}"
            # The tracker keeps the copy a refused action ran on only when the refusal took
            # back all it recorded (what was asked): the next success is compared with the log.
            self.refusal = str(e)
            return None
        self.refusal = ""
        self.live = done.campaign
        self.last = name
        self.compare()
        return done.events

    def stored_version(self) -> int:
        return self.fresh.recorder.last_version(self.cid)

    @staticmethod
    def dice(data: st.DataObject) -> Callable[[str, int, int], list[int]]:
        """Manual dice, drawn as each roll asks for them."""

        def ask(what: str, count: int, faces: int) -> list[int]:
            # Low values half the time: searches that detect and shots that hit, so battles go on.
            die = st.one_of(st.integers(1, min(3, faces)), st.integers(1, faces))
            return data.draw(st.lists(die, min_size=count, max_size=count), label=what)

        return ask

    def compare(self) -> None:
        """The live campaign against the one the stored log rebuilds in a fresh tracker: by
        folding every event and, while a battle is open, by loading (from a snapshot, as a new
        process does). The rebuilt ones are read as by a new process, nothing kept between
        steps; this process keeps its own."""
        live = canonical(self.live)
        with afresh():
            stored = self.fresh.app.recorder.select_events(self.cid, gt=self.rebuilt.version if self.rebuilt else 0)
            for s in stored:
                self.rebuilt = self.fresh.decode(s).mutate(self.rebuilt)
            assert self.rebuilt is not None
            folded = canonical(self.rebuilt)
        assert live == folded, "the log rebuilds another campaign: " + difference(live, folded)
        if self.live.battles:
            with afresh():
                loaded = canonical(self.fresh.load(self.cid))
            assert live == loaded, "loading gives another campaign: " + difference(live, loaded)

    # ----- the turn sequence -----

    @precondition(lambda self: not self.c.battles)
    @rule(data=st.data(), confirm=st.booleans())
    def advance(self, data: st.DataObject, confirm: bool) -> None:
        """T4: the phase ends, once every enemy that may attack convoys passed (CV1) or, now
        and then, declared and fought."""
        while self.c.convoy_attacks_open() and not self.c.battles:
            if data.draw(st.booleans(), label="declare"):
                self.declare_convoy(data)
            else:
                self.act("convoy pass", {"by": next(iter(self.c.convoy_attacks_open()))})
        self.act("next", {"confirm_losses": confirm})

    # ----- purchases, placement, research, reinforcements -----

    @precondition(lambda self: self.c.phase in ("research", "purchase", "placement") and not self.c.battles)
    @rule(data=st.data())
    def economy(self, data: st.DataObject) -> None:
        """TE1, PU1, PU2: a research roll, a purchase, or a unit bought placed."""
        if self.c.phase == "research":
            self.act("research", {"technology": data.draw(st.sampled_from(TECHS), label="tech")}, data)
        elif self.c.phase == "purchase":
            self.act("buy", {"unit_type": data.draw(st.sampled_from(TYPES), label="type")})
        elif self.c.unplaced.get(self.c.nation):
            unit_type = data.draw(st.sampled_from(sorted(self.c.unplaced[self.c.nation])), label="type")
            legal = placement_zones(self.c.board(), self.c.nation, unit_type)
            if legal:
                self.act("place", {"unit_type": unit_type, "zone": data.draw(st.sampled_from(legal), label="zone")})

    @rule(data=st.data())
    def reinforce(self, data: st.DataObject) -> None:
        """AD1: a unit added anywhere (fleets, aircraft and submarines meet where the scenario
        never puts them), or a technology acquired (TE3, TE4)."""
        if now_and_then(data, 5, "technology"):
            nation = data.draw(st.sampled_from(self.nations), label="nation")
            tech = data.draw(st.sampled_from(TECHS), label="which")
            self.act("adjust", {"reason": "a breakthrough", "tech": [f"{nation}:{tech}=3"]})
        else:
            self.act("adjust", {"reason": "reinforcement", "add": [data.draw(self.unit_anywhere(), label="unit")]})

    # ----- moves and the procedures they start -----

    @precondition(lambda self: self.c.phase in ("combat_movement", "noncombat_movement") and not self.c.battles)
    @rule(data=st.data())
    def move(self, data: st.DataObject) -> None:
        """Units of one zone along a path of adjacent zones (SM1-SM5: interceptions on the way;
        NC1: battles due), then the interception it starts, played on."""
        own = sorted(u for u, x in self.c.units.items() if x["nation"] == self.c.nation)
        if not own:
            return
        first = data.draw(st.sampled_from(own), label="unit")
        here = self.c.units[first]["at"]
        alongside = [u for u in own if u != first and self.c.units[u]["at"] == here]
        companions = st.lists(st.sampled_from(alongside), unique=True, max_size=2) if alongside else st.just([])
        more = data.draw(companions, label="with")
        adjacency = self.c.scenario.game_map.adjacency
        path = [here]
        for _ in range(data.draw(st.integers(1, 3), label="steps")):
            path.append(data.draw(st.sampled_from(sorted(adjacency[path[-1]])), label="to"))
        self.act("move", {"units": [first, *more], "path": path[1:]})
        self.fight(data)

    @precondition(lambda self: bool(self.c.convoy_attacks_open()) and not self.c.battles)
    @rule(data=st.data())
    def declare_convoy(self, data: st.DataObject) -> None:
        """CV1: a convoy attack declared (or played to its end with the defaults), then played on."""
        open_ = self.c.convoy_attacks_open()
        nation = data.draw(st.sampled_from(sorted(open_)), label="attacker")
        zone = data.draw(st.sampled_from(open_[nation]), label="zone")
        subs = [u for u, x in sorted(self.c.units.items()) if (x["nation"], x["at"]) == (nation, zone)]
        subs = [u for u in subs if self.c.units[u]["type"] == "submarine"]
        named = data.draw(st.lists(st.sampled_from(subs), unique=True, min_size=1), label="subs")
        auto = now_and_then(data, 5, "auto")
        inputs = {"by": nation, "zone": zone, "subs": None if auto else ",".join(named), "auto": auto}
        self.act("convoy declare", inputs, data)
        self.fight(data)

    @precondition(lambda self: self.c.phase == "naval_combat" and not self.c.battles)
    @rule(data=st.data())
    def start_battle(self, data: st.DataObject) -> None:
        """NC1 (a battle due first), AS1: a naval battle or ASW combat started, then played on."""
        due = [i["zone"] for i in self.c.pending() if i["kind"] == "naval_due"]
        mine = sorted({x["at"] for x in self.c.units.values() if x["nation"] == self.c.nation})
        zones = due or [z for z in mine if self.c.scenario.game_map.is_sea(z)]
        if not zones:
            return
        zone = data.draw(st.sampled_from(zones), label="zone")
        name = "battle start" if due else data.draw(st.sampled_from(["battle start", "asw start"]), label="kind")
        self.act(name, {"zone": zone, "auto": now_and_then(data, 5, "auto")}, data)
        self.fight(data)

    # ----- what a battle waits for -----

    @precondition(lambda self: bool(self.c.battles))
    @rule(data=st.data())
    def fight(self, data: st.DataObject) -> None:
        """The battles that wait, step after step (now and then left to wait: an undo, a
        reinforcement or a refused `next` may come in between): the default for a step, the
        defaults to the end, or a choice or roll of the player's own."""
        while self.c.battles and not now_and_then(data, 10, "leave it waiting"):
            item = next(i for i in self.c.pending() if i["battle"] is not None)
            n = item["battle"]
            how = data.draw(st.sampled_from(["choose", "choose", "choose", "choose", "step", "auto"]), label="how")
            if how == "auto":
                self.act("convoy auto" if item["kind"] == "convoy" else "battle auto", {"battle": n}, data)
            elif how == "step" or not self.choose(data, item):
                self.in_order(item, self.act("battle step", {"battle": n}, data))

    def choose(self, data: st.DataObject, item: dict[str, Any]) -> bool:
        """An answer of the player's own for the step the battle waits for."""
        n, kind, step = item["battle"], item["kind"], item["step"]
        facts = self.c.waiting_facts(self.c.battles[str(n)])
        nation = data.draw(st.sampled_from(item["waiting"]), label="nation") if item["waiting"] else None
        answer: tuple[str, dict[str, Any]]
        if step in ROLLS:
            self.in_order(item, self.act(ROLLS[step], {"battle": n}, data))
            return True
        if step == "search":
            units = some(data, item["eligible"])
            events = self.act(SEARCHES[kind], {"battle": n, "units": units}, data)
            if units is None:
                self.in_order(item, events)
            return True
        if step == "merchant_casualty":
            answer = "convoy casualties", {"units": some(data, facts["submarines"])}
        elif step == "detect":
            answer = "intercept detect", {"subs": some(data, facts["submarines"])}
        elif step in ("targets", "opening_targets") and nation is not None:
            shots = facts["targets"].get(nation, [])
            pairs = ",".join(f"{s['unit']}={data.draw(st.sampled_from(s['legal']))}" for s in shots)
            answer = "battle targets", {"nation": nation, "targets": None if data.draw(st.booleans()) else pairs}
        elif step in ("screening", "opening_screening") and nation is not None:
            shots = facts["screens"].get(nation, [])
            pairs = ",".join(f"{s['firer']}={data.draw(st.sampled_from(s['options']))}" for s in shots)
            answer = "battle screen", {"nation": nation, "screens": None if data.draw(st.booleans()) else pairs}
        elif step == "casualties" and nation is not None:
            units = some(data, facts["casualties"][nation]["units"])
            name = "convoy casualties" if kind == "convoy" else "battle casualties"
            answer = name, {"nation": nation, "units": units}
        elif step == "decide" and kind == "interception":
            retreat = some(data, facts["detected"]) if facts["back"] else None
            answer = "intercept decide", {"submerge": some(data, facts["detected"]), "retreat": retreat}
        elif step == "decide" and kind == "asw":
            answer = "asw submerge", {"subs": some(data, facts["detected"])}
        elif step == "decide" and nation is not None:
            options = facts["decisions"][nation]
            retreat = data.draw(st.sampled_from([None, *options["retreat"]]), label="retreat")
            submerge = some(data, options["submerge"])
            answer = "battle decide", {"nation": nation, "submerge": submerge, "retreat_to": retreat}
        elif step == "continue":
            answer = "intercept continue", {"stop": some(data, facts["free"])}
        else:
            return False
        self.act(answer[0], {"battle": n, **answer[1]})
        return True

    def in_order(self, item: dict[str, Any], events: list[Any] | None) -> None:
        """CV4, and everywhere: the dice went to the units in the order `pending` listed."""
        if events is None or not item["dice"] or item["step"] == "merchant_defence":
            return
        rolled = [e.unit for e in events if type(e).__name__ == "DiceRolled" and e.battle == item["battle"]]
        listed = [entry.split(" vs ")[0] for entry in item["dice"]["order"]]
        assert rolled[: len(listed)] == listed, f"pending listed the dice for {listed}; they went to {rolled}"

    # ----- undo and redo -----

    @rule(override=st.booleans(), agreed=st.sampled_from(NATIONS))
    def undo(self, override: bool, agreed: str) -> None:
        reason = "a slip" if override else ""
        self.act("undo", {"override": override, "reason": reason, "agreed_by": [agreed] if override else []})

    @precondition(lambda self: self.last in ("undo", "redo"))
    @rule(every=st.booleans())
    def redo(self, every: bool) -> None:
        self.act("redo", {"all": every})

    def teardown(self) -> None:
        if not hasattr(self, "fresh"):
            return
        try:
            if hasattr(self, "cid"):
                folded = canonical(self.c)
                with afresh():
                    loaded = canonical(self.fresh.load(self.cid))
                assert folded == loaded, "loading gives another campaign: " + difference(folded, loaded)
                report = verify_campaign(self.t, self.cid)
                assert report.ok, report.problem
                assert report.actions_unasked == 0
        finally:
            self.t.close()
            self.fresh.close()
            shutil.rmtree(self.folder, ignore_errors=True)


WORLD = "great-war-1914"
WORLD_NATIONS = [
    "Germany", "Britain", "Austria-Hungary", "France", "Ottoman Empire", "Russia", "Italy", "Japan", "United States",
]  # fmt: skip
# Where a world game starts. Trade of several nations among U-boats (convoy battles with allied
# escorts, CV3), fleets of several nations meeting (NC1, AS1, HA7), submarines moving past
# enemy escorts (SM2), aircraft coming home (F7), and Japan's turn, the last of round 1 but
# the United States' passed-over one: `next` from there opens round 2, the Ottoman entry (F8).
WORLD_STOPS = [
    *[(1, "Britain", "collect_resources")] * 3,
    (1, "France", "collect_resources"),
    (1, "Russia", "collect_resources"),
    (1, "Germany", "collect_resources"),
    (1, "Japan", "collect_resources"),
    (1, "Japan", "noncombat_movement"),
    (1, "Germany", "combat_movement"),
    (1, "Britain", "combat_movement"),
    (1, "Russia", "combat_movement"),
    (1, "Germany", "naval_combat"),
    (1, "Britain", "naval_combat"),
    (1, "France", "naval_combat"),
    (1, "Austria-Hungary", "naval_combat"),
    (1, "Japan", "naval_combat"),
    (1, "Britain", "noncombat_movement"),
    (1, "Germany", "purchase"),
    (2, "Ottoman Empire", "combat_movement"),
    (2, "Ottoman Empire", "naval_combat"),
]
SHIPS = ["submarine", "destroyer", "cruiser", "battleship"]
RAIDERS = ["submarine", "submarine", "cruiser", "destroyer", "battleship"]


class WorldFidelity(Fidelity):
    """The same game on the world map: sides of several nations, nations entering the war later
    (F8), carriers with aircraft aboard (F7), and generated positions where several nations of
    one side meet the other's in one zone."""

    scenario = WORLD
    nations = WORLD_NATIONS

    @initialize(data=st.data(), start=st.sampled_from(WORLD_STOPS))
    def open(self, data: st.DataObject, start: tuple[int, str, str]) -> None:
        """A campaign of the world map in a generated position: now and then a neutral's entry
        brought forward (F8, AD1), then a clash where the phasing nation's trade or fleets lie,
        and a unit or two anywhere (AD1)."""
        self.begin(start)
        neutral = sorted(self.c.board().neutral)
        if neutral and now_and_then(data, 4, "entry brought forward"):
            entering = data.draw(st.sampled_from(neutral), label="entering")
            self.act("adjust", {"reason": "an entry brought forward", "enter": [entering]})
        added = self.clash(data) + data.draw(st.lists(self.unit_anywhere(), max_size=2), label="added")
        self.act("adjust", {"reason": "a generated position", "add": added})
        # The clash fought more often than not: a convoy attack, a submarine run, a battle.
        if now_and_then(data, 4, "no battle at once"):
            return
        if self.c.convoy_attacks_open():
            self.declare_convoy(data)
        elif self.c.phase == "combat_movement":
            self.raid(data)
        elif self.c.phase == "naval_combat":
            self.start_battle(data)

    def clash(self, data: st.DataObject) -> list[str]:
        """NATION:TYPE:ZONE for an adjustment (AD1): in one sea zone where the phasing nation
        trades or sails (now and then anywhere), units of several of its enemies (at least one
        submarine among its trade, CV1), ships of several of its allies (escorts, CV3; defenders
        beside each other, HA7), now and then a carrier with aircraft of its side aboard (F7,
        AS1), a neutral's ship (F8), the phasing nation's submarines next door (to pass the
        zone, SM2) and aircraft of its side on a territory nearby (CV3, F7)."""
        board = self.c.board()
        nation, phase = self.c.nation, self.c.phase
        game_map = self.c.scenario.game_map
        at_war = [n for n in WORLD_NATIONS if n not in board.neutral]
        friends = [n for n in at_war if board.allies(nation, n)]
        foes = [n for n in at_war if board.enemies(nation, n)]
        trade = sorted(z for z, count in self.c.ntr.get(nation, {}).items() if count)
        fleets = sorted({x["at"] for x in self.c.units.values() if x["nation"] == nation and game_map.is_sea(x["at"])})
        places = (trade if phase == "collect_resources" else fleets) or sorted(game_map.sea)
        if now_and_then(data, 5, "anywhere"):
            places = sorted(game_map.sea)
        zone = data.draw(st.sampled_from(places), label="zone")
        units = [(data.draw(st.sampled_from(foes), label="enemy"), "submarine" if zone in trade else "cruiser")]
        units += data.draw(
            st.lists(st.tuples(st.sampled_from(foes), st.sampled_from(RAIDERS)), max_size=3), label="enemies"
        )
        units += data.draw(
            st.lists(st.tuples(st.sampled_from(friends), st.sampled_from(SHIPS)), max_size=3), label="allies"
        )
        if now_and_then(data, 3, "carrier"):
            side = data.draw(st.sampled_from([friends, foes]), label="whose carrier")
            units.append((data.draw(st.sampled_from(side), label="carrier"), "aircraft_carrier"))
            units += data.draw(st.lists(st.tuples(st.sampled_from(side), st.sampled_from(AIR)), min_size=1, max_size=2))
        neutral = sorted(board.neutral)
        if neutral and now_and_then(data, 4, "a neutral there"):
            units.append((data.draw(st.sampled_from(neutral), label="neutral"), data.draw(st.sampled_from(SHIPS))))
        added = [f"{n}:{t}:{zone}" for n, t in units]
        seas = sorted(z for z in game_map.adjacency[zone] if game_map.is_sea(z))
        if data.draw(st.booleans(), label="submarines next door") and seas:
            beside = data.draw(st.sampled_from(seas), label="next door")
            added += [f"{nation}:submarine:{beside}"] * data.draw(st.integers(1, 2), label="how many")
        coast = sorted(z for z in game_map.adjacency[zone] if board.owners.get(z) in friends)
        if coast and now_and_then(data, 3, "aircraft nearby"):
            airfield = data.draw(st.sampled_from(coast), label="airfield")
            added.append(f"{board.owners[airfield]}:{data.draw(st.sampled_from(AIR))}:{airfield}")
        return added

    @precondition(lambda self: self.c.phase == "combat_movement" and not self.c.battles)
    @rule(data=st.data())
    def raid(self, data: st.DataObject) -> None:
        """SM1, SM2: the phasing nation's submarines of one zone pass a hostile zone next door
        on their way on (the enemy may search them there), then the interception played on."""
        board = self.c.board()
        nation = self.c.nation
        game_map = self.c.scenario.game_map
        subs = sorted(u for u, x in self.c.units.items() if x["nation"] == nation and x["type"] == "submarine")
        routes = [
            (here, through, beyond)
            for here in sorted({self.c.units[u]["at"] for u in subs})
            for through in sorted(game_map.adjacency[here])
            if game_map.is_sea(through) and board.is_hostile_for(nation, through)
            for beyond in sorted(game_map.adjacency[through])
            if game_map.is_sea(beyond) and beyond != here
        ]
        if not routes:
            return
        here, through, beyond = data.draw(st.sampled_from(routes), label="route")
        group = [u for u in subs if self.c.units[u]["at"] == here]
        moving = data.draw(st.lists(st.sampled_from(group), unique=True, min_size=1), label="group")
        self.act("move", {"units": moving, "path": [through, beyond]})
        self.fight(data)

    @precondition(lambda self: not self.c.battles)
    @rule(data=st.data(), confirm=st.booleans())
    def advance(self, data: st.DataObject, confirm: bool) -> None:
        """T4 as in `Fidelity.advance`, and: a `next` refused for what the phase still requires
        names a command that closes it, and that command is accepted."""
        super().advance(data, confirm)
        # `next`, the last action `advance` asks for, refused; a convoy battle declared on the
        # way and left waiting is what `fight` plays on.
        if self.refusal.startswith("T4") and not self.c.battles:
            self.close_as_named(data)

    def close_as_named(self, data: st.DataObject) -> None:
        """T4: the command a refused `next` names ("to close it: tracker ..."), performed."""
        assert "; to close it: tracker " in self.refusal, f"T4 names no command: {self.refusal}"
        named = self.refusal.split("; to close it: ", 1)[1].split(" (and ", 1)[0]
        name: str
        inputs: dict[str, Any]
        # A name is quoted only where the shell needs it: read as the shell reads it.
        placing = re.fullmatch(r"tracker place (\S+)(?: --count (\d+))? --at (.+)", named)
        starting = re.fullmatch(r"tracker battle start --zone (.+)", named)
        passing = re.search(r"tracker convoy pass --by (.+)$", named)
        if placing:
            name, inputs = "place", {"unit_type": placing[1], "zone": shlex.split(placing[3])[0]}
            inputs["count"] = int(placing[2] or 1)
        elif named.endswith("tracker next --confirm-losses"):
            name, inputs = "next", {"confirm_losses": True}
        elif starting:
            name, inputs = "battle start", {"zone": shlex.split(starting[1])[0]}
        elif passing:
            name, inputs = "convoy pass", {"by": shlex.split(passing[1])[0]}
        else:
            raise AssertionError(f"T4 names a command this machine does not know: {named}")
        refused_next = self.refusal
        assert self.act(name, inputs, data) is not None, f"{refused_next}: but {named} is refused: {self.refusal}"
        self.fight(data)

    @precondition(lambda self: self.c.phase == "naval_combat" and not self.c.battles)
    @rule(data=st.data())
    def start_battle(self, data: st.DataObject) -> None:
        """NC1 (a battle due first), AS1: where the phasing nation meets enemies (the world has
        too many zones of its own for a zone drawn at random to hold one), a naval battle
        where enemy surface ships are and ASW combat where only enemy submarines are, mostly,
        then played on."""
        due = [i["zone"] for i in self.c.pending() if i["kind"] == "naval_due"]
        board = self.c.board()
        nation = self.c.nation
        mine = {x["at"] for x in self.c.units.values() if x["nation"] == nation}
        contested = [
            z
            for z in sorted(mine)
            if self.c.scenario.game_map.is_sea(z) and any(board.enemies(nation, u.nation) for u in board.units_at(z))
        ]
        zones = due or contested
        if not zones:
            return
        zone = data.draw(st.sampled_from(zones), label="zone")
        surface = any(
            board.enemies(nation, u.nation) and not board.unit_type(u).is_submarine for u in board.units_at(zone)
        )
        fitting, other = ("battle start", "asw start") if surface else ("asw start", "battle start")
        name = "battle start" if due else (other if now_and_then(data, 5, "the other kind") else fitting)
        self.act(name, {"zone": zone, "auto": now_and_then(data, 5, "auto")}, data)
        self.fight(data)

    @precondition(lambda self: not self.c.battles)
    @rule(data=st.data())
    def change_hands(self, data: st.DataObject) -> None:
        """AD1: a territory of the phasing nation's passes to a nation at war (a port lost with
        units still to place, PU2; a landing place lost, F7: T4 must still close)."""
        game_map = self.c.scenario.game_map
        board = self.c.board()
        own = sorted(t for t in game_map.land if board.owners.get(t) == self.c.nation)
        if not own:
            return
        territory = data.draw(st.sampled_from(own), label="territory")
        to = data.draw(st.sampled_from([n for n in WORLD_NATIONS if n not in board.neutral]), label="new owner")
        self.act("adjust", {"reason": "the front moves", "owner": [f"{territory}={to}"]})

    @rule(override=st.booleans(), agreed=st.sampled_from(WORLD_NATIONS))
    def undo(self, override: bool, agreed: str) -> None:
        super().undo(override, agreed)


def play(machine: type[Fidelity], games: int, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Run `machine` for `games` games (more and longer in the heavy run): derandomized,
    unless a run names its seed (`--hypothesis-seed=N`), which it then plays."""
    machine.examples = machine.actions = 0
    machine.starts = tmp_path
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=size(games, 200),
            stateful_step_count=size(20, 40),
            deadline=None,
            derandomize=request.config.getoption("--hypothesis-seed") is None,
            suppress_health_check=list(HealthCheck),
        ),
    )


def test_the_state_a_command_leaves_is_the_state_the_log_rebuilds(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    play(Fidelity, 40, tmp_path, request)


def test_on_the_world_map_the_state_a_command_leaves_is_the_state_the_log_rebuilds(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same on great-war-1914: battles with several nations a side, entries (F8), carriers."""
    play(WorldFidelity, 80, tmp_path, request)
