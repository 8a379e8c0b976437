"""The rule set of the index-time scanner: funes' base rules, vendor prefixes, context rules.

`RULES` is what `RuleScanner` runs (see funes.redact.rules for the engine). Bump
`funes.redact.RULES_VERSION` whenever this set detects more.
"""

from __future__ import annotations

from funes.redact.context import CONTEXT_RULES
from funes.redact.prefixes import PREFIX_RULES
from funes.redact.rules import BASE_RULES, Rule

RULES: tuple[Rule, ...] = BASE_RULES + PREFIX_RULES + CONTEXT_RULES
