"""What every `tracker` command module shares: the click context, the output options, running
an action and printing what it recorded and what the game waits for next."""

from __future__ import annotations

import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from domain.dice import Override, parse_dice
from domain.errors import InputError, TrackerError
from domain.ruleset import KNOWN_PHASES
from domain.text import plural
from projections.summary import rule_of, summary
from tracker.cli.context import Context as Context
from tracker.cli.params import CLIENT_TERMINAL as CLIENT_TERMINAL
from tracker.cli.params import MAX_INT as MAX_INT
from tracker.cli.params import NATION, REASON, REFERENCE, Dice, Whole, dice_problem, terminal_width
from tracker.cli.params import fit_error as fit_error
from tracker.cli.suggest import suggested as suggested
from tracker.cli.wrapping import wrapped_keeping_names
from tracker.service.names import Names

if TYPE_CHECKING:
    # Storage is imported by the first command that opens the database, so `--help` and
    # `--version` start without it.
    from domain.campaign import Campaign
    from tracker.service.performing import Outcome

# Every number a command takes fits a PostgreSQL INTEGER column (and so SQLite's): larger
# ones are refused as bad usage (exit 2) before anything reaches the database.
POSITIVE = Whole(1, MAX_INT)
INTEGER = Whole(-MAX_INT, MAX_INT)

_F = TypeVar("_F", bound=Callable[..., Any])
# A running count (`counting`) shows after this many seconds, redrawn at most this often.
COUNT_AFTER = 0.3
COUNT_EVERY = 0.1


@contextmanager
def progress(length: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr for long work when stderr is a terminal; nothing at all in a
    script or a pipe (the function it yields then does nothing)."""
    if length < 1 or not sys.stderr.isatty():
        yield lambda _n: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update


@contextmanager
def counting(label: str) -> Iterator[None]:
    """A running count on stderr of the positions the odds engines expand ("label: 1,024"),
    shown once the work has taken a moment and redrawn a few times a second, cleared when it
    ends, when stderr is a terminal; nothing at all in a script or a pipe."""
    if not sys.stderr.isatty():
        yield
        return
    from domain.procedures.engine import EXPANDED

    started = time.monotonic()
    count, shown_at = 0, 0.0

    def expanded() -> None:
        nonlocal count, shown_at
        count += 1
        now = time.monotonic()
        # Quick work shows nothing; long work a count that moves, without a write per position.
        if now - started >= COUNT_AFTER and now - shown_at >= COUNT_EVERY:
            click.echo(f"\r{label}: {count:,}", nl=False, err=True)
            shown_at = now

    token = EXPANDED.set(expanded)
    try:
        yield
    finally:
        EXPANDED.reset(token)
        if shown_at:
            click.echo("\r\033[K", nl=False, err=True)


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--json` on a command that reads: the command takes it as `as_json` and prints its data
    as JSON (docs/json.md lists each command's shape)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


# Where a recording command's --json waits on the click context for `act`, `perform`'s callers
# and `emit_recorded`, so the commands themselves take no flag of their own.
_RECORD_JSON = "tracker.record_json"


def record_json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--json` on a command that records: it then prints one JSON object, the events it
    recorded and what the game waits for after (`recorded_json`), instead of their lines."""

    @functools.wraps(f)
    def wrapper(*args: Any, as_json: bool, **kwargs: Any) -> Any:
        click.get_current_context().meta[_RECORD_JSON] = as_json
        return f(*args, **kwargs)

    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print JSON: the events recorded and what the game waits for after.",
    )(wrapper)


def wants_json() -> bool:
    """Whether the recording command running asked for --json."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_RECORD_JSON))


def recorded_json(ctx: Context, action: str, events: list[Any], campaign: Campaign, **extra: Any) -> dict[str, Any]:
    """What a recording command prints with --json: the action, each event it recorded as
    `tracker log --json` lists it (seq, kind, timestamp, rule, summary and the event's own
    fields under "data"), the items the game waits for after as `tracker pending --json`
    lists them (each with its "command"), the campaign's name and its version (the last
    event's seq, for --seen), and any command's own keys in `extra`."""
    from projections.summary import as_record

    return {
        "action": action,
        "events": [as_record(e.originator_version, e, campaign.scenario, campaign.ruleset) for e in events],
        "pending": [{**item, "command": next_command(item)} for item in campaign.pending(turn=True)],
        "campaign": ctx.tracker.name_of(campaign),
        "version": campaign.version,
        **extra,
    }


def emit_recorded(ctx: Context, action: str, events: list[Any], campaign: Campaign, **extra: Any) -> None:
    """Print `recorded_json` as JSON: the one output of every recording command's --json."""
    emit_json(recorded_json(ctx, action, events, campaign, **extra))


