"""`tracker --server URL shell`: the shell's loop at the player's end, each line run on the
league server (what it prints is what `tracker --server URL LINE` prints), with the prompt and
Tab completion read from the served campaign."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import TRACKER, in_process, served
from tests.test_inbox import token_of, tracker

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

LINES = ["state", "pending", "research advanced_submarine --dice 4", "next", "log --tail 3", "move DE-SS1 --to Nowhere"]


def test_a_shell_on_a_server_prints_what_each_remote_command_prints(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    token = token_of(tracker("--db", db, "--campaign", "autumn", "players", "add", "anna", "--nations", "Germany"))
    twin = str(tmp_path / "twin.db")
    assert tracker("--db", twin, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    twin_token = token_of(
        tracker("--db", twin, "--campaign", "autumn", "players", "add", "anna", "--nations", "Germany")
    )
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}, "TRACKER_CONFIG": "/nonexistent"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with served(db, workdir=tmp_path / "a") as one, served(twin, workdir=tmp_path / "b") as other:
        shell = subprocess.run(
            [*TRACKER, "--server", one.url, "--campaign", "autumn", "shell"],
            input="".join(line + "\n" for line in LINES),
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, "TRACKER_TOKEN": token},
        )
        # Its last line fails as bad usage (no zone Nowhere): the piped shell exits with its status.
        assert shell.returncode == 2, shell.stderr
        # Each line on its own, as the client in this process (the shell is the real process
        # whose piped input is read and whose exit status is its last line's).
        apart_out, apart_err = "", ""
        for line in LINES:
            done = in_process(
                "--server", other.url, "--campaign", "autumn", *line.split(),
                env={"TRACKER_CONFIG": "/nonexistent", "TRACKER_TOKEN": twin_token},
            )  # fmt: skip
            apart_out, apart_err = apart_out + done.stdout, apart_err + done.stderr

    # Event times differ between the two campaigns; everything else is the same.
    def plain(text: str) -> str:
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+|\d\d:\d\d:\d\d", "TIME", text)

    assert plain(shell.stdout) == plain(apart_out)
    assert shell.stderr == apart_err and "unknown zone 'Nowhere'" in shell.stderr


def test_completion_and_the_prompt_read_the_served_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.cli.main import cli
    from tracker.cli.shell import RemoteContext, RemoteSession
    from tracker.cli.shell_prompt import completer

    db = str(tmp_path / "c.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    token = token_of(tracker("--db", db, "--campaign", "autumn", "players", "add", "anna", "--nations", "Germany"))
    monkeypatch.setenv("TRACKER_TOKEN", token)
    monkeypatch.setenv("TRACKER_CONFIG", "/nonexistent")
    with served(db, workdir=tmp_path) as server:
        obj = RemoteContext(server.url, "autumn")
        assert RemoteSession(cli, obj).prompt_text() == "autumn · round 1 · Germany · research> "
        from prompt_toolkit.document import Document

        def offered(text: str) -> list[str]:
            return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]

        assert "DE-SS1" in offered("move DE-S")
        assert "'Heligoland Bight'" in offered("move DE-SS1 --to Heli")
        assert "advanced_submarine" in offered("research adv")
