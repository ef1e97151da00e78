"""What a group meets adding and testing notification channels with hostile or careless input:
a mention that would not fit its column (PostgreSQL refused it with a traceback's words) or
breaks `notify list`, a webhook whose secret is its query (shown by `notify list`), an address
or port nothing can ever deliver to, and a test message the server's worker took first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.test_notify import Receiver
from tracker.cli.main import cli
from tracker.service.notify import Outbox, Senders, deliver_due, is_address, mask, url_problem
from tracker.service.notify.delivery import Backoff


def run(db: str, campaign: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", campaign, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def campaign(db_url: str, unique_name: str) -> tuple[str, str]:
    """A campaign on SQLite and on PostgreSQL: (database, name)."""
    result = CliRunner().invoke(cli, ["--db", db_url, "new", unique_name, "--scenario", "north-sea-1914"])
    assert result.exit_code == 0, result.output
    return db_url, unique_name


@pytest.mark.parametrize("mention", ["<@1>" * 60, "<@1>\n@everyone", "<@1>\x1b[2J"])
def test_a_mention_too_long_or_not_one_line_is_refused_in_one_line_and_nothing_is_added(
    campaign: tuple[str, str], mention: str
) -> None:
    """On PostgreSQL a mention over 200 characters was "unexpected DataError: value too long";
    on SQLite it and one with a line break were kept, and `notify list` printed it over lines."""
    db, name = campaign
    out = run(db, name, "notify", "add", "webhook", "https://hooks.example/x", "--mention", mention, code=2)
    assert out.startswith("Error: --mention is one line of at most 200 characters"), out
    assert len(out.strip().splitlines()) == 1, out
    assert json.loads(run(db, name, "notify", "list", "--json")) == []


def test_a_mention_of_200_characters_is_kept(campaign: tuple[str, str]) -> None:
    db, name = campaign
    mention = "<@123456789012345678>" * 9 + "x" * 11
    assert len(mention) == 200
    run(db, name, "notify", "add", "webhook", "https://hooks.example/x", "--mention", mention)
    (channel,) = json.loads(run(db, name, "notify", "list", "--json"))
    assert channel["mention"] == mention


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example?token=SECRET",
        "https://hooks.example:8443?token=SECRET",
        "https://hooks.example#SECRET",
        "https://bot:SECRET@hooks.example?x=1",
    ],
)
def test_a_webhook_whose_secret_is_its_query_is_listed_without_it(tmp_path: Path, url: str) -> None:
    """A URL without a path was shown whole up to its first "/": its query too."""
    db = str(tmp_path / "c.db")
    CliRunner().invoke(cli, ["--db", db, "new", "c1", "--scenario", "north-sea-1914"])
    run(db, "c1", "notify", "add", "webhook", url)
    listed = run(db, "c1", "notify", "list")
    assert "SECRET" not in listed and "hooks.example" in listed, listed
    assert "SECRET" not in mask(url)


def test_an_address_longer_than_smtp_carries_is_refused() -> None:
    """Accepted, it was refused by the SMTP server at every attempt of every message."""
    assert is_address("anna@" + "b" * 240 + ".org")
    assert not is_address("anna@" + "b" * 250 + ".org")
    assert not is_address("a" * 65 + "@example.org")
    assert is_address("a" * 64 + "@example.org")


def test_a_webhook_on_port_0_is_refused() -> None:
    assert url_problem("http://hooks.example:0/x") == "names port 0, where nothing answers"
    assert url_problem("http://hooks.example:1/x") is None


def test_notify_test_is_sent_by_the_command_even_while_a_server_delivers(tmp_path: Path, monkeypatch: Any) -> None:
    """A server's worker reading the outbox between the test message's write and the
    command's own attempt took it: the command said "did not take the test message: taken by
    another worker" (exit 1) for a message that was then sent."""
    db = str(tmp_path / "c.db")
    CliRunner().invoke(cli, ["--db", db, "new", "c1", "--scenario", "north-sea-1914"])
    worker_sent: list[Any] = []

    class Worker:
        def send(self, channel: Any, body: Any) -> str:
            worker_sent.append(body)
            return "HTTP 200"

    enqueue = Outbox.enqueue_test

    def and_a_worker_pass(self: Outbox, *args: Any, **kwargs: Any) -> int:
        number = enqueue(self, *args, **kwargs)
        # The server's worker polls now, as it may at any moment.
        deliver_due(Outbox(self.engine), Worker(), lambda item: None, Backoff())
        return number

    monkeypatch.setattr(Outbox, "enqueue_test", and_a_worker_pass)
    with Receiver() as receiver:
        run(db, "c1", "notify", "add", "webhook", receiver.url)
        out = run(db, "c1", "notify", "test", "1")
    assert out.startswith("Test message delivered to channel 1"), out
    assert len(receiver.accepted) == 1 and worker_sent == []
    (line,) = run(db, "c1", "notify", "log").splitlines()
    assert line.endswith("test  delivered  attempts 1"), line


