"""The messages of a hand-off: their words, a webhook's JSON in each format and an e-mail's
subject and parts, and what is sent for one outbox row."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict
from urllib.parse import quote

from domain.text import phase_name, possessive
from tracker.service.describe import naming_campaign, recorder
from tracker.service.notify.senders import is_http

# The command that answers a `pending` item (the command line's `next_command`).
CommandFor = Callable[[dict[str, Any]], str | None]


def message_text(payload: Mapping[str, Any], command_for: CommandFor, public_url: str | None) -> str:
    """The message's words: campaign and title, round, phase and nation, who is waited for and
    for what, the commands that answer, and the viewer's link when the server knows its URL."""
    head = f"{payload['title']} ({payload['campaign']})"
    if payload.get("test"):
        head = f"Test message from {head}"
    if payload.get("reminder"):
        head = f"Reminder: {head}"
    lines = [f"{head}: round {payload['round']} · {payload['nation']} · {phase_name(payload['phase'])}"]
    if payload.get("moved_on"):
        # Sent late (see `tracker.service.notify.delivery.prepare`): what it lists was owed then.
        pending = f"tracker --campaign {shlex.quote(payload['campaign'])} pending"
        lines.append(f"The game has moved on since this was written: `{pending}` says what it waits for now.")
    lines += override_lines(payload, public_url)
    if "seed" in payload["reasons"]:
        lines.append("The round's dice seed was revealed.")
    if "turn" in payload["reasons"]:
        lines.append(f"It is now {possessive(payload['nation'])} turn.")
    if payload.get("relieved"):
        lines.append(f"An undo took back what was waited for from {', '.join(payload['relieved'])}: nothing now.")
    for item in payload["pending"]:
        who = ", ".join(item.get("waiting") or [])
        text = str(item["text"])
        if item.get("kind") == "turn":
            # A phase end's words name whom it waits for already ("waiting for Germany to ...").
            lines.append(text[:1].upper() + text[1:])
        else:
            lines.append(f"Waiting for {who}: {text}" if who else text)
        command = command_for(item)
        if command:
            # NC3: a volley several nations are waited for is recorded once, by one of them; told
            # to each player, each typed it on their own copy, and the copies forked.
            records = recorder(item)
            label = f"next ({records})" if records else "next"
            lines.append(f"  {label}: {naming_campaign(command, payload['campaign'])}")
    if not payload["pending"]:
        campaign = shlex.quote(payload["campaign"])
        lines.append(f"Nothing pending: the phase may end (tracker --campaign {campaign} next).")
    if public_url:
        lines.append(f"{public_url.rstrip('/')}/campaigns/{_segment(payload['campaign'])}/board")
    return "\n".join(lines)


def _segment(name: str) -> str:
    """A campaign's name in the viewer's URL, as `tracker.server.paths.name_segment` writes it
    (which this layer may not import): "." and ".." with a trailing %20, else percent-encoded."""
    return quote(name, safe="") + ("%20" if name in (".", "..") else "")


def override_lines(payload: Mapping[str, Any], public_url: str | None) -> list[str]:
    """What a message says of an override request (RK3) made or approved."""
    override = payload.get("override")
    if not override:
        return []
    number, asker = override["id"], override["requested_by"]
    if "approved" in payload["reasons"]:
        return [f"Override request {number} by {asker} was approved by {override['approved_by']} and recorded."]
    command = naming_campaign(f"tracker approve {number}", payload["campaign"])
    if public_url:
        # The server as its players know it; without --public-url it is left out, as every
        # other command a message names leaves it out (TRACKER_SERVER in the player's shell
        # names it), rather than a placeholder that fails when pasted.
        command = command.replace("tracker ", f"tracker --server {shlex.quote(public_url.rstrip('/'))} ", 1)
    return [
        f"Override request {number} by {asker} needs the agreement of {', '.join(override['agreed_by'])}: "
        f"{override['reason'] or 'no reason given'}",
        f"  next: {command}",
    ]


