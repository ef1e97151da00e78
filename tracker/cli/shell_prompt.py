"""The prompt_toolkit side of `tracker shell`: the prompt fitted to the terminal's width,
Tab completion asked of click as shell completion asks it, Enter on a completion chosen from
the menu, and the prompt session that holds them with the line history.

prompt_toolkit is imported inside the functions, only when a shell runs (see `tracker.cli.shell`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from domain.text import phase_name
from tracker.cli.common import Context
from tracker.cli.completion import completion_key, completions, starting

# The columns a prompt leaves at least for the line typed after it.
PROMPT_ROOM = 10

# What the shell's first word may not be, and its completion does not offer: the global
# options that would leave its campaign, and the commands it refuses (`Session.dispatch`).
NOT_IN_SHELL = ("--db", "--campaign", "--server", "shell", "serve")

# How old the prompt may get, in seconds, while a line is being typed (the session redraws
# it as often, and `Session.live_prompt` reads it again once it is this old).
REFRESH = 1.0


def fit_prompt(name: str, c: Any, columns: int | None) -> str:
    """The prompt, `name · round R · Nation · phase> ` (the phase in words, "combat movement"),
    shortened on a terminal too narrow to leave PROMPT_ROOM columns after it (the campaign's
    name dropped first, then the nation given by its code): a prompt wider than the terminal
    wrapped mid-word, with the line typed on the next row."""
    code = getattr(c.scenario.nations.get(c.nation), "code", "") or c.nation
    phase = phase_name(c.phase)
    candidates = [
        f"{name} · round {c.round} · {c.nation} · {phase}> ",
        f"round {c.round} · {c.nation} · {phase}> ",
        f"round {c.round} · {code} · {phase}> ",
        f"{code} · {phase}> ",
    ]
    if columns is None:
        return candidates[0]
    from prompt_toolkit.utils import get_cwidth

    return next((p for p in candidates if get_cwidth(p) + PROMPT_ROOM <= columns), candidates[-1])


def terminal_columns() -> int | None:
    """The width of the terminal the prompt is drawn on; None outside a prompt."""
    from prompt_toolkit.application import get_app_or_none

    app = get_app_or_none()
    if app is None or not app.is_running:
        return None
    try:
        return app.output.get_size().columns
    except Exception:  # noqa: BLE001 - the full prompt, as before
        return None


def help_width() -> int:
    """The columns help text may take: the terminal's (at least 80); 80 in a script, whose
    output stays the same wherever it runs."""
    import shutil
    import sys

    if not sys.stdout.isatty():
        return 80
    return max(shutil.get_terminal_size().columns, 80)


def _last_word(text: str) -> tuple[list[str], str, str]:
    """(complete words, the word being typed without quotes, that word as typed)."""
    from click.shell_completion import split_arg_string

    quote = None
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            # `Gulf\ of\ R`, as bash users type a space: part of the word, as shlex reads it.
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            start = i + 1
    raw = text[start:]
    words = split_arg_string(text[:start])
    return words, split_arg_string(raw)[0] if raw.strip() else "", raw


def _first_words(group: click.Group, items: list[Any]) -> list[Any]:
    """The commands and options a line may start with in the shell (not NOT_IN_SHELL), each
    command's short help as long as the terminal leaves room for (click cuts it at 45)."""
    from click.shell_completion import CompletionItem

    kept = [i for i in items if i.value not in NOT_IN_SHELL]
    listed = getattr(group, "listed_help", None)
    commands = [i.value for i in kept if not i.value.startswith("-")]
    if listed is None or not commands:
        return kept
    # The menu: a column of names, one of help, and their margins.
    room = max((terminal_columns() or 80) - max(map(len, commands)) - 6, 45)
    return [CompletionItem(i.value, help=listed(i.value, room)) if i.value in commands else i for i in kept]


def _quoted(value: str, quote: str) -> str:
    """`value` as one word of the line, in the quotes the player opened it with (`"` or, by
    default, `'`), read back by shlex as `value`."""
    if quote == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return shlex.quote(value)


# How many words typed unquoted before the one being typed may make one name with it.
JOINED_WORDS = 3


def _unquoted_runs(text: str) -> list[int]:
    """Where a name typed unquoted over several words may begin (`show central n`): the
    starts of the last JOINED_WORDS words before the word being typed, the farthest first;
    never the line's first word or an option, and none in a line with quotes or backslashes
    (the player quotes already)."""
    if any(c in text for c in "'\"\\"):
        return []
    starts = [i for i in range(1, len(text)) if text[i - 1].isspace() and not text[i].isspace()]
    current = len(text) if text[-1:].isspace() or not starts else starts[-1]
    earlier = [i for i in starts if i < current][-JOINED_WORDS:]
    return [i for i in earlier if text[:i].strip() and not any(w.startswith("-") for w in text[i:].split())]