PAYLOAD = {
    "campaign": "autumn", "title": "The North Sea, autumn 1914", "round": 1, "phase": "naval_combat",
    "nation": "Germany", "reasons": ["owed"], "newly_owing": ["Britain"], "pending": [],
}  # fmt: skip


@pytest.mark.parametrize(
    ("mention", "allowed"),
    [
        ("<@42>", {"parse": [], "users": ["42"]}),
        ("<@!42>, <@43>:", {"parse": [], "users": ["42", "43"]}),
        ("<@&77>", {"parse": [], "users": [], "roles": ["77"]}),
        ("<@&77> <@42>", {"parse": [], "users": ["42"], "roles": ["77"]}),
        ("@here", {"parse": ["everyone"], "users": []}),
        ("<@42>,", {"parse": [], "users": ["42"]}),
        (None, {"parse": [], "users": []}),
    ],
)
def test_a_discord_channels_own_mention_pings_users_roles_or_everyone_by_their_ids(
    mention: str | None, allowed: dict[str, Any]
) -> None:
    """A role's mention (<@&ID>) never pinged, and a mention followed by punctuation ("<@42>,")
    sent "42>," as a user id, which Discord refuses, message after message."""
    from tracker.service.notify import webhook_body

    body = webhook_body("discord", "round 1", PAYLOAD, mention)
    assert body["allowed_mentions"] == allowed


