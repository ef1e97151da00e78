"""Boards entered in their own language: zone, nation and player names with accents, Cyrillic,
Greek, CJK and emoji, typed back in either Unicode form (an accent as one character or as a
letter and a combining accent); names the commands split at (':', '=', '|') refused by
`scenario check` before a campaign holds them; commands to copy quoted for the shell; names
shown whole or cut, never unreadable, on the map; Slack messages that show a name as written."""

from __future__ import annotations

import re
import shlex
import subprocess
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario_check import check_scenario
from tracker.analysis.advise import OddsBattle
from tracker.analysis.advise import command as odds_command
from tracker.cli.main import cli
from tracker.service.describe import command
from tracker.service.notify.messages import webhook_body
from tracker.service.players import check_player_name

NFC = "Cr\u00e8te"  # è as one code point
NFD = "Cre\u0300te"  # e and a combining grave accent: looks the same

BOARD = """\
[scenario]
name = "weltkrieg"
title = "Weltkrieg zur See \u2014 \u4e16\u754c\u5927\u6226 \U0001f30a"
ruleset = "twtea-3e"
dice = "auto"
turn_order = ["Deutsches Reich", "\u0420\u043e\u0441\u0441\u0438\u044f"]

[sides]
"Mittelm\u00e4chte" = ["Deutsches Reich"]
"\u0410\u043d\u0442\u0430\u043d\u0442\u0430" = ["\u0420\u043e\u0441\u0441\u0438\u044f"]

[nations."Deutsches Reich"]
code = "DE"
resources = 30
income = 8
ntr = { "\u00d6resund" = 2 }

[nations."\u0420\u043e\u0441\u0441\u0438\u044f"]
code = "RU"
resources = 30
income = 8
ntr = { "ZONE_B" = 1 }

[map.sea."\u00d6resund"]
adjacent = ["ZONE_B", "Deutschland"]

[map.sea."ZONE_B"]
adjacent = ["\u0420\u043e\u0441\u0441\u0438\u044f"]

[map.land."Deutschland"]
owner = "Deutsches Reich"
port = true

[map.land."\u0420\u043e\u0441\u0441\u0438\u044f"]
owner = "\u0420\u043e\u0441\u0441\u0438\u044f"
port = true

[[units]]
nation = "Deutsches Reich"
type = "submarine"
at = "\u00d6resund"
count = 2

[[units]]
nation = "\u0420\u043e\u0441\u0441\u0438\u044f"
type = "destroyer"
at = "ZONE_B"
"""


def board(zone_b: str = NFC) -> str:
    return BOARD.replace("ZONE_B", zone_b)


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def campaign(tmp_path: Path) -> list[str]:
    """A campaign on the board, Crète written with è as one code point; the --db option."""
    path = tmp_path / "weltkrieg.toml"
    path.write_text(board(), encoding="utf-8")
    db = ["--db", str(tmp_path / "c.db")]
    run(*db, "new", "Kampagne \u00d6lm\u00fchle \U0001f6a2", "--scenario", str(path))
    return db


# ----- a name typed in the other Unicode form is the same name -----


def test_a_zone_typed_with_a_combining_accent_is_the_zone_written_with_one(campaign: list[str]) -> None:
    assert run(*campaign, "show", NFD).startswith(f"{NFC}: sea zone")
    assert run(*campaign, "show", "o\u0308resund").startswith("\u00d6resund: sea zone")
    # A path typed so, in capitals.
    for _ in range(2):
        run(*campaign, "next")
    moved = run(*campaign, "move", "de-ss1", "--path", NFD.upper())
    assert f"\u00d6resund -> {NFC}" in moved


def test_a_zone_typed_without_its_accents_is_the_zone_and_is_recorded_as_written(campaign: list[str]) -> None:
    assert run(*campaign, "show", "oresund").startswith("\u00d6resund: sea zone")
    for _ in range(2):
        run(*campaign, "next")
    assert "\u00d6resund -> Cr\u00e8te" in run(*campaign, "move", "de-ss1", "--to", "CRETE")
    assert "\u00d6resund -> Cr\u00e8te" in run(*campaign, "log")


def test_a_zone_typed_without_accents_that_two_zones_have_is_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "weltkrieg.toml"
    path.write_text(board() + '\n[map.sea."Cr\u00eate"]\nadjacent = ["ZONE_B"]\n'.replace("ZONE_B", NFC))
    db = ["--db", str(tmp_path / "c.db")]
    run(*db, "new", "k", "--scenario", str(path))
    out = run(*db, "show", "crete", code=2)
    assert out == "Error: zone 'crete' could be 'Cr\u00e8te' or 'Cr\u00eate': type it with its accents\n"
    assert run(*db, "show", "cr\u00eate").startswith("Cr\u00eate: sea zone")


