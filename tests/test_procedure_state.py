"""The state of a procedure in progress keeps to its declared shape (domain/campaign/procedure.py):
every battle state the folds produce over a whole campaign has the keys its schema requires,
no key it does not declare, and a step and kind of the declared ones."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, get_args

from click.testing import CliRunner

from domain.campaign.procedure import Kind, Procedure, Step
from tracker.cli.main import cli
from tracker.service.application import Tracker

EXPORT = Path(__file__).parent / "fixtures" / "demo-one-module.jsonl.gz"


def battle_states(tmp_path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every battle in progress after every event of the demo log (162 events, four procedures)."""
    export = tmp_path / "demo.jsonl"
    export.write_bytes(gzip.decompress(EXPORT.read_bytes()))
    db = str(tmp_path / "demo.db")
    assert CliRunner().invoke(cli, ["--db", db, "import", str(export)]).exit_code == 0
    states: list[tuple[int, dict[str, Any]]] = []
    agg: Any = None
    with Tracker(db) as t:
        for event in t.events(t.campaign_id(None)):
            agg = event.mutate(agg)
            states += [(agg.version, dict(b)) for b in agg.battles.values()]
    return states


def test_every_procedure_state_has_its_required_keys_and_no_undeclared_one(tmp_path: Path) -> None:
    declared = Procedure.__required_keys__ | Procedure.__optional_keys__
    states = battle_states(tmp_path)
    assert {b["kind"] for _, b in states} == set(get_args(Kind))
    for version, b in states:
        assert Procedure.__required_keys__ <= set(b), (version, sorted(Procedure.__required_keys__ - set(b)))
        assert set(b) <= declared, (version, sorted(set(b) - declared))
        assert b["step"] in get_args(Step) and b["kind"] in get_args(Kind), version


def test_a_procedure_state_is_plain_json_data(tmp_path: Path) -> None:
    # Snapshots and undo (RK3) store it as it is.
    for _, b in battle_states(tmp_path):
        assert json.loads(json.dumps(b)) == b
