"""Where the tracker keeps a user's files: one application name for the config and data
folders, placed as each platform expects (platformdirs: XDG folders on Linux, Application
Support on macOS, AppData on Windows)."""

from __future__ import annotations

import os
from pathlib import Path

APP = "twtea-naval-tracker"


def config_file() -> Path:
    """The config file (tokens per server, `tracker --server`): TRACKER_CONFIG, or config.toml
    in the user's config folder. A file at the path earlier versions used (the `tracker`
    folder) is still read while there is none at the new one."""
    from platformdirs import user_config_path

    given = os.environ.get("TRACKER_CONFIG")
    if given:
        return Path(given).expanduser()
    path = user_config_path(APP) / "config.toml"
    earlier = user_config_path("tracker") / "config.toml"
    return earlier if not path.exists() and earlier.exists() else path


def data_dir() -> Path:
    """The user's data folder for the tracker (the shell's history files)."""
    from platformdirs import user_data_path

    return user_data_path(APP)
