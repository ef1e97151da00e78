"""The wheel a user installs, built from this tree and installed in fresh virtual environments:
the core alone plays a campaign and names the extra a command lacks; with `[server,postgres]`
the server starts and answers. The wheel holds every file the installed tracker reads at run
time (scenarios, rulesets, templates, migrations, py.typed).

Building and installing needs pip to reach a package index (the build backend and the
dependencies). In CI (`CI=true`) a missing index fails the test; elsewhere it skips, naming
what pip said.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from tests import secretscan
from tests.support import free_port, stop

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("domain", "projections", "tracker")
# Besides the packages, what the build reads: the metadata, the long description, the licence.
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")
# What pip prints when it cannot reach an index or find a release there (no network, no mirror).
NO_INDEX = re.compile(
    r"No matching distribution found|Could not find a version|Failed to establish a new connection|"
    r"Temporary failure in name resolution|Network is unreachable|ConnectionError|Max retries exceeded"
)


def pip(*args: str, cwd: Path) -> None:
    """Run pip; when it cannot reach a package index, skip (fail in CI)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, timeout=1800, cwd=cwd,
    )  # fmt: skip
    if done.returncode == 0:
        return
    said = (done.stdout + done.stderr).strip()
    unreachable = [line.strip() for line in said.splitlines() if NO_INDEX.search(line)]
    if unreachable and not os.environ.get("CI"):
        pytest.skip(f"pip could not reach a package index to build and install the wheel: {unreachable[0]}")
    pytest.fail(f"pip {' '.join(args)} exited with {done.returncode}:\n{said[-4000:]}")


