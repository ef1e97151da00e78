"""`tracker new`, `campaigns`, `scenarios`, `rulesets` and `demo`: making campaigns and what they are made from."""

from __future__ import annotations

import json
import shlex

import click

from domain.errors import DataFileError, InputError
from domain.ruleset import builtin_names, load_ruleset, read_builtin_or_file
from domain.schema import control_character, printable
from domain.text import phase_name
from domain.toml_lines import key_lines
from tracker.cli.common import (
    Context,
    echo_prose,
    emit_json,
    emit_recorded,
    json_option,
    quoted,
    suggested,
)
from tracker.cli.params import RULESET, SCENARIO, FilePath
from tracker.cli.startup import importing


@click.command()
@click.argument("name")
@click.option(
    "--scenario",
    type=SCENARIO,
    help="Built-in scenario name (north-sea-1914, great-war-1914) or a scenario TOML file (required).",
)
@click.option("--ruleset", type=RULESET, help="Built-in ruleset name or a ruleset TOML file (default: the scenario's).")
@click.option("--dice", type=click.Choice(["auto", "manual"]), help="Dice source (default: the scenario's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the events recorded and what the game waits for.")
@click.pass_obj
def new(ctx: Context, name: str, scenario: str | None, ruleset: str | None, dice: str | None, as_json: bool) -> None:
    """Create a campaign.

    Example: tracker new autumn --scenario north-sea-1914 --dice auto
    """
    if scenario is None:
        # Required, and said with the boards to choose from: a newcomer knows none by name.
        from domain.ruleset import builtin_names

        shipped = ", ".join(builtin_names("scenarios"))
        raise click.UsageError(f"missing option --scenario: a built-in scenario ({shipped}) or a scenario TOML file")
    if not ctx.has_tracker:
        # Everything the campaign is made of is checked before the database is opened: opening
        # creates a new SQLite file, which a refused command must not leave behind. (An open
        # one, a shell's or a server's, exists already; through a server, only the server may
        # read a scenario, and its tracker refuses a file path before reading it.)
        with importing():
            from tracker.service.new_campaign import prepare_campaign

        try:
            prepare_campaign(name, scenario, ruleset, dice)
        except DataFileError as e:
            if e.source != scenario:
                raise
            # The first problem only, with its line where `scenario check` finds it (an editor
            # jumps there): the check of the file lists every one.
            from tracker.cli.commands.scenario import line_of

            line = line_of(scenario, ruleset, e.key)
            raise DataFileError(
                e.source if line is None else f"{e.source}:{line}",
                e.key,
                f"{e.problem} (`tracker scenario check {shlex.quote(scenario)}` lists every problem)",
            ) from None
    ctx.may_create = True
    t = ctx.tracker
    campaign = t.create(name, scenario, ruleset, dice)
    if as_json:
        events = [t.decode(s) for s in t.recorder.select_events(campaign.id)]
        made = {"scenario": campaign.scenario.title, "ruleset": campaign.ruleset.name, "dice": campaign.dice_mode}
        emit_recorded(ctx, "new", events, campaign, **made)
        return
    echo_prose(
        f"Campaign {quoted(campaign.name)} created: {campaign.scenario.title} with ruleset "
        f"{campaign.ruleset.name}, {campaign.dice_mode} dice."
    )
    click.echo(f"Round {campaign.round} · {campaign.nation} · {phase_name(campaign.phase)}")


@click.command()
@json_option
@click.pass_obj
def campaigns(ctx: Context, as_json: bool) -> None:
    """List the campaigns in the database.

    Example: tracker --db league.db campaigns
    """
    names = ctx.tracker.campaign_names()
    if as_json:
        emit_json(names)
        return
    if not names:
        click.echo(f"No campaigns yet: {suggested('tracker new NAME --scenario north-sea-1914')}")
    for name in names:
        click.echo(name)


@click.command()
@json_option
def scenarios(as_json: bool) -> None:
    """List the built-in scenarios.

    Example: tracker scenarios --json
    """
    rows = []
    for name in builtin_names("scenarios"):
        data, _ = read_builtin_or_file("scenarios", name)
        meta = data["scenario"]
        rows.append(
            {
                "name": name,
                "title": meta.get("title", name),
                "ruleset": meta.get("ruleset"),
                "nations": meta.get("turn_order"),
            }
        )
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        echo_prose(f"{r['name']}: {r['title']} (ruleset {r['ruleset']}; {', '.join(r['nations'])})")


