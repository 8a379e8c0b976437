"""Secret detection and redaction over plain text. Pure: no I/O, no storage.

    scanner.py   the Scanner protocol, the engines (RuleScanner, VendorScanner,
                 DetectSecretsScanner, ResidualScanner, UnionScanner), redact(), RULES_VERSION,
                 default_scanner() (index time) and gate_scanner() (the publish gate's own set)
    catalog.py   funes' rules: base rules + vendor prefixes + transcript context rules
    rules.py     base anchored rules     prefixes.py  vendor token prefixes
    context.py   how secrets appear in transcripts (assignments, headers, curl, prose)
    vendor.py    Kingfisher's catalogue   detect.py   detect-secrets' plugins + ours
    residual.py  the gate's heuristics    values.py   secret values found in a block
    residual_words.py  the gate's credential-word and value shapes
    gate.py      the fail-closed publish gate

Other packages import from this face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.faces import lazy_face
from funes.redact.lazy import EXPORTS

if TYPE_CHECKING:
    from funes.redact.gate import GateResult, GateRow, gate, rewrite_block
    from funes.redact.scanner import (
        MARKER_PREFIX,
        RULES_VERSION,
        DetectSecretsScanner,
        Finding,
        ResidualScanner,
        RuleScanner,
        Scanner,
        UnionScanner,
        VendorScanner,
        default_scanner,
        gate_scanner,
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
    "ResidualScanner",
    "RuleScanner",
    "Scanner",
    "UnionScanner",
    "VendorScanner",
    "default_scanner",
    "gate_scanner",
    "merge",
    "redact",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
