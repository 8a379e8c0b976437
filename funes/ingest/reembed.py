"""Re-embedding a memory in place when funes' embedding recipe changed (see funes.chunks).

A memory keeps the recipe it was created with (`Store.embedding_input`), so vectors never mix
silently. A memory built by an older funes (recipe `text`: the chunk alone) is brought to the
current one (EMBED_INPUT: replies and tool output embedded with the prompt of their exchange)
by re-embedding its stored chunks in rowid order, from the stored texts: transcripts the agent
has since deleted lose nothing. Progress is a watermark in the memory's meta
(`Store.reembedding`), committed after every batch, so an interrupted run (budget spent, killed,
Ctrl-C) resumes where it stopped; rows written meanwhile get rowids past the watermark and are
reached in turn. When the last row is done the memory's recipe switches to the target.
Callers hold the memory's writer lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from funes.chunks import EMBED_INPUT
from funes.inference import Embedder
from funes.ingest.embed_input import stored_embedding_inputs
from funes.store import Store


@dataclass(slots=True)
class ReembedReport:
    """What one run did: chunks re-embedded, chunks still owed, whether the memory switched."""

    source: str  # the recipe the memory had when the run started
    target: str
    chunks: int = 0
    pending: int = 0
    finished: bool = False
    elapsed_s: float = 0.0


def owes_reembedding(store: Store, target: str = EMBED_INPUT) -> bool:
    """True when the memory has vectors made with another recipe than `target`."""
    return (
        store.vectors_available and store.model_id is not None and store.embedding_input != target
    )


def chunks_owed(store: Store, target: str = EMBED_INPUT) -> int:
    """How many stored chunks still have vectors of an older recipe (0 when none)."""
    if not owes_reembedding(store, target):
        return 0
    return store.count_after(_watermark(store, target))


def _watermark(store: Store, target: str) -> int:
    """The last rowid already re-embedded with `target` (0: none yet)."""
    progress = store.reembedding
    return progress[1] if progress is not None and progress[0] == target else 0


def reembed(
    store: Store,
    embedder: Embedder,
    *,
    target: str = EMBED_INPUT,
    deadline: float | None = None,
    batch: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> ReembedReport | None:
    """Re-embed stored chunks with `target` until done or `deadline` (time.monotonic()).

    Returns None when nothing is owed. `progress(done, total)` after every batch (chunks of
    this run). The embedder must be the memory's own model (the caller checks it).
    """
    if not owes_reembedding(store, target):
        return None
    started = time.monotonic()
    report = ReembedReport(source=store.embedding_input, target=target)
    upto = _watermark(store, target)
    total = store.count_after(upto)
    while True:
        items = store.texts_after(upto, limit=batch)
        if not items:
            store.mark_reembedded(target, upto, finished=True)
            report.finished = True
            break
        if deadline is not None and time.monotonic() > deadline:
            report.pending = store.count_after(upto)
            break
        vectors = embedder.embed(stored_embedding_inputs(store, items, recipe=target))
        store.replace_vectors([rowid for rowid, _ in items], vectors)
        upto = items[-1][0]
        store.mark_reembedded(target, upto)
        report.chunks += len(items)
        if progress is not None:
            progress(report.chunks, max(total, report.chunks))
    report.elapsed_s = time.monotonic() - started
    return report
