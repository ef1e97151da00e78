"""docs/commands.md is the commands' own help: regenerate it when a command changes
(`python -m tracker.cli.reference > docs/commands.md`)."""

from __future__ import annotations

from pathlib import Path

from tracker.cli.main import COMMANDS
from tracker.cli.reference import reference

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_command_reference_is_the_commands_own_help() -> None:
    written = (DOCS / "commands.md").read_text()
    assert written == reference(), "docs/commands.md drifted: python -m tracker.cli.reference > docs/commands.md"


def test_the_reference_has_every_command() -> None:
    text = reference()
    for name in COMMANDS:
        assert f"`tracker {name}`" in text, name


def test_the_readme_links_the_reference_and_the_guide() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    assert "docs/commands.md" in readme and "docs/guide.md" in readme
    # The README is what a newcomer reads in a few minutes; the detail lives in docs/.
    assert len(readme.splitlines()) <= 330
