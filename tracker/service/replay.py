"""`tracker replay`: step through the log event by event, roll by roll or battle by battle,
with the board beside each event, both ways; or print chosen frames without a terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from rich.console import Console
from rich.table import Table
from rich.text import Text

from domain.text import phase_name
from projections.views import BoardView, board_at
from tracker.service.application import Tracker
from tracker.service.history import add_data, log_records
from tracker.service.shapes import LogRecord
from tracker.service.undo_log import undone_mark

KEYS = (
    "n/space next event · p previous · r next roll · R previous roll · "
    "b next battle · B previous battle · g first · G last · q quit"
)


class Replay:
    """A cursor over the log's events (optionally one battle's), with the board at each."""

    def __init__(self, t: Tracker, cid: UUID, battle: int | None = None) -> None:
        self.t = t
        self.cid = cid
        self.battle = battle
        self.frames = log_records(t, cid, battle=battle)
        self.position = 0
        self._boards: dict[int, BoardView] = {}

    def board(self, seq: int) -> BoardView:
        if seq not in self._boards:
            with self.t.engine.connect() as conn:
                self._boards[seq] = board_at(conn, self.cid, seq)
        return self._boards[seq]

    @property
    def frame(self) -> LogRecord:
        return self.frames[self.position]

    def listed(self, frames: Sequence[LogRecord]) -> list[dict[str, Any]]:
        """`frames` as `replay --json` prints them: each event as `log --json` lists it, with the
        board after it as `state --at` prints it (owners and neutral nations too, AD1, F8). The
        timestamp and data are read for these frames only: the cursor holds the index rows,
        which stepping needs, not every event of the log decoded."""
        records = [f.copy() for f in frames]
        if not records:
            return []
        add_data(self.t, self.cid, records)
        scenario = self.t.load(self.cid, version=1).scenario
        with self.t.views(self.cid) as v:
            return [{**r, "board": self.t.board_from(v, at=r["seq"], scenario=scenario)} for r in records]

    def go_to_seq(self, seq: int) -> bool:
        for i, f in enumerate(self.frames):
            if f["seq"] == seq:
                self.position = i
                return True
        return self._go_to_asked(seq)

    def _go_to_asked(self, seq: int) -> bool:
        """Stop at what was asked before an action (ActionAsked, RK1): stepping passes over it,
        but `log --asked`, `explain` and `state --at` show it, so it is stopped at as they do,
        with the board right after it (the board before its action), in its place in the log."""
        if self.battle is not None:
            return False  # what was asked is no event of a battle
        found = log_records(self.t, self.cid, seq=seq)
        if not found:
            return False
        self.position = sum(1 for f in self.frames if f["seq"] < seq)
        self.frames.insert(self.position, found[0])
        return True

    def step(self, delta: int, where: Callable[[LogRecord], bool] = lambda f: True) -> bool:
        i = self.position + delta
        while 0 <= i < len(self.frames):
            if where(self.frames[i]):
                self.position = i
                return True
            i += delta
        return False

    def step_battle(self, delta: int) -> bool:
        """To the first event of the next (or previous) battle."""
        current = self.frame["battle"]
        i = self.position + delta
        while 0 <= i < len(self.frames):
            b = self.frames[i]["battle"]
            if b is not None and b != current:
                while i > 0 and self.frames[i - 1]["battle"] == b:
                    i -= 1
                self.position = i
                return True
            i += delta
        return False

    def handle(self, key: str) -> bool:
        """Apply one key; False means quit."""
        moves: dict[str, Callable[[], bool]] = {
            "n": lambda: self.step(1),
            " ": lambda: self.step(1),
            "p": lambda: self.step(-1),
            "r": lambda: self.step(1, lambda f: f["kind"] == "DiceRolled"),
            "R": lambda: self.step(-1, lambda f: f["kind"] == "DiceRolled"),
            "b": lambda: self.step_battle(1),
            "B": lambda: self.step_battle(-1),
            "g": lambda: self.go_to_seq(self.frames[0]["seq"]),
            "G": lambda: self.go_to_seq(self.frames[-1]["seq"]),
        }
        if key in ("q", "\x1b", "\x03"):
            return False
        move = moves.get(key)
        if move is not None:
            move()
        return True

    def render(self, out: Console, zone_only: bool = False) -> None:
        f = self.frame
        board = self.board(f["seq"])
        mark = f"  {undone_mark(f['kind'], f['undone_by'])}" if f["undone_by"] else ""
        # A Text, not markup: the nation's name is the scenario's, printed as written.
        out.print(
            Text.assemble(
                (f"Event {f['seq']}", "bold"),
                f" ({self.position + 1}/{len(self.frames)}) · turn {f['turn']} · "
                f"{f['nation']} · {phase_name(f['phase'])} · {f['kind']} [{f['rule']}]{mark}",
            )
        )
        out.print(f"  {f['summary']}", markup=False)
        if zone_only and f["zones"]:
            # One line per zone of the event: enough to follow a battle roll by roll.
            for zone in f["zones"]:
                units = " ".join(u["id"] + ("*" if u["damage"] else "") for u in board["units"] if u["at"] == zone)
                ntr = ", ".join(f"{n} {z[zone]}" for n, z in board["ntr"].items() if z.get(zone))
                out.print(f"    {zone}: {units or '-'}" + (f" · NTR {ntr}" if ntr else ""), markup=False)
            return
        zones = None
        table = Table(title=f"Board after event {f['seq']}" + (f" ({', '.join(zones)})" if zones else ""))
        table.add_column("Zone")
        table.add_column("Units")
        by_zone: dict[str, list[str]] = {}
        for u in board["units"]:
            if zones is None or u["at"] in zones:
                by_zone.setdefault(u["at"], []).append(u["id"] + ("*" if u["damage"] else ""))
        for zone in sorted(by_zone):
            table.add_row(zone, " ".join(by_zone[zone]))
        out.print(table)
        ntr = ", ".join(
            f"{nation}: " + " ".join(f"{z} {c}" for z, c in zones_.items()) for nation, zones_ in board["ntr"].items()
        )
        out.print(f"  NTR · {ntr}", markup=False)
        out.print("  Resources · " + ", ".join(f"{n} {b}" for n, b in board["balances"].items()), markup=False)
