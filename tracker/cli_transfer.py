"""`tracker export` and `tracker import`: a campaign's events with their hashes as JSON lines."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
