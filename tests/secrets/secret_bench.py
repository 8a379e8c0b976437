"""Measurements of the secret scanner for `make bench` (and the tests that bound them).

Entry points (import with `sys.path.insert(0, "tests/secrets")`):

* `false_positive_count(scanner=None) -> int`: look-alikes (tests/secrets/secret_corpus.py)
  with at least one finding. Target 0.
* `missed_secret_count(scanner=None) -> int`: secret cases whose value survives `redact`.
  Target 0.
* `redaction_throughput_mb_s(target_bytes=5_000_000, scanner=None) -> float`: MB (10^6 UTF-8
  bytes) of transcript-like block text redacted per CPU second.
* `index_overhead(work_dir, target_bytes=1_000_000, embedder=None) -> IndexOverhead`: CPU
  seconds of `funes.ingest.index` over one synthetic Claude Code session with the default
  scanner and with a scanner that finds nothing; `ratio` = with / without (target ≤ 1.10).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secret_corpus import lookalike_cases, secret_cases, transcript_blocks, write_claude_session

from funes.redact import Finding, Scanner, default_scanner, redact


def false_positive_count(scanner: Scanner | None = None) -> int:
    sc = scanner or default_scanner()
    return sum(1 for _, text in lookalike_cases() if sc.scan(text))


def missed_secret_count(scanner: Scanner | None = None) -> int:
    sc = scanner or default_scanner()
    missed = 0
    for case in secret_cases():
        out, _ = redact(case.text, sc)
        missed += any(v in out for v in case.values)
    return missed


def redaction_throughput_mb_s(
    target_bytes: int = 5_000_000, scanner: Scanner | None = None
) -> float:
    sc = scanner or default_scanner()
    blocks = transcript_blocks(target_bytes)
    size_mb = sum(len(b.encode("utf-8")) for b in blocks) / 1e6
    sc.scan("warm up: AKIA")  # load detect-secrets plugins outside the timed region
    started = time.process_time()
    for block in blocks:
        redact(block, sc)
    return size_mb / max(time.process_time() - started, 1e-9)


class NullScanner:
    """A scanner that finds nothing (indexing 'without redaction')."""

    version = 0

    def scan(self, text: str) -> list[Finding]:
        return []


@dataclass(frozen=True)
class IndexOverhead:
    with_redaction_s: float
    without_redaction_s: float
    megabytes: float

    @property
    def ratio(self) -> float:
        return self.with_redaction_s / max(self.without_redaction_s, 1e-9)


def _index_once(work_dir: Path, texts: list[str], scanner: Scanner, embedder: Any) -> float:
    from funes.ingest import IndexJob, index
    from funes.store import Store
    from funes.traces import sources_for_path

    work_dir.mkdir(parents=True, exist_ok=True)
    session = write_claude_session(work_dir / "home", texts)
    store = Store.open(work_dir / "memory.db")
    try:
        job = IndexJob(store=store, embedder=embedder, scanner=scanner, all_tiers_at_once=True)
        sources = sources_for_path(session, None)
        started = time.process_time()
        index(sources, job)
        return time.process_time() - started
    finally:
        store.close()


def index_overhead(
    work_dir: Path, target_bytes: int = 1_000_000, embedder: Any = None
) -> IndexOverhead:
    """Index the same synthetic session twice (fresh memories), with and without redaction."""
    texts = transcript_blocks(target_bytes)
    default_scanner().scan("warm up: AKIA")
    without = _index_once(work_dir / "plain", texts, NullScanner(), embedder)
    with_ = _index_once(work_dir / "redacted", texts, default_scanner(), embedder)
    return IndexOverhead(with_, without, sum(len(t.encode("utf-8")) for t in texts) / 1e6)
