"""Redaction cost. When funes.redact exposes `bench_figures()` (another work item adds its own
throughput and look-alike measurements), those figures are reported verbatim; otherwise this
module measures default_scanner() on a synthetic 5 MB transcript-like text itself."""

from __future__ import annotations

import random
import time
from typing import Any

import funes.redact as redact_mod
from funes.redact import default_scanner, redact

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
    hook = getattr(redact_mod, "bench_figures", None)
    if callable(hook):
        return {"source": "funes.redact.bench_figures", **dict(hook())}
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
    }


def redaction_seconds(texts: list[str]) -> float:
    """Seconds default_scanner() takes to redact `texts` (the dev set's blocks)."""
    scanner = default_scanner()
    t0 = time.perf_counter()
    for t in texts:
        redact(t, scanner)
    return time.perf_counter() - t0
