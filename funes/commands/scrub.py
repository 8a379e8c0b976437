"""`funes scrub`: rewrite the local memory so it holds no detectable secret; the push gate helper.

`run_scrub` takes the writer lock, rescans every block (or only blocks stored under older
rules), redacts in place, re-embeds rewritten chunks and reports counts (see
funes.ingest.scrub). Source transcripts are never modified.

`gate_store(store)` runs the publish gate (funes.redact.gate) over every chunk of an open
store: `funes status` reports its held-back count and `funes push` publishes only its
`publishable_ids`. It raises SecretScanFailed when the scanner cannot be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

from funes.commands.memory import MemoryRef, open_for_write
from funes.commands.runtime import Runtime
from funes.ingest.scrub import ScrubReport, scrub
from funes.redact import Scanner, default_scanner
from funes.redact.gate import GateResult, GateRow, gate
from funes.store import Store


@dataclass(slots=True)
class ScrubOutcome:
    report: ScrubReport
    memory: str


def run_scrub(rt: Runtime, memory: MemoryRef, *, outdated_only: bool = False) -> ScrubOutcome:
    """Scrub `memory` in place under its writer lock.

    Raises StoreLocked when another writer holds the memory, IncompatibleStore when its
    embedding model cannot be matched, UsageError for a remote memory.
    """
    store = open_for_write(rt, memory)
    try:
        with store.writing():
            embedder = None
            if store.vectors_available and store.model_id is not None:
                spec = rt.embedder_spec_for(store.model_id)
                store.check_model(spec.model_id)
                embedder = rt.embedder(spec)
            report = scrub(store, default_scanner(), embedder, only_outdated=outdated_only)
        return ScrubOutcome(report, memory.label)
    finally:
        store.close()


def gate_store(store: Store, scanner: Scanner | None = None) -> GateResult:
    """The publish gate over every chunk of `store` (raises SecretScanFailed: publish nothing)."""
    rows = (GateRow(*row) for row in store.gate_rows())
    return gate(rows, scanner or default_scanner())
