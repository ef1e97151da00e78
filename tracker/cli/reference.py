"""The command reference (docs/commands.md), generated from the commands' own help, so it can
never say what a command does not do: `python -m tracker.cli.reference > docs/commands.md`.
tests/test_docs.py fails when the file and the commands differ."""

from __future__ import annotations

import click

from tracker.cli.main import cli

# A fixed width: the file is the same on every terminal.
WIDTH = 100

HEADER = """# Command reference

Generated from the commands' own `--help` (`python -m tracker.cli.reference > docs/commands.md`;
a test fails when this file and the commands differ). The global options come first, then each
command and its subcommands in the order `tracker --help` lists them.
"""


def _help(command: click.Command, path: list[str], parent: click.Context | None) -> tuple[str, click.Context]:
    """The command's help as `tracker ... --help` prints it, at the fixed width."""
    # The command's own settings (the main group's `-h`), as `tracker` runs it, whichever
    # context made its help option first in this process.
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    return command.get_help(ctx), ctx


def _sections(command: click.Command, path: list[str], parent: click.Context | None) -> list[str]:
    """One section per command, a group's subcommands after it, in the order `--help` lists them."""
    text, ctx = _help(command, path, parent)
    title = "#" * min(len(path) + 1, 4)
    out = [f"{title} `{' '.join(path)}`\n\n```text\n{text.rstrip()}\n```\n"]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out.extend(_sections(sub, [*path, name], ctx))
    return out


def reference() -> str:
    """The whole reference, as Markdown."""
    return HEADER + "\n" + "\n".join(_sections(cli, ["tracker"], None))


if __name__ == "__main__":
    click.echo(reference(), nl=False)