class Recorder:
    """A sender that records each message with the channel row it was sent for."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], Any]] = []

    def send(self, channel: Any, body: Any) -> str:
        self.sent.append((dict(channel), body))
        return "HTTP 200"


def test_a_channel_number_used_again_on_sqlite_never_inherits_a_removed_channels_messages(tmp_path: Path) -> None:
    """SQLite hands a removed row's id out again: campaign b's new channel 1, with reminders,
    was sent campaign a's message told to a's removed channel 1, and listed its log."""
    import time

    from tests.support import perform_advance
    from tracker.service.application import Tracker

    db = str(tmp_path / "c.db")
    for name in ("a", "b"):
        CliRunner().invoke(cli, ["--db", db, "new", name, "--scenario", "north-sea-1914"])
    run(db, "a", "notify", "add", "webhook", "https://a.example/hook")
    with Tracker(db) as t:
        cid = t.campaign_id("a")
        while t.load(cid).nation == "Germany":
            perform_advance(t, cid)
        outbox = Outbox(t.engine)
        recorder = Recorder()
        assert deliver_due(outbox, recorder, lambda item: None, Backoff()) >= 1
        run(db, "a", "notify", "remove", "1")
        out = run(db, "b", "notify", "add", "webhook", "https://b.example/hook", "--remind", "1m")
        (b_channel,) = json.loads(run(db, "b", "notify", "list", "--json"))
        assert out.startswith(f"Channel {b_channel['id']}:")
        recorder.sent.clear()
        deliver_due(
            outbox, recorder, lambda item: None, Backoff(), now=time.time() + 3600, owed_still=lambda r, p: True
        )
        assert recorder.sent == []
    assert run(db, "b", "notify", "log") == "No messages yet.\n"


def test_a_message_after_a_removed_channels_unsent_one_starts_with_no_attempts(tmp_path: Path) -> None:
    """Removing a channel deleted its unsent messages but not their attempts: the next message,
    which SQLite numbers as the deleted one was, listed that message's failed attempts."""
    from tracker.service.application import Tracker

    db = str(tmp_path / "c.db")
    CliRunner().invoke(cli, ["--db", db, "new", "c1", "--scenario", "north-sea-1914"])
    with Receiver(refuse=1) as receiver:
        run(db, "c1", "notify", "add", "webhook", receiver.url)
        # A message with a failed attempt, still to be tried again (a failed `notify test` is
        # not: given up at once).
        with Tracker(db) as t:
            outbox = Outbox(t.engine)
            outbox.enqueue_test(str(t.campaign_id("c1")), 1, PAYLOAD)
            assert deliver_due(outbox, Senders(), lambda item: None, Backoff()) == 0
        assert json.loads(run(db, "c1", "notify", "log", "--json"))[0]["status"] == "pending"
        run(db, "c1", "notify", "remove", "1")
        again = json.loads(run(db, "c1", "notify", "add", "webhook", receiver.url, "--json"))["id"]
        run(db, "c1", "notify", "test", str(again))
    (row,) = json.loads(run(db, "c1", "notify", "log", "--json"))
    assert row["status"] == "delivered" and row["attempts"] == 1
    assert [t["ok"] for t in row["tries"]] == [True]


def test_a_read_only_database_lists_its_channels_and_log_and_refuses_a_new_channel(tmp_path: Path) -> None:
    """A backup or shared copy answers the reading commands: `notify list` and `notify log`
    were refused as if they recorded something."""
    import os
    import stat

    db = tmp_path / "c.db"
    CliRunner().invoke(cli, ["--db", str(db), "new", "c1", "--scenario", "north-sea-1914"])
    with Receiver() as receiver:
        run(str(db), "c1", "notify", "add", "webhook", receiver.url)
        run(str(db), "c1", "notify", "test", "1")
    listed = run(str(db), "c1", "notify", "list")
    logged = run(str(db), "c1", "notify", "log")
    before = db.read_bytes()
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        assert run(str(db), "c1", "notify", "list") == listed
        assert run(str(db), "c1", "notify", "log") == logged
        refused = run(str(db), "c1", "notify", "add", "webhook", "https://hooks.example/x", code=2)
        assert "read-only" in refused and len(refused.strip().splitlines()) == 1
    finally:
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert db.read_bytes() == before and not os.path.exists(f"{db}-wal")


def test_an_address_whose_domain_is_not_ascii_is_sent_as_the_mail_system_writes_it() -> None:
    """`bert@münchen.example` was accepted, then refused by every SMTP server without SMTPUTF8
    (SMTPNotSupportedError), attempt after attempt until given up: the domain goes as IDNA."""
    smtpd = pytest.importorskip("aiosmtpd.controller", reason="the test extra's aiosmtpd")
    from tests.support import free_port
    from tracker.service.notify.senders import SmtpSender, SmtpSettings

    received: list[Any] = []

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
            received.append(envelope.rcpt_tos)
            return "250 OK"

    port = free_port()
    controller = smtpd.Controller(Handler(), hostname="127.0.0.1", port=port, enable_SMTPUTF8=False)
    controller.start()
    try:
        sender = SmtpSender(SmtpSettings("127.0.0.1", port, "referee@example.org", timeout=5))
        body = {"subject": "round 1", "text": "It is your turn.", "html": "<p>It is your turn.</p>"}
        assert sender.send({"target": "bert@m\u00fcnchen.example"}, body) == "SMTP 250"
    finally:
        controller.stop()
    assert received == [["bert@xn--mnchen-3ya.example"]]