def test_scenario_check_refuses_zones_alike_but_for_their_unicode_form(tmp_path: Path) -> None:
    text = board() + f'\n[map.sea."{NFD}"]\nadjacent = ["{NFC}"]\n'
    found = check_scenario(text, "b.toml")
    messages = [f.message for f in found.errors]
    assert messages == [
        f"zones {NFC!r} and {NFD!r} look alike and differ only in how their letters are encoded in Unicode "
        "(Cr\\u00e8te and Cre\\u0300te): commands that name a zone could not tell them apart (also at line 27)"
    ]


def test_tab_completes_a_zone_typed_with_a_combining_accent(campaign: list[str]) -> None:
    from prompt_toolkit.document import Document

    from tracker.cli.context import Context
    from tracker.cli.shell_prompt import completer

    obj = Context(campaign[1], None)
    try:
        obj.load()
        for typed in ("show O\u0308r", "show o\u0308", "move de-ss1 --path O\u0308resund,cre\u0300"):
            found = [c.text for c in completer(cli, obj).get_completions(Document(typed), None)]
            # A path keeps the zones typed before the last as they were typed.
            assert found == (["\u00d6resund"] if typed.startswith("show") else [f"O\u0308resund,{NFC}"]), typed
    finally:
        obj.close()


def test_a_player_name_typed_with_combining_accents_is_its_composed_form() -> None:
    assert check_player_name("Ju\u0308rgen O\u0308ztu\u0308rk") == "J\u00fcrgen \u00d6zt\u00fcrk"
    assert unicodedata.is_normalized("NFC", check_player_name("Ju\u0308rgen"))


