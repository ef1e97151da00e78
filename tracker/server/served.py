"""The application service as the league server uses it: every action checked against the
player who asks (PL2) and overrides against approvals (RK3), campaigns looked up by name (their
JSON reads are `tracker.server.queries`). A campaign is read only with a token of its players,
spectators or referee, or by anyone once it is public; to anyone else it does not exist:
"no such campaign" (a 404), the same words as for a name nobody uses, so a stranger learns
neither the names on the server nor where its database is."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from domain.campaign import Campaign
from domain.campaign.auto import NotTheirs
from domain.dice import DiceSource
from domain.errors import InputError, RuleViolation, TrackerError
from domain.rules.record import AUTOMATIC, UndoPlan, automatic_reveal
from domain.text import possessive
from tracker.server.keys import KeyedRegistry, key_store_url
from tracker.server.rights import (
    REFEREE_ACTIONS,
    REFEREE_ONLY,
    NeedsApproval,
    acting_nation,
    check_typed_dice,
    out_of_turn,
)
from tracker.service import actions
from tracker.service.application import Tracker
from tracker.service.players import LEAGUE, Forbidden, Player, Players, Unauthenticated
from tracker.service.shapes import OverrideRequest
from tracker.storage.store import sqlite_file

T = TypeVar("T")


class NotFound(InputError):
    """A campaign or event the URL names does not exist (or is not the asker's to read)."""


# All that is said of a campaign that does not exist or that the asker may not read.
NO_SUCH_CAMPAIGN = "no such campaign"


# All that is said to an action asked without a token, on every route, before any campaign is
# looked up: the same answer for every name.
NEEDS_TOKEN = "an action needs a player's token: Authorization: Bearer TOKEN (see tracker players add)"


# What a player is told of an action while the server may only read its database.
READ_ONLY = "the server's database is read-only: campaigns can be read, nothing can be recorded; tell its operator"


# Who records what the server does by itself (a seed reveal at the end of a round).
SERVER = AUTOMATIC


class _ActsFor(Exception):  # noqa: N818 - a signal, not an error: run again naming this nation
    def __init__(self, nation: str) -> None:
        super().__init__(nation)
        self.nation = nation


def file_identity(url: str) -> tuple[int, int] | None:
    """The device and inode of the SQLite file a URL names (None for PostgreSQL, or no file)."""
    path = sqlite_file(url)
    try:
        found = path.stat() if path is not None else None
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if found is not None else None


class ServedTracker(Tracker):
    """A `Tracker` with the queries the API answers, each returning what `--json` prints."""

    def __init__(
        self, db: str | None, keys: str | None = None, reveal: str = "on-request", reads_only: bool = False
    ) -> None:
        # A tracker that only answers reads keeps the campaigns it loaded, each used again
        # while the log has nothing after it (one query instead of a snapshot and its events),
        # and brought up to date with just the events recorded since when it has.
        self._reads: dict[UUID, Campaign] | None = {} if reads_only else None
        # A server never brings a database into being: a mistyped path is refused.
        super().__init__(db, create=False)
        # The SQLite file as opened, told from one put in its place later (see `tracker.server.ready`).
        self.opened_file = file_identity(self.url)
        if self.read_only:
            # Said to players without the server's path (see NO_SUCH_CAMPAIGN), and to the
            # operator once, at start (the recording tracker is made then): `/ready` fails too.
            self.app.refuse_saves = READ_ONLY
            if not reads_only:
                logging.getLogger("tracker.server").warning(
                    "%s is read-only to this server: campaigns are served for reading, every action is "
                    "refused and /ready fails until it may be written (its file and its folder)",
                    self.safe_url,
                )
        if reveal not in ("on-request", "each-round"):
            raise InputError(f"--reveal must be on-request or each-round, got {reveal!r}")
        self.reveal = reveal
        try:
            self.registry = KeyedRegistry(self.engine, key_store_url(keys, self.url), self._commitments)
            datastore = self.app.factory.datastore  # type: ignore[attr-defined]
            if datastore.is_sqlite_filedb and not reads_only:
                self.registry.read_names_on(datastore.read_on_writer)
        except BaseException:
            self.close()
            raise
        self.players = Players(self.engine)
        # An action recorded by an override's approval tells the player who asked (RK3).
        self.handoffs.approval = self._approval_told
        # Who the request being served acts as, and what it may override: set around each
        # request (one at a time per process, see tracker.server.app.Service).
        self.player: Player | None = None
        self.approved: tuple[str, ...] = ()
        self.approving: int | None = None
        self.asked: dict[str, Any] | None = None
        # The server's URL as the request being served reached it, for the commands a refusal
        # names (see `tracker.server.recording.reaching`); None outside a request.
        self.reached_at: str | None = None
        # Where a refusal for want of a token, a right or an approval is noted, so the API can
        # answer it with its own status even when the CLI turned it into a message.
        self.refusals: list[Exception] | None = None
        self._round_ended: set[UUID] = set()
        self._performing = False
        # The action being performed (by name), while it runs.
        self._asking: str | None = None
        self._undoing: str | None = None
        if not reads_only:
            try:
                self._reveal_first_served()
            except BaseException:
                self.close()
                raise

    def load(self, cid: UUID, version: int | None = None) -> Campaign:
        if self._reads is None or version is not None:
            return super().load(cid, version)
        cached = self._reads.pop(cid, None)
        last = self.recorder.last_version(cid)
        if cached is not None and cached.version < last:
            # A log only grows: the copy this reader kept takes the events recorded since,
            # each checked against the chain as a load checks it, rather than a new load
            # (the latest snapshot, then up to its interval of events).
            cached = self.advanced(cached)
        campaign = cached if cached is not None and cached.version == last else super().load(cid)
        self._reads[cid] = campaign
        return campaign

    def commit_in_groups(self) -> None:
        """Group commit for the recording tracker of a server on a SQLite file (see
        `tracker.server.app.Slot`): commits made durable by `durable`, several at once."""
        self.app.factory.datastore.commit_in_groups()  # type: ignore[attr-defined]

    def durable(self) -> None:
        """Return once every commit this tracker made is on disk (at once without group commit)."""
        self.app.factory.datastore.durable()  # type: ignore[attr-defined]

    def _commitments(self, campaign_id: str) -> list[str]:
        return list(self.load(UUID(campaign_id)).commitments)

    def close(self) -> None:
        if isinstance(self.registry, KeyedRegistry):
            self.registry.close()
        super().close()

    def acting_as(
        self, player: Player | None, fn: Callable[[], T], asked: dict[str, Any] | None = None,
        approved: tuple[str, ...] = (), approving: int | None = None,
    ) -> T:  # fmt: skip
        """Run `fn` with every campaign it reads and every action it records checked against
        `player` (None: no token). Calls nest: the outer ones' player is back afterwards."""
        before = self.player, self.asked, self.approved, self.approving
        self.player, self.asked, self.approved, self.approving = player, asked, approved, approving
        try:
            return fn()
        finally:
            self.player, self.asked, self.approved, self.approving = before

    # ----- who reads what -----

    def may_read(self, campaign_id: str) -> bool:
        """Whether the request being served may read the campaign: a token of its players,
        spectators or referee (or the league's), or anyone when it is public."""
        player = self.player
        if player is not None and player.plays_in(campaign_id):
            return True
        return self.players.is_public(campaign_id)

    def campaign_names(self) -> list[str]:
        """The campaigns the request being served may read."""
        player = self.player
        rows = self.registry.names()
        if player is None or player.campaign_id != LEAGUE:
            readable = self.players.public_ids()
            if player is not None:
                readable.add(player.campaign_id)
            rows = [(name, cid) for name, cid in rows if cid in readable]
        return [name for name, cid in rows if self._exists(UUID(cid))]

    def campaign_id(self, name: str | None) -> UUID:
        """The campaign named (or the only one readable), if the request may read it; otherwise
        "no such campaign", whether it exists or not."""
        try:
            if name:
                if "\x00" in name:
                    # No campaign's name holds one (`tracker.storage.store.check_campaign_name`), and
                    # PostgreSQL refuses one in a query: a URL's %00 was a 500.
                    raise NotFound(NO_SUCH_CAMPAIGN)
                # Looked up on every request: a PBEM fork mended by `import --resolve theirs`
                # gives a name another campaign, whichever process did it.
                cid = self.registry.lookup(name)
                if cid is None or not self.may_read(cid) or not self._exists(UUID(cid)):
                    raise NotFound(NO_SUCH_CAMPAIGN)
                return UUID(cid)
            names = self.campaign_names()
            if not names:
                raise NotFound(f"{NO_SUCH_CAMPAIGN}: name one with --campaign, with a token of its players")
            if len(names) > 1:
                raise InputError(f"{len(names)} campaigns here; pick one with --campaign ({', '.join(names)})")
            return self.campaign_id(names[0])
        except NotFound as e:
            if self.refusals is not None:
                self.refusals.append(e)
            raise

    # ----- PL2 and RK3 on every action -----

    def require_referee(self, campaign_id: str, what: str) -> None:
        """PL2: what only a referee does through the server, for the campaign `campaign_id`
        (LEAGUE: for the league, which only the league's referees do)."""
        player = self.player
        try:
            if player is None:
                raise Unauthenticated(f"{what} needs a referee's token: set TRACKER_TOKEN (see tracker players add)")
            if campaign_id == LEAGUE and not player.league:
                raise Forbidden(
                    f"{what} is for the league's referee (tracker players add NAME --referee --league): "
                    f"{player.name} plays {'referee of one campaign' if player.referee else player.describe()}"
                )
            if player.referee and not player.plays_in(campaign_id):
                raise Forbidden(f"{player.name}'s token is for another campaign")
            if not player.referee:
                raise Forbidden(f"{what} is for the campaign's referee: {player.name} plays {player.describe()}")
        except (Unauthenticated, Forbidden) as e:
            if self.refusals is not None:
                self.refusals.append(e)
            raise

    def create(
        self,
        name: str,
        scenario: str,
        ruleset: str | None = None,
        dice: str | None = None,
        seed: str | None = None,
        created_by: str | None = None,
    ) -> Campaign:
        """A campaign created through the server: by the league's referee (PL2), from a built-in
        scenario and ruleset (a path would name a file on the server), its seed in the key store;
        its first event names the token's player as its creator (PL1), whatever `created_by` says."""
        from domain.ruleset import builtin_names

        self.require_referee(LEAGUE, "creating a campaign")
        for kind, given in (("scenarios", scenario), ("rulesets", ruleset)):
            if given is not None and given not in builtin_names(kind):
                raise InputError(
                    f"unknown {kind[:-1]} {given[:100]!r}: through a server, one of the built-ins "
                    f"({', '.join(builtin_names(kind))}); a file on your machine is not sent"
                )
        creator = self.player.name if self.player is not None else None
        known = self.registry.lookup(name)
        if known is not None and self._exists(UUID(known)):
            # Said without the database's URL, which the local command names.
            raise InputError(f"campaign {name!r} already exists")
        return super().create(name, scenario, ruleset, dice, seed, created_by=creator)

    def execute(self, cid: UUID, command: Callable[[Campaign, DiceSource], T], *args: Any, **kwargs: Any) -> T:
        try:
            return self._execute_as_player(cid, command, *args, **kwargs)
        except (Unauthenticated, Forbidden, NeedsApproval) as e:
            if self.refusals is not None:
                self.refusals.append(e)
            raise

    def _execute_as_player(
        self, cid: UUID, command: Callable[[Campaign, DiceSource], T], *args: Any, **kwargs: Any
    ) -> T:
        player = self.player
        if player is None:
            raise Unauthenticated(NEEDS_TOKEN)
        if not player.plays_in(str(cid)):
            raise Forbidden(f"{player.name}'s token is for another campaign")
        if player.spectator:
            raise Forbidden(f"{player.name} is a spectator: their token reads, it records nothing")
        what = REFEREE_ACTIONS.get(self._asking or "")
        if what is not None and not player.referee:
            # PL2 before the action runs: nothing of it, not even the next seed, is stored.
            raise Forbidden(f"only the referee records {what}: {player.name} plays {player.describe()}")

        def guarded(campaign: Campaign, dice: DiceSource) -> T:
            phasing, before, round_before = campaign.nation, len(campaign.pending_events), campaign.round
            self._undoing = None
            battles: dict[str, tuple[str, str, str]] = {
                str(k): (b["kind"], b["attacker"], b["defender"]) for k, b in campaign.battles.items()
            }
            owed = {str(k): tuple(b["waiting"]) for k, b in campaign.battles.items()}
            # Known before the action runs, which may change the campaign before a rule refuses it.
            not_now = out_of_turn(player, campaign, owed, self._asking)
            try:
                result = command(campaign, dice)
            except NotTheirs:
                raise  # a battle's step another nation takes: `perform` names it and its command
            except RuleViolation:
                if not_now is not None:
                    # PL2 before the rule that refused it: the rule (with the command that would
                    # answer it) is not for a player who may take no action now.
                    raise not_now from None
                raise
            # Battles the action itself started are known from the state after it.
            for k, b in campaign.battles.items():
                battles.setdefault(str(k), (b["kind"], b["attacker"], b["defender"]))
            self._authorize(player, campaign, phasing, battles, campaign.pending_events[before:], owed)
            if self.reveal == "each-round" and campaign.round > round_before and campaign.dice_mode == "auto":
                self._round_ended.add(cid)
            return result

        try:
            return super().execute(cid, guarded, *args, **kwargs)
        finally:
            # A round ended by an attempt that was then refused or lost a conflict reveals nothing.
            self._round_ended.discard(cid)

    def perform(self, cid: UUID, name: str, inputs: Any = None, **kwargs: Any) -> Any:
        """PL1: an action through the server records the player whose token asked and the
        nation the action is for (found by the referee: when the first guess is wrong, the
        action runs again naming the right one, before anything is saved)."""
        player = self.player
        if player is None or self._performing:
            return super().perform(cid, name, inputs, **kwargs)
        if name == "undo":
            kwargs["confirm"] = self._undo_checked(kwargs.get("confirm"))
        inputs = self._deciding(player, name, inputs)
        guess = kwargs.pop("nation", None) or self._nation_guess(cid, player, inputs or {})
        named = isinstance(inputs, dict) and any(isinstance(inputs.get(k), str) for k in ("nation", "by"))
        if named and guess is not None and not player.may_act_for(guess):
            # PL2 before any rule: an action named for another player's nation is not this
            # player's to ask, whether or not the rules would take it now.
            raise self._refused(
                Forbidden(f"{player.name} plays {player.describe()}, not {guess}; this action is {possessive(guess)}")
            )
        kwargs.pop("player", None)
        self._performing, self._asking = True, name
        try:
            for _ in range(3):
                try:
                    return super().perform(cid, name, inputs, player=player.name, nation=guess, **kwargs)
                except _ActsFor as e:
                    guess = e.nation
                except NotTheirs as e:
                    if player.may_act_for(e.nation):
                        raise  # the referee named the nations to decide for: the refusal says so
                    raise self._refused(self._not_theirs(cid, player, e)) from None
            raise AssertionError("the acting nation did not settle")  # pragma: no cover
        finally:
            self._performing, self._asking = False, None

    def _deciding(self, player: Player, name: str, inputs: Any) -> Any:
        """PL2: an action that takes the defaults of several steps (auto, step) takes those of
        the asking player's nations alone: it stops where another player must choose or roll.
        The referee decides for all, or for the nations they name."""
        action = actions.get(name)
        if not any(f.name == "deciding" for f in action.fields) or not isinstance(inputs, dict):
            return inputs
        given = inputs.get("deciding")
        if player.referee:
            return inputs
        if given is None:
            return {**inputs, "deciding": list(player.nations)}
        named = [given] if isinstance(given, str) else given
        if not isinstance(named, list):
            return inputs  # not a list of nations: the action's own check refuses it (exit 2)
        mine = {n.casefold() for n in player.nations}
        others = [n for n in named if not isinstance(n, str) or n.casefold() not in mine]
        if others:
            raise self._refused(
                Forbidden(f"{player.name} plays {player.describe()}: deciding for {others[0]!r} is not theirs")
            )
        return inputs

    def _not_theirs(self, cid: UUID, player: Player, e: NotTheirs) -> Forbidden:
        """The PL2 refusal of a step another player takes, with the command that answers it."""
        from tracker.cli.common import next_command

        item = next((i for i in self.load(cid).pending() if i["battle"] == e.battle), None)
        answer = next_command(item) if item is not None else None
        how = f": {answer}" if answer else ""
        return Forbidden(f"{player.name} plays {player.describe()}; battle {e.battle} is waiting for {e.nation}{how}")

    def _refused(self, e: Exception) -> Exception:
        """`e`, noted as the refusal the API answers with its own status."""
        if self.refusals is not None:
            self.refusals.append(e)
        return e

    def _working_copy(self, cid: UUID) -> Campaign:
        """The copy this process last saved, re-checked by version: several server processes
        record on one database, and an action whose meaning depends on what was seen (next,
        undo) must run on the campaign as it stands, not be refused for another process's
        events the player had already seen."""
        cached = self._working.pop(cid, None)
        if cached is not None and cached.version == self.recorder.last_version(cid):
            return cached
        return self.load(cid)

    def _nation_guess(self, cid: UUID, player: Player, inputs: Any) -> str | None:
        """The nation an action is for, before it runs: the one named, the player's only one,
        or the phasing nation of the copy last saved here (loaded now when there is none: the
        action runs on it, instead of running once on a guess and again on a fresh load)."""
        from tracker.service.names import Names

        named = next((inputs.get(k) for k in ("nation", "by") if isinstance(inputs.get(k), str)), None)
        cached = self._working.get(cid)
        if cached is None and (named is not None or len(player.nations) != 1):
            cached = self._working[cid] = self.load(cid)
        if named is not None and cached is not None:
            try:
                return Names(cached).nation(named)
            except InputError:
                return None
        if len(player.nations) == 1:
            return player.nations[0]
        return cached.nation if cached is not None else None

    def _reveal_first_served(self) -> None:
        """D5 on first serve: a seed the campaign database still holds was never secret from
        whoever could read that file. Each such campaign reveals it in the log, as an action of
        the server's own (`verify` then re-derives the rolls made under it), and commits to a
        fresh seed made in the key store; the campaign database keeps no secret seed after."""
        registry = self.registry
        assert isinstance(registry, KeyedRegistry)
        for campaign_id in registry.seeds_left():
            cid = UUID(campaign_id)
            try:
                campaign = self.load(cid)
            except (TrackerError, AggregateNotFoundError):
                continue  # a creation that crashed before its first event: nothing to reveal
            except Exception as e:  # noqa: BLE001 - one unreadable campaign stops no other one
                # A log that does not decode (an edited row) is `verify`'s to report; the
                # server serves every other campaign, and this one's seed stays where it is.
                print(f"campaign {campaign_id}: not revealed on first serve: {type(e).__name__}", file=sys.stderr)
                continue
            committed = campaign.commitments[-1] if campaign.commitments else ""
            if not registry.held_here(campaign_id, campaign.dice_epoch, committed):
                continue  # revealed before, or served already: its seed lives in the key store
            saved = self.player
            self.player = Player(campaign_id, SERVER, (), True)
            try:
                # The version seen: another server process that revealed first makes this a
                # refusal, never a second reveal of the fresh seed.
                Tracker.perform(self, cid, "dice reveal", {}, seen=campaign.version, player=SERVER)
                # Said, since starting a server changed the log: a copy played by file that
                # started it must send these events on, or the next one acting elsewhere forks.
                logging.getLogger("tracker.server").info(
                    "Campaign %r: the dice seed its database held is revealed in its log (D5, events %d-%d); "
                    "copies of it played by file need these events: send them an export",
                    self.name_of(campaign),
                    campaign.version + 1,
                    self.load(cid).version,
                )
            except TrackerError:
                # Another server process revealed it first, or took the seed meanwhile: this
                # campaign is tried again at the next start, and no other one waits for it.
                pass
            finally:
                self.player = saved

    def follow_up(self, campaign: Campaign, dice: DiceSource) -> None:
        """D5 with --reveal each-round: the round the action just ended publishes its seed and
        commits to a fresh one, as an action of its own recorded by the server and saved with
        the one that ended the round, so `verify` re-derives every roll of the rounds played."""
        if campaign.id not in self._round_ended:
            return
        self._round_ended.discard(campaign.id)
        if self.action_seed(campaign.id, campaign.dice_epoch) is None:
            return  # a campaign whose seed stayed elsewhere rolls no auto dice here (D4)
        reveal = actions.get("dice reveal").validate({})
        self.record_action(campaign, dice, "dice reveal", reveal, campaign.version, player=SERVER)

    def _undo_checked(self, confirm: Callable[[UndoPlan], bool] | None) -> Callable[[UndoPlan], bool]:
        """PL2: a player undoes only their own nations' actions; the referee, anyone's."""

        def checked(plan: UndoPlan) -> bool:
            player = self.player
            if player is not None:
                # The server's own seed reveals (D5) are nobody's: a player's undo of the round's
                # last `next` takes the reveal after it back too, and it stays in effect.
                others = sorted(
                    {
                        a.nation
                        for a in plan.actions
                        if not player.may_act_for(a.nation) and not automatic_reveal(a.events)
                    }
                )
                if others:
                    raise Forbidden(
                        f"the undo takes back actions of {', '.join(others)}: {player.name} plays {player.describe()}"
                    )
            # The nation an undo acts for: whose actions it takes back.
            self._undoing = plan.actions[0].nation if plan.actions else None
            return confirm(plan) if confirm is not None else True

        return checked

    def _authorize(
        self,
        player: Player,
        campaign: Campaign,
        phasing: str,
        battles: dict[str, tuple[str, str, str]],
        events: Sequence[Any],
        owed: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        """PL2 on an action's events: who it acts for (`acting_nation`), checked against the
        player; `owed` is each battle's waiting nations before the action."""
        if not events:
            return
        asked = next((e for e in events if type(e).__name__ == "ActionAsked"), None)
        events = [e for e in events if type(e).__name__ != "ActionAsked"]
        if not events:
            return
        kinds = [type(e).__name__ for e in events]
        for kind in kinds:
            if kind in REFEREE_ONLY and not player.referee:
                raise Forbidden(
                    f"only the referee records {REFEREE_ONLY[kind]}: {player.name} plays {player.describe()}"
                )
        # The undo's own event names no nation: whose actions it takes back was checked on its plan.
        if "ActionUndone" in kinds:
            nation = self._undoing or phasing
        else:
            nation = acting_nation(player, campaign, events, phasing, battles, owed or {})
            if not player.may_act_for(nation):
                raise Forbidden(
                    f"{player.name} plays {player.describe()}, not {nation}; this action is {possessive(nation)}"
                )
        if asked is not None and asked.nation != nation and player.name != SERVER:
            raise _ActsFor(nation)
        self._check_overrides(player, campaign, events)
        check_typed_dice(player, campaign, events, owed or {})

    def _check_overrides(self, player: Player, campaign: Campaign, events: Sequence[Any]) -> None:
        """RK3: an override's agreement counts only when given through the server: by the
        referee acting, or by the approval of a request the other side (or referee) made."""
        named = [n for e in events for n in (getattr(e, "agreed_by", None) or [])]
        if not named or player.referee:
            return
        missing = [n for n in dict.fromkeys(named) if n not in self.approved]
        if not missing:
            return
        if self.approving is not None:
            raise Forbidden(
                f"override request {self.approving} names {', '.join(missing)}, which its approver does not play"
            )
        override = next(e for e in events if getattr(e, "agreed_by", None))
        # The other side now owes an approval: told in the request's own transaction.
        told = self.handoffs.override_request(
            str(campaign.id),
            campaign,
            {"requested_by": player.name, "agreed_by": missing, "reason": str(getattr(override, "reason", ""))},
        )
        number = self.players.request_override(
            str(campaign.id),
            player,
            sorted({getattr(e, "nation", None) or getattr(e, "roller", None) or campaign.nation for e in events}),
            list(dict.fromkeys(named)),
            str(getattr(override, "reason", "")),
            self.asked or {},
            campaign.version - len(campaign.pending_events),
            told,
        )
        raise NeedsApproval(number, missing, self.name_of(campaign), self.reached_at)

    def _approval_told(self, campaign_id: str) -> OverrideRequest | None:
        """The override request (RK3) the action under way records by its approval, if any."""
        if self.approving is None:
            return None
        return self.players.override_request(campaign_id, self.approving)
