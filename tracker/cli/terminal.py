"""The terminal the tracker's output is shown on: its width, or none where the output goes to a
pipe or a file; through a league server, the client's terminal as the client saw it."""

from __future__ import annotations

import shutil
from contextvars import ContextVar
from typing import Any

# A command run by a league server for a client: the client's terminal as its own Console saw
# it (width, colour system or None, NO_COLOR), so the output is what the client would print.
CLIENT_TERMINAL: ContextVar[dict[str, Any] | None] = ContextVar("client_terminal", default=None)


def terminal_width(stream: Any) -> int | None:
    """The width of the terminal `stream` shows on (the client's, through a server); None when
    it is no terminal, where each line stays whole for whatever reads it next."""
    client = CLIENT_TERMINAL.get()
    if client is not None:
        return int(client["columns"]) if client.get("tty") else None
    return shutil.get_terminal_size().columns if stream.isatty() else None
