"""Two rows of the reliability catalogue: what strangers learn from a league server (an
anonymous request, or a token of another campaign: every GET route and every read command,
nothing of a campaign they may not read), and bad input on every command line (random
arguments and options of every command: a one-line refusal or an answer, never a traceback
or an "unexpected" error)."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from tests.reliability.conftest import size
from tests.test_server_strangers import League, get_routes, league, leaks_of  # noqa: F401 - `league` is a fixture
from tracker.cli.demo import run_demo
from tracker.cli.main import cli

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def test_no_leak_to_an_anonymous_or_wrong_campaign_token(league: League, figures: Any) -> None:  # noqa: F811
    tried = {
        "anonymous": leaks_of(league, "anonymous", None, set()),
        "wendy": leaks_of(
            league, "wendy (referee of another campaign)", league.tokens["wendy"], {"hidden-beta", "wendy"}
        ),
        "bert": leaks_of(league, "bert (spectator of another campaign)", league.tokens["bert"], {"hidden-beta"}),
    }
    leaks = [leak for found in tried.values() for leak in found]
    figures.add("strangers", readers=len(tried), get_routes=len(get_routes()), leaks=len(leaks))
    assert leaks == []


# Commands that wait for a person or a long time, or serve: not for random input.
SKIPPED = {"serve", "shell", "replay", "wait", "demo"}
NASTY = [
    "",
    " ",
    "-1",
    "0",
    str(2**31),
    str(2**63),
    "9" * 40,
    "1e309",
    "nan",
    "DE-SS99",
    "de-ss1,",
    ",,",
    "Atlantis",
    "'",
    '"',
    "\\",
    "%s",
    "{}",
    "\x00",
    "é",
    "\u202e",
    "a" * 5000,
    "--",
    "-",
    "1,2,3,x",
    "=",
    "Germany=",
    "/dev/null",
    "/nonexistent/dir/file.jsonl",
    "postgresql://nobody@127.0.0.1:1/none",
    "::",
    "[",
    "]",
]


def leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or (not prefix and name in SKIPPED):
            continue
        if isinstance(command, click.Group):
            found.extend(leaves(command, (*prefix, name)))
        else:
            found.append(((*prefix, name), command))
    return found


def random_args(rng: random.Random, command: click.Command) -> list[str]:
    """Arguments and options of the command, filled with nasty or random values."""
    args: list[str] = []
    for param in command.params:
        if rng.random() < 0.4:
            continue
        value = (
            rng.choice(NASTY) if rng.random() < 0.7 else "".join(rng.choices(string.printable, k=rng.randint(1, 12)))
        )
        if isinstance(param, click.Option):
            flag = param.opts[0]
            if param.is_flag:
                args.append(flag)
            elif flag not in ("--db", "-o", "--output", "--history", "--reply"):
                args += [flag, value]
        else:
            args.append(value)
    if rng.random() < 0.2:
        args.append(rng.choice(["--no-such-option", "extra", "--json"]))
    return args


# The last line of `scenario check`'s report on a file: what it found, exit 1 when any is an error.
_CHECK_SUMMARY = re.compile(r": \d+ errors?, \d+ warnings?( \(.*\))?$")


def one_line(result: Any, args: list[str]) -> bool:
    """A refusal is one line; with --json, a JSON document holding the error may go to stdout
    beside it, for tools (`scenario check --json` of a file it cannot read). A check's report of
    what it found in a file (`scenario check` of an empty or broken one, exit 1) is its output,
    a line a finding and its summary, or that JSON document, and no refusal."""
    if len(result.output.strip().splitlines()) == 1:
        return True
    if "check" in args and "scenario" in args and _check_report(result):
        return True
    if "--json" not in args:
        return False
    try:
        json.loads(result.stdout)
    except ValueError:
        return False
    return len(result.stderr.strip().splitlines()) == 1


def _check_report(result: Any) -> bool:
    lines = result.stdout.strip().splitlines()
    if lines and _CHECK_SUMMARY.search(lines[-1]):
        return not result.stderr.strip()
    try:
        document = json.loads(result.stdout)
    except ValueError:
        return False
    return isinstance(document, dict) and document.get("ok") is False and bool(document.get("errors"))


def test_bad_input_on_every_command_is_refused_in_one_line(tmp_path: Path, figures: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACKER_SERVER", raising=False)
    db = str(tmp_path / "demo.db")
    run_demo(db, lambda line: None)
    rng = random.Random(20261204)
    commands = leaves(cli)
    tried = tracebacks = 0
    problems = []
    for _ in range(size(3, 20)):
        for path, command in commands:
            args = ["--db", db, *path, *random_args(rng, command)]
            result = CliRunner().invoke(cli, args, input="")
            tried += 1
            out = result.output
            bad = (
                result.exit_code not in (0, 1, 2)
                or "Traceback" in out
                or "unexpected" in out
                or (result.exception is not None and not isinstance(result.exception, SystemExit))
            )
            if bad:
                tracebacks += 1
                problems.append(f"{' '.join(args)!r} -> {result.exit_code}: {out[-300:]!r} {result.exception!r}")
            elif result.exit_code and not one_line(result, args) and "Usage:" not in out:
                problems.append(f"{' '.join(args)!r} -> {result.exit_code}: not one line: {out[-300:]!r}")
    figures.add("bad inputs", commands=len(commands), tried=tried, tracebacks=tracebacks)
    assert problems == [], "\n".join(problems[:10])
