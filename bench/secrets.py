"""Redaction: throughput of default_scanner() on a synthetic 5 MB transcript-like text, and
detection quality on the test corpus (tests/secrets/secret_corpus.py: fake secret shapes that
must be caught, look-alikes that must not be flagged — target 0 false positives)."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from funes.redact import default_scanner, redact

SECRET_TESTS = Path(__file__).resolve().parent.parent / "tests" / "secrets"

_LINES = (
    "Running cargo build --release in /home/dev/src/quarry",
    "error[E0432]: unresolved import `clap::Parser`",
    "  --> src/main.rs:3:5",
    'Traceback (most recent call last):\n  File "/app/ledger/tasks.py", line 88, in send_invoice',
    'psycopg.OperationalError: connection to server at "127.0.0.1", port 6432 failed: Connection refused',
    "test result: ok. 148 passed; 0 failed; 2 ignored; finished in 3.41s",
    '{"station": "44025", "ts": "2025-02-03T04:00:00Z", "wave_height_m": 1.82, "period_s": 7.1}',
    "export DATABASE_URL=postgres://app:app@localhost:5432/ledger",
    "I think the cleanest fix is to move the pool size into settings and read it once at startup.",
    "diff --git a/src/auth/jwt.ts b/src/auth/jwt.ts\n@@ -12,7 +12,9 @@ export function sign(payload) {",
    "sha256: 9f2c1e7a4b3d8e6f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071",
)


def synthetic_transcript(size_bytes: int = 5_000_000, *, seed: int = 11) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size_bytes:
        line = rng.choice(_LINES)
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)


def measure(size_bytes: int = 5_000_000) -> dict[str, Any]:
    text = synthetic_transcript(size_bytes)
    scanner = default_scanner()
    t0 = time.perf_counter()
    _, findings = redact(text, scanner)
    elapsed = time.perf_counter() - t0
    return {
        "source": "bench (funes.redact.default_scanner on synthetic text)",
        "mb": round(len(text.encode()) / 1e6, 2),
        "mb_per_s": round(len(text.encode()) / 1e6 / elapsed, 1),
        "findings": len(findings),
        **corpus_quality(),
    }


def corpus_quality() -> dict[str, Any]:
    """Misses on the secret shapes and false positives on the look-alikes of the test corpus."""
    if not SECRET_TESTS.is_dir():
        return {"corpus": "tests/secrets not found"}
    sys.path.insert(0, str(SECRET_TESTS))
    from secret_bench import false_positive_count, missed_secret_count  # type: ignore[import-not-found]
    from secret_corpus import lookalike_cases, secret_cases  # type: ignore[import-not-found]

    return {
        "secret_shapes": len(secret_cases()),
        "missed": missed_secret_count(),
        "lookalikes": len(lookalike_cases()),
        "false_positives": false_positive_count(),
    }


def redaction_seconds(texts: list[str]) -> float:
    """Seconds default_scanner() takes to redact `texts` (the dev set's blocks)."""
    scanner = default_scanner()
    t0 = time.perf_counter()
    for t in texts:
        redact(t, scanner)
    return time.perf_counter() - t0
