"""`funes recall`: rank a memory's passages for a query (structured results, never printed here)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from funes.commands.reading import open_reading
from funes.commands.scope import NO_SCOPE, Scope, filters_for
from funes.errors import UsageError
from funes.inference import LazyEmbedder, embedder_name
from funes.memory import MemoryRef, Runtime, foreign_owner
from funes.retrieval import RecallResult, recall
from funes.settings import RECALL, Leg, RecallParams
from funes.traces import BlockType, Harness, clean_text, printable


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    params: RecallParams = RECALL
    block_types: tuple[BlockType, ...] = ()  # any of them (--type, repeatable); empty = any
    harness: Harness | None = None
    scope: Scope = NO_SCOPE  # --project, --since/--until, --session (applied before the top-k cut)


@dataclass(slots=True)
class RecallOutcome:
    result: RecallResult
    memory: str  # the label of the memory actually read (what `→ get` lines carry)
    owner: str | None = None  # who owns it when it is not the user's own (funes.memory.owner)
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

    Raises UsageError for a query with no text (before anything is opened) or a bad scope
    (funes.commands.scope: an unknown or ambiguous session, a time it cannot read), and NoIndex /
    StoreError / IncompatibleStore / RemoteError from opening the memory. A memory whose
    embedding model cannot be loaded is recalled from BM25 alone, with a note saying why.
    """
    if not request.query.strip():
        raise UsageError("a recall query is required", hint='funes recall "what you want to find"')
    opened = open_reading(rt, memory)
    store = opened.store
    try:
        spec = rt.embedder_spec_for(store.model_id)
        store.check_model(spec.model_id, selector=embedder_name(store.model_id))
        embedder = rt.embedder(spec) if opened.memory.vectors_available and store.model_id else None
        reranker = rt.reranker() if request.params.rerank else None
        filters = filters_for(
            request.scope,
            opened.stores,
            harness=request.harness.value if request.harness else None,
            block_types=[t.value for t in request.block_types],
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
        restricted = _restrictions(request)
        # nothing came back and the restrictions, not the query, are why: say so
        if restricted and not result.hits and not any(s.admits_any(filters) for s in opened.stores):
            result.notes.append(
                f"no session in this memory matches {restricted}; `funes sessions` lists the "
                "sessions it holds"
            )
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
            foreign_owner(rt, memory),
            {cid: label for cid, label in labels.items() if label != opened.label},
        )
    finally:
        opened.close()


def prefetch_query(rt: Runtime, request: RecallRequest) -> LazyEmbedder | None:
    """Send the request's query to the child that the console script started to load the
    model (funes.inference.prefetch), the model a memory is most likely stamped with
    (FUNES_EMBEDDER, else the default), so the query is embedded there while `run_recall`
    opens the memory. Returns the embedder that holds the child — its `cancel_prefetch()`
    belongs in the caller's `finally` (a memory of another model, or without vectors, never
    asks for the vector) — or None when there is no child."""
    query = clean_text(request.query)
    if not query.strip() or Leg.VECTOR not in request.params.legs:
        return None
    embedder = rt.embedder(rt.embedder_spec_for(None))
    if not isinstance(embedder, LazyEmbedder):  # a model already in hand (a test's, a server's)
        return None
    return embedder if embedder.prefetch_query(query) else None


def _restrictions(request: RecallRequest) -> str:
    """The request's scope and facets as CLI flags, shell-quoted (`--project /x --type text`),
    or "" when it has none."""
    words = request.scope.flags()
    if request.harness is not None:
        words += ["--harness", request.harness.value]
    for block_type in request.block_types:
        words += ["--type", block_type.value]
    return " ".join(shlex.quote(printable(w)) for w in words)


def no_support_line(outcome: RecallOutcome, *, weak: bool = False, show_all: str = "--all") -> str:
    """The agent-format line saying nothing in memory supports the query (AGENTS.md):
    `no supporting passage (best support <s> < <threshold>; --all shows the weak candidates)`,
    or `…; weak candidates follow)` when they are shown after it. `show_all`: how the caller
    asks for them (the CLI's `--all`; the MCP recall tool's `"all": true`)."""
    r = outcome.result
    support = f"{r.support:.3f}" if r.support is not None else "n/a"
    threshold = f"{r.min_support:.3f}" if r.min_support is not None else "n/a"
    tail = "weak candidates follow" if weak else f"{show_all} shows the weak candidates"
    return f"no supporting passage (best support {support} < {threshold}; {tail})"
