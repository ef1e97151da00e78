"""A --server URL with a password in it: the errors that name the URL show it as ***."""

from __future__ import annotations

from click.testing import CliRunner

from tracker.cli.main import cli


def test_an_unreachable_server_is_named_without_its_password() -> None:
    result = CliRunner().invoke(
        cli,
        ["--server", "http://anna:hunter2@127.0.0.1:1", "--campaign", "war", "pending"],
        env={"TRACKER_TOKEN": "trk_x"},
    )
    assert result.exit_code == 1
    assert "hunter2" not in result.output
    assert "anna:***@127.0.0.1:1" in result.output


def test_a_bad_port_is_named_without_the_password() -> None:
    result = CliRunner().invoke(
        cli, ["--server", "http://anna:hunter2@127.0.0.1:99999", "pending"], env={"TRACKER_TOKEN": "trk_x"}
    )
    assert result.exit_code in (1, 2)
    assert "hunter2" not in result.output
    assert "port" in result.output
