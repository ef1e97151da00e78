"""A league round told by webhook and e-mail (issue 25): a real `tracker serve` on PostgreSQL,
three players (Germany, Britain, France) and a referee, each player with a webhook (a local
HTTP receiver) and an e-mail channel (a local SMTP server) added through the server. Play
passes between them, a convoy attack declared by Germany in Britain's phase included; each
player is told exactly when the game waits for them, on both channels, and by nothing else.
The clients only send actions: nobody asks the server what is pending."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import pytest

from tests.support import free_port, in_process, perform_until, served
from tests.test_notify import Receiver
from tracker.service.application import Tracker
from tracker.service.notify import Outbox

pytest.importorskip("starlette", reason="tracker serve needs the server extra")
smtpd = pytest.importorskip("aiosmtpd.controller", reason="the test extra's aiosmtpd")

NATIONS = {"anna": "Germany", "bert": "Britain", "cleo": "France"}
PLAYER_OF = {nation: name for name, nation in NATIONS.items()}


@pytest.fixture
def own_database(pg_url: str) -> Iterator[str]:
    """A PostgreSQL database of this test's own (beside the session's), dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(pg_url)
    name = f"{url.database}_league_{uuid.uuid4().hex[:6]}"
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Mailbox:
    """A local SMTP server (aiosmtpd) keeping each message by recipient."""

    def __init__(self) -> None:
        self.received: dict[str, list[Any]] = {}
        mailbox = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
                message = message_from_bytes(envelope.content, policy=policy.default)
                for rcpt in envelope.rcpt_tos:
                    mailbox.received.setdefault(rcpt, []).append(message)
                return "250 OK"

        self.port = free_port()
        self.controller = smtpd.Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> Mailbox:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()