@click.command()
@click.option(
    "--copy",
    "builtin",
    type=click.Choice(builtin_names("rulesets")),
    help="Write a copy of this built-in ruleset (its comments kept) to edit into house rules; needs -o.",
)
@click.option(
    "-o",
    "--output",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="With --copy: the file to write, its ruleset named after it (house.toml: house), or - for standard output.",
)
@click.option("--force", is_flag=True, help="With --copy: replace the file if it exists.")
@json_option
def rulesets(builtin: str | None, output: str | None, force: bool, as_json: bool) -> None:
    """List the built-in rulesets.

    With --copy, write a copy of one to edit into your group's house rules (a pip install keeps
    the built-in files deep in the Python environment).

    Example: tracker rulesets --copy twtea-3e -o house.toml
    """
    if builtin is not None or output is not None or force:
        _copy_ruleset(builtin, output, force, as_json)
        return
    rows = []
    for name in builtin_names("rulesets"):
        rs, _ = load_ruleset(name)
        rows.append({"name": name, "title": rs.title, "version": rs.version, "units": list(rs.units)})
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        echo_prose(f"{r['name']}: {r['title']} (version {r['version']})")


def _copy_ruleset(builtin: str | None, output: str | None, force: bool, as_json: bool) -> None:
    """`rulesets --copy BUILTIN -o FILE`: the built-in file's text, named after FILE."""
    if builtin is None or output is None:
        raise click.UsageError("give --copy RULESET and -o FILE together (-o - for standard output)")
    from importlib import resources
    from pathlib import Path

    from tracker.cli.output import write_output

    text = resources.files("domain.data").joinpath("rulesets", f"{builtin}.toml").read_text(encoding="utf-8")
    # A copy keeping the built-in's name would be announced as it (`new`, `units`, reports)
    # while its values are the group's own: it takes the file's, or, written to standard
    # output or to a file named as a built-in, the built-in's with "-copy".
    name = Path(output).stem
    if output == "-" or name in builtin_names("rulesets"):
        name = f"{builtin if output == '-' else name}-copy"
    if control_character(name) is not None:
        raise InputError(
            f"{printable(output)}: the ruleset is named after the file, and its name may not hold control characters"
        )
    line = key_lines(text)[("ruleset", "name")].line
    rows = text.split("\n")
    # The name's own line: a comment after its value goes with it, said again after the new one.
    comment = rows[line - 1].partition("#")[2] if "#" in rows[line - 1] else ""
    rows[line - 1] = f"name = {json.dumps(name, ensure_ascii=False)}" + (f"  #{comment}" if comment else "")
    if output == "-":
        click.echo("\n".join(rows), nl=False)  # the file itself: no --json about it
        return
    if Path(output).exists() and not force:
        raise InputError(f"{output}: exists; --force replaces it, or give another file with -o")
    write_output(output, "\n".join(rows))
    if as_json:
        emit_json({"file": output, "ruleset": name, "from": builtin})
        return
    echo_prose(f"Wrote {output}: a copy of {builtin}, named {name}.")
    quoted_path = shlex.quote(output)
    echo_prose(
        f"Next: edit it, then tracker new NAME --scenario SCENARIO --ruleset {quoted_path}, or name it in "
        f"the scenario file (ruleset = {json.dumps(Path(output).name, ensure_ascii=False)}, read from the "
        "scenario's folder)."
    )


@click.command()
@click.option(
    "--db",
    "demo_db",
    type=FilePath(dir_okay=False),
    help="New SQLite file for the demo campaign, as the global --db (default demo-campaign.db; never replaced).",
)
@click.option(
    "--scenario",
    type=click.Choice(["north-sea-1914", "great-war-1914"]),
    default="north-sea-1914",
    show_default=True,
    help="The board: the learning board, or the world (its first round, entry into the war F8).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON: the database, campaign and scenario, and the narration."
)
@click.pass_obj
def demo(ctx: Context, demo_db: str | None, scenario: str, as_json: bool) -> None:
    """Play a short scripted campaign with auto dice and narrate it, in a new database.

    Example: tracker --db demo.db demo && tracker --db demo.db verify
    """
    from tracker.cli.demo import NAME, run_demo

    if demo_db and ctx.db and demo_db != ctx.db:
        raise InputError(f"two databases given ({ctx.db} and {demo_db}): give --db once")
    path = demo_db or ctx.db or "demo-campaign.db"
    if not as_json:
        run_demo(path, echo_prose, scenario=scenario)
        return
    narration: list[str] = []
    run_demo(path, narration.append, scenario=scenario)
    # A line may hold several (a heading after a blank line): one list item per printed line.
    lines = [line for said in narration for line in said.split("\n")]
    emit_json({"db": path, "campaign": NAME, "scenario": scenario, "narration": lines})
