"""`funes recall`: rank a memory's passages for a query (structured results, never printed here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from funes.commands.reading import open_reading
from funes.errors import UsageError
from funes.memory import MemoryRef, Runtime
from funes.retrieval import RecallResult, recall
from funes.settings import RECALL, RecallParams
from funes.store import Filters
from funes.traces import BlockType, Harness


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    params: RecallParams = RECALL
    block_type: BlockType | None = None
    harness: Harness | None = None


@dataclass(slots=True)
class RecallOutcome:
    result: RecallResult
    memory: str  # the label of the memory actually read (what `→ get` lines carry)
    # chunk id → the memory a hit came from, for hits not from `memory` (a bound memory
    # also shows this host's turns not published to it yet: those say `local`)
    hit_memory: dict[str, str] = field(default_factory=dict)

    def memory_of(self, chunk_id: str) -> str:
        """The memory label a hit's `→ get` line names."""
        return self.hit_memory.get(chunk_id, self.memory)


def run_recall(
    rt: Runtime,
    memory: MemoryRef,
    request: RecallRequest,
    *,
    progress: Callable[[str], None] | None = None,
) -> RecallOutcome:
    """Recall passages for the request from `memory`.

    Raises UsageError for a query with no text (before anything is opened), NoIndex /
    StoreError / IncompatibleStore / RemoteError from opening the memory, and
    ModelUnavailable when the memory's embedding model cannot be loaded.
    """
    if not request.query.strip():
        raise UsageError("a recall query is required", hint='funes recall "what you want to find"')
    opened = open_reading(rt, memory)
    store = opened.store
    try:
        spec = rt.embedder_spec_for(store.model_id)
        store.check_model(spec.model_id)
        embedder = rt.embedder(spec) if opened.memory.vectors_available and store.model_id else None
        reranker = rt.reranker() if request.params.rerank else None
        filters = Filters(
            harness=request.harness.value if request.harness else None,
            block_type=request.block_type.value if request.block_type else None,
        )
        result = recall(
            opened.memory,
            request.query,
            embedder=embedder,
            reranker=reranker,
            params=request.params,
            filters=filters,
            progress=progress,
        )
        result.notes[:0] = opened.notes
        if (
            request.params.rerank
            and reranker is None
            and rt.models.reranker != "none"
            and rt.reranker_note
        ):
            result.notes.append(f"reranker unavailable ({rt.reranker_note}): fused order kept")
        labels = {h.chunk.id: opened.label_of(h.chunk) for h in result.hits}
        return RecallOutcome(
            result,
            opened.label,
            {cid: label for cid, label in labels.items() if label != opened.label},
        )
    finally:
        opened.close()
