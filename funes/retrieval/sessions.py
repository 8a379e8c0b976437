"""The sessions of a memory, a page at a time, newest first (`funes sessions`, MCP `sessions`).

The listing is the store's (funes.store.listing); this adds the read-side secret guard: an
opening prompt stored under older redaction rules is redacted on the fly, as recall and get do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from funes.redact import Scanner, default_scanner
from funes.retrieval.guard import guard_text
from funes.retrieval.union import MemoryUnion
from funes.store import NO_FILTERS, Filters, SessionSummary, Store


@dataclass(slots=True)
class SessionPage:
    """One page of a memory's sessions: how many match, where the page starts, its sessions."""

    total: int
    offset: int
    sessions: list[SessionSummary]

    @property
    def more(self) -> bool:
        return self.offset + len(self.sessions) < self.total


def list_sessions(
    store: Store | MemoryUnion,
    *,
    filters: Filters = NO_FILTERS,
    prompt: str | None = None,
    limit: int = 20,
    offset: int = 0,
    scanner: Scanner | None = None,
) -> SessionPage:
    """Sessions with a chunk that `filters` admit (and whose opening prompt holds `prompt`),
    newest first by their latest turn, `limit` from `offset` (through a binding: the shared
    memory's and this host's unpublished ones, see MemoryUnion.session_summaries)."""
    scanner = scanner or default_scanner()
    total, rows = store.session_summaries(filters, prompt=prompt, limit=limit, offset=offset)
    guarded = [replace(r, opening=guard_text(r.opening, r.opening_version, scanner)) for r in rows]
    return SessionPage(total, offset, guarded)
