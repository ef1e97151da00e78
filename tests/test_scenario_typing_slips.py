"""`scenario check` (and `tracker new`, in the same words) on the slips a group makes typing its
own board into a scenario file: where TOML's own words ("Invalid value", "Unclosed array",
"Expected ']'") say nothing of the fix, the check says what to write instead, at the line and
key path the slip is on; a name that looks the same as a zone's but is encoded otherwise is
said to be, not suggested as itself."""

from __future__ import annotations

import unicodedata

import pytest

from domain.scenario import scenario_text
from domain.scenario_check import Finding, check_scenario

NORTH_SEA = scenario_text("north-sea-1914")[0]


def edited(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) == count, old
    return text.replace(old, new)


def line_with(text: str, fragment: str) -> int:
    return text.count("\n", 0, text.index(fragment)) + 1


def only_error(text: str) -> Finding:
    (error,) = check_scenario(text, "board.toml").errors
    return error


# ----- TOML's refusals, told with their fix -----


def test_curly_quotes_a_word_processor_types_are_named_as_such() -> None:
    for old, new in [
        ('at = "Central North Sea"', "at = “Central North Sea”"),  # a value
        ('[map.sea."Skagerrak"]', "[map.sea.“Skagerrak”]"),  # a header
        ('ntr = { "Skagerrak" = 1 }', "ntr = { “Skagerrak” = 1 }"),  # a key inside { ... }
    ]:
        text = NORTH_SEA.replace(old, new, 1)
        error = only_error(text)
        assert error.line == line_with(text, new)
        assert "“ is a curly quote, as a word processor types it: TOML's quotes are straight" in error.message
        # Not the hint for a slip of { ... } it is not.
        assert "each entry is a key = value" not in error.message


def test_a_closing_curly_quote_is_named_rather_than_called_missing() -> None:
    text = NORTH_SEA.replace('at = "Central North Sea"', 'at = "Central North Sea”', 1)
    error = only_error(text)
    assert "” is a curly quote" in error.message and "a closing quote is missing" not in error.message


def test_a_header_name_with_accents_unquoted_is_shown_quoted_at_its_own_key() -> None:
    text = edited(NORTH_SEA, '[map.land."Scotland"]', "[map.land.Skottland_Å]")
    text = text.replace('"Scotland"', '"Skottland_Å"')
    error = only_error(text)
    assert (error.line, error.key) == (line_with(text, "[map.land.Skottland_Å]"), "map.land.Skottland_Å")
    assert error.message.endswith(
        'a name with letters other than a to z is written in quotes, as [map.land."Skottland_Å"])'
    )


def test_a_header_name_with_spaces_is_keyed_by_the_whole_name() -> None:
    text = edited(NORTH_SEA, '[map.sea."Central North Sea"]', "[map.sea.Central North Sea]")
    assert only_error(text).key == "map.sea.Central North Sea"


def test_a_key_with_spaces_or_accents_unquoted_is_shown_quoted() -> None:
    text = edited(NORTH_SEA, '"Central Powers" = [', "Central Powers = [")
    error = only_error(text)
    assert (error.line, error.key) == (line_with(text, "Central Powers = ["), "sides.Central Powers")
    assert error.message.endswith('a name with spaces is written in quotes, as "Central Powers" = ...)')
    text = edited(NORTH_SEA, 'ntr = { "Skagerrak" = 1 }', "ntr = { Skagerrak = 1, Ålandshav = 1 }")
    error = only_error(text)
    assert error.message.endswith('a name with letters other than a to z is written in quotes, as "Ålandshav" = ...)')


