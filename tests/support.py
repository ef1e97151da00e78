"""Helpers the test suites share: getting a campaign to the position a test needs, the CLI
on one database, and a real `tracker serve` process on a free port."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from domain.campaign import Campaign
from tests import secretscan

if TYPE_CHECKING:
    from tracker.service.application import Tracker


def advance(c: Campaign, confirm_losses: bool = False) -> None:
    """`next` as a group that wants to move on plays it: every enemy that may still attack
    convoys passes (CV1, T4), then the phase ends."""
    for nation in c.convoy_attacks_open():
        c.convoy_pass(nation)
    c.advance(confirm_losses)


class Server:
    """A `tracker serve` process started by a test: its base URL, process and output file."""

    def __init__(self, url: str, proc: subprocess.Popen[bytes], output: Path) -> None:
        self.url = url
        self.proc = proc
        self.output = output

    def log(self) -> str:
        """Everything the server printed so far (its stdout and stderr)."""
        return self.output.read_text(errors="replace")

    def request(
        self, method: str, path: str, body: Any = None, token: str | None = None, raw: bytes | None = None
    ) -> tuple[int, Any]:
        """(status, decoded JSON body) of one request; error statuses are returned, not raised."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text.decode(errors="replace")

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        return self.request("GET", path, token=token)

    def post(self, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        return self.request("POST", path, body if body is not None else {}, token=token)


def cli_on(db: str | Path) -> Callable[..., str]:
    """The CLI on database `db`, as `run(*args, code=0)`: a command's output, its exit status
    asserted."""
    from click.testing import CliRunner

    from tracker.cli.main import cli

    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, ["--db", str(db), *args])
        assert result.exit_code == code, result.output
        return result.output

    return run


def in_process(
    *args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None, prog_name: str = "tracker"
) -> subprocess.CompletedProcess[str]:
    """`tracker ARGS` run in this process (click's CliRunner), answered as `subprocess.run`
    would answer a `[*TRACKER, ...]` run: its exit status and its stdout and stderr apart. No
    TRACKER_ setting of the test's environment (a token, server, campaign, database or config
    a developer has set) reaches it but those `env` gives; `cwd` is the directory it runs in.
    For a test that is not about the process itself (its start, signals, a real terminal): it
    saves the interpreter's start and imports. An exception the command line let through (a
    traceback, in a process) is raised here."""
    import contextlib

    from click.testing import CliRunner

    from tracker.cli.main import cli

    unset = dict.fromkeys(k for k in os.environ if k.startswith("TRACKER_"))
    settings: dict[str, str | None] = {**unset, **(env or {})}
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(cli, list(args), env=settings, prog_name=prog_name)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess([*TRACKER, *args], result.exit_code, result.stdout, result.stderr)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


TRACKER = [sys.executable, "-c", "from tracker.cli.main import main; main()"]


# Starts of a server whose free port another process took in between (a parallel run of the
# suite on the same machine): each is started again on another port, as many times as this.
PORT_TAKEN_RETRIES = 3


def _start(db: str, args: tuple[str, ...], workdir: Path, env: dict[str, str] | None) -> Server:
    port = free_port()
    output = secretscan.keep_log(workdir / f"server-{port}.log")
    with output.open("wb") as out:
        proc = subprocess.Popen(
            [*TRACKER, "serve", "--db", db, "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env={**os.environ, **(env or {})},
        )
    return Server(f"http://127.0.0.1:{port}", proc, output)


@contextmanager
def served(db: str, *args: str, workdir: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Start `tracker serve` on a free 127.0.0.1 port over `db`, wait until it answers, and
    stop it by its PID afterwards. `workdir` holds its output file (and its default key store).
    The port is free when chosen, not reserved: one taken before the server binds it is left
    for another (`PORT_TAKEN_RETRIES`)."""
    server = _start(db, args, workdir, env)
    try:
        deadline = time.monotonic() + 120
        retries = PORT_TAKEN_RETRIES
        while True:
            proc = server.proc
            if proc.poll() is not None:
                if retries and "address already in use" in server.log().lower():
                    retries -= 1
                    server = _start(db, args, workdir, env)
                    continue
                raise RuntimeError(f"tracker serve exited with {proc.returncode}:\n{server.log()}")
            try:
                with urllib.request.urlopen(server.url + "/api/health", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"tracker serve did not answer within 120 s:\n{server.log()}")
            time.sleep(0.1)
        yield server
    finally:
        stop(server.proc)
        secretscan.harvest(db, secretscan.option(args, "--keys"), env, workdir)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process this test started, by its PID: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def perform_advance(t: Tracker, cid: UUID, confirm_losses: bool = False) -> None:
    """`advance` recorded as the command line records it: each pass and the phase end are
    actions by name, with what was asked (so `verify` re-runs them)."""
    for nation in t.load(cid).convoy_attacks_open():
        t.perform(cid, "convoy pass", {"by": nation})
    t.perform(cid, "next", {"confirm_losses": confirm_losses})


def perform_until(t: Tracker, cid: UUID, nation: str, phase: str) -> None:
    """Record `next` (passing convoy attacks) until `nation`'s `phase` is open."""
    perform_advance(t, cid)
    while (t.load(cid).nation, t.load(cid).phase) != (nation, phase):
        perform_advance(t, cid)


def contrast(ink: str, paper: str) -> float:
    """WCAG 2's contrast ratio of two #rrggbb colours (worked out here, not by the tracker)."""

    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(ink), luminance(paper)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def recorded_before(monkeypatch: Any, key: str) -> None:
    """New campaigns record their ruleset without the amended rule's `key` (domain/amended.py),
    as a release before the amendment did: they are refereed by the rule as it was then."""
    import dataclasses

    from domain.amended import AMENDED
    from tracker.service import application
    from tracker.service.new_campaign import NewCampaign, prepare_campaign

    table, now, before = AMENDED[key]
    assert now != before, f"{key} was recorded the same before"

    def prepare(*args: Any) -> NewCampaign:
        new = prepare_campaign(*args)
        kept = {k: v for k, v in new.ruleset_data[table].items() if k != key}
        return dataclasses.replace(new, ruleset_data={**new.ruleset_data, table: kept})

    monkeypatch.setattr(application, "prepare_campaign", prepare)


def to_the_decide_step(t: Any, cid: UUID) -> int:
    """Germany's two submarines attack Britain's ships in the Central North Sea (a British
    submarine added there), every die a miss, to the decide step after round 1 (NC4), waiting
    for both nations. Returns the version there."""
    t.perform(cid, "adjust", {"reason": "the fleets meet", "add": ["Britain:submarine:Central North Sea"]})
    for _ in range(3):
        t.perform(cid, "next")
    assert t.load(cid).phase == "naval_combat"
    t.perform(cid, "battle start", {"zone": "Central North Sea"})
    for _ in range(20):
        b = t.load(cid).battles["1"]
        if b["step"] == "decide":
            break
        if b["step"].endswith("fire"):
            t.perform(cid, "battle fire", {"battle": 1}, ask=lambda _purpose, n, _sides: [9] * n)
        else:
            t.perform(cid, "battle step", {"battle": 1})
    b = t.load(cid).battles["1"]
    assert (b["step"], b["waiting"]) == ("decide", ["Germany", "Britain"])
    return t.load(cid).version
