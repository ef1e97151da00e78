"""What a user installs: the core (`pip install .`) pulls no server, PostgreSQL or chart
library; a command that needs a missing extra says which one to install, in one line, exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run the command line with some modules made unimportable, as on an install without them.
BLOCKED = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
from tracker.cli.main import main
sys.argv = ["tracker", *{args!r}]
main()
"""


def without(blocked: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    code = BLOCKED.format(blocked=blocked, args=list(args))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_core_install_pulls_no_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = requirement_names(project["dependencies"])
    assert not core & {"starlette", "uvicorn", "psycopg", "matplotlib", "httpx", "pytest"}, core
    extras = project["optional-dependencies"]
    assert requirement_names(extras["server"]) == {"starlette", "uvicorn"}
    assert requirement_names(extras["postgres"]) == {"psycopg"}
    # The test extra runs the whole suite: the server and PostgreSQL tests included.
    assert requirement_names(extras["server"]) | requirement_names(extras["postgres"]) <= requirement_names(
        extras["test"]
    )


def test_postgresql_without_its_extra_says_which_to_install(tmp_path: Path) -> None:
    done = without(["psycopg"], "--db", "postgresql://postgres@127.0.0.1/test", "campaigns")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "Error: PostgreSQL needs the postgres extra (psycopg is not installed): "
        "pip install 'twtea-naval-tracker[postgres]', or pip install '.[postgres]' in a checkout"
    ]


def test_serve_without_its_extra_says_which_to_install(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    assert without(["starlette", "uvicorn"], "--db", db, "new", "c", "--scenario", "north-sea-1914").returncode == 0
    done = without(["starlette", "uvicorn"], "--db", db, "serve", "--port", "0")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "server extra" in line and "twtea-naval-tracker[server]" in line


def test_a_sqlite_campaign_needs_no_extra(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    blocked = ["starlette", "uvicorn", "psycopg", "matplotlib"]
    assert without(blocked, "--db", db, "new", "c", "--scenario", "north-sea-1914").returncode == 0
    for args in (["state"], ["pending"], ["report", "--turn", "1", "--format", "html", "-o", str(tmp_path / "r.html")]):
        done = without(blocked, "--db", db, *args)
        assert done.returncode == 0, (args, done.stderr)


def test_one_application_name_for_the_config_and_data_folders(tmp_path: Path, monkeypatch) -> None:
    from tracker.cli.places import APP, config_file, data_dir

    monkeypatch.delenv("TRACKER_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert config_file() == tmp_path / "config" / APP / "config.toml"
    assert data_dir() == tmp_path / "data" / APP
    # The file earlier versions read is still read until one exists at the new place.
    earlier = tmp_path / "config" / "tracker" / "config.toml"
    earlier.parent.mkdir(parents=True)
    earlier.write_text('token = "trk_x"\n')
    assert config_file() == earlier
    (tmp_path / "config" / APP).mkdir()
    (tmp_path / "config" / APP / "config.toml").write_text('token = "trk_y"\n')
    assert config_file() == tmp_path / "config" / APP / "config.toml"
    monkeypatch.setenv("TRACKER_CONFIG", str(tmp_path / "mine.toml"))
    assert config_file() == tmp_path / "mine.toml"