# ----- names holding what commands split at -----


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param(
            '"ZONE_B"',
            '"Zone: Alpha"',
            "'Zone: Alpha': a zone name may not contain ':' (`adjust --add NATION:TYPE:ZONE`, `--ntr` and "
            "`--owner` split their values at it)",
            id="colon in a sea zone",
        ),
        pytest.param(
            '"Deutschland"',
            '"Terra: Nova"',
            "'Terra: Nova': a zone name may not contain ':' (`adjust --add NATION:TYPE:ZONE`, `--ntr` and "
            "`--owner` split their values at it)",
            id="colon in a land territory (adjust --owner)",
        ),
        pytest.param(
            '"ZONE_B"',
            '"Baie | Pipe"',
            "'Baie | Pipe': a zone name may not contain '|' (the log's index of events separates zones with "
            "it, so `log --zone` would mistake it for two)",
            id="pipe in a zone",
        ),
        pytest.param(
            '"Deutsches Reich"',
            '"Reich: Nord"',
            "'Reich: Nord': a nation name may not contain ':' (`adjust --add NATION:TYPE:ZONE`, `--ntr`, "
            "`--tech` and `odds --attacker` split their values at it)",
            id="colon in a nation",
        ),
        pytest.param(
            '"Deutsches Reich"',
            '"\u00d6=Ungarn"',
            "'\u00d6=Ungarn': a nation name may not contain '=' (`adjust --resources NATION=CHANGE` and "
            "`--owner TERRITORY=NATION` split their values at it)",
            id="equals sign in a nation",
        ),
    ],
)
def test_scenario_check_and_new_refuse_a_name_holding_what_commands_split_at(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    text = BOARD.replace(old, new).replace("ZONE_B", NFC)
    found = check_scenario(text, "b.toml")
    assert [f.message for f in found.errors] == [message]
    path = tmp_path / "b.toml"
    path.write_text(text, encoding="utf-8")
    said = run("--db", str(tmp_path / "c.db"), "new", "x", "--scenario", str(path), code=2)
    assert message in said
    assert not (tmp_path / "c.db").exists()


def test_a_zone_with_an_equals_sign_can_still_be_adjusted(tmp_path: Path) -> None:
    """'=' is refused in nation names only: the forms split at the last '=' (AD1)."""
    path = tmp_path / "b.toml"
    path.write_text(board("A=B Strait").replace('"Deutschland"', '"Land=See"'), encoding="utf-8")
    db = ["--db", str(tmp_path / "c.db")]
    run(*db, "new", "x", "--scenario", str(path))
    changes = ["--ntr", "ru:a=b strait=-1", "--owner", "land=see=RU", "--add", "DE:destroyer:A=B Strait"]
    said = run(*db, "adjust", "--reason", "Vertrag", *changes)
    assert "\u0420\u043e\u0441\u0441\u0438\u044f NTR in A=B Strait -1" in said
    assert "Land=See now held by \u0420\u043e\u0441\u0441\u0438\u044f" in said


# ----- commands to copy -----


def test_cv1_the_convoy_command_to_copy_quotes_a_nation_and_zone_for_the_shell() -> None:
    item = {"battle": None, "step": "open", "kind": "convoy_open", "nation": "Deutsches Reich"}
    for zone in ("St. George's Channel", 'The "Narrows"', "Bay #1 $5's", "\u041b\u0430-\u041c\u0430\u043d\u0448"):
        said = command({**item, "zone": zone})
        assert said is not None
        declare, _, rest = said.partition(", or ")
        assert shlex.split(declare) == ["tracker", "convoy", "declare", "--by", "Deutsches Reich", "--zone", zone]
        assert shlex.split(rest) == ["tracker", "convoy", "pass", "--by", "Deutsches Reich"]


def shell_words(line: str) -> list[str]:
    """The words a POSIX shell makes of a command line (expanding what it expands)."""
    script = f'set -- {line}; for w in "$@"; do printf "%s\\0" "$w"; done'
    done = subprocess.run(["sh", "-c", script], capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def test_nc1_battle_commands_to_copy_quote_the_zone_for_the_shell() -> None:
    zone = "Cost $5's `x`"
    said = command({"battle": None, "step": "open", "kind": "naval_due", "zone": zone})
    assert said is not None and shell_words(said)[-1] == zone
    # Names without a quote of their own are written as before.
    assert command({"battle": None, "step": "open", "kind": "asw_may", "zone": "Dover Strait"}) == (
        "tracker asw start --zone 'Dover Strait'"
    )


def test_odds_commands_to_copy_quote_a_nation_with_a_space() -> None:
    battle: OddsBattle = {
        "attacker": ("Gro\u00dfbritannien:cruiser=1,destroyer=2",),
        "defender": ("Deutsches Reich:battleship=1",),
        "against": None,
        "tech": ("Deutsches Reich:advanced_submarine=1",),
    }
    assert shell_words(odds_command(battle))[3:] == [
        "--attacker",
        "Gro\u00dfbritannien:cruiser=1,destroyer=2",
        "--defender",
        "Deutsches Reich:battleship=1",
        "--tech",
        "Deutsches Reich:advanced_submarine=1",
    ]
    # A nation of one ASCII word is written as before.
    plain: OddsBattle = {"attacker": ("Germany:battleship=2",), "defender": ("Britain:cruiser=1",), "against": None}
    assert odds_command({**plain, "tech": ()}) == (
        "tracker odds naval --attacker Germany:battleship=2 --defender Britain:cruiser=1"
    )


# ----- what players read -----


def test_a_slack_message_shows_a_name_as_written_and_pings_nobody_by_it() -> None:
    body = webhook_body("slack", "Waiting in <!channel> & <b>Bold</b> Sea", {}, "<@U123>")
    assert body == {"text": "<@U123> Waiting in &lt;!channel&gt; &amp; &lt;b&gt;Bold&lt;/b&gt; Sea"}


def test_the_map_cuts_a_very_long_or_wide_name_rather_than_shrink_it_to_a_line(tmp_path: Path) -> None:
    long = ("Mare Tyrrhenum Longissimum " * 4)[:100].strip()
    wide = "\u6771\u30b7\u30ca\u6d77" * 5
    path = tmp_path / "b.toml"
    text = board(long).replace("\u00d6resund", wide)
    path.write_text(text, encoding="utf-8")
    run("scenario", "map", str(path), "-o", str(tmp_path / "m.svg"))
    svg = (tmp_path / "m.svg").read_text(encoding="utf-8")
    for name in (long, wide):
        label = next(line for line in svg.splitlines() if line.startswith("<text") and name[:12] in line)
        size = float(label.split('font-size="')[1].split('"')[0])
        assert size >= 7.0, label
        assert "\u2026</text>" in label  # cut, and whole in the box's title
        assert f"<title>{name}</title>" in svg


def test_scenario_check_refuses_a_zone_name_longer_than_the_viewer_can_open() -> None:
    long = "Mare " + "Tyrrhenum Longissimum " * 10 + "Ende"
    found = check_scenario(BOARD.replace("ZONE_B", long), "b.toml")
    assert [f.message for f in found.errors] == [
        f"{long[:40]!r}...: a zone name has at most 100 characters (this one {len(long)})"
    ]
    # 100 are fine.
    assert not check_scenario(BOARD.replace("ZONE_B", "M" * 100), "b.toml").errors


@pytest.mark.parametrize("zone", ["..", "."])
def test_the_viewer_map_links_a_zone_named_as_a_dot_segment_to_its_page(tmp_path: Path, zone: str) -> None:
    """A browser reads /zones/.. as the folder above: the link says ..%20, which the page trims."""
    from urllib.parse import urljoin

    from starlette.testclient import TestClient

    from tracker.server.app import create_app

    path = tmp_path / "b.toml"
    path.write_text(board(zone), encoding="utf-8")
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "dots", "--scenario", str(path))
    run("--db", db, "campaign", "public", "on")
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        html = client.get("/campaigns/dots/board").text
        hrefs = [h for h in re.findall(r'<a href="([^"]*/zones/[^"]*)"', html) if h.endswith(f"/{zone}%20")]
        assert len(hrefs) == 1
        # Where a browser goes from the board page, dot segments resolved (RFC 3986, 5.2.4).
        target = urljoin("http://testserver/campaigns/dots/board", hrefs[0])
        assert target.startswith("http://testserver/campaigns/dots/zones/")
        page = client.get(target[len("http://testserver") :])
    assert page.status_code == 200
    assert f"<h1>{zone}" in page.text
