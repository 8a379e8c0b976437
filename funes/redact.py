"""Secret detection and redaction over plain text. Pure: no I/O, no storage.

`Scanner` is the seam: `scan(text) -> list[Finding]` with exact character spans.
`RuleScanner` is funes' own anchored rule set (always on, versioned by `RULES_VERSION`).
`redact(text, scanner)` replaces every finding by `[REDACTED:<rule>]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

RULES_VERSION = 1


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected secret: the rule that fired and the span [start, end) of the secret value."""

    rule: str
    start: int
    end: int


class Scanner(Protocol):
    """Finds secrets in text. `version` changes whenever detection improves."""

    version: int

    def scan(self, text: str) -> list[Finding]: ...


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    group: int = 0  # the capture group that holds the secret value (0 = whole match)


def _r(name: str, pattern: str, group: int = 0, flags: int = 0) -> Rule:
    return Rule(name, re.compile(pattern, flags), group)


RULES: Sequence[Rule] = (
    _r(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.|\n|\\n)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    ),
    _r("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    _r("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    _r("github_token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    _r("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _r("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _r("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    _r("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _r("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    _r("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    _r("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    _r("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _r("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]*:([^\s@/'\"]+)@", group=1),
)


class RuleScanner:
    """funes' anchored regular-expression rules (see RULES)."""

    version = RULES_VERSION

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.rules = rules

    def scan(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        for rule in self.rules:
            for m in rule.pattern.finditer(text):
                start, end = m.span(rule.group)
                if end > start:
                    found.append(Finding(rule.name, start, end))
        return _merge(found)


def _merge(findings: list[Finding]) -> list[Finding]:
    """Sort by start and drop findings contained in (or overlapping) an earlier one."""
    findings.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    for f in findings:
        if out and f.start < out[-1].end:
            if f.end > out[-1].end:
                last = out[-1]
                out[-1] = Finding(last.rule, last.start, f.end)
            continue
        out.append(f)
    return out


def redact(text: str, scanner: Scanner) -> tuple[str, list[Finding]]:
    """Replace every finding in `text` by `[REDACTED:<rule>]`.

    Returns the redacted text and the findings (spans refer to the input text).
    """
    findings = scanner.scan(text)
    if not findings:
        return text, findings
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.rule}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), findings


def default_scanner() -> Scanner:
    return RuleScanner()


# -- the push gate -------------------------------------------------------------------------
# The seam between sharing (`funes.remote`) and secret detection: `gate(rows, scanner)`.
# A block is judged whole (its chunks reassembled, so a secret cut by a chunk boundary is
# still seen); every chunk of a dirty block is held back. Fails closed: a scanner error
# holds back every row and is reported without echoing any text.


class GateRow(Protocol):
    """What the gate needs of a chunk (funes.store.StoredChunk and export rows qualify)."""

    @property
    def id(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def block_idx(self) -> int: ...
    @property
    def split_idx(self) -> int: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class GateResult:
    """Which chunk ids may be published. `error` set ⇒ nothing is publishable."""

    publishable: list[str]
    held_back: list[str]
    dirty_blocks: int = 0
    rules: dict[str, int] | None = None  # findings per rule name (counts only, never values)
    error: str | None = None


def gate(rows: Iterable[GateRow], scanner: Scanner) -> GateResult:
    """Split `rows` into publishable and held-back chunk ids.

    Rows of one block (same session, turn and block index) must all be in `rows` for the block
    to be judged whole; their order does not matter. Any exception from the scanner holds back
    every row (`error` names the exception type only).
    """
    from funes.chunks import reassemble

    blocks: dict[tuple[str, str, int], list[GateRow]] = {}
    for row in rows:
        blocks.setdefault((row.session_id, row.turn_id, row.block_idx), []).append(row)
    publishable: list[str] = []
    held: list[str] = []
    rules: dict[str, int] = {}
    dirty = 0
    try:
        for pieces in blocks.values():
            pieces.sort(key=lambda r: r.split_idx)
            findings = scanner.scan(reassemble([r.text for r in pieces]))
            if findings:
                dirty += 1
                held.extend(r.id for r in pieces)
                for f in findings:
                    rules[f.rule] = rules.get(f.rule, 0) + 1
            else:
                publishable.extend(r.id for r in pieces)
    except Exception as exc:  # fail closed: a broken scanner publishes nothing
        every = [r.id for pieces in blocks.values() for r in pieces]
        return GateResult([], every, dirty, rules, error=type(exc).__name__)
    return GateResult(publishable, held, dirty, rules)
