"""The Scanner seam, its engines and `redact()`. Pure: no I/O, no storage.

`Scanner` is the seam: `scan(text) -> list[Finding]` with exact character spans of secret
*values*, sorted, non-overlapping. Engines:

* `RuleScanner`: funes' own anchored rules (`funes.redact.catalog`: base rules, vendor
  prefixes, transcript context rules);
* `VendorScanner`: Kingfisher's catalogue of ~490 vendor formats (`funes.redact.vendor`);
* `DetectSecretsScanner`: detect-secrets' regex plugins + funes' plugins (`funes.redact.detect`);
* `UnionScanner`: the union of engines.

Two independent sets: `default_scanner()` (rules + Kingfisher) redacts at index time;
`gate_scanner()` (detect-secrets) is the publish gate's second opinion (funes.redact.gate).

`RULES_VERSION` is bumped whenever detection improves; stored chunks record the version they
passed, and older rows are rescanned before they are shown or published.

`redact(text, scanner)` replaces each finding by `[REDACTED:<kind>]`, then rescans its own
output; text that still shows a finding after three passes is replaced whole. Errors raised by
a scanner propagate: callers that publish must treat them as "scan failed" (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from funes.redact.rules import Rule

RULES_VERSION = 4
MARKER_PREFIX = "[REDACTED:"
_MAX_PASSES = 3


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected secret: the rule (kind) that fired and the span [start, end) of its value."""

    rule: str
    start: int
    end: int


class Scanner(Protocol):
    """Finds secrets in text. `version` changes whenever detection improves."""

    version: int

    def scan(self, text: str) -> list[Finding]: ...


def _markers(text: str) -> list[tuple[int, int]]:
    """Spans of `[REDACTED:<kind>]` markers already in `text`."""
    out: list[tuple[int, int]] = []
    i = text.find(MARKER_PREFIX)
    while i >= 0:
        j = text.find("]", i)
        if j < 0:
            break
        out.append((i, j + 1))
        i = text.find(MARKER_PREFIX, j)
    return out


def _outside_markers(
    spans: Sequence[tuple[str, int, int]], markers: list[tuple[int, int]]
) -> list[tuple[str, int, int]]:
    """`spans` minus the marker spans (a rule must not re-flag our own markers)."""
    out: list[tuple[str, int, int]] = []
    for rule, start, end in spans:
        pieces = [(start, end)]
        for m_start, m_end in markers:
            nxt: list[tuple[int, int]] = []
            for a, b in pieces:
                if m_end <= a or m_start >= b:
                    nxt.append((a, b))
                    continue
                if a < m_start:
                    nxt.append((a, m_start))
                if m_end < b:
                    nxt.append((m_end, b))
            pieces = nxt
        out.extend((rule, a, b) for a, b in pieces if b > a)
    return out


def merge(spans: Sequence[tuple[str, int, int]], text: str | None = None) -> list[Finding]:
    """Sorted, non-overlapping findings: overlapping spans are joined (the longest rule wins).

    With `text`, parts of spans that fall on an existing `[REDACTED:…]` marker are dropped.
    """
    if text is not None and MARKER_PREFIX in text:
        spans = _outside_markers(spans, _markers(text))
    ordered = sorted(spans, key=lambda s: (s[1], -(s[2] - s[1])))
    out: list[Finding] = []
    for rule, start, end in ordered:
        if out and start < out[-1].end:
            if end > out[-1].end:
                last = out[-1]
                out[-1] = Finding(last.rule, last.start, end)
            continue
        out.append(Finding(rule, start, end))
    return out


class RuleScanner:
    """funes' own anchored regular-expression rules (see funes.redact.rules)."""

    version = RULES_VERSION

    def __init__(self, rules: Sequence[Rule] | None = None) -> None:
        self._rules = rules

    @property
    def rules(self) -> Sequence[Rule]:
        """The rules in use (default: funes.redact.catalog.RULES, compiled on first use so the
        CLI start path does not pay for ~90 regular expressions)."""
        if self._rules is None:
            from funes.redact.catalog import RULES

            self._rules = RULES
        return self._rules

    def scan(self, text: str) -> list[Finding]:
        from funes.redact.rules import scan_rules

        return merge(scan_rules(text, self.rules), text) if text else []


class DetectSecretsScanner:
    """detect-secrets' regex plugins plus funes' custom plugins (see funes.redact.detect).

    Raises ImportError (on first scan) when detect-secrets is not installed.
    """

    version = RULES_VERSION

    def scan(self, text: str) -> list[Finding]:
        from funes.redact.detect import scan_detect_secrets

        return merge(scan_detect_secrets(text), text) if text else []


class VendorScanner:
    """Kingfisher's catalogue of vendor token formats (see funes.redact.vendor).

    Raises ImportError (on first scan) when kingfisher-secret-scanner is not installed.
    """

    version = RULES_VERSION

    def scan(self, text: str) -> list[Finding]:
        from funes.redact.vendor import scan_kingfisher

        return merge(scan_kingfisher(text), text) if text else []


class ResidualScanner:
    """The publish gate's heuristics for minted values nothing announces (funes.redact.residual)."""

    version = RULES_VERSION

    def scan(self, text: str) -> list[Finding]:
        from funes.redact.residual import scan_residual

        return merge(scan_residual(text), text) if text else []


class UnionScanner:
    """Every finding of every engine, merged (default: the index-time set)."""

    version = RULES_VERSION

    def __init__(self, engines: Sequence[Scanner] | None = None) -> None:
        self.engines: Sequence[Scanner] = (
            engines if engines is not None else (RuleScanner(), VendorScanner())
        )

    def scan(self, text: str) -> list[Finding]:
        if not text:
            return []
        spans: list[tuple[str, int, int]] = []
        for engine in self.engines:
            spans.extend((f.rule, f.start, f.end) for f in engine.scan(text))
        return merge(spans, text)


def _apply(text: str, findings: Sequence[Finding]) -> str:
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"{MARKER_PREFIX}{f.rule}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def redact(text: str, scanner: Scanner) -> tuple[str, list[Finding]]:
    """Replace every finding in `text` by `[REDACTED:<rule>]`.

    Returns the redacted text and the findings of the first pass (spans refer to the input
    text). The output is rescanned; if a finding survives three passes, the whole text is
    replaced by one marker.
    """
    findings = scanner.scan(text)
    if not findings:
        return text, findings
    out = _apply(text, findings)
    for _ in range(_MAX_PASSES - 1):
        again = scanner.scan(out)
        if not again:
            return out, findings
        out = _apply(out, again)
    if scanner.scan(out):
        return f"{MARKER_PREFIX}unverifiable]", findings
    return out, findings


def default_scanner() -> Scanner:
    """The index-time scanner (funes' rules + Kingfisher's catalogue): what every index run,
    scrub and retrieval guard redacts with, and what the publish gate re-runs over chunks
    stored under an older `RULES_VERSION`."""
    return UnionScanner((RuleScanner(), VendorScanner()))


def gate_scanner() -> Scanner:
    """The publish gate's own detector set, independent of `default_scanner()`: detect-secrets'
    regex plugins plus funes' detect-secrets plugins (funes.redact.detect) and the gate's
    residual heuristics (funes.redact.residual), all written apart from funes.redact.rules.
    Its findings hold chunks back; they never rewrite text."""
    return UnionScanner((DetectSecretsScanner(), ResidualScanner()))
