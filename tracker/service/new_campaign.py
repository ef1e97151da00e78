"""What a new campaign is made of (its name, scenario, ruleset and dice), read and checked
before any database is opened, so `tracker new` refuses a bad file without creating one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.errors import DataFileError, InputError
from domain.ruleset import load_ruleset, ruleset_from_dict
from domain.scenario import load_named_ruleset, scenario_from_dict, scenario_text
from domain.schema import printable
from tracker.storage.store import check_campaign_name


@dataclass(frozen=True)
class NewCampaign:
    """What `Tracker.create` records, read and checked before any database is touched."""

    name: str
    scenario_data: dict[str, Any]
    ruleset_data: dict[str, Any]
    dice_mode: str


def _read(scenario: str) -> tuple[dict[str, Any], str, str]:
    """The scenario's tables, text and source label, refused as `scenario check` says it: TOML's
    refusal with the key path of its line (by which `tracker new` shows the line), an empty file
    as empty."""
    # Only making a campaign reads a scenario file: a cold `tracker state` imports neither.
    import tomllib

    from domain.scenario_check import EMPTY, not_toml

    text, source = scenario_text(scenario)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        refused = not_toml(text, str(e))
        raise DataFileError(source, refused.key, refused.message) from None
    if not data:
        raise DataFileError(source, "", EMPTY)
    return data, text, source


def _as_checked(text: str, source: str, ruleset: str | None, met: DataFileError) -> DataFileError:
    """The refusal of a scenario file: the first problem `scenario check` lists (`met`, the
    loader's, should it list none), not the first the loader met in the order it reads the
    tables, so that both name the same line, key path and words, as the guide promises and the
    hint to run the check assumes."""
    from domain.scenario_check import first_error

    first = first_error(text, source, ruleset) or met
    # A key path names a table as written, control characters too: escaped, one line.
    return DataFileError(first.source, printable(first.key), first.problem)


def prepare_campaign(name: str, scenario: str, ruleset: str | None = None, dice: str | None = None) -> NewCampaign:
    """Read and check everything a new campaign is made of: its name, a scenario held to every
    check of `tracker scenario check` (new_campaign), the ruleset, the dice. Nothing here opens a
    database, so `tracker new` refuses a bad file before it would create one."""
    name = check_campaign_name(name)
    scenario_data, text, scenario_source = _read(scenario)
    # The scenario table may be no table at all: the loader below says so with its key path.
    meta = scenario_data.get("scenario")
    declared = meta.get("ruleset") if isinstance(meta, dict) else None
    named = declared if isinstance(declared, str) else "twtea-3e"
    try:
        # One typed with --ruleset is the command's path; one the scenario names is the file's.
        if ruleset:
            ruleset_obj, ruleset_data = load_ruleset(ruleset)
        else:
            ruleset_obj, ruleset_data = load_named_ruleset(named, scenario_source)
    except DataFileError:
        raise  # the ruleset file's own problem, named in it
    except InputError as e:
        if ruleset is not None:
            raise
        # The scenario names a ruleset there is none of: said at its line, as `scenario check` does.
        said = DataFileError(scenario_source, "scenario.ruleset", str(e))
        raise _as_checked(text, scenario_source, None, said) from None
    try:
        parsed = scenario_from_dict(scenario_data, scenario_source, ruleset_obj, new_campaign=True)
    except DataFileError as e:
        raise _as_checked(text, scenario_source, ruleset, e) from None
    dice_mode = dice or parsed.dice
    if dice_mode not in ("auto", "manual"):
        raise InputError(f"dice mode must be auto or manual, got {dice_mode!r}")
    # Check the recorded copies parse the same way before anything is written.
    ruleset_from_dict(ruleset_data, "ruleset")
    return NewCampaign(name, scenario_data, ruleset_data, dice_mode)