def completer(group: click.Group, obj: Context) -> Any:
    """A prompt_toolkit completer asking click what comes next, as shell completion does."""
    from prompt_toolkit.completion import Completer, Completion

    def offered(text: str) -> Iterable[Completion]:
        words, incomplete, raw = _last_word(text)
        if words and words[0] == "tracker":
            words = words[1:]
        # `--nation=Ge`: click completes the value after the `=`, which is kept in the line.
        option = incomplete.partition("=")[0] + "=" if incomplete.startswith("-") and "=" in incomplete else ""
        wanted = incomplete[len(option) :]
        quoting = raw[len(option) :] if raw.startswith(option) else raw
        # A comma list's items named already (`--targets A=B,C=D,`): the menu shows only the
        # item being completed. With the whole list in each entry, a narrow terminal cut the
        # entries before the one part that tells them apart.
        listed = wanted.rpartition(",")[0] + "," if "," in wanted else ""
        found = completions(group, words, incomplete, obj)
        if not words:
            found = _first_words(group, found)
        # As the commands read a name: case, Unicode form and accents aside (`starting`).
        begin = set(starting([str(item.value) for item in found], wanted))
        for item in found:
            value = str(item.value)
            if not value.startswith(wanted) and value not in begin:
                continue
            quote = any(c.isspace() for c in value) or quoting[:1] in "'\"" and quoting
            text = option + (_quoted(value, quoting[:1]) if quote else value)
            shown = value[len(listed) :] if listed and value.startswith(listed) else text
            yield Completion(text, start_position=-len(raw), display=shown, display_meta=item.help or "")

    class ClickCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            text = document.text_before_cursor
            found = list(offered(text))
            if found:
                yield from found
                return
            # `show central n`: the words typed since the last one a name can start at, read as
            # that name quoted (`show 'central n`); the completion takes their place, quoted.
            for start in _unquoted_runs(text):
                found = list(offered(text[:start] + "'" + text[start:]))
                if found:
                    for c in found:
                        yield Completion(
                            c.text, start_position=c.start_position + 1, display=c.display, display_meta=c.display_meta
                        )
                    return

    return ClickCompleter()


def canonical_start(before: str, offered: list[Any]) -> tuple[int, str] | None:
    """Tab on a word typed in another case than the names it completes (`show central`): the
    word's length and what replaces it, the one completion, or the part all of them share
    (compared as `completion_key` compares) in the case of the first, when that is longer
    than the word; None when prompt_toolkit inserts that itself (the word begins each
    completion as typed), the completions replace different parts of the line, or share no
    more than the word. prompt_toolkit inserts only a part that begins with the word as typed:
    `show central` + Tab opened the menu and inserted nothing."""
    if not offered or len({c.start_position for c in offered}) > 1:
        return None
    size = -offered[0].start_position
    word = before[len(before) - size :]
    texts = [c.text for c in offered]
    if all(t.startswith(word) for t in texts):
        return None
    if len(texts) == 1:
        return size, texts[0]
    shared = 0
    first = texts[0]
    while shared < len(first) and all(
        len(t) > shared and completion_key(t[shared]) == completion_key(first[shared]) for t in texts
    ):
        shared += 1
    return (size, first[:shared]) if shared > size else None


def key_bindings() -> Any:
    """Enter on a completion chosen among several in the menu takes the completion and closes
    the menu; it does not run the line. A path is chosen zone by zone from the menu: running
    the line at the first zone recorded a move the player had not finished typing. The only
    completion, which Tab puts in the line, is the line as typed: Enter runs it.

    Tab puts the names' own case in place of a word typed in another (`canonical_start`)."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.filters import Condition, completion_is_selected, has_completions
    from prompt_toolkit.key_binding import KeyBindings

    @Condition
    def chosen_among_several() -> bool:
        state = get_app().current_buffer.complete_state
        return state is not None and len(state.completions) > 1

    bindings = KeyBindings()

    @bindings.add("enter", filter=completion_is_selected & chosen_among_several)
    def _take_completion(event: Any) -> None:
        event.current_buffer.complete_state = None

    @bindings.add("tab", filter=~has_completions)
    def _complete(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.completer is not None:
            document = buffer.document
            offered = list(buffer.completer.get_completions(document, CompleteEvent(completion_requested=True)))
            change = canonical_start(document.text_before_cursor, offered)
            if change is not None:
                size, text = change
                buffer.delete_before_cursor(size)
                buffer.insert_text(text)
                if len(offered) == 1:
                    return
        buffer.start_completion(insert_common_part=True)

    return bindings


def prompt_session(group: click.Group, obj: Context, history: Path | None, **kwargs: Any) -> Any:
    """A prompt_toolkit session with file history and the campaign's completion."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    if history is not None:
        history.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history)) if history is not None else InMemoryHistory(),
        completer=completer(group, obj),
        complete_while_typing=False,
        key_bindings=key_bindings(),
        refresh_interval=REFRESH,
        **kwargs,
    )
