"""Every rule the referee cites has a one-line statement, which `explain` and the reports print."""

from __future__ import annotations

import re
from pathlib import Path

from domain.rules.catalog import RULES, statement

ROOT = Path(__file__).resolve().parent.parent
# Where the code names a rule: a refusal's rule, or the rule an event or a summary records.
CITED = re.compile(r'(?:RuleViolation\(\s*|rule=|"rule":\s*)"([A-Z]{1,3}\d+)"')


def cited_rules() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for package in ("domain", "projections", "tracker"):
        for path in (ROOT / package).rglob("*.py"):
            for m in CITED.finditer(path.read_text(encoding="utf-8")):
                found.setdefault(m.group(1), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_rule_the_code_cites_has_a_statement() -> None:
    cited = cited_rules()
    assert {"F8", "T3", "RK3"} <= set(cited)  # the scan finds what the referee cites
    missing = {rule: sorted(paths) for rule, paths in cited.items() if rule not in RULES}
    assert not missing, f"rules cited without a statement in domain/rules/catalog.py: {missing}"


def test_f8_statement_says_what_a_neutral_may_not_do() -> None:
    text = statement("F8")
    assert "neutral" in text and "passed over" in text and "AD1" in text