@pytest.mark.parametrize(
    "environ",
    [
        {"TRACKER_NOTIFY_BACKOFF": "abc"},
        {"TRACKER_NOTIFY_BACKOFF": "1,2"},
        {"TRACKER_NOTIFY_BACKOFF": "-1,5,3"},
        {"TRACKER_NOTIFY_BACKOFF": "5,1,3"},
        {"TRACKER_NOTIFY_BACKOFF": "1,5,2.5"},
        {"TRACKER_NOTIFY_POLL": "nan"},
        {"TRACKER_NOTIFY_POLL": "-1"},
    ],
)
def test_the_delivery_settings_from_the_environment_are_checked(environ: dict[str, str]) -> None:
    """`TRACKER_NOTIFY_BACKOFF=abc` stopped `tracker serve` with "unexpected ValueError: not
    enough values to unpack"; a negative value retried at once, or gave up at once."""
    from domain.errors import InputError
    from tracker.server.delivery import DeliverySettings

    with pytest.raises(InputError, match="TRACKER_NOTIFY_"):
        DeliverySettings.from_env(environ)
    assert DeliverySettings.from_env({"TRACKER_NOTIFY_BACKOFF": "0.05,0.2,8", "TRACKER_NOTIFY_POLL": "0.5"}).poll == 0.5


def test_a_receiver_that_hangs_holds_up_its_own_channel_alone(tmp_path: Path) -> None:
    """The worker sent one message at a time, each waiting for its receiver up to the timeout:
    one webhook that hung held up every other channel, of every campaign. Channels are now sent
    to side by side (each one's messages in order)."""
    import threading

    from tests.test_notify import QUICK, SendFailed, britain_next, due
    from tracker.server.delivery import DeliverySettings, Worker
    from tracker.service.application import Tracker

    db = str(tmp_path / "c.db")
    others_told = threading.Event()

    class Receivers:
        sent: list[int] = []

        def send(self, channel: Any, body: Any) -> str:
            if channel["channel_id"] == hanging:
                # The hanging receiver answers only once the other channel was told; sent one
                # after the other, it gave up first (as a real one times out).
                if not others_told.wait(timeout=3):
                    raise SendFailed("timed out")
            else:
                others_told.set()
            self.sent.append(channel["channel_id"])
            return "HTTP 200"

    with Tracker(db) as t:
        cid = t.create("c1", "north-sea-1914").id
        outbox = Outbox(t.engine)
        britain_next(t, cid)
        hanging = outbox.add(str(cid), "webhook", "http://127.0.0.1:9/hangs", "json", None, None)
        quick = outbox.add(str(cid), "webhook", "http://127.0.0.1:9/quick", "json", None, None)
        t.perform(cid, "next", {})
        assert {r["channel_id"] for r in due(outbox, cid)} == {hanging, quick}
        sender = Receivers()
        worker = Worker(t.engine, DeliverySettings(sender=sender, backoff=QUICK))
        try:
            assert worker.step() == 2
        finally:
            worker.close()
    assert sorted(sender.sent) == sorted([hanging, quick])


def test_a_read_only_database_lists_its_players_and_refuses_a_new_one(tmp_path: Path) -> None:
    """`players list` was refused on a read-only copy ("it can be read, not recorded to"),
    though it records nothing."""
    import stat

    db = tmp_path / "c.db"
    CliRunner().invoke(cli, ["--db", str(db), "new", "c1", "--scenario", "north-sea-1914"])
    run(str(db), "c1", "players", "add", "anna", "--nations", "Germany")
    listed = run(str(db), "c1", "players", "list")
    before = db.read_bytes()
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        assert run(str(db), "c1", "players", "list") == listed == "anna: Germany\n"
        refused = run(str(db), "c1", "players", "add", "bert", "--nations", "Britain", code=2)
        assert "read-only" in refused
    finally:
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert db.read_bytes() == before
