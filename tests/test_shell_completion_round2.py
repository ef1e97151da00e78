"""`tracker shell` as a group at the table plays great-war-1914, second round: Tab offers what
the referee takes now, as `pending` says it: the zones a naval battle's attacker may retreat
to (NC1), the nations and zones of an open convoy attack (CV1), the unit types bought and not
placed (PU2), the submarines an interception's decision names (SM4, SM5). Driven through the
shell's completer, as test_shell_table_play does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_on, perform_until
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session
from tracker.cli.shell_prompt import canonical_start, completer, prompt_session


@pytest.fixture
def war(tmp_path: Path) -> Iterator[Context]:
    path = str(tmp_path / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    obj = Context(path, None)
    obj.load()
    yield obj
    obj.close()


def _menu(obj: Context, text: str) -> list[Any]:
    from prompt_toolkit.document import Document

    return list(completer(cli, obj).get_completions(Document(text), None))


def _completions(obj: Context, text: str) -> list[str]:
    return [c.text for c in _menu(obj, text)]


def _run(obj: Context, *lines: str) -> None:
    for line in lines:
        assert Session(cli, obj).dispatch(line) == 0, line


def test_nc1_battle_decide_retreat_to_offers_the_zones_pending_names(war: Context) -> None:
    # Germany attacks the Grand Fleet's squadron in the Central North Sea; after the round,
    # `pending` says "retreat to Heligoland Bight/Skagerrak". Tab offered all 148 zones, land too.
    _run(war, "next --to combat_movement", "move DE-BB1 DE-BB2 DE-CA1 --path 'Central North Sea'", "next")
    _run(war, "battle start --zone 'Central North Sea'", "battle fire 1 --dice 10,10,10,10,10,10,10")
    (item,) = war.load().pending()
    assert item["decisions"]["Germany"]["retreat"] == ["Heligoland Bight", "Skagerrak"]
    assert _completions(war, "battle decide 1 --retreat-to ") == ["'Heligoland Bight'", "Skagerrak"]
    assert _completions(war, "battle decide 1 --retreat-to sk") == ["Skagerrak"]
    # NC1: only the attacker retreats.
    assert _completions(war, "battle decide 1 --nation Britain --retreat-to ") == []
    # NC4: no submarine of either side is in this battle: nothing to submerge.
    assert _completions(war, "battle decide 1 --submerge ") == []


def _dover_strait(war: Context) -> None:
    # SM2: DE-SS4 passes Dover Strait, where GB-DD6 and GB-SS4 are, on to the English Channel.
    _run(war, "next --to combat_movement", "move DE-SS4 --path 'Dover Strait,English Channel'")


def test_sm4_intercept_decide_offers_the_detected_submarines(war: Context) -> None:
    # GB-DD6 finds DE-SS4 and misses; Germany decides for it. Tab offered GB-DD6 and GB-SS4,
    # each only refused.
    _dover_strait(war)
    _run(war, "intercept search 1 --units GB-DD6 --dice 1", "battle fire 1 --dice 10,10")
    assert _completions(war, "intercept decide 1 --submerge ") == ["DE-SS4"]
    assert _completions(war, "intercept decide 1 --retreat ") == ["DE-SS4"]
    assert _completions(war, "intercept decide 1 --submerge DE-SS4 --retreat ") == ["DE-SS4"]


def test_sm5_intercept_continue_stop_offers_the_submarines_going_on(war: Context) -> None:
    _dover_strait(war)
    _run(war, "intercept search 1 --units GB-DD6 --dice 9")
    assert _completions(war, "intercept continue 1 --stop ") == ["DE-SS4"]
    # At another step than its own, nothing: a name would only be refused.
    assert _completions(war, "intercept decide 1 --submerge ") == []


def test_cv1_convoy_by_and_zone_offer_what_pending_lists(war: Context) -> None:
    # DE-SS1 sinks GB-DD3 in the Dogger Bank, where Britain has NTR; in Britain's
    # collect_resources Germany alone may declare there. Tab offered all 9 nations (Britain
    # and the neutrals too) and all 79 sea zones.
    _run(war, "next --to combat_movement", "move DE-SS1 --to 'Dogger Bank'", "next")
    _run(war, "battle start --zone 'Dogger Bank' --auto --dice 1,10", "next --to collect_resources", "next")
    _run(war, "next --to collect_resources")
    assert [i["kind"] for i in war.load().pending()] == ["convoy_open"]
    assert _completions(war, "convoy declare --by ") == ["Germany"]
    assert _completions(war, "convoy pass --by ") == ["Germany"]
    assert [c.display_meta_text for c in _menu(war, "convoy declare --by ")] == ["may attack in Dogger Bank"]
    assert _completions(war, "convoy declare --zone ") == ["'Dogger Bank'"]
    assert _completions(war, "convoy declare --by Germany --zone ") == ["'Dogger Bank'"]
    assert _completions(war, "convoy declare --by Austria-Hungary --zone ") == []
    # Outside the NTR owner's collect_resources nobody may declare.
    _run(war, "convoy pass --by Germany", "next")
    assert _completions(war, "convoy declare --by ") == []


def test_pu2_place_offers_the_types_bought_and_not_placed(war: Context) -> None:
    # Tab after `place ` offered all 9 unit types, whatever was bought.
    _run(war, "next --to purchase", "buy submarine 2", "buy destroyer")
    # In the ruleset's order, as `buy` offers them.
    assert _completions(war, "place ") == ["submarine", "destroyer"]
    assert [c.display_meta_text for c in _menu(war, "place ")] == ["2 to place", "1 to place"]
    _run(war, "next --to placement", "place destroyer --at 'Heligoland Bight'")
    assert _completions(war, "place ") == ["submarine"]
    # `buy` offers every type Germany can still pay one of (PU1: 10 left).
    assert _completions(war, "buy ") == ["submarine", "destroyer", "transport", "fighter", "transport_plane"]


def test_t1_f8_turn_options_offer_the_turns_played_with_nation_and_round(war: Context) -> None:
    # `state --turn `, `report --turn `, `log --turn ` completed nothing. The Ottoman Empire's
    # and Italy's turns (5, 7) were passed over while they were neutral (F8): no board or
    # events of their own, left out.
    t = war.tracker
    perform_until(t, t.campaign_id(None), "Japan", "research")
    for command in ("state", "report", "log"):
        assert _completions(war, f"{command} --turn ") == ["1", "2", "3", "4", "6", "8"], command
    menu = _menu(war, "log --turn ")
    assert [c.display_meta_text for c in menu][-3:] == [
        "France, round 1",
        "Russia, round 1",
        "Japan, round 1, under way",
    ]
    assert _completions(war, "state --turn 6") == ["6"]


def test_explain_offers_the_last_events_newest_first(war: Context) -> None:
    _run(war, "next", "next")
    menu = _menu(war, "explain ")
    assert [c.text for c in menu][:2] == [str(war.load().version), str(war.load().version - 2)]
    assert menu[0].display_meta_text == "round 1, Germany: combat movement"
    assert all(c.text.startswith("1") for c in _menu(war, "explain 1"))


def test_help_in_the_shell_lists_what_a_line_may_give_as_wide_as_the_terminal(
    war: Context, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `help` listed the global --db/--campaign/--server, which the shell refuses, and the
    # `shell` and `serve` commands; its short help was cut at 80 columns on a wider terminal.
    from tracker.cli import shell, shell_prompt

    monkeypatch.setattr(shell, "help_width", lambda: 150)
    assert Session(cli, war).dispatch("help") == 0
    out = capsys.readouterr().out
    assert "pending" in out and "move" in out
    first = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert "pending" in first and not first & {"--db", "--campaign", "--server", "shell", "serve"}
    assert max(map(len, out.splitlines())) > 100
    assert Session(cli, war).dispatch("help move") == 0
    assert max(map(len, capsys.readouterr().out.splitlines())) > 100
    # Tab on the first word: neither those options nor those commands; each command's help as
    # long as the terminal has room for (it was cut at 45).
    assert not {"shell", "serve"} & set(_completions(war, "s"))
    assert "--db" not in _completions(war, "--")
    monkeypatch.setattr(shell_prompt, "terminal_columns", lambda: 150)
    assert max(len(c.display_meta_text) for c in _menu(war, "")) > 60


def test_a_zone_typed_unquoted_or_in_another_case_completes(war: Context) -> None:
    # `show central n` completed nothing: the words typed since `show` are read as the name.
    menu = _menu(war, "show central n")
    assert [c.text for c in menu] == ["'Central North Atlantic'", "'Central North Sea'"]
    assert {c.start_position for c in menu} == {-len("central n")}
    assert _completions(war, "move DE-BB1 --to central north s") == ["'Central North Sea'"]
    # The player's own quotes are kept (they were turned into single quotes).
    assert _completions(war, 'show "Central N') == ['"Central North Atlantic"', '"Central North Sea"']
    # Tab puts the names' case in place of the word as typed: prompt_toolkit inserted nothing.
    assert canonical_start("show central", _menu(war, "show central")) == (len("central"), "'Central ")
    assert canonical_start("show skag", _menu(war, "show skag")) == (len("skag"), "Skagerrak")
    # Typed in the names' case, prompt_toolkit's own common part, as before.
    assert canonical_start("show Skag", _menu(war, "show Skag")) is None


def test_tab_at_the_prompt_puts_the_names_case_in_place(war: Context, tmp_path: Path) -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    history = tmp_path / "history"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        prompt = prompt_session(cli, war, history)
        pipe.send_text("show skag\t\rshow central north s\t\rexit\r")
        Session(cli, war).run(prompt.prompt)
    lines = [line for line in history.read_text().splitlines() if line.startswith("+")]
    assert lines == ["+show Skagerrak", "+show 'Central North Sea'", "+exit"]


def test_a_zone_name_typed_unquoted_is_said_how_to_quote(war: Context, capsys: pytest.CaptureFixture[str]) -> None:
    # "more arguments than the command takes: (North Sea)" said nothing of the quotes.
    assert Session(cli, war).dispatch("show Central North Sea") == 2
    err = capsys.readouterr().err
    assert "a name with spaces is one word when quoted: 'Central North Sea'" in err
    assert len(err.strip().splitlines()) == 1
    assert Session(cli, war).dispatch("state two words") == 2
    assert "quoted" not in capsys.readouterr().err