def nations_option(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--agreed-by A --agreed-by B` or `--agreed-by A,B`."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def override_options(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--override, --reason and --agreed-by (RK3), for `what` the override allows; --reason or
    --agreed-by without --override is bad usage, said before anything is rolled or recorded."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        from tracker.cli.completion import complete_nations

        @functools.wraps(f)
        def checked(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            if not kwargs["override"] and (_given(ctx, "reason") or _given(ctx, "agreed_by")):
                # Without it they were dropped, and the action (an auto die) went on as if unsaid.
                raise click.UsageError("--reason and --agreed-by go with --override")
            return f(*args, **kwargs)

        g = click.option(
            "--agreed-by",
            "agreed_by",
            multiple=True,
            help="A nation of the other side that agrees to the override (repeat, or comma-separate).",
            shell_complete=complete_nations,
        )(checked)
        g = click.option(
            "--reason", type=REASON, default="", help="Why the override: recorded, shown by verify and reports."
        )(g)
        return click.option("--override", is_flag=True, help=f"{what} (RK3): needs --reason and --agreed-by.")(g)

    return decorate


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the option was typed (an empty --reason "" too), not left at its default."""
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def dice_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--dice and --ref, and the override a typed roll needs in an auto-dice campaign (D4). The
    override travels on the context to `run`, so the commands themselves take only the dice."""

    @functools.wraps(f)
    def wrapper(*args: Any, override: bool, reason: str, agreed_by: tuple[str, ...], **kwargs: Any) -> Any:
        if kwargs.get("reference") is not None and kwargs.get("dice_text") is None:
            # A reference names typed dice: without them an auto die would be rolled and recorded.
            raise click.UsageError("--ref goes with --dice")
        ctx = click.get_current_context().find_object(Context)
        if ctx is not None and override:
            if kwargs.get("dice_text") is None:
                raise InputError("--override goes with --dice: typed dice in an auto-dice campaign (D4)")
            ctx.dice_override = Override(reason, nations_option(agreed_by))
        return f(*args, **kwargs)

    g: Callable[..., Any] = override_options("Typed dice in an auto-dice campaign")(wrapper)
    g = click.option(
        "--ref", "reference", type=REFERENCE, help="External reference of manual dice (e.g. a dice-server roll id)."
    )(g)
    return click.option(
        "--dice",
        "dice_text",
        type=Dice(),
        help="Manual dice values in the order `pending` lists, e.g. '10,3' (required with manual dice).",
    )(g)


def seen_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--seen VERSION on a recording command: refuse it if the campaign moved past that event."""

    @functools.wraps(f)
    def wrapper(*args: Any, seen: int | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context().find_object(Context)
        if ctx is not None:
            ctx.seen = seen
        return f(*args, **kwargs)

    return click.option(
        "--seen",
        "seen",
        type=POSITIVE,
        metavar="VERSION",
        help="The last event you looked at: refused (nothing recorded) if the campaign has moved past it.",
    )(wrapper)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def prose_width() -> int | None:
    """The width prose is wrapped at: the terminal's (the client's, through a server); None when
    the output is no terminal, where each line stays whole for whatever reads it next."""
    return terminal_width(sys.stdout)


# A command to copy, alone on its line or after "next:".
_COMMAND = re.compile(r"(next: )?tracker ")


def echo_prose(text: str = "", hang: int | None = None) -> None:
    """`click.echo` of prose: `fit_prose` on a terminal."""
    click.echo(fit_prose(text, hang))


def fit_prose(text: str, hang: int | None = None) -> str:
    """Each line longer than the terminal wrapped between words, its next lines indented (by
    `hang` columns when given); a command to copy (a line `tracker ...`, `next: tracker ...`,
    one in backquotes) kept whole, as is every line in a pipe; a name of several words kept
    whole where it is one of a list or quoted in a command (`wrapped_keeping_names`). Each
    command to copy says the global options typed (`suggest`)."""
    text = suggested(text)
    width = prose_width()
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        words = line.lstrip()
        if len(line) <= width or _COMMAND.match(words):
            out.append(line)
            continue
        indent = line[: len(line) - len(words)]
        # A line that begins with a column ("  22.256%  attacker wins: ...") goes on under the
        # text after it; any other a little further in than it starts.
        column = re.match(r"\s*\S+\s{2,}", line)
        if hang is not None and hang <= width // 2:
            under = " " * hang
        elif column and column.end() <= width // 2:
            under = " " * column.end()
        else:
            under = indent + "    "
        out.append("\n".join(wrapped_keeping_names(words, max(20, width), indent, under)))
    return "\n".join(out)


class _Console(Console):
    """rich's Console, but a reader that went away (`tracker state | head -1`) ends the command
    as it ends one printing with click: quietly, with 0 (rich exits 1, a refused action's status)."""

    def on_broken_pipe(self) -> None:
        try:
            super().on_broken_pipe()  # standard output now goes to the null device
        except SystemExit:
            raise BrokenPipeError from None


def console(file: Any = None) -> Console:
    """Rich output as wide as the terminal (or COLUMNS), in colour only on a terminal. Strings
    print as written: never read as rich markup or emoji codes, for they hold names a scenario
    or ruleset file chose ("Skagerrak [north]", a title with "[/b]"), which would vanish or fail."""
    client = CLIENT_TERMINAL.get()
    if client is not None:
        return _Console(
            file=file,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=False,
            width=client["columns"],
            force_terminal=client["color_system"] is not None,
            color_system=client["color_system"],
            no_color=client["no_color"],
            legacy_windows=False,
        )
    return _Console(file=file, highlight=False, markup=False, emoji=False, soft_wrap=False)


def quoted(name: str) -> str:
    """A name a user chose (a campaign's, a player's) in quotes, as typed: in single quotes, or
    in double quotes when it holds one, or in curly ones when it holds both; Python's repr
    would print `'it\\'s "q"'`. One that holds a control character is shown as repr shows it,
    escaped, so it cannot break the line or the terminal."""
    if not name.isprintable():
        return repr(name)
    if "'" not in name:
        return f"'{name}'"
    if '"' not in name:
        return f'"{name}"'
    return f"\u201c{name}\u201d"


def split_list(text: str | None) -> list[str] | None:
    """'A,B' as [A, B]; '' as []; no option at all as None (the default choice). For zone
    lists, whose names hold spaces; unit lists go through `names.split_units`."""
    return None if text is None else [p.strip() for p in text.split(",") if p.strip()]


def names(c: Campaign) -> Names:
    return Names(c)


def acting(c: Campaign, nation: str | None) -> str:
    """The nation named (in any spelling or by code), or the one whose turn it is."""
    return Names(c).nation(nation) if nation else c.nation


def perform(
    ctx: Context,
    name: str,
    inputs: dict[str, Any],
    dice_text: str | None = None,
    reference: str | None = None,
    confirm: Callable[[Any], bool] | None = None,
) -> Outcome:
    """Run the named action (tracker.actions) on the selected campaign through the application
    service, with the dice options given. A player at a terminal who gave no --dice in a
    manual-dice campaign is asked for each roll as it comes; scripts keep --dice (and are
    refused without it)."""
    t = ctx.tracker
    t.require_writable()
    inputs = dict(inputs)
    if dice_text is not None:
        inputs["dice"] = parse_dice(dice_text)
    if reference is not None:
        inputs["ref"] = reference
    if ctx.dice_override is not None:
        inputs.update(override=True, reason=ctx.dice_override.reason, agreed_by=list(ctx.dice_override.agreed_by))
    ask = ask_for_dice if dice_text is None and interactive() else None
    seen, ctx.seen = ctx.seen, None  # what the user saw holds for the first action they ask for
    return t.perform(t.campaign_id(ctx.campaign), name, inputs, seen=seen, ask=ask, confirm=confirm)


def interactive() -> bool:
    """Whether a person is at the keyboard (both ends of the command on a terminal)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask_for_dice(what: str, count: int, faces: int) -> list[int]:
    """Ask for one roll's dice, as `pending` would name it, until the values fit (D1, D3)."""
    while True:
        text = click.prompt(f"Dice for {what} ({plural(count, 'die')}, D{faces}, in order)", prompt_suffix=": ")
        problem = dice_problem(text)
        if problem is not None:
            click.echo(f"  {problem}", err=True)
            continue
        try:
            values = parse_dice(text)
        except TrackerError as e:
            click.echo(f"  {e}", err=True)
            continue
        if len(values) == count and all(1 <= v <= faces for v in values):
            return values
        # Say which was wrong: "give 1 die, each 1 to 10" after "9,9" read as a range problem.
        wrong = [v for v in values if not 1 <= v <= faces]
        typed = (
            f"{wrong[0]} is no face of a D{faces}"
            if wrong
            else f"{plural(len(values), 'die')} {'was' if len(values) == 1 else 'were'} typed"
        )
        click.echo(f"  {typed}: give {plural(count, 'die')}, each 1 to {faces}", err=True)


def next_command(item: dict[str, Any]) -> str | None:
    """The command that answers one item of `pending`: a procedure's step, what a phase
    still requires (T4), or the phasing nation's `next` (the describer's, so `next`'s refusals
    name the same command)."""
    from tracker.service.describe import command

    return command(item)


def act(
    ctx: Context,
    name: str,
    inputs: dict[str, Any],
    dice_text: str | None = None,
    reference: str | None = None,
) -> None:
    """Run an action and print each event it recorded with its rule ID, then what the game
    waits for and the command that answers it (with --json, `recorded_json`)."""
    done = perform(ctx, name, inputs, dice_text, reference)
    if wants_json():
        emit_recorded(ctx, name, done.events, done.campaign)
        return
    echo_events(ctx, done)
    echo_waiting(done.events, done.campaign.pending())


def echo_events(ctx: Context, done: Outcome) -> None:
    """Each event an action recorded, with its rule ID; and before the event that follows it,
    "battle 3: Britain fights on" for each decision after a round of a naval battle that was to
    fight on (NC4), which records no event of its own (RK1 records a submerge or a retreat):
    said by `battle auto` and `battle step`, which take it by default, as `battle decide` says it."""
    events: list[Any] = done.events
    fought_on = fighting_on(events, _deciding_before(ctx, done))
    scenario, ruleset = done.campaign.scenario, done.campaign.ruleset
    for i, e in enumerate(events):
        for nation in fought_on.get(i, []):
            echo_prose(f"battle {e.battle}: {nation} fights on   [NC4]")
        echo_prose(f"{summary(e, scenario, ruleset)}   [{rule_of(e)}]")


# What follows a naval battle's decision after a round: the next nation's turn to decide, the
# next round, or the battle's end; and the events of a decision that is not to fight on.
_AFTER_DECIDING = frozenset({"BattleAdvanced", "RoundStarted", "BattleEnded"})
_DECIDED = frozenset({"SubmarinesSubmerged", "AttackerRetreated"})


def _naval_decide(e: Any) -> bool:
    """NC4: the event that opens a naval battle's decide step (an interception's cites SM4)."""
    return type(e).__name__ == "BattleAdvanced" and e.step == "decide" and e.rule == "NC4"


def fighting_on(events: list[Any], deciding: dict[int, list[str]]) -> dict[int, list[str]]:
    """NC4: by the index of the event that follows each, the nations whose decision after a round
    of a naval battle, among `events`, was to fight on; `deciding` holds the naval battles at
    their decide step before the first event, with the nations they wait for. A decision is one
    nation's: the one the next decide step no longer waits for, or the last one waited for
    before the next round or the end; one that submerged or retreated did not fight on."""
    waiting = dict(deciding)
    acted: dict[int, bool] = dict.fromkeys(waiting, False)
    said: dict[int, list[str]] = {}
    for i, e in enumerate(events):
        kind, battle = type(e).__name__, getattr(e, "battle", None)
        if battle in waiting and kind in _DECIDED:
            acted[battle] = True
        elif battle in waiting and kind in _AFTER_DECIDING:
            before = waiting.pop(battle)
            decided = [n for n in before if n not in e.waiting] if _naval_decide(e) else before
            if len(decided) == 1 and not acted[battle]:
                said[i] = decided
        if _naval_decide(e):
            waiting[e.battle], acted[e.battle] = list(e.waiting), False
    return said


def _deciding_before(ctx: Context, done: Outcome) -> dict[int, list[str]]:
    """NC4: the naval battle the action's first battle event is of, with the nations it waited
    for, when that event follows a decision after a round (`fighting_on`); read from the battle's
    last step recorded before the action, only then."""
    first: Any = next((e for e in done.events if getattr(e, "battle", None) is not None), None)
    if first is None or not (_naval_decide(first) or type(first).__name__ in ("RoundStarted", "BattleEnded")):
        return {}
    t = ctx.tracker
    for stored in t.recorder.select_events(done.campaign.id, lte=done.asked - 1, desc=True, limit=20):
        e: Any = t.decode(stored)
        if type(e).__name__ == "BattleAdvanced" and e.battle == first.battle:
            return {e.battle: list(e.waiting)} if _naval_decide(e) else {}
    return {}


# The events that change the units bought this turn and not yet placed (PU1, PU2, T4).
_PURCHASES = frozenset({"UnitsPurchased", "UnitsPlaced", "PurchasesForfeited"})


def echo_waiting(events: list[Any], items: list[dict[str, Any]]) -> None:
    """After an action that recorded `events`: each item of `pending` with the command that
    answers it. The units bought this turn, placed only in placement (PU2, T3), block nothing
    before then: their one line (`placed_later`) follows only an action that bought, placed or
    gave up units, not every move and battle step of the turn, where it told nothing new."""
    later = [i for i in items if i["kind"] == "unplaced" and not i["blocking"]]
    for item in items:
        if item in later:
            continue
        echo_prose(f"Waiting: {item['text']}")
        answer = next_command(item)
        if answer:
            click.echo(f"  next: {suggested(answer)}")
    if later and any(type(e).__name__ in _PURCHASES for e in events):
        echo_prose(placed_later(later))


def placed_later(items: list[dict[str, Any]]) -> str:
    """PU2, T3: the units bought this turn, placed only in placement, in one line after each
    action before then. Each item's text lists every zone where its type may go (27 for
    Britain's ships on the whole war's map): repeated for every type after every purchase and
    move, they buried what the action did; `pending` lists them."""
    units = ", ".join(plural(i["count"], i["unit_type"]) for i in items)
    nation = items[0]["waiting"][0]
    return f"Waiting: {nation} has {units} bought this turn, to place in placement (where: tracker pending) [PU2]"


def nation_option(
    help_text: str = "Acting nation (default: the nation whose turn it is).",
) -> Callable[[_F], _F]:
    """`--nation`, completed from the campaign's nations."""
    from tracker.cli.completion import complete_nations

    return click.option("--nation", type=NATION, help=help_text, shell_complete=complete_nations)


def battle_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    """The BATTLE argument: a battle number, completed from the campaign's battles."""
    from tracker.cli.completion import complete_battles

    return click.argument("battle", type=POSITIVE, shell_complete=complete_battles)(f)


class PhaseChoice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2 on
    """A phase named on the command line, in any case and as the tracker's prose says it too:
    `combat movement` (the demo and the reports print it so), `Combat-Movement` and
    `combat_movement` are one phase. A refused name that begins a phase's name (`--to combat
    movement` unquoted gives `combat`) says which phase it may have meant."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            value = "_".join(value.replace("-", " ").split())
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            typed = value.casefold() if isinstance(value, str) else ""
            close = [str(p) for p in self.choices if typed and str(p).startswith(typed)]
            if not close:
                raise
            self.fail(f"{e.message.rstrip('.')}; did you mean {' or '.join(map(repr, close))}?", param, ctx)


PHASES = PhaseChoice(list(KNOWN_PHASES), case_sensitive=False)
