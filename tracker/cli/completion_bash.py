"""Bash completion that puts a name on the line as one word bash reads back as the name: its
spaces and quotes escaped, or, after a quote the player opened, escaped as inside that quote.
Used for `_TRACKER_COMPLETE=bash_*` only (see `TrackerGroup._main_shell_completion`); the
names themselves come from `tracker.cli.completion`."""

from __future__ import annotations

import os
import re

from click.shell_completion import BashComplete, CompletionItem, add_completion_class

# click's bash script, but for `read -r`: a name's escapes reach the line as they are written.
_BASH_SOURCE = """\
%(complete_func)s() {
    local IFS=$'\\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD %(complete_var)s=bash_complete $1)

    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

%(complete_func)s_setup() {
    complete -o nosort -F %(complete_func)s %(prog_name)s
}

%(complete_func)s_setup;
"""


class WholeNamesBash(BashComplete):
    """Bash completion that keeps a name of several words one word on the line. click hands bash
    `Heligoland Bight` as it is, and bash put it there unquoted: `tracker show Heligoland Bight`,
    two words, refused. A name completed after an opening quote (`--path "Cen`) is escaped as
    inside that quote (`'Détroit d'\\''Öresund`), and bash closes the quote; anywhere else its
    spaces and quotes are escaped with `\\`, which the script reads as they are (`read -r`:
    click's reads `\\ ` as a space)."""

    source_template = _BASH_SOURCE

    def get_completion_args(self) -> tuple[list[str], str]:
        self.quote = opened_quote(os.environ.get("COMP_WORDS", ""))
        return super().get_completion_args()

    def format_completion(self, item: CompletionItem) -> str:
        value = str(item.value)
        if item.type == "plain":
            value = in_quote(value, getattr(self, "quote", ""))
        return f"{item.type},{value}"


def in_quote(value: str, quote: str) -> str:
    """`value` as bash reads it back after the opening `quote` (`'`, `"`, or none), and before
    the one bash adds to close it."""
    if quote == "'":
        # A quote ends the quoted part: bash read `'Détroit d'Öresund'` as `Détroit d` and an
        # open quote. Closed, escaped and opened again, it is one `'`.
        return value.replace("'", "'\\''")
    if quote == '"':
        return _IN_DOUBLE_QUOTES.sub(r"\\\g<0>", value)
    return _SHELL_SPECIAL.sub(r"\\\g<0>", value)


# What bash would split or expand in a name: anything but letters, digits and `-_.,:=+@%/`.
_SHELL_SPECIAL = re.compile(r"[^\w\-.,:=+@%/]")
# What bash still reads inside double quotes.
_IN_DOUBLE_QUOTES = re.compile(r'[\\"$`]')


def opened_quote(line: str) -> str:
    """The quote `line`, as the shell has it so far, ends inside of (`'` or `"`); "" for none."""
    quote = ""
    escaped = False
    for char in line:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
    return quote


def keep_names_whole_in_bash() -> None:
    """Complete for bash with `WholeNamesBash` instead of click's own."""
    add_completion_class(WholeNamesBash, "bash")