def webhook_body(
    fmt: str, text: str, payload: Mapping[str, Any], mention: str | None, key: str | None = None
) -> dict[str, Any]:
    """The JSON a webhook posts. `json`: {"text", "message_id", "campaign", "title", "round",
    "phase", "nation", "reasons", "newly_owing", "pending", "test"}, with "reminder" or
    "moved_on" (sent late, see `message_text`) where they are true (the hand-off and its words;
    `message_id`, the row's `key`, see `message_key`, where one is given). Discord's and
    Slack's bodies carry the words alone: neither webhook takes an id that would make it
    drop a message posted twice."""
    if fmt == "slack":
        # Slack reads "<...>" as a link or a ping (<!channel>) and "&" as an entity: a zone or
        # nation named so must show as written (its API asks for these three escaped).
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if mention:
        text = f"{mention} {text}"
    if fmt == "discord":
        return {"content": fit(text, DISCORD_LIMIT), "allowed_mentions": _discord_mentions(mention or "")}
    if fmt == "slack":
        return {"text": fit(text, SLACK_LIMIT)}
    named = {"message_id": key} if key else {}
    told = {k: v for k, v in payload.items() if k != "test"}
    return {"text": text, **named, **told, "test": bool(payload.get("test"))}


# The most characters a message's text may have: Discord refuses a longer `content` (HTTP
# 400), Slack cuts a longer `text` at its end. A `json` webhook (the group's own receiver) and
# an e-mail have no such limit.
DISCORD_LIMIT = 2000
SLACK_LIMIT = 40_000
# What a shortened line ends with, and the shortest a line is cut to before lines are dropped.
CUT = "…"
SHORTEST = 40
# The end of a line cut inside one of Slack's escapes (`&amp;`, `&lt;`, `&gt;`).
_BROKEN_ESCAPE = re.compile(r"&[a-z]{0,3}$")


def fit(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, its first line and its commands kept whole: the
    `next:` lines and the viewer's link come last, and a plain cut at the end lost them. The
    other lines (what is waited for, in words) are each cut to one width, ending with `CUT`;
    when even `SHORTEST` does not fit, they are left out from the last one up, and then the
    commands from the first one down, a line after the first saying how many went."""
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    kept = [i == 0 or _essential(line) for i, line in enumerate(lines)]
    free = [len(line) for line, keep in zip(lines, kept, strict=True) if not keep]
    fixed = sum(len(line) for line, keep in zip(lines, kept, strict=True) if keep) + len(lines) - 1

    def fits(width: int) -> bool:
        return fixed + sum(min(n, width) for n in free) <= limit

    low, high = SHORTEST, max(free, default=0)
    if free and fits(low):
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle) else (low, middle - 1)
        return "\n".join(line if keep else _cut(line, low) for line, keep in zip(lines, kept, strict=True))
    shown = [line if keep else _cut(line, SHORTEST) for line, keep in zip(lines, kept, strict=True)]
    rest = range(1, len(lines))
    order = [i for i in reversed(rest) if not kept[i]] + [i for i in rest if kept[i]]
    size = sum(len(line) + 1 for line in shown)
    for count, i in enumerate(order, 1):
        # Counted as it goes: joined each time, a long Slack message took a second.
        size -= len(shown[i]) + 1
        marker = f"{CUT} ({count} line{'' if count == 1 else 's'} left out: too long for this channel)"
        if size + len(marker) <= limit:
            gone = set(order[:count])
            return "\n".join([shown[0], marker, *(shown[j] for j in rest if j not in gone)])
    # The first line alone is too long (a title and a mention at their longest).
    return _cut(shown[0], limit)


def _essential(line: str) -> bool:
    """A line a shortened message keeps whole: a command to answer, or the viewer's link."""
    return bool(_NEXT.fullmatch(line)) or is_http(line) or "tracker --campaign " in line


def _cut(line: str, width: int) -> str:
    """`line` in at most `width` characters, ending with `CUT` when it was longer."""
    if len(line) <= width:
        return line
    return _BROKEN_ESCAPE.sub("", line[: width - len(CUT)].rstrip()) + CUT


def _discord_mentions(mention: str) -> dict[str, Any]:
    """Discord's `allowed_mentions`: only the channel's own mention pings (its users, its roles,
    @everyone or @here), never a name in a unit's text; each id as Discord writes it, digits
    only (anything else makes Discord refuse every message)."""
    allowed: dict[str, Any] = {
        "parse": ["everyone"] if re.search(r"@(everyone|here)\b", mention) else [],
        "users": re.findall(r"<@!?(\d+)>", mention),
    }
    roles = re.findall(r"<@&(\d+)>", mention)
    if roles:
        allowed["roles"] = roles
    return allowed


SINCE = "Since you last acted:"
# A command line of a message: "  next: COMMAND", or "  next (Germany): COMMAND" where one of
# the nations waited for records it (a nation's name holds no ":").
_NEXT = re.compile(r"  (next(?: \([^:]*\))?): (.*)")


class _EmailParts(TypedDict):
    subject: str
    text: str
    html: str


# total=False on a subclass, as NotRequired in a string annotation reads as required on 3.11.
class EmailBody(_EmailParts, total=False):
    """An e-mail's subject and parts (`email_body`), and the file `message_body` attaches."""

    attachment: tuple[str, bytes]  # (file name, bytes): see `Extras`
    key: str  # names the message in its Message-ID: see `message_key`


def email_body(text: str, payload: Mapping[str, Any], since: Sequence[str] = ()) -> EmailBody:
    """An e-mail's subject and its text and HTML parts (the same words), with the summary of
    what happened since the player last acted (`since`, see `tracker.server.delivery`) in both."""
    import html

    # The campaign's name too: two campaigns of one scenario share its title, and a mailbox
    # lists (and threads) by subject.
    title, campaign = payload["title"], payload.get("campaign", payload["title"])
    where = title if title == campaign else f"{title} ({campaign})"
    subject = f"[{where}] round {payload['round']} · {payload['nation']} · {phase_name(payload['phase'])}"
    if payload.get("test"):
        subject = f"Test: {subject}"
    if payload.get("reminder"):
        subject = f"Reminder: {subject}"
    paragraphs = []
    for line in text.splitlines():
        command = _NEXT.fullmatch(line)
        if command:
            label, typed = command.groups()
            paragraphs.append(f"<p>{html.escape(label)}: <code>{html.escape(typed)}</code></p>")
        elif is_http(line):
            paragraphs.append(f'<p><a href="{html.escape(line)}">{html.escape(line)}</a></p>')
        else:
            paragraphs.append(f"<p>{html.escape(line)}</p>")
    if since:
        text = "\n".join([text, "", SINCE, *(f"- {line}" for line in since)])
        items = "".join(f"<li>{html.escape(line)}</li>" for line in since)
        paragraphs.append(f"<p>{SINCE}</p><ul>{items}</ul>")
    return {"subject": subject, "text": text, "html": "<html><body>" + "".join(paragraphs) + "</body></html>"}


# What a row's e-mail adds to its message, made by the server that sends it: {"since": the
# summary lines, "attachment": (file name, bytes)} (see `tracker.server.delivery`).
Extras = Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]]


