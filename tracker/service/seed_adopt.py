"""`tracker dice adopt --from DB`: bring a campaign's secret dice seed over from the database
its copy was exported from (D4, D5).

A campaign moved by export and import (a group's SQLite file moved to its league's PostgreSQL
database) leaves its unrevealed seed behind, as it must: an export goes by mail. Its owner, who
holds both databases, brings the seed over here: the campaign is found in the other database by
its first event's hash (the same history), the seed of the current epoch is read there (or from
a league server's key store, `--keys`), checked against the commitment this log holds, and
stored, so the campaign rolls its auto dice again. Nothing is written in the other database."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from sqlalchemy import create_engine, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from domain.dice import commitment
from domain.errors import InputError
from tracker.service.application import Tracker
from tracker.storage.store import database_url, seeds_table


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@dataclass(frozen=True)
class Adopted:
    """What `adopt_seed` did: the epoch, where the seed came from, whether it was here already."""

    epoch: int
    source: str
    already: bool


def adopt_seed(t: Tracker, cid: UUID, source: str, keys: str | None = None) -> Adopted:
    """Store here the seed of campaign `cid`'s current dice epoch, read from database `source`
    (its seeds table, or the key store `keys` of the league server that served it there)."""
    campaign = t.load(cid)
    epoch = campaign.dice_epoch
    if epoch >= len(campaign.commitments):
        raise InputError("this campaign's log commits to no dice seed: it has none to adopt (D5)")
    expected = campaign.commitments[epoch]
    held = t.seed_for(cid, epoch)
    if held is not None and commitment(held) == expected:
        return Adopted(epoch, _shown(database_url(source, create=False)), True)
    if "://" not in source and not Path(source).expanduser().exists():
        raise InputError(f"--from {source}: no such database file (name the one the campaign was exported from)")
    first = t.recorder.select_events(cid, limit=1)
    created_hash = t.decode(first[0]).hash
    with Tracker(source, create=False) as there:
        shown = there.safe_url
        if there.url == t.url:
            raise InputError(f"--from {shown} is this database: name the one the campaign was exported from")
        theirs = _same_campaign(there, created_hash)
        if not theirs:
            raise InputError(f"{shown} holds no copy of this campaign (none begins with its first event)")
        seeds = _seeds(there, theirs, epoch) if keys is None else _key_store_seeds(keys, theirs, epoch)
    where = shown if keys is None else f"the key store {_shown(database_url(keys, create=False))}"
    seed = next((s for s in seeds if commitment(s) == expected), None)
    if seed is None:
        kept = (
            " (a campaign served there keeps its seed in the server's key store: add --keys KEYS)"
            if keys is None
            else ""
        )
        raise InputError(
            f"{where} holds no dice seed of epoch {epoch} matching this log's commitment (D5): not the seed of "
            f"this campaign's copy, or revealed and replaced since{kept}"
        )
    if held is not None:
        raise InputError(
            f"D5: this database holds another seed for epoch {epoch}, which does not match the log's commitment: "
            "run `tracker verify`"
        )
    t.registry.seed(str(cid), epoch, seed)
    return Adopted(epoch, where, False)


def _same_campaign(there: Tracker, created_hash: str) -> list[str]:
    """The ids of the campaigns in `there` whose first event is the one given (copies of one
    history imported under other names are several)."""
    found = []
    for _name, cid in there.registry.names():
        first = there.recorder.select_events(UUID(cid), limit=1)
        if first and there.decode(first[0]).hash == created_hash:
            found.append(cid)
    return found


def _seeds(there: Tracker, ids: list[str], epoch: int) -> list[str]:
    return [s for s in (there.seed_for(UUID(cid), epoch) for cid in ids) if s is not None]


def _key_store_seeds(keys: str, ids: list[str], epoch: int) -> list[str]:
    """The seeds of `epoch` a league server's key store holds for campaigns `ids`, read only."""
    url = database_url(keys, create=False)
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(seeds_table.c.seed).where(seeds_table.c.campaign_id.in_(ids), seeds_table.c.epoch == epoch)
            )
            return [str(seed) for (seed,) in rows]
    except SQLAlchemyError as e:
        raise InputError(f"--keys {_shown(url)}: cannot read its dice seeds ({type(e).__name__})") from None
    finally:
        engine.dispose()
