"""What a request's log line says of the command line a client sent: the command's name (never
its arguments, which may hold a webhook URL, an e-mail password or a reason), its exit status,
and the rule that refused it. Without these every command was `POST /api/command 200`, a
refused one the same as one that recorded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.responses import Response
from starlette.types import Scope

from tracker.server.logs import note
from tracker.server.recording import command_response


def command_name(args: Sequence[str]) -> str:
    """The words of `args` that name the command (`notify add`, `buy`): each a subcommand of
    the group before it, so no argument or option value is ever taken for one."""
    import click

    from tracker.cli.main import cli

    words: list[str] = []
    group: click.Command = cli
    ctx = click.Context(cli)
    for word in args:
        if not isinstance(group, click.Group):
            break
        found = group.get_command(ctx, word)
        if found is None:
            break
        words.append(found.name or word)
        group = found
    return " ".join(words)


def command_answer(scope: Scope, args: Sequence[str], result: dict[str, Any]) -> Response:
    """A command line's answer (`command_response`), with its name, its exit status and the
    rule that refused it (a 403's or 409's {error, rule}) noted on its request's line."""
    note(scope, action=command_name(args), exit=result.get("exit"))
    response = command_response(result)
    if response.status_code != 200:
        try:
            rule = json.loads(bytes(response.body)).get("rule")
        except (ValueError, AttributeError):
            rule = None
        note(scope, rule=rule if isinstance(rule, str) else None)
    return response
