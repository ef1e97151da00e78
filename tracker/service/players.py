"""Players of a served campaign and their tokens (PL1, PL2), who may read a campaign (its
players, its spectators, anyone once it is public), and override requests (RK3).

A player belongs to one campaign and holds one token: `trk_<id>_<secret>`; a league referee
belongs to every campaign of the database (and may create new ones through the server). A
spectator is a player of no nation: their token reads the campaign and acts for nobody. The
id finds the row; only the SHA-256 of the secret is stored (`sha256:<hex>`), compared in
constant time, so a copy of the database gives nobody a working token. The secret is 256
random bits, so a salt or a slow hash would add nothing against guessing, and a cheap check
leaves a server no work an anonymous client could pile on. Rows written before kept a salted
scrypt hash: the first time such a token is used, it is checked against that hash once and
the row is rewritten with the SHA-256 form. Revoking keeps the row (events name the player)
and kills the token. These tables live in the campaign database, managed by whoever
administers it (`tracker players ...`, `tracker campaign public`); the server reads them,
and records the override requests and approvals made through it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from domain.errors import InputError, RuleViolation, TrackerError
from tracker.service.shapes import OverrideRequest, PlayerListed

metadata = MetaData()
players_table = Table(
    "tracker_players",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("name", String(100), primary_key=True),
    Column("nations", Text, nullable=False),  # JSON list
    Column("referee", Boolean, nullable=False, default=False),
    Column("token_id", String(32), nullable=False, unique=True),
    Column("salt", String(64), nullable=False),
    Column("token_hash", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), server_default=func.now()),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    sqlite_with_rowid=False,
)
requests_table = Table(
    "tracker_override_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False, index=True),
    Column("requested_by", String(100), nullable=False),
    Column("nations", Text, nullable=False),  # JSON: whose actions or rolls it concerns
    Column("agreed_by", Text, nullable=False),  # JSON: the nations whose agreement it names
    Column("reason", Text, nullable=False),
    Column("command", Text, nullable=False),  # JSON: what was asked, to run once approved
    Column("seen", Integer, nullable=False),  # the campaign's version when it was asked
    Column("requested_at", DateTime(timezone=True), server_default=func.now()),
    Column("approved_by", String(100), nullable=True),
    Column("approved_at", DateTime(timezone=True), nullable=True),
    Column("recorded_at_event", Integer, nullable=True),
)
# Campaigns anyone may read without a token (`tracker campaign public on`).
public_table = Table(
    "tracker_public_campaigns",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("made_public_by", String(100), nullable=True),
    Column("made_public_at", DateTime(timezone=True), server_default=func.now()),
    sqlite_with_rowid=False,
)

TOKEN_PREFIX = "trk"
# How a token's hash is stored: the SHA-256 of its secret, marked so that a row written before
# (a salted scrypt hash, bare hex) is told apart and upgraded on first use.
DIGEST_PREFIX = "sha256:"
# The cost of the scrypt hashes of rows written before: only ever checked once per token.
SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
MAX_NAME = 100
# The campaign id of a league referee's row: the referee of every campaign in the database.
LEAGUE = "*"
# The key of PostgreSQL's advisory lock held while a player is added (`Players.add`).
PG_PLAYERS_LOCK = 0x74726B70


class Unauthenticated(TrackerError):
    """An action without a valid token (HTTP 401)."""


class Forbidden(RuleViolation):
    """A player acting for a nation not theirs, or doing what only the referee does (HTTP 403, PL2)."""

    def __init__(self, reason: str) -> None:
        super().__init__("PL2", reason)


@dataclass(frozen=True)
class Player:
    """Who holds a token: the nations they act for, or every nation as the referee (PL2)."""

    campaign_id: str
    name: str
    nations: tuple[str, ...]
    referee: bool

    @property
    def league(self) -> bool:
        """The league's referee: referee of every campaign, and creates campaigns (PL2)."""
        return self.campaign_id == LEAGUE and self.referee

    @property
    def spectator(self) -> bool:
        """A player of no nation: reads the campaign (or, for the league, every campaign), acts for nobody."""
        return not self.referee and not self.nations

    def plays_in(self, campaign_id: str) -> bool:
        return self.campaign_id in (LEAGUE, campaign_id)

    def may_act_for(self, nation: str) -> bool:
        return self.referee or nation in self.nations

    def describe(self) -> str:
        if self.league:
            return "the league's referee"
        if self.spectator:
            return "the league's spectator" if self.campaign_id == LEAGUE else "spectator"
        return "referee" if self.referee else ", ".join(self.nations)


def token_digest(secret: str) -> str:
    """What is stored of a token's secret."""
    return DIGEST_PREFIX + hashlib.sha256(secret.encode()).hexdigest()


