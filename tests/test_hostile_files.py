"""What a shared scenario or ruleset file, or a server's settings, could slip past the checks
(found by running every command with hostile values): each is refused where it is given, in
one line, before anything is made."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

DATA = Path(__file__).parent.parent / "domain" / "data"


def run(*args: str, code: int) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def test_a_territory_with_an_empty_owner_is_refused_by_check_and_new(tmp_path: Path) -> None:
    """It passed both, then `next` into collect_resources failed ("unexpected KeyError: ''")."""
    text = (DATA / "scenarios" / "north-sea-1914.toml").read_text()
    assert text.count('owner = "Germany"\n') >= 1
    scenario = tmp_path / "s.toml"
    scenario.write_text(text.replace('owner = "Germany"\n', 'owner = ""\n', 1))
    said = run("scenario", "check", str(scenario), code=1)
    assert "owner: is empty: a territory's owner is one of the nations (Germany, Britain" in said
    db = tmp_path / "c.db"
    assert "owner: is empty" in run("--db", str(db), "new", "x", "--scenario", str(scenario), code=2)
    assert not db.exists()


def test_a_ruleset_title_holding_an_escape_sequence_is_refused(tmp_path: Path) -> None:
    """A shared ruleset file's title reached the terminal raw (`units`, reports): an escape
    sequence in it could retitle or rewrite a player's terminal."""
    lines = (DATA / "rulesets" / "twtea-3e.toml").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("title = "))
    lines[at] = 'title = "\\u001b]0;pwned\\u0007"\n'
    ruleset = tmp_path / "r.toml"
    ruleset.write_text("".join(lines))
    db = tmp_path / "c.db"
    said = run("--db", str(db), "new", "x", "--scenario", "north-sea-1914", "--ruleset", str(ruleset), code=2)
    assert "ruleset.title: the title may not contain control characters such as '\\x1b'" in said
    assert not db.exists()


@pytest.mark.parametrize("url", ["not a url", "javascript:alert(1)", "https://", "ftp://league.example"])
def test_serve_refuses_a_public_url_players_could_not_follow(tmp_path: Path, url: str) -> None:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    said = run("--db", str(tmp_path / "c.db"), "serve", "--port", "1", "--public-url", url, code=2)
    assert "--public-url must be an http:// or https:// address with a host" in said


def test_serve_typed_in_the_shell_is_refused_rather_than_holding_the_prompt(tmp_path: Path) -> None:
    from tracker.cli.context import Context
    from tracker.cli.shell import Session

    obj = Context(str(tmp_path / "c.db"), None)
    try:
        assert Session(cli, obj).dispatch("serve --port 8000") == 2
    finally:
        obj.close()


def test_serve_refuses_a_sender_address_an_smtp_server_would_refuse(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    args = ["--db", str(tmp_path / "c.db"), "serve", "--port", "1", "--smtp-host", "localhost"]
    said = run(*args, "--smtp-from", "nobody", code=2)
    assert "--smtp-from must be one e-mail address, e.g. tracker@league.example, got 'nobody'" in said


def test_serve_on_port_0_names_the_port_it_listens_on() -> None:
    """`--port 0` asks the system for a free port: the log line "Serving ... on
    http://127.0.0.1:0/" named none a player could reach."""
    from tracker.server.command import check_address

    port = check_address("127.0.0.1", 0)
    assert 1024 <= port <= 65535
