"""PL2, PL1: a league server answers "no such campaign" for a private campaign asked without a
token, in the same words as for a name nobody uses, so that a stranger learns nothing. A player
who forgot TRACKER_TOKEN read that and nothing more; the client, which knows that it sent no
token, says so and where a token goes. With a token sent, the words stay the server's alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support import TRACKER, served


def remote(url: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_CONFIG", "TRACKER_SERVER")}
    return subprocess.run(
        [*TRACKER, "--server", url, "--campaign", "autumn", "state"],
        capture_output=True, text=True, timeout=120, env={**clean, **env}, cwd=cwd,
    )  # fmt: skip


def test_pl2_no_such_campaign_without_a_token_says_no_token_was_sent(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    subprocess.run(
        [*TRACKER, "--db", db, "new", "autumn", "--scenario", "north-sea-1914"], check=True, capture_output=True
    )
    config = tmp_path / "none.toml"
    with served(db, workdir=tmp_path) as server:
        done = remote(server.url, tmp_path, {"TRACKER_CONFIG": str(config)})
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            "Error: no such campaign (no token was sent: set TRACKER_TOKEN to the token `tracker players add` "
            f'gave you, or write it as token = "trk_..." in {config})\n'
        )
        wrong = remote(server.url, tmp_path, {"TRACKER_CONFIG": str(config), "TRACKER_TOKEN": "trk_0000_nottoken"})
        assert "no token was sent" not in wrong.stderr and wrong.returncode != 0, wrong.stderr
