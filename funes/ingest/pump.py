"""Owed vectors computed on a background thread while the thread that owns the memory goes on.

A `VectorPump` keeps up to `depth` batches of chunks owed a vector (store `owed_vectors`) in
the embedder, which runs them on one background thread; the thread that owns the store does
every read and write of it: it fetches and writes batches while the model runs. An index pass
(funes.ingest.indexing) feeds it between units, so the model embeds the prose already stored
while the next units are read, redacted and stored (the two cores are both busy instead of one
idling through the storing); a drain overlaps its reads and writes with the model instead of
standing between batches.

A vector is written only while its chunk still owes one and the chunk's embedding input is
still the one embedded: the pass may have rewritten or dropped the chunk, or changed its
prompt context, while the model ran; such a chunk stays owed and is fetched again. Vectors
computed but not yet written when the process dies are simply owed still.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes.inference import Embedder
from funes.ingest.embed_input import stored_embedding_inputs
from funes.store import Store

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    import numpy as np
    from numpy.typing import NDArray

# Chunks per embedding call: ~0.2-0.5 s of the int8 model on 2 cores, the granularity at which
# a drain notices its deadline or a writer waiting for the memory.
BACKFILL_BATCH = 32
# Batches in the embedder at once: one running, one fetched and waiting behind it, so the
# model never waits for the store.
DEPTH = 2

Row = tuple[int, str, str, str]  # (rowid, text, harness, block_type), as owed_vectors gives


@dataclass(slots=True)
class _Batch:
    rows: list[Row]
    inputs: list[str]
    vectors: Future[NDArray[np.float32]]


class VectorPump:
    """Embeds chunks owed a vector of `store` on a background thread (see module docstring).

    Use from the thread that owns `store`, as a context manager (or call `close`). `feed`
    never waits; `drain` waits until nothing (of the priorities asked) is owed. Errors of the
    embedder (ModelUnavailable) are raised by the call that collects the batch.
    """

    def __init__(
        self, store: Store, embedder: Embedder, *, batch: int = BACKFILL_BATCH, depth: int = DEPTH
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.batch = max(1, batch)
        self.depth = max(1, depth)
        self._flight: deque[_Batch] = deque()
        self._thread: ThreadPoolExecutor | None = None

    def __enter__(self) -> VectorPump:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def feed(self, *, max_priority: int | None = None) -> int:
        """Without waiting for the model: write the batches it has finished (in order) and
        fill the pipeline up to `depth` batches of chunks owed a vector (of priority ≤
        `max_priority` when given). Returns the vectors written."""
        written = 0
        while self._flight and self._flight[0].vectors.done():
            written += self._write(self._flight.popleft())
        self._top_up(max_priority)
        return written

    def drain(
        self,
        *,
        max_priority: int | None = None,
        deadline: float | None = None,
        stop: Callable[[], bool] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed until no chunk owes a vector (of priority ≤ `max_priority` when given),
        `deadline` (time.monotonic()) passes or `stop()` says so, checked before each batch
        is fetched; then the batch the model is running is written, one not started is
        dropped (its chunks stay owed). Returns the vectors written. `progress(done, total)`
        after each written batch: done by this drain, of those owed when it began (or done,
        if more)."""
        written = 0
        owed_at_start: int | None = None
        while True:
            halted = (deadline is not None and time.monotonic() > deadline) or (
                stop is not None and stop()
            )
            if halted:
                self._drop_waiting()
            else:
                self._top_up(max_priority)
            if not self._flight:
                return written
            if owed_at_start is None:
                owed_at_start = self.store.owed_total()
            written += self._write(self._flight.popleft())
            if progress is not None:
                progress(written, max(owed_at_start, written))

    def close(self) -> None:
        """Stop: batches not started are dropped, a running one is waited for and dropped
        (its chunks stay owed); the background thread ends."""
        self._drop_waiting()
        self._flight.clear()
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None

    def _top_up(self, max_priority: int | None) -> None:
        while len(self._flight) < self.depth:
            busy = {r[0] for b in self._flight for r in b.rows}
            fetched = self.store.owed_vectors(
                limit=self.batch + len(busy), max_priority=max_priority
            )
            rows = [r for r in fetched if r[0] not in busy][: self.batch]
            if not rows:
                return
            inputs = stored_embedding_inputs(self.store, [(r[0], r[1]) for r in rows])
            self._flight.append(_Batch(rows, inputs, self._executor().submit(self._embed, inputs)))

    def _embed(self, inputs: list[str]) -> NDArray[np.float32]:
        return self.embedder.embed(inputs)

    def _write(self, batch: _Batch) -> int:
        """Wait for `batch`'s vectors and write those whose chunk still owes one for the very
        input embedded. Returns how many were written."""
        vectors = batch.vectors.result()  # the embedder's own error, raised here
        now = {r[0]: r for r in self.store.owed_among([r[0] for r in batch.rows])}
        same = [i for i, r in enumerate(batch.rows) if r[0] in now and now[r[0]][1] == r[1]]
        if same:
            inputs = stored_embedding_inputs(self.store, [batch.rows[i][:2] for i in same])
            same = [i for i, text in zip(same, inputs, strict=True) if text == batch.inputs[i]]
        if same:
            self.store.add_vectors([now[batch.rows[i][0]] for i in same], vectors[same])
        return len(same)

    def _drop_waiting(self) -> None:
        """Cancel the batches the model has not started (their chunks stay owed)."""
        kept: deque[_Batch] = deque()
        for b in self._flight:
            if not b.vectors.cancel():
                kept.append(b)
        self._flight = kept

    def _executor(self) -> ThreadPoolExecutor:
        if self._thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._thread = ThreadPoolExecutor(1, thread_name_prefix="funes-pump")
        return self._thread
