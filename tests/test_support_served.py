"""The tests' own server starter (`tests.support.served`): a free port is free when chosen, not
reserved, and another process (a parallel run of the suite on the same machine) may take it
before the server binds it; the server is then started again on another port, not the test
failed with "address already in use"."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from tests import support

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def test_a_port_taken_before_the_server_binds_it_is_left_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    subprocess.run([*support.TRACKER, "--db", str(db), "new", "s", "--scenario", "north-sea-1914"], check=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        ports = iter([busy])
        real = support.free_port
        monkeypatch.setattr(support, "free_port", lambda: next(ports, None) or real())
        with support.served(str(db), "--keys", str(tmp_path / "keys.db"), workdir=tmp_path) as server:
            assert not server.url.endswith(f":{busy}")
            assert server.get("/api/health")[0] == 200
    assert "address already in use" in (tmp_path / f"server-{busy}.log").read_text().lower()