def message_body(
    row: Mapping[str, Any],
    payload: Mapping[str, Any],
    command_for: CommandFor,
    public_url: str | None,
    extras: Extras | None = None,
) -> dict[str, Any] | EmailBody:
    """What is sent for one row: a webhook's JSON, or an e-mail's parts (with `extras`)."""
    text = message_text(payload, command_for, public_url)
    if row["kind"] != "email":
        return webhook_body(row["format"], text, payload, row["mention"], message_key(row, payload))
    more = extras(row, payload) if extras is not None else {}
    if more.get("attachment"):
        # By file, the command that answers acts on the player's own copy: run on a copy without
        # the attached events, it records a fork.
        first, _, rest = text.partition("\n")
        name = shlex.quote(more["attachment"][0])
        text = f"{first}\nImport the attached file first: tracker import {name}" + (f"\n{rest}" if rest else "")
    body = email_body(text, payload, more.get("since", ()))
    if more.get("attachment"):
        body["attachment"] = more["attachment"]
    body["key"] = message_key(row, payload)
    return body


def message_key(row: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
    """What names one row's message (an e-mail's Message-ID, a `json` webhook's `message_id`),
    the same at every attempt (a server killed after the SMTP server or the webhook took a
    message, before it was marked delivered, sends it again: mailboxes then see one message,
    not two, and a bot can drop the second) and another for each reminder; it tells nothing
    of the campaign."""
    import hashlib

    parts = [str(row.get("campaign_id")), str(row.get("id")), repr(row.get("created_at"))]
    if payload.get("reminder"):
        # A reminder's row holds when the one before it went (or the hand-off itself).
        parts.append(repr(row.get("next_attempt_at")))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
