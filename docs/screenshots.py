"""Take the README's screenshots of the browser viewer: the demo campaign and a new campaign on
the great-war-1914 world map in a new database, served by `tracker serve` on a free local
port, read by a league spectator, shown in Debian's headless chromium through selenium, saved
as small palette PNGs beside this script.

    python docs/screenshots.py [NAME.png ...]   # all of them, or the ones named

Needs the `chromium` and `chromium-driver` packages and the docs extra (`pip install -e ".[docs]"`:
selenium and Pillow)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tracker.cli.demo import run_demo

HERE = Path(__file__).resolve().parent
SHOTS = {
    "viewer-board.png": ("/campaigns/demo/board?turn=2", 1180, 1480),
    "viewer-battle.png": ("/campaigns/demo/battles/1", 1180, 900),
    "viewer-timeline.png": ("/campaigns/demo/log?turn=2&kind=DiceRolled", 1180, 800),
    # The world map at 1280x900, where it must stay readable, as it opens (no zooming).
    "viewer-board-world.png": ("/campaigns/war/board", 1280, 900),
}


def tracker(db: str, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "tracker", "--db", db, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(result.stderr)
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    wanted = sys.argv[1:] or list(SHOTS)
    unknown = sorted(set(wanted) - set(SHOTS))
    if unknown:
        sys.exit(f"no screenshot named {', '.join(unknown)}; known: {', '.join(SHOTS)}")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "demo.db")
        run_demo(db, lambda line: None)
        tracker(db, "new", "war", "--scenario", "great-war-1914")
        # Reads need a token: a spectator of every campaign, signed in once by its link.
        token = tracker(db, "players", "add", "screenshots", "--spectator", "--league").strip().splitlines()[-1]
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "tracker", "serve", "--db", db, "--port", str(port)],
            cwd=tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(url + "/api/health", timeout=2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            options = webdriver.ChromeOptions()
            options.binary_location = "/usr/bin/chromium"
            for flag in (
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={Path(tmp) / 'profile'}",
            ):  # fmt: skip
                options.add_argument(flag)
            driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
            try:
                driver.get(f"{url}/?token={token}")
                for name in wanted:
                    path, width, height = SHOTS[name]
                    # The sizes are the page's: the window is grown by what its frame takes.
                    driver.set_window_size(width, height)
                    inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
                    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
                    driver.get(url + path)
                    time.sleep(1.0)  # the live indicator connects
                    raw = Path(tmp) / name
                    driver.save_screenshot(str(raw))
                    # A 64-colour palette keeps text sharp and the file small.
                    Image.open(raw).convert("RGB").quantize(colors=64).save(HERE / name, optimize=True)
                    print(f"{name}: {(HERE / name).stat().st_size // 1024} KiB")
            finally:
                driver.quit()
        finally:
            os.kill(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
