"""`tracker report` and `tracker stats`: turn reports in Markdown, HTML and JSON."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
