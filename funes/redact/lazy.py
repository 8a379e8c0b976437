"""Where each name of the funes.redact face lives, loaded on first use (PEP 562).

Recall only needs the scanner's version and, for rows stored under older rules, `redact`; the
fail-closed publish gate (gate.py and the residual heuristics it pulls in) loads only when a
push or status judges blocks, not on every cold `funes recall` (issue 15: cold start).
"""

from __future__ import annotations

# name on the face → (module of funes.redact, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "GateResult": ("gate", "GateResult"),
    "GateRow": ("gate", "GateRow"),
    "gate": ("gate", "gate"),
    "rewrite_block": ("gate", "rewrite_block"),
    "MARKER_PREFIX": ("scanner", "MARKER_PREFIX"),
    "RULES_VERSION": ("scanner", "RULES_VERSION"),
    "DetectSecretsScanner": ("scanner", "DetectSecretsScanner"),
    "Finding": ("scanner", "Finding"),
    "ResidualScanner": ("scanner", "ResidualScanner"),
    "RuleScanner": ("scanner", "RuleScanner"),
    "Scanner": ("scanner", "Scanner"),
    "UnionScanner": ("scanner", "UnionScanner"),
    "VendorScanner": ("scanner", "VendorScanner"),
    "default_scanner": ("scanner", "default_scanner"),
    "gate_scanner": ("scanner", "gate_scanner"),
    "merge": ("scanner", "merge"),
    "redact": ("scanner", "redact"),
}
