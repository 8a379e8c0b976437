"""Vendor token formats from a maintained rule catalogue: Kingfisher (MongoDB, Apache-2.0).

`kingfisher-secret-scanner` runs Kingfisher's Rust engine in-process over Vectorscan with its
bundled catalogue (~490 rules: the Betterleaks/gitleaks-lineage rule set plus OSV-Scalibr's
Veles detectors), so funes' own rules need not chase every vendor's new prefix. Findings carry
exact byte offsets; `scan_kingfisher` turns them into character spans of the secret value.

What is used: every *visible* finding (a rule's reportable secret) and the few helper findings
that are themselves secrets (`_HELPER_SECRETS`, e.g. an AWS secret key seen without its key
id); helper findings that name things (client ids, account names, hosts, URLs) are not.
Base64 decoding is off: a finding inside decoded text has no span in the block to redact.

The compiled rules are cached by Kingfisher (`KF_RULE_CACHE_DIR`, else the OS cache
directory): ~7 s to compile the first time on a laptop core, ~0.6 s to load after. Import and
compilation happen on the first scan, never on the CLI start path. Errors propagate: a scanner
that cannot run must make its caller fail closed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from funes.redact.rules import without_gutters
from funes.redact.values import is_placeholder

# Helper (not visible) findings whose value is a secret in its own right.
_HELPER_SECRETS = frozenset(
    {
        "aws-secret-access-key",
        "alibaba-sts-security-token",
        "exoscale-api-secret",
        "ovh-application-key",
        "ovh-consumer-key",
        "polymarket-api-secret",
        "polymarket-passphrase",
    }
)


# Catalogue rules whose findings vendors publish by design (client ids, publishable and
# public keys, PostHog's write-only project key): left alone, as funes' own rules leave
# `pk_live_…` alone. Matched on the rule id's last part.
_PUBLIC_BY_DESIGN = re.compile(
    r"(?:^|-)(?:client-id|pub-key|pub-api-key|public-key|publishable-key)(?:\.\d+)?$"
    r"|^posthog-project-api-key"
)


@lru_cache(maxsize=1)
def _engine() -> Any:
    """The compiled Kingfisher scanner (built once per process; raises if not installed)."""
    from kingfisher_sdk import Rules, Scanner

    return Scanner(rules=Rules(confidence="low"), base64=False, redact=False)


def rule_count() -> int:
    """How many rules the catalogue holds (for reports)."""
    return len(_engine().rules)


def _kind(rule_id: str) -> str:
    """`betterleaks.vault-service-token` → `vault_service_token` (what the marker shows)."""
    name = rule_id.rsplit(".", 1)[-1] if not rule_id.startswith("veles.") else rule_id[6:]
    name = name.split("/")[-1]
    return name.replace("-", "_").replace(".", "_").lower()


def _pem_body(text: str, start: int, end: int) -> tuple[int, int]:
    """A whole PEM block found by a rule is cut to its body: the BEGIN/END lines stay readable
    (as funes' own private_key rule does)."""
    if not text.startswith("-----BEGIN", start):
        return start, end
    head = text.find("-----", start + 10)
    tail = text.find("-----END", head + 5 if head >= 0 else start, end)
    if head < 0 or tail < 0:
        return start, end
    return head + 5, tail


def scan_kingfisher(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) character spans of every Kingfisher finding in `text` (unsorted).
    Kingfisher reads `text` with line-number gutters blanked (same length, same offsets)."""
    text = without_gutters(text)
    data = text.encode("utf-8")
    ascii_only = len(data) == len(text)
    out: list[tuple[str, int, int]] = []
    for finding in _engine().scan(data):
        rule_id = finding.rule_id
        base = rule_id.rsplit(".", 1)[-1]
        if not finding.visible and base not in _HELPER_SECRETS:
            continue
        if _PUBLIC_BY_DESIGN.search(rule_id.split(".", 1)[-1]):
            continue
        loc = finding.location
        start, end = int(loc["start_offset"]), int(loc["end_offset"])
        if not ascii_only:
            start = len(data[:start].decode("utf-8", errors="ignore"))
            end = len(data[:end].decode("utf-8", errors="ignore"))
        start, end = _pem_body(text, start, end)
        if end > start and not is_placeholder(text[start:end]):
            out.append((_kind(rule_id), start, end))
    return out