def _scrypt(secret: str, salt: str) -> str:
    return hashlib.scrypt(secret.encode(), salt=bytes.fromhex(salt), **SCRYPT).hex()


def check_player_name(name: str) -> str:
    # NFC: a name typed with combining accents ('u' and U+0308, as some systems send it) is
    # the same name as with 'ü', and its accents are no "letters" of their own to refuse.
    name = unicodedata.normalize("NFC", name.strip())
    if not name or len(name) > MAX_NAME or not all(ch.isalnum() or ch in "-_. " for ch in name):
        raise InputError(f"a player name has 1 to {MAX_NAME} letters, digits, spaces or -_. (got {name[:120]!r})")
    return name


def name_key(name: str) -> str:
    """A player's name as lookups compare it (PL1): spaces around it, its Unicode form and its
    case aside, so `alice` typed at a table finds `Alice` as `players add` registered her."""
    return unicodedata.normalize("NFC", name.strip()).casefold()


def pick_name(typed: str, names: Sequence[str]) -> str | None:
    """Which of `names` (registered spellings) a name as typed means (PL1): the one spelled so,
    else the one that differs from it only by case; None when none does. Two that differ from
    it only by case are refused, naming both."""
    exact = unicodedata.normalize("NFC", typed.strip())
    if exact in names:
        return exact
    found = sorted({n for n in names if name_key(n) == name_key(typed)})
    if len(found) > 1:
        raise InputError(
            f"player name {exact!r} could be {' or '.join(map(repr, found))}, which differ only by case: "
            "type it as `tracker players list` shows it"
        )
    return found[0] if found else None


def revoking(campaign_id: str, name: str) -> str:
    """The command that revokes a player's token: a league's player is found only with `--league`."""
    league = " --league" if campaign_id == LEAGUE else ""
    return f"tracker players revoke{league} {name!r}"