def package_files(tree: Path) -> set[str]:
    """Every file of the packages in `tree`, as a wheel names it, byte-code caches aside."""
    return {
        path.relative_to(tree).as_posix()
        for package in PACKAGES
        for path in (tree / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of this tree (setuptools writes build/ and egg-info beside
    the sources it builds, which must not touch the checkout others work in), once for the whole
    run: pytest-xdist's workers share the one the first of them built."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build_wheel(tmp_path_factory.mktemp("wheel"))
    # The folder of this run's workers' temporary folders (each worker's is its own).
    shared = tmp_path_factory.getbasetemp().parent / "wheel"
    with (shared.parent / "wheel.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits while one builds
        try:
            built = list((shared / "dist").glob("*.whl"))
            if len(built) == 1:
                return built[0]
            shutil.rmtree(shared, ignore_errors=True)  # what a build that failed left
            shared.mkdir()
            return build_wheel(shared)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_wheel(work: Path) -> Path:
    """The wheel built in `work` from a copy of this tree, copied to `work`/source."""
    source = work / "source"
    source.mkdir()
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip("wheel", "--no-deps", "--quiet", str(source), "-w", str(work / "dist"), cwd=work)
    (built,) = (work / "dist").glob("*.whl")
    return built


def environment(where: Path, requirement: str) -> Path:
    """A fresh virtual environment (nothing of this one's site-packages) with `requirement`
    installed; its bin folder. (Without byte-compiling every module installed up front, half
    the install's time: Python compiles what it imports as it imports it, and pip never fails
    an install on what it could not compile.)"""
    venv.create(where, with_pip=False, clear=True)
    python = where / "bin" / "python"
    pip("--python", str(python), "install", "--quiet", "--no-compile", requirement, cwd=where.parent)
    return where / "bin"


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A program of that environment, run in `cwd` (out of the checkout, so nothing of it can be
    imported by accident) without this environment's tracker settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACKER_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, timeout=600, cwd=cwd, env=env
    )


def extra_modules(*extras: str) -> set[str]:
    """The import names of the distributions an extra pulls (here each is its own name)."""
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for extra in extras for r in optional[extra]}


def test_the_wheel_holds_every_file_the_installed_tracker_reads(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        inside = set(z.namelist())
    # The tree the wheel was built from (a copy of this one, taken when it was built).
    missing = package_files(wheel.parent.parent / "source") - inside
    assert not missing, f"in the tree but not in the wheel (pyproject.toml's package-data): {sorted(missing)}"
    # The run-time data by kind, so that an emptied folder cannot pass unnoticed either.
    for pattern in (
        r"domain/data/scenarios/north-sea-1914\.toml",
        r"domain/data/rulesets/[^/]+\.toml",
        r"tracker/reports/templates/report\.html\.j2",
        r"tracker/server/templates/viewer_board\.html\.j2",
        r"tracker/storage/migrations/env\.py",
        r"tracker/storage/migrations/versions/r0001_[^/]+\.py",
        r"(domain|projections|tracker)/py\.typed",
    ):
        assert any(re.fullmatch(pattern, name) for name in inside), pattern
    assert {name for name in inside if name.endswith("py.typed")} == {f"{p}/py.typed" for p in PACKAGES}


def test_the_core_wheel_plays_and_names_the_extra_a_command_needs(wheel: Path, tmp_path: Path) -> None:
    bin_dir = environment(tmp_path / "core", str(wheel))
    here = tmp_path / "play"
    here.mkdir()
    # The tracker imported is the installed one, with its data beside it.
    where = run(bin_dir, "python", "-c", "import tracker, domain; print(tracker.__file__, domain.__file__)", cwd=here)
    assert where.returncode == 0 and all(Path(p).is_relative_to(tmp_path / "core") for p in where.stdout.split()), where

    demo = run(bin_dir, "tracker", "demo", cwd=here)
    assert demo.returncode == 0, demo.stderr
    assert "hash chain intact" in demo.stdout
    db = str(next(here.glob("*.db")))
    printed = {}
    for args in (
        ["--db", db, "scenarios"],
        ["--db", db, "db", "current"],
        ["--db", db, "report", "--all", "--format", "html", "-o", str(here / "report.html")],
        ["--db", db, "verify"],
    ):
        done = run(bin_dir, "tracker", *args, cwd=here)
        assert done.returncode == 0, (args, done.stderr)
        printed[args[2]] = done.stdout
    assert "great-war-1914" in run(bin_dir, "tracker", "scenarios", cwd=here).stdout
    assert "head of this tracker" in printed["db"]
    assert (here / "report.html").read_text().lstrip().lower().startswith("<!doctype html")

    serve = run(bin_dir, "tracker", "--db", db, "serve", "--port", "0", cwd=here)
    assert serve.returncode == 2, serve
    (line,) = serve.stderr.strip().splitlines()
    assert "server extra" in line and "twtea-naval-tracker[server]" in line, line

    postgres = run(bin_dir, "tracker", "--db", "postgresql://nobody@127.0.0.1:1/none", "campaigns", cwd=here)
    assert postgres.returncode == 2, postgres
    (line,) = postgres.stderr.strip().splitlines()
    assert "postgres extra" in line and "twtea-naval-tracker[postgres]" in line, line

    blocked = sorted(extra_modules("server", "postgres"))
    assert blocked == ["psycopg", "starlette", "uvicorn"]
    probe = (
        "import importlib.metadata as m, importlib.util as u\n"
        f"for name in {blocked!r}:\n"
        "    try:\n        m.distribution(name)\n    except m.PackageNotFoundError:\n        pass\n"
        "    else:\n        print('installed', name)\n"
        "    if u.find_spec(name) is not None:\n        print('importable', name)\n"
    )
    found = run(bin_dir, "python", "-c", probe, cwd=here)
    assert found.returncode == 0 and found.stdout == "", found


def test_the_wheel_with_its_extras_serves(wheel: Path, tmp_path: Path) -> None:
    bin_dir = environment(tmp_path / "full", f"{wheel}[server,postgres]")
    here = tmp_path / "serve"
    here.mkdir()
    made = run(bin_dir, "tracker", "--db", "c.db", "new", "c", "--scenario", "north-sea-1914", cwd=here)
    assert made.returncode == 0, made.stderr
    found = run(bin_dir, "python", "-c", "import psycopg, starlette, uvicorn", cwd=here)
    assert found.returncode == 0, found.stderr
    # With psycopg there, a PostgreSQL URL is tried (and refused by the closed port), not sent to the extra.
    postgres = run(bin_dir, "tracker", "--db", "postgresql://nobody@127.0.0.1:1/none", "campaigns", cwd=here)
    assert postgres.returncode != 0 and "extra" not in postgres.stderr, postgres

    port = free_port()
    log = secretscan.keep_log(here / "server.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACKER_", "PYTHON", "VIRTUAL_ENV"))}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(bin_dir / "tracker"), "--db", "c.db", "serve", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, cwd=here, env=env,
        )  # fmt: skip
    try:
        health = wait_for(f"http://127.0.0.1:{port}/health", proc, log)
        assert json.loads(health) == {"status": "ok", "ok": True}, health
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
            page = resp.read().decode()
        # The viewer's page, made from the templates the wheel carries.
        assert resp.status == 200 and "<html" in page.lower()
    finally:
        stop(proc)
        secretscan.harvest("c.db", None, env, here)


def wait_for(url: str, proc: subprocess.Popen[bytes], log: Path) -> bytes:
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"tracker serve exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return bytes(resp.read())
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"tracker serve did not answer within 120 s:\n{log.read_text(errors='replace')}"
                ) from None
            time.sleep(0.2)
