"""The rule set of the index-time scanner: funes' base rules, vendor prefixes, context rules
(assignments, headers, curl), structured stores (.netrc, XML, calls, JWKs), command lines,
prose.

`RULES` is what `RuleScanner` runs (see funes.redact.rules for the engine). Bump
`funes.redact.RULES_VERSION` whenever this set detects more.
"""

from __future__ import annotations

from funes.redact.commands import COMMAND_RULES
from funes.redact.context import CONTEXT_RULES
from funes.redact.prefixes import PREFIX_RULES
from funes.redact.prose import PROSE_RULES
from funes.redact.rules import BASE_RULES, Rule
from funes.redact.structured import STRUCTURED_RULES

RULES: tuple[Rule, ...] = (
    BASE_RULES + PREFIX_RULES + CONTEXT_RULES + STRUCTURED_RULES + COMMAND_RULES + PROSE_RULES
)
