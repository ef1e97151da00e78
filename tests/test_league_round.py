"""A group of four plays one round through the league server, from four shells, while a browser
watches (issue: the league server's "done when"). On PostgreSQL: the league's referee creates
the campaign and the four players over `tracker --server`; each player's commands are their
own `tracker --server URL ...` processes with their own TRACKER_TOKEN; each nation acts for
itself through every phase of the round (one player trying another's nation is refused with
PL2); headless chromium on the board page sees the actions arrive (server-sent events) and
the board at the end of the round.

Skips with the reason when PostgreSQL or chromium is missing (an error in CI, as for the
other PostgreSQL and browser tests)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.map_svg import parsed_units
from tests.support import TRACKER, served
from tests.test_viewer_browser import browser, map_on_page, wait  # noqa: F401 - browser is a fixture

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

# The scenario's four nations, each played by one person.
PLAYERS = {"Germany": "anna", "Britain": "bert", "Austria-Hungary": "carl", "France": "dora"}


class Shell:
    """One person's shell: `tracker` run as a process of its own, with their token and the
    league's server in its environment, as the README tells a player to set them."""

    def __init__(self, server: str, token: str, campaign: str | None = None) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
        self.env = {**clean, "TRACKER_SERVER": server, "TRACKER_TOKEN": token, "COLUMNS": "100"}
        self.env["TRACKER_CONFIG"] = "/nonexistent/config.toml"
        if campaign is not None:
            self.env["TRACKER_CAMPAIGN"] = campaign

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TRACKER, *args], capture_output=True, text=True, timeout=300, env=self.env)

    def ok(self, *args: str) -> str:
        done = self(*args)
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout


def token_in(output: str) -> str:
    token = output.strip().splitlines()[-1]
    assert token.startswith("trk_")
    return token


@pytest.mark.postgres
def test_four_players_play_a_round_from_four_shells_while_a_browser_watches(
    pg_url: str,
    browser: Any,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    from selenium.webdriver.common.by import By

    league = f"autumn {uuid.uuid4().hex[:6]}"
    # The administrator's one step on the database: the league's referee.
    admin = subprocess.run(
        [*TRACKER, "--db", pg_url, "players", "add", f"rita-{league[-6:]}", "--referee", "--league"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert admin.returncode == 0, admin.stderr
    with served(pg_url, "--keys", str(tmp_path / "keys.db"), workdir=tmp_path) as server:
        rita = Shell(server.url, token_in(admin.stdout))
        created = rita.ok("new", league, "--scenario", "north-sea-1914", "--dice", "auto")
        assert created.endswith("Round 1 · Germany · research\n")
        # The league's round is watched from the public viewer: reads need no token (issue 24).
        rita.ok("--campaign", league, "campaign", "public", "on")
        shells = {}
        for nation, person in PLAYERS.items():
            added = rita.ok("--campaign", league, "players", "add", person, "--nations", nation)
            assert added.startswith(f"Player '{person}' ({nation}) added to {league!r}")
            shells[nation] = Shell(server.url, token_in(added), league)
        api = f"/api/campaigns/{quote(league, safe='')}"

        browser.get(f"{server.url}/campaigns/{quote(league, safe='')}/board")
        wait(browser, lambda d: d.find_element(By.ID, "live").text == "live")
        assert parsed_units(map_on_page(browser)["Heligoland Bight"]["Germany"])["SS"] == 3

        # Britain's player tries Germany's phase: refused with the rule, nothing recorded.
        before = server.get(f"{api}/state")[1]["seq"]
        wrong = shells["Britain"]("next")
        assert wrong.returncode == 1 and wrong.stderr.startswith("Error: PL2: bert plays Britain, not Germany")
        assert server.get(f"{api}/state")[1]["seq"] == before

        moved = False
        acted: Counter[str] = Counter()
        for _ in range(60):
            state = server.get(f"{api}/state")[1]
            if state["round"] == 2:
                break
            opened = [p for p in server.get(f"{api}/pending")[1] if p["kind"] == "convoy_open"]
            if opened:
                # The enemy that may attack the phasing nation's convoys passes, for itself (CV1).
                nation = opened[0]["nation"]
                shells[nation].ok("convoy", "pass", "--by", nation)
            elif (state["nation"], state["phase"], moved) == ("Germany", "combat_movement", False):
                nation = "Germany"
                shells[nation].ok("move", "DE-SS3", "--to", "Skagerrak")
                moved = True
                # No reload from the test: the page hears the stream and redraws itself.
                wait(browser, lambda d: parsed_units(map_on_page(d).get("Skagerrak", {}).get("Germany", ""))["SS"] == 1)
            else:
                nation = state["nation"]
                shells[nation].ok("next")
            acted[nation] += 1
        assert state["round"] == 2 and (state["nation"], state["phase"]) == ("Germany", "research"), state
        assert set(acted) == set(PLAYERS) and moved

        # The page followed the round to its end by itself.
        wait(browser, lambda d: "round 2" in d.find_element(By.ID, "position").text)
        position = browser.find_element(By.ID, "position").text
        assert "round 2 · turn 5 · Germany · research" in position, position
        board = map_on_page(browser)
        assert parsed_units(board["Skagerrak"]["Germany"])["SS"] == 1
        assert parsed_units(board["Heligoland Bight"]["Germany"])["SS"] == 2

        # PL1: every action names the player whose token asked and the nation acted for.
        asked = [r["data"] for r in server.get(f"{api}/log?kind=ActionAsked")[1]]
        assert len(asked) == sum(acted.values())
        assert all(a["player"] == PLAYERS[a["nation"]] for a in asked), asked
        assert Counter(a["nation"] for a in asked) == acted
        verified = json.loads(rita.ok("--campaign", league, "verify", "--json"))
        assert verified["ok"] is True
