"""`tracker verify`'s checks of what stands beside a campaign's log against it: a posted head
(`Head`, `--head`), the registry's rows (its name, an import mark) and the dice seed kept here;
and `Seen`, what these checks need of the log, kept as the walk goes by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from domain.dice import commitment
from domain.errors import InputError
from tracker.service.verify_report import VerifyReport, fail

if TYPE_CHECKING:
    from tracker.service.application import Tracker
    from tracker.storage.store import ImportMark


@dataclass(frozen=True)
class Head:
    """A posted head: the sequence number and hash of the last event someone saw."""

    seq: int
    hash: str

    @classmethod
    def parse(cls, text: str) -> Head:
        seq, sep, digest = text.strip().partition(":")
        digest = digest.strip().lower()
        if not sep or not (seq.isascii() and seq.strip().isdigit()) or not 16 <= len(digest) <= 64:
            raise InputError(f"--head {text!r}: expected SEQ:HASH, e.g. 42:3f9a... (at least 16 hex digits)")
        if any(c not in "0123456789abcdef" for c in digest):
            raise InputError(f"--head {text!r}: the hash must be hexadecimal")
        number = int(seq)
        if not 1 <= number <= 2**31 - 1:
            raise InputError(f"--head {text!r}: the sequence number must be between 1 and {2**31 - 1}")
        return cls(number, digest)


@dataclass
class Seen:
    """What the checks after the walk need of the log, kept as the walk goes by: its first
    event, the hashes of the events `wanted` names, and the first event recorded through a
    league server (see `_served`)."""

    wanted: set[int]
    first: Any = None
    count: int = 0
    hashes: dict[int, str] = field(default_factory=dict)
    served: int | None = None

    def take(self, event: Any) -> None:
        version = event.originator_version
        self.count += 1
        if self.first is None:
            self.first = event
        if version in self.wanted:
            self.hashes[version] = event.hash
        if self.served is None and _served(event):
            self.served = int(version)

    def hash_of(self, version: int) -> str | None:
        return self.hashes.get(version) if 1 <= version <= self.count else None


def check_head(report: VerifyReport, seen: Seen, head: Head | None) -> None:
    if head is None:
        return
    if head.seq > report.head_seq:
        one = head.seq == report.head_seq + 1
        missing = f"event {head.seq} was" if one else f"events {report.head_seq + 1}-{head.seq} were"
        fail(
            report,
            report.head_seq + 1,
            f"the log ends at event {report.head_seq}, but the posted head is event {head.seq}: {missing} deleted",
        )
        return
    actual = seen.hash_of(head.seq) or ""
    if not actual.startswith(head.hash):
        fail(
            report,
            head.seq,
            f"event {head.seq} has hash {actual[:16]}..., not the posted head's {head.hash[:16]}...: "
            "the history up to the posted head was rewritten",
        )
        return
    report.notes.append(f"Matches the posted head: event {head.seq} ({head.hash[:16]}...).")


def check_registry(t: Tracker, cid: UUID, report: VerifyReport, seen: Seen, mark: ImportMark | None) -> None:
    """The registry's rows say what the log cannot: the name this database gives the campaign,
    and that it was imported here. The name must be the one its Created event records, or
    the one its import was given (`import --as`); an import mark must name a head the log
    holds (an earlier tracker's marks name none, and are taken as they are)."""
    if mark is not None and not mark.legacy:
        if not mark.head_seq or not mark.head_hash:
            fail(
                report,
                1,
                "tracker_imported marks this campaign as imported but names no head of its log: no import "
                "wrote that row, it was added behind the tracker's back",
            )
            return
        if seen.hash_of(mark.head_seq) != mark.head_hash:
            fail(
                report,
                min(mark.head_seq, seen.count),
                f"tracker_imported marks this campaign as imported with head {mark.head_seq}:"
                f"{mark.head_hash[:16]}..., which its log does not hold: the row was not written by its import, "
                "or the log was rewritten after it",
            )
            return
    registered = t.registry.name_of(str(cid))
    recorded = seen.first.name
    if registered is None or registered == recorded:
        return
    if mark is not None and mark.name in (None, registered):
        report.notes.append(
            f"Registered here as {registered!r}, the name given to its import; its log names it {recorded!r}."
        )
        return
    imported = (
        f", and its import gave it the name {mark.name!r}" if mark is not None else ", and no import gave it that name"
    )
    fail(
        report,
        1,
        f"tracker_campaigns registers this campaign as {registered!r}, but its Created event (event 1) names it "
        f"{recorded!r}{imported}: it was renamed behind the tracker's back",
    )


def _served(event: Any) -> bool:
    """An event recorded through a league server: the Created event of a campaign created
    there (it names its creator) or an action asked through one (PL1: only a server records
    the player who asked). From the first such event on its seeds live in the key store (D5)."""
    kind = type(event).__name__
    return (kind == "Created" and bool(getattr(event, "created_by", None))) or (
        kind == "ActionAsked" and event.player is not None
    )


def check_seed(t: Tracker, cid: UUID, report: VerifyReport, seen: Seen, mark: ImportMark | None) -> None:
    """An auto campaign's current seed must be here and match its commitment, or nobody could
    check the next rolls. It may be elsewhere only where the log says so (served: see
    `_served`) or an import mark checked against the log does (it stayed with the exported
    copy); tracker_served's word alone is not taken."""
    created = seen.first
    if created is None or created.dice_mode != "auto":
        return
    epoch = report.seeds_revealed
    seed = t.seed_for(cid, epoch)
    if seed is None:
        served = seen.served
        if served is not None:
            report.notes.append(
                f"Served campaign (event {served} was recorded through a league server): its dice seed is in the "
                "server's key store (D5); the rolls of revealed seeds were re-derived, and "
                "`tracker --server URL verify` checks the current one too."
            )
            return
        if mark is not None:
            report.notes.append(
                "Imported campaign: its dice seed stayed with the exported copy; later rolls need --dice."
            )
            return
        marked = (
            "; tracker_served marks it served, but no event of its log was recorded through a league server "
            "(its Created event names no creator, no action names a player): that row was not written by a server"
            if t.registry.is_served(str(cid))
            else ""
        )
        fail(
            report,
            report.head_seq,
            f"D5: the dice seed of epoch {epoch} of this auto campaign is missing from the database: "
            f"its next rolls could not be checked{marked}",
        )
    elif commitment(seed) != report.commitments[epoch]:
        fail(
            report,
            report.head_seq,
            f"D5: the dice seed of epoch {epoch} held here does not match the commitment in the log: it was replaced",
        )
