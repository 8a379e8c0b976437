"""`funes status`: what the memory holds and what needs attention, with the next command to run."""

from __future__ import annotations

from dataclasses import dataclass, field

from funes.commands.memory import MemoryKind, MemoryRef
from funes.commands.runtime import Runtime
from funes.errors import FunesError
from funes.store import Store, StoreStats
from funes.traces import discover


@dataclass(slots=True)
class SourceStatus:
    harness: str
    units: int  # sessions/files the agent has on this machine
    owed: int  # of which not (fully) indexed yet


@dataclass(slots=True)
class StatusReport:
    memory: str
    exists: bool
    stats: StoreStats | None
    embedder: str | None  # the model the memory is stamped with
    reranker: str  # the active cross-encoder, or why there is none
    vectors_note: str | None = None
    sources: list[SourceStatus] = field(default_factory=list)
    attention: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def run_status(rt: Runtime, memory: MemoryRef) -> StatusReport:
    """Summarise `memory`. Never raises for an absent or empty memory: it says so instead."""
    reranker_name = rt.models.reranker
    report = StatusReport(memory.label, False, None, None, reranker_name)
    if memory.kind is MemoryKind.REMOTE:
        report.attention.append("remote memories are not supported yet")
        return report
    assert memory.path is not None
    if memory.path.exists():
        try:
            store = Store.open(memory.path, readonly=True)
        except FunesError as exc:
            report.attention.append(exc.message)
            return report
        try:
            report.exists = True
            report.stats = store.stats()
            report.embedder = store.model_id
            if not store.vectors_available:
                report.vectors_note = store.vectors_unavailable_reason
                report.attention.append(
                    f"vector search unavailable ({store.vectors_unavailable_reason}): lexical only"
                )
            if memory.kind is MemoryKind.LOCAL:
                report.sources = _source_status(rt, store)
        except FunesError as exc:  # a damaged memory: say so (and what to do), do not fail
            report.attention.append(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            return report
        finally:
            store.close()
    elif memory.kind is MemoryKind.LOCAL:
        report.sources = _source_status(rt, None)
    owed = sum(s.owed for s in report.sources)
    if owed:
        report.attention.append(f"{owed} agent session file(s) not indexed yet")
        report.next_steps.append("funes index")
    if not report.exists or (report.stats and report.stats.chunks == 0):
        if not report.next_steps:
            report.next_steps.append("funes index")
        report.next_steps.append("funes add <claude|codex|pi|hermes>  (index every turn automatically)")
    elif not report.next_steps:
        report.next_steps.append('funes recall "<what you want to remember>"')
    return report


def _source_status(rt: Runtime, store: Store | None) -> list[SourceStatus]:
    out: list[SourceStatus] = []
    for source in discover(rt.homes):
        units = list(source.units())
        if not units:
            continue
        owed = 0
        for unit in units:
            record = store.unit(unit.key) if store is not None else None
            if record is None or record.signature != unit.signature:
                owed += 1
        out.append(SourceStatus(source.harness.value, len(units), owed))
    return out
