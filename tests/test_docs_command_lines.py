"""Every `tracker` command line the README and the guide show, in a shell block or inline, names
commands and options the tracker has: a renamed command or option fails here, naming the line,
instead of on a newcomer's first try."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from tracker.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "docs" / "guide.md"]
# Options of `tracker` itself, given before the command (`tracker --db PATH state`).
GLOBAL = {"--db", "--campaign", "--server", "--version", "--help", "-h"}
ENVIRONMENT = re.compile(r"^(?:[A-Z_]+=\S+\s+)+")


def command_lines(text: str) -> list[str]:
    """The lines that run `tracker` in the shell blocks, and the inline code that does."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = ENVIRONMENT.sub("", line.strip())
            if line.startswith("tracker "):
                lines.append(line.split("  #")[0].split(" # ")[0])
    prose = re.sub(r"```.*?```", "", text, flags=re.S).replace("\n", " ")
    for span in re.findall(r"`([^`]+)`", prose):
        span = ENVIRONMENT.sub("", span.strip())
        if span.startswith("tracker "):
            lines.append(span)
    return lines


def unknown_in(line: str) -> str | None:
    """What in `line` the tracker does not have (a command or an option), or None."""
    try:
        words = shlex.split(line)[1:]
    except ValueError:  # an example cut short, `tracker move "...`
        words = line.split()[1:]
    command: click.Command = cli
    ctx = click.Context(cli)
    path: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        if word in GLOBAL:
            at += 1 if word in ("--version", "--help", "-h") else 2
            continue
        if word.startswith("-") or word == "|":
            break
        if isinstance(command, click.Group):
            sub = command.get_command(ctx, word)
            if sub is None:
                # A placeholder (`tracker --server URL LINE`, `tracker --campaign autumn ...`).
                return None if word.isupper() or word == "..." else f"command {word!r}"
        else:
            # `tracker odds need`: commands of its own behind a first argument.
            advice: dict[str, click.Command] = getattr(command, "advice", {})
            if word not in advice:
                break
            sub = advice[word]
        command, at = sub, at + 1
        path.append(word)
    if not path:
        return None
    known = set(GLOBAL)
    for param in command.params:
        known.update(param.opts, param.secondary_opts)
    for word in words[at:]:
        if word.startswith("--") and word.split("=")[0] not in known:
            return f"option {word.split('=')[0]} of `tracker {' '.join(path)}`"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_line_in_the_docs_names_commands_and_options_that_exist(doc: Path) -> None:
    lines = command_lines(doc.read_text())
    assert len(lines) > 40, "the docs' command lines were not found"
    wrong = [f"{line}: no {what}" for line in lines if (what := unknown_in(line))]
    assert not wrong, "\n".join(wrong)


def test_a_renamed_option_or_command_is_caught() -> None:
    # The check itself: what it must refuse, so the test above cannot pass by finding nothing.
    assert unknown_in("tracker buy submarine --seen 3") is None
    assert unknown_in("tracker --db x.db odds need --zone Skagerrak --win 0.9") is None
    assert unknown_in("tracker buy submarine --amount 2") == "option --amount of `tracker buy`"
    assert unknown_in("tracker odds need --area Skagerrak") == "option --area of `tracker odds need`"
    assert unknown_in("tracker notify add-channel webhook URL") == "command 'add-channel'"
