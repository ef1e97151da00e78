"""Take the README's screenshots of the browser viewer: the demo campaign in a new database,
served by `tracker serve` on a free local port, shown in Debian's headless chromium through
selenium, saved as small palette PNGs beside this script.

    python docs/screenshots.py

Needs the `chromium` and `chromium-driver` packages and the test extra (selenium)."""

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
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "demo.db")
        run_demo(db, lambda line: None)
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
                for name, (path, width, height) in SHOTS.items():
                    driver.set_window_size(width, height)
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