def test_a_comma_missing_between_list_entries_is_not_called_an_unclosed_list() -> None:
    old = 'adjacent = ["Skagerrak", "Heligoland Bight", "Southern North Sea", "Scotland", "England"]'
    text = edited(NORTH_SEA, old, old.replace('"Skagerrak", "Heligoland Bight"', '"Skagerrak" "Heligoland Bight"'))
    error = only_error(text)
    assert (error.line, error.key) == (line_with(text, '"Skagerrak" "Heligoland'), "map.sea.Central North Sea.adjacent")
    assert 'a comma is missing before "Heligoland Bight"' in error.message
    # Over lines: TOML stops at the entry after the gap, in a list begun above.
    text = edited(NORTH_SEA, old, 'adjacent = [\n  "Skagerrak"\n  "Heligoland Bight",\n  "England",\n]')
    error = only_error(text)
    assert (error.line, error.key) == (line_with(text, '  "Heligoland Bight",'), "map.sea.Central North Sea.adjacent")
    assert 'a comma is missing before "Heligoland Bight"' in error.message and "still open" not in error.message
    text = edited(NORTH_SEA, old, old.replace('"Skagerrak", "Heligoland Bight"', '"Skagerrak"; "Heligoland Bight"'))
    assert "the entries of [ ... ] are separated by commas, not ';'" in only_error(text).message


def test_a_list_left_open_is_still_called_open_where_the_next_key_begins() -> None:
    text = edited(NORTH_SEA, '"Central Powers" = ["Germany", "Austria-Hungary"]', '"Central Powers" = ["Germany"')
    error = only_error(text)
    assert "the value begun at line" in error.message and "comma" not in error.message


def test_several_values_without_brackets_are_shown_as_a_list() -> None:
    text = edited(NORTH_SEA, 'adjacent = ["Heligoland Bight"]', 'adjacent = "Heligoland Bight", "Scotland"')
    error = only_error(text)
    assert error.key == "map.sea.Skagerrak.adjacent"
    assert error.message.endswith('written in brackets, as adjacent = ["Heligoland Bight", "Scotland"])')


def test_a_colon_for_equals_is_shown_with_equals_at_its_key() -> None:
    text = edited(NORTH_SEA, 'code = "DE"', 'code: "DE"')
    error = only_error(text)
    assert error.key == "nations.Germany.code"
    assert error.message.endswith("""a key and its value are joined by '=', as code = "DE")""")


@pytest.mark.parametrize(("typed", "meant"), [("True", "true"), ("FALSE", "false"), ("yes", "true"), ("no", "false")])
def test_a_yes_or_no_value_not_in_tomls_words_is_shown_as_true_or_false(typed: str, meant: str) -> None:
    # PU2: `port` is the file's yes-or-no key.
    text = edited(NORTH_SEA, '[map.land."England"]\n', f'[map.land."England"]\nport = {typed}\n')
    error = only_error(text)
    assert error.key == "map.land.England.port"
    assert f"as port = {meant}" in error.message and "text needs quotes, as name" not in error.message


def test_unquoted_text_is_still_told_to_take_quotes() -> None:
    text = edited(NORTH_SEA, 'title = "The North Sea, autumn 1914"', "title = Yes Minister")
    assert only_error(text).message.endswith('text needs quotes, as name = "North Sea")')


# ----- a name encoded otherwise -----


def test_a_reference_encoded_otherwise_is_said_to_be_not_suggested_as_itself() -> None:
    composed = NORTH_SEA.replace("Skagerrak", "Skagerråk")
    decomposed = unicodedata.normalize("NFD", "Skagerråk")
    text = composed.replace('ntr = { "Skagerråk" = 1 }', f'ntr = {{ "{decomposed}" = 1 }}')
    error = only_error(text)
    assert error.key.endswith(f".ntr.{decomposed}") and error.line == line_with(text, decomposed)
    assert "it looks the same, but an accented letter is encoded another way (Unicode NFC and NFD)" in error.message


def test_a_zone_table_encoded_otherwise_than_its_references_is_said_to_be() -> None:
    text = NORTH_SEA.replace("Skagerrak", "Skagerråk")
    decomposed = unicodedata.normalize("NFD", "Skagerråk")
    text = edited(text, '[map.sea."Skagerråk"]', f'[map.sea."{decomposed}"]')
    error = only_error(text)
    assert error.line == line_with(text, f'[map.sea."{decomposed}"]')
    assert "encoded another way (Unicode NFC and NFD): type the name again; referred to by" in error.message
