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

A pump left by an exception (Ctrl-C, or SIGTERM: funes.cli.main raises both as
KeyboardInterrupt) does not wait for the model: the batch it runs may be the model's first,
which loads it (reading, building its int8 graph, downloading it: seconds to minutes), and
the interrupt would wait for all of it. The thread is left to finish that call and end; it
touches nothing but the embedder, and the CLI's exit watchdog bounds how long the
interpreter's exit waits for it (funes.cli.main INTERRUPT_GRACE_S).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from queue import SimpleQueue
from typing import TYPE_CHECKING

from funes.inference import Embedder
from funes.ingest.embed_input import stored_embedding_inputs
from funes.store import Store

if TYPE_CHECKING:
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

    Use from the thread that owns `store`, as a context manager (or call `close`; left by
    an exception, the context manager closes without waiting for the model). `feed` never
    waits; `drain` waits until nothing (of the priorities asked) is owed. Errors of the
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
        self._thread: _ModelThread | None = None

    def __enter__(self) -> VectorPump:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.close(wait=exc_type is None)

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

    def close(self, *, wait: bool = True) -> None:
        """Stop: batches not started are dropped, a running one is dropped (its chunks stay
        owed); the background thread ends once it is done. `wait`: for that (False: an
        interrupt, see the module docstring)."""
        self._drop_waiting()
        self._flight.clear()
        if self._thread is not None:
            self._thread.stop(wait=wait)
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
            self._flight.append(_Batch(rows, inputs, self._model_thread().submit(inputs)))

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

    def _model_thread(self) -> _ModelThread:
        if self._thread is None:
            self._thread = _ModelThread(self._embed)
        return self._thread


class _ModelThread:
    """One thread running embedding calls in the order submitted. Not a ThreadPoolExecutor:
    concurrent.futures joins its threads at exit before the main thread counts as finished,
    so the CLI's exit watchdog (funes.cli.main) could not bound an interrupted run's wait for
    a model that is still loading; a plain (non-daemon) thread is joined after that."""

    def __init__(self, embed: Callable[[list[str]], NDArray[np.float32]]) -> None:
        self._embed = embed
        self._calls: SimpleQueue[tuple[Future[NDArray[np.float32]], list[str]] | None] = (
            SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def submit(self, inputs: list[str]) -> Future[NDArray[np.float32]]:
        """`embed(inputs)` on the thread, after the calls submitted before it."""
        future: Future[NDArray[np.float32]] = Future()
        self._calls.put((future, inputs))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="funes-pump")
            self._thread.start()
        return future

    def stop(self, *, wait: bool) -> None:
        """End the thread after the calls submitted (cancel those not to run first);
        `wait`: until it has ended."""
        self._calls.put(None)
        if wait and self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            future, inputs = call
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(self._embed(inputs))
            except BaseException as exc:  # the caller's, raised where it collects the batch
                future.set_exception(exc)
