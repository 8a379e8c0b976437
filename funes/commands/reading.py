"""Opening a memory for `recall` and `get`: a shared memory bound on this host reads together
with this host's turns not published to it yet.

An agent bound to a shared memory (`funes add <agent> org/repo`) recalls through its MCP
server from that memory; its own newest turns are only published at the end of its session.
So a bound memory (any agent of this host bound to it, no pinned commit) is read as a
MemoryUnion of the remote and the local memory, the local chunks the remote already holds
hidden: the agent recalls what it did ten minutes ago, and nothing twice. Each hit says which
memory it came from (`label_of`: its `→ get` line names it). A bound remote that holds
nothing yet, or cannot be reached with nothing cached, reads as the local memory alone (with
a note); a local memory of another embedding model is left out (with a note).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from funes.errors import FunesError, NoIndex, RemoteError
from funes.memory import MemoryRef, OpenMemory, Runtime, bound_agents, open_memory, parse_memory
from funes.retrieval import MemoryUnion, Searchable
from funes.store import Store, StoredChunk


@dataclass(slots=True)
class Reading:
    """A memory opened for reading, maybe with this host's unpublished turns beside it."""

    memory: Searchable
    store: Store  # the memory named (its model, its stats); the local one when it stood in
    label: str  # the label of the memory read
    notes: list[str] = field(default_factory=list)
    _opened: list[OpenMemory] = field(default_factory=list)

    @property
    def stores(self) -> list[Store]:
        """The memories read (the bound one first, then this host's unpublished turns)."""
        if isinstance(self.memory, MemoryUnion):
            return list(self.memory.stores)
        return [self.store]

    def label_of(self, chunk: StoredChunk) -> str:
        """Which memory a fetched chunk came from (its `→ get … --memory` value)."""
        if isinstance(self.memory, MemoryUnion):
            return self.memory.label_of(chunk)
        return self.label

    def close(self) -> None:
        for opened in self._opened:
            opened.close()


def open_reading(rt: Runtime, ref: MemoryRef) -> Reading:
    """Open `ref` for recall/get (see the module docstring). Raises what `open_memory` raises
    (NoIndex, StoreError, IncompatibleStore, RemoteError) when nothing can be read."""
    if not _bound(rt, ref):
        opened = open_memory(rt, ref)
        return Reading(opened.store, opened.store, opened.label, list(opened.notes), [opened])
    local = _local(rt)
    try:
        opened = open_memory(rt, ref)
    except (NoIndex, RemoteError) as exc:
        if local is None:
            raise
        reason = f"{ref.label} holds nothing yet" if isinstance(exc, NoIndex) else exc.message
        note = f"{reason}: reading this host's memory only"
        return Reading(local.store, local.store, local.label, [note], [local])
    notes = list(opened.notes)
    if local is None:
        return Reading(opened.store, opened.store, opened.label, notes, [opened])
    if local.store.model_id != opened.store.model_id:
        local.close()
        notes.append(
            "this host's memory uses another embedding model: its unpublished turns are not shown"
        )
        return Reading(opened.store, opened.store, opened.label, notes, [opened])
    union = MemoryUnion([(opened.label, opened.store), (local.label, local.store)])
    return Reading(union, opened.store, opened.label, notes, [opened, local])


def _bound(rt: Runtime, ref: MemoryRef) -> bool:
    return ref.shared and ref.revision is None and bool(bound_agents(rt.paths, ref.label))


def _local(rt: Runtime) -> OpenMemory | None:
    """This host's memory, when it exists and holds chunks."""
    try:
        return open_memory(rt, parse_memory(None, rt))
    except FunesError:
        return None
