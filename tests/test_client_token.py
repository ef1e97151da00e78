"""`tracker --server`: a token that cannot be a token (a paste that took a curly quote, bytes
that are not UTF-8) or a config path that is a folder is one line naming where it came from,
exit 2, before anything is sent; never "unexpected UnicodeEncodeError"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support import TRACKER

# Nothing listens there: a token that got through would end in "cannot reach the server".
NOWHERE = "http://127.0.0.1:9"


def remote(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_CONFIG", "TRACKER_SERVER")}
    return subprocess.run(
        [*TRACKER, "--server", NOWHERE, "--campaign", "autumn", "state"],
        capture_output=True, timeout=120, env={**clean, **env}, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize("token", ["\u2019trk_0000000000000000_abc\u2019", "trk_0000\udcff", "trk_a\tb"])
def test_pl1_a_token_that_is_not_printable_ascii_is_named_as_such(tmp_path: Path, token: str) -> None:
    raw = token.encode("utf-8", "surrogateescape")
    env = {"TRACKER_CONFIG": str(tmp_path / "none.toml")}
    done = remote({**env, "TRACKER_TOKEN": raw.decode("utf-8", "surrogateescape")}, tmp_path)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert err.startswith("Error: TRACKER_TOKEN is not a token: ") and err.count("\n") == 1
    assert "unexpected" not in err and "abc" not in err
    config = tmp_path / "config.toml"
    config.write_bytes(b'token = "' + token.encode("utf-8", "surrogateescape").replace(b"\t", b"\\t") + b'"\n')
    done = remote({"TRACKER_CONFIG": str(config)}, tmp_path)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "unexpected" not in err, err
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_a_config_path_that_is_a_folder_is_named(tmp_path: Path) -> None:
    done = remote({"TRACKER_CONFIG": str(tmp_path)}, tmp_path)
    err = done.stderr.decode()
    assert (
        done.returncode == 2
        and err == f"Error: {tmp_path}: is a directory, not a config file (TRACKER_CONFIG names the file)\n"
    )


@pytest.mark.parametrize(
    "url, says",
    [
        ("http://127.0.0.1:181011", "--server 'http://127.0.0.1:181011': the port must be a number from 1 to 65535"),
        ("http://127.0.0.1:0", "--server 'http://127.0.0.1:0': the port must be a number from 1 to 65535"),
        ("http://127.0.0.1:80a", "--server 'http://127.0.0.1:80a': the port must be a number from 1 to 65535"),
        ("http://:8000", "--server 'http://:8000' names no host"),
        ("http://[::1", "--server 'http://[::1' is not a URL (Invalid IPv6 URL)"),
    ],
)
def test_a_server_url_that_names_no_reachable_place_is_bad_usage(tmp_path: Path, url: str, says: str) -> None:
    """Said as what is wrong with the URL, exit 2, not "connection refused" (exit 1)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_CONFIG", "TRACKER_SERVER")}
    done = subprocess.run(
        [*TRACKER, "--server", url, "state"], capture_output=True, text=True, timeout=120, env=clean, cwd=tmp_path
    )
    assert (done.returncode, done.stderr[: len("Error: " + says)]) == (2, "Error: " + says), done.stderr