def cli(db: str, *args: str) -> str:
    """A command on the database, run in this process (the server is the one real process)."""
    done = in_process("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def owing(campaign: Any) -> tuple[set[str], tuple[int, str]]:
    """The nations the game waits for (a choice, a roll, a phase end: what `tracker pending`
    lists for someone), and whose turn it is."""
    owed = {nation for i in campaign.pending(turn=True) for nation in i["waiting"]}
    return owed, (campaign.round, campaign.nation)


def told_now(before: Any, after: Any) -> set[str]:
    """The players the game now waits for that it did not wait for before the action."""
    newly = after[0] - before[0]
    if after[1] != before[1]:
        newly.add(after[1][1])
    return {PLAYER_OF[n] for n in newly if n in PLAYER_OF}


def next_action(campaign: Any, declared: list[int]) -> tuple[str, list[str]]:
    """Who acts next and the command they send, read from the game by the test (the players'
    clients are told by their messages)."""
    items = campaign.pending()
    if not items:
        return PLAYER_OF.get(campaign.nation, "ref"), ["next"]
    item = items[0]
    nation = item["waiting"][0]
    who = PLAYER_OF.get(nation, "ref")
    if item["kind"] == "convoy_open":
        if nation == "Germany" and campaign.nation == "Britain" and not declared:
            declared.append(1)
            return who, ["convoy", "declare", "--by", "Germany", "--zone", item["zone"]]
        return who, ["convoy", "pass", "--by", nation]
    if item["battle"] is not None and who != "ref":
        return who, ["convoy" if item["kind"] == "convoy" else "battle", "auto", str(item["battle"])]
    raise AssertionError(f"the round waits for what this test does not play: {item}")


def test_a_league_round_tells_each_player_by_webhook_and_e_mail_exactly_when_the_game_waits_for_them(
    own_database: str, tmp_path: Path
) -> None:
    db = own_database
    cli(db, "new", "league", "--scenario", "north-sea-1914", "--dice", "auto")
    tokens = {name: cli(db, "--campaign", "league", "players", "add", name, "--nations", nation).split()[-1]
              for name, nation in NATIONS.items()}  # fmt: skip
    tokens["ref"] = cli(db, "--campaign", "league", "players", "add", "ref", "--referee").split()[-1]
    with Tracker(db) as t:
        cid = t.campaign_id("league")
        # Germany's turn is played before the league is told anything: the round starts in
        # Britain's last phase, so play passes to Germany (the convoy attack), France and back.
        perform_until(t, cid, "Britain", "placement")
    env = {"TRACKER_NOTIFY_POLL": "0.05", "TRACKER_NOTIFY_BACKOFF": "0.05,0.2,8"}
    receivers = {name: Receiver() for name in NATIONS}
    with Mailbox() as mail, receivers["anna"], receivers["bert"], receivers["cleo"]:
        smtp = ["--smtp-host", "127.0.0.1", "--smtp-port", str(mail.port), "--smtp-from", "referee@example.org"]
        with served(db, *smtp, workdir=tmp_path, env=env) as server:

            def send(who: str, *args: str) -> dict[str, Any]:
                got, body = server.post("/api/command", {"args": list(args), "campaign": "league"}, tokens[who])
                assert got == 200 and body["exit"] == 0, (who, args, body)
                return body

            for name, receiver in receivers.items():
                send(name, "notify", "add", "webhook", receiver.url)
                # France plays by file: its e-mail carries the export since it last acted.
                by_file = ["--attach-export"] if name == "cleo" else []
                send(name, "notify", "add", "email", f"{name}@example.org", *by_file)
            expected: dict[str, int] = {name: 0 for name in NATIONS}
            declared: list[int] = []
            with Tracker(db) as t:
                outbox = Outbox(t.engine)
                for _ in range(200):
                    campaign = t.load(cid)
                    if campaign.round == 2:
                        break
                    before = owing(campaign)
                    who, args = next_action(campaign, declared)
                    send(who, *args)
                    for name in told_now(before, owing(t.load(cid))):
                        expected[name] += 1
                    # Everything the action handed off is delivered before the next one.
                    deadline = time.monotonic() + 60
                    while any(r["status"] == "pending" for r in outbox.log(str(cid))):
                        assert time.monotonic() < deadline, "the server did not deliver"
                        time.sleep(0.05)
                    for name, receiver in receivers.items():
                        assert len(receiver.accepted) == expected[name], (name, args)
                        assert len(mail.received.get(f"{name}@example.org", [])) == expected[name], (name, args)
                log = server.log()
    assert declared and campaign.round == 2 and campaign.nation == "Germany"
    # Each was waited for at least once, and every message is about that player's nation.
    assert all(count > 0 for count in expected.values()), expected
    for name, receiver in receivers.items():
        nation = NATIONS[name]
        for body in receiver.accepted:
            assert nation in body["newly_owing"] or ("turn" in body["reasons"] and body["nation"] == nation)
        for message in mail.received[f"{name}@example.org"]:
            assert message["To"] == f"{name}@example.org"
    bert = [b for b in receivers["bert"].accepted if any(i["kind"] == "convoy" for i in b["pending"])]
    assert bert and "Waiting for Britain: " in bert[0]["text"]
    # The e-mail sums up what happened since the player last acted: Germany's declaration.
    declared_mail = mail.received["bert@example.org"][0]
    text = declared_mail.get_body(preferencelist=("plain",)).get_content()
    lines = text.splitlines()
    since = lines[lines.index("Since you last acted:") + 1 :]
    assert since and all(line.startswith("- ") for line in since)
    assert "Germany" in since[0] and "convoy" in since[0]
    assert "<ul><li>" in declared_mail.get_body(preferencelist=("html",)).get_content()
    (export,) = list(mail.received["cleo@example.org"][0].iter_attachments())
    assert export.get_filename().startswith("league-since-")
    assert json.loads(export.get_content().splitlines()[0])["campaign"] == "league"
    assert [a for m in mail.received["anna@example.org"] for a in m.iter_attachments()] == []
    # The clients only sent actions (POST /api/command): nobody read the game through the server.
    assert "GET /api/campaigns" not in log and "/pending" not in log
    delivered = json.loads(cli(db, "--campaign", "league", "notify", "log", "--json"))
    assert delivered and all(r["status"] == "delivered" and r["attempts"] == 1 for r in delivered)
