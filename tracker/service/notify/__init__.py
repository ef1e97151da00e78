"""Turn hand-off notifications: the channels a campaign's players are told on, the outbox of
hand-offs written in the same transaction as the events that cause them, and the messages.

A hand-off is found by comparing who owes what (`Campaign.pending`, the source of `tracker
pending`) before and after an action. Delivery (the server's worker, `tracker notify test`)
reads the outbox; sending is done by a `Sender`, which tests swap for a fake.

Where each part lives: the tables in `tables`, the outbox's reads and writes in `outbox`, the
hand-offs and the application service's hook in `handoffs`, the words in `messages`, the
transports (webhook, SMTP) in `senders`, and delivery with its retries in `delivery`. Callers
import every name from this package.
"""

from tracker.service.notify.delivery import (
    Backoff,
    Outdated,
    Owed,
    TakenBack,
    deliver,
    deliver_due,
    remind,
    stale,
)
from tracker.service.notify.handoffs import (
    ITEM_KEYS,
    Before,
    HandoffPayload,
    Handoffs,
    PendingHandoff,
    approved,
    before,
    concerns,
    describe,
    handoff,
    override_requested,
    owed,
    still_owed,
    told_now,
    waited,
)
from tracker.service.notify.messages import (
    SINCE,
    CommandFor,
    EmailBody,
    Extras,
    email_body,
    message_body,
    message_text,
    override_lines,
    webhook_body,
)
from tracker.service.notify.outbox import Channel, Due, Outbox, Sent, Try
from tracker.service.notify.senders import (
    HttpSender,
    Sender,
    Senders,
    SendFailed,
    SmtpSender,
    SmtpSettings,
    is_address,
    is_http,
    normal_url,
    url_problem,
)
from tracker.service.notify.tables import (
    ADDED_CHANNEL_COLUMNS,
    FORMATS,
    OVERRIDE_VERSIONS,
    NotifyError,
    attempts_table,
    channels_table,
    ensure_tables,
    mask,
    metadata,
    outbox_table,
)

__all__ = [
    "Channel",
    "Due",
    "Sent",
    "Try",
    "ADDED_CHANNEL_COLUMNS",
    "FORMATS",
    "ITEM_KEYS",
    "OVERRIDE_VERSIONS",
    "SINCE",
    "Backoff",
    "Before",
    "CommandFor",
    "EmailBody",
    "Extras",
    "HandoffPayload",
    "Handoffs",
    "HttpSender",
    "NotifyError",
    "Outbox",
    "Outdated",
    "Owed",
    "PendingHandoff",
    "SendFailed",
    "Sender",
    "Senders",
    "SmtpSender",
    "SmtpSettings",
    "is_address",
    "is_http",
    "normal_url",
    "url_problem",
    "TakenBack",
    "approved",
    "attempts_table",
    "before",
    "channels_table",
    "concerns",
    "deliver",
    "deliver_due",
    "describe",
    "email_body",
    "ensure_tables",
    "handoff",
    "mask",
    "message_body",
    "message_text",
    "metadata",
    "outbox_table",
    "override_lines",
    "override_requested",
    "owed",
    "remind",
    "stale",
    "still_owed",
    "told_now",
    "waited",
    "webhook_body",
]
