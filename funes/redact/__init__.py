"""Secret detection and redaction over plain text. Pure: no I/O, no storage.

    scanner.py  the Scanner protocol, RuleScanner / DetectSecretsScanner / UnionScanner,
                redact() and RULES_VERSION
    rules.py    funes' own anchored rules      detect.py  detect-secrets' plugins + ours
    values.py   secret values found in a block  gate.py    the fail-closed publish gate

Other packages import from this face.
"""

from __future__ import annotations

from funes.redact.gate import GateResult, GateRow, gate, rewrite_block
from funes.redact.scanner import (
    MARKER_PREFIX,
    RULES_VERSION,
    DetectSecretsScanner,
    Finding,
    RuleScanner,
    Scanner,
    UnionScanner,
    default_scanner,
    merge,
    redact,
)

__all__ = [
    "GateResult",
    "GateRow",
    "gate",
    "rewrite_block",
    "MARKER_PREFIX",
    "RULES_VERSION",
    "DetectSecretsScanner",
    "Finding",
    "RuleScanner",
    "Scanner",
    "UnionScanner",
    "default_scanner",
    "merge",
    "redact",
]