class Players:
    """The players of the campaigns in one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        metadata.create_all(engine, checkfirst=True)

    def add(self, campaign_id: str, name: str, nations: Sequence[str], referee: bool, spectator: bool = False) -> str:
        """Record a player and return their token (shown once: only its hash is kept). A
        revoked player's name may be given a new token. A spectator has no nation and is no
        referee: that is what makes the row a spectator's."""
        name = check_player_name(name)
        if spectator and (referee or nations):
            raise InputError("a spectator reads and acts for nobody: give --spectator alone")
        if not referee and not nations and not spectator:
            raise InputError("give the player's nations with --nations A,B, or --referee, or --spectator")
        token_id = secrets.token_hex(8)
        # 32 random bytes: the 256-bit secret.
        secret = secrets.token_urlsafe(32)
        row = {
            "nations": json.dumps(list(nations)),
            "referee": referee,
            "token_id": token_id,
            "salt": "",
            "token_hash": token_digest(secret),
            "revoked_at": None,
        }
        with self.engine.begin() as conn:
            # The checks below read every live name, then one is written: two adds at once
            # with names that differ only by case would both pass them (the table's key is the
            # exact name). Adds are rare, so they simply wait for each other.
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            elif conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_PLAYERS_LOCK})
            existing = conn.execute(
                select(players_table.c.revoked_at).where(
                    players_table.c.campaign_id == campaign_id, players_table.c.name == name
                )
            ).first()
            if existing is not None and existing[0] is None:
                raise InputError(f"player {name!r} already has a token; revoke it first: {revoking(campaign_id, name)}")
            # PL1: the record names who acted by name alone, and a name is looked up whatever
            # its case (`pick_name`): a name that differs from a live player's only by case
            # would be that player's.
            key = name_key(name)
            live_rows = select(players_table.c.campaign_id, players_table.c.name).where(
                players_table.c.revoked_at.is_(None)
            )
            if campaign_id != LEAGUE:
                # A league's player is checked against every campaign's, a campaign's against its own and the league's.
                live_rows = live_rows.where(players_table.c.campaign_id.in_([campaign_id, LEAGUE]))
            live = conn.execute(live_rows).all()
            twin = next((r.name for r in live if r.campaign_id == campaign_id and name_key(r.name) == key), None)
            if twin is not None:
                raise InputError(
                    f"player {twin!r} already has a token and {name!r} differs from it only by case: "
                    f"give another name, or revoke it first: {revoking(campaign_id, twin)}"
                )
            # A campaign's player and the league's may not share one either (the league's
            # players act in every campaign).
            clash = next(
                (r for r in live if (r.campaign_id == LEAGUE) != (campaign_id == LEAGUE) and name_key(r.name) == key),
                None,
            )
            if clash is not None:
                whose = "the league" if clash.campaign_id == LEAGUE else "a campaign of this league"
                raise InputError(
                    f"a player named {clash.name!r} already plays in {whose}: the log names players by name, "
                    "so give this one another name"
                )
            try:
                if existing is None:
                    conn.execute(players_table.insert().values(campaign_id=campaign_id, name=name, **row))
                else:
                    conn.execute(
                        update(players_table)
                        .where(players_table.c.campaign_id == campaign_id, players_table.c.name == name)
                        .values(**row, created_at=func.now())
                    )
            except IntegrityError:
                raise InputError(f"player {name!r} was added by someone else at the same time") from None
        return f"{TOKEN_PREFIX}_{token_id}_{secret}"

    def listed(self, campaign_id: str) -> list[PlayerListed]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(players_table).where(players_table.c.campaign_id == campaign_id).order_by(players_table.c.name)
            ).all()
        return [
            {
                "name": r.name,
                "nations": json.loads(r.nations),
                "referee": bool(r.referee),
                "spectator": not r.referee and not json.loads(r.nations),
                "created_at": r.created_at,
                "revoked": r.revoked_at is not None,
                "revoked_at": r.revoked_at,
            }
            for r in rows
        ]

    def revoke(self, campaign_id: str, name: str) -> str:
        """Revoke the token of the live player a name as typed means (`pick_name`); the name
        as registered."""
        with self.engine.begin() as conn:
            name = pick_name(name, self._live_names(conn, campaign_id)) or unicodedata.normalize("NFC", name.strip())
            done = conn.execute(
                update(players_table)
                .where(
                    players_table.c.campaign_id == campaign_id,
                    players_table.c.name == name,
                    players_table.c.revoked_at.is_(None),
                )
                .values(revoked_at=func.now())
            ).rowcount
        if not done:
            where = "the league" if campaign_id == LEAGUE else "this campaign"
            raise InputError(f"no player {name!r} with a live token in {where}")
        return name

    @staticmethod
    def _live_names(conn: Connection, campaign_id: str) -> list[str]:
        return list(
            conn.execute(
                select(players_table.c.name).where(
                    players_table.c.campaign_id == campaign_id, players_table.c.revoked_at.is_(None)
                )
            ).scalars()
        )

    def authenticate(self, token: str) -> Player | None:
        """The player a token belongs to, or None (unknown, malformed or revoked): never says which."""
        parts = token.split("_", 2)
        if len(parts) != 3 or parts[0] != TOKEN_PREFIX or len(parts[1]) != 16 or not 0 < len(parts[2]) <= 100:
            return None
        token_id, secret = parts[1], parts[2]
        with self.engine.connect() as conn:
            row = conn.execute(select(players_table).where(players_table.c.token_id == token_id)).first()
        if row is None or row.revoked_at is not None:
            return None
        digest = token_digest(secret)
        if row.token_hash.startswith(DIGEST_PREFIX):
            if not hmac.compare_digest(row.token_hash.encode(), digest.encode()):
                return None
        elif not self._upgraded(row, secret, digest):
            return None
        return Player(row.campaign_id, row.name, tuple(json.loads(row.nations)), bool(row.referee))

    def _upgraded(self, row: Any, secret: str, digest: str) -> bool:
        """A token whose row still holds a salted scrypt hash (written before): checked against
        it once and, when it matches, the row rewritten with the SHA-256 form, so scrypt never
        runs for this token again. The rewrite is conditional on the old hash still being
        there: a token revoked or re-issued meanwhile is not brought back."""
        try:
            expected = _scrypt(secret, row.salt)
        except ValueError:
            return False  # a damaged salt: no secret matches it
        if not hmac.compare_digest(expected.encode(), str(row.token_hash).encode()):
            return False
        with self.engine.begin() as conn:
            conn.execute(
                update(players_table)
                .where(players_table.c.token_id == row.token_id, players_table.c.token_hash == row.token_hash)
                .values(token_hash=digest, salt="")
            )
        return True

    # ----- who may read (PL2) -----

    def set_public(self, campaign_id: str, public: bool, by: str | None = None) -> bool:
        """Make the campaign readable by anyone, or by its players and spectators alone; whether
        that changed anything."""
        try:
            with self.engine.begin() as conn:
                found = conn.execute(
                    select(public_table.c.campaign_id).where(public_table.c.campaign_id == campaign_id)
                ).first()
                if public and found is None:
                    conn.execute(public_table.insert().values(campaign_id=campaign_id, made_public_by=by))
                    return True
                if not public and found is not None:
                    conn.execute(public_table.delete().where(public_table.c.campaign_id == campaign_id))
                    return True
        except IntegrityError:
            return False  # made public by someone else at the same moment
        return False

    def is_public(self, campaign_id: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(
                select(public_table.c.campaign_id).where(public_table.c.campaign_id == campaign_id)
            ).first()
        return found is not None

    def public_ids(self) -> set[str]:
        with self.engine.connect() as conn:
            return {str(cid) for cid in conn.execute(select(public_table.c.campaign_id)).scalars()}

    # ----- override requests (RK3) -----

    def request_override(
        self,
        campaign_id: str,
        player: Player,
        nations: Sequence[str],
        agreed_by: Sequence[str],
        reason: str,
        command: dict[str, Any],
        seen: int,
        also: Callable[[Connection, int], Any] | None = None,
    ) -> int:
        """Record an override request (RK3); `also` writes in the same transaction, given the
        request's number (its hand-off, see `tracker.service.notify`)."""
        with self.engine.begin() as conn:
            result = conn.execute(
                requests_table.insert().values(
                    campaign_id=campaign_id,
                    requested_by=player.name,
                    nations=json.dumps(list(nations)),
                    agreed_by=json.dumps(list(agreed_by)),
                    reason=reason,
                    command=json.dumps(command),
                    seen=seen,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            if also is not None:
                also(conn, int(key[0]))
            return int(key[0])

    def override_request(self, campaign_id: str, number: int) -> OverrideRequest:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(requests_table).where(requests_table.c.campaign_id == campaign_id, requests_table.c.id == number)
            ).first()
        if row is None:
            raise InputError(f"no override request {number} in this campaign")
        return {
            "id": row.id,
            "requested_by": row.requested_by,
            "nations": json.loads(row.nations),
            "agreed_by": json.loads(row.agreed_by),
            "reason": row.reason,
            "command": json.loads(row.command),
            "seen": row.seen,
            "requested_at": row.requested_at,
            "approved_by": row.approved_by,
            "approved_at": row.approved_at,
            "recorded_at_event": row.recorded_at_event,
        }

    def override_requests(self, campaign_id: str) -> list[OverrideRequest]:
        with self.engine.connect() as conn:
            ids = conn.execute(
                select(requests_table.c.id)
                .where(requests_table.c.campaign_id == campaign_id)
                .order_by(requests_table.c.id)
            ).scalars()
            numbers = list(ids)
        return [self.override_request(campaign_id, n) for n in numbers]

    def check_approver(self, request: OverrideRequest, approver: Player) -> None:
        """RK3, PL2: the referee, or a player holding every nation whose agreement the
        request names; never the player who asked."""
        if approver.spectator:
            raise Forbidden(f"{approver.name} is a spectator: their token reads, it approves nothing")
        if request["approved_by"] is not None:
            raise RuleViolation(
                "RK3", f"override request {request['id']} was approved already by {request['approved_by']}"
            )
        if approver.name == request["requested_by"] and not approver.referee:
            raise RuleViolation("RK3", "an override needs another player's agreement, not the asker's own")
        missing = [n for n in request["agreed_by"] if not approver.may_act_for(n)]
        if missing:
            raise Forbidden(
                f"override request {request['id']} needs the agreement of {', '.join(missing)}: "
                f"{approver.name} plays {approver.describe()}",
            )

    def named(self, campaign_id: str, typed: str) -> Player | None:
        """The player with a live token a name typed by a user means (`--player`): spelled as
        registered, or differing from it only by case (`pick_name`: refused when it could be
        two). A name read back from the database (a channel's, a request's asker) is looked up
        with `player`, as registered."""
        with self.engine.connect() as conn:
            found = pick_name(typed, self._live_names(conn, campaign_id))
        return None if found is None else self.player(campaign_id, found)

    def player(self, campaign_id: str, name: str) -> Player | None:
        """A player with a live token, by name as registered (typed with combining accents or
        not: names are stored in one Unicode form, `check_player_name`)."""
        name = unicodedata.normalize("NFC", name.strip())
        with self.engine.connect() as conn:
            row = conn.execute(
                select(players_table).where(
                    players_table.c.campaign_id == campaign_id,
                    players_table.c.name == name,
                    players_table.c.revoked_at.is_(None),
                )
            ).first()
        if row is None:
            return None
        return Player(row.campaign_id, row.name, tuple(json.loads(row.nations)), bool(row.referee))

    def set_recorded(self, request_id: int, event: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(requests_table).where(requests_table.c.id == request_id).values(recorded_at_event=event)
            )

    def unmark_approved(self, request_id: int) -> None:
        """The approved command was refused after all: the request may be approved again."""
        with self.engine.begin() as conn:
            conn.execute(
                update(requests_table)
                .where(requests_table.c.id == request_id)
                .values(approved_by=None, approved_at=None, recorded_at_event=None)
            )

    def mark_approved(self, request_id: int, approver: Player, event: int | None) -> bool:
        """Record the approval (once: False if another approval got there first)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(requests_table)
                .where(requests_table.c.id == request_id, requests_table.c.approved_by.is_(None))
                .values(approved_by=approver.name, approved_at=func.now(), recorded_at_event=event)
            ).rowcount
        return bool(done)
