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

from tracker.cli.common import Context
from tracker.cli.completion import completion_key, completions

# The columns a prompt leaves at least for the line typed after it.
PROMPT_ROOM = 10

# How old the prompt may get, in seconds, while a line is being typed (the session redraws
# it as often, and `Session.live_prompt` reads it again once it is this old).
REFRESH = 1.0


def fit_prompt(name: str, c: Any, columns: int | None) -> str:
    """The prompt, `name · round R · Nation · phase> `, shortened on a terminal too narrow to
    leave PROMPT_ROOM columns after it (the campaign's name dropped first, then the nation
    given by its code): a prompt wider than the terminal wrapped mid-word, with the line
    typed on the next row."""
    code = getattr(c.scenario.nations.get(c.nation), "code", "") or c.nation
    candidates = [
        f"{name} · round {c.round} · {c.nation} · {c.phase}> ",
        f"round {c.round} · {c.nation} · {c.phase}> ",
        f"round {c.round} · {code} · {c.phase}> ",
        f"{code} · {c.phase}> ",
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


def completer(group: click.Group, obj: Context) -> Any:
    """A prompt_toolkit completer asking click what comes next, as shell completion does."""
    from prompt_toolkit.completion import Completer, Completion

    class ClickCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            words, incomplete, raw = _last_word(document.text_before_cursor)
            if words and words[0] == "tracker":
                words = words[1:]
            # `--nation=Ge`: click completes the value after the `=`, which is kept in the line.
            option = incomplete.partition("=")[0] + "=" if incomplete.startswith("-") and "=" in incomplete else ""
            wanted = incomplete[len(option) :]
            quoting = raw[len(option) :] if raw.startswith(option) else raw
            typed = completion_key(wanted)  # case and Unicode form aside
            # A comma list's items named already (`--targets A=B,C=D,`): the menu shows only the
            # item being completed. With the whole list in each entry, a narrow terminal cut the
            # entries before the one part that tells them apart.
            listed = wanted.rpartition(",")[0] + "," if "," in wanted else ""
            for item in completions(group, words, incomplete, obj):
                value = str(item.value)
                if not value.startswith(wanted) and not completion_key(value).startswith(typed):
                    continue
                quote = any(c.isspace() for c in value) or quoting[:1] in "'\"" and quoting
                text = option + (shlex.quote(value) if quote else value)
                shown = value[len(listed) :] if listed and value.startswith(listed) else text
                yield Completion(text, start_position=-len(raw), display=shown, display_meta=item.help or "")

    return ClickCompleter()


def key_bindings() -> Any:
    """Enter on a completion chosen among several in the menu takes the completion and closes
    the menu; it does not run the line. A path is chosen zone by zone from the menu: running
    the line at the first zone recorded a move the player had not finished typing. The only
    completion, which Tab puts in the line, is the line as typed: Enter runs it."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition, completion_is_selected
    from prompt_toolkit.key_binding import KeyBindings

    @Condition
    def chosen_among_several() -> bool:
        state = get_app().current_buffer.complete_state
        return state is not None and len(state.completions) > 1

    bindings = KeyBindings()

    @bindings.add("enter", filter=completion_is_selected & chosen_among_several)
    def _take_completion(event: Any) -> None:
        event.current_buffer.complete_state = None

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
