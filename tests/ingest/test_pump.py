"""The vector pump: owed vectors computed on a background thread while the thread that owns
the memory goes on storing. A vector lands only for the input it was computed from; a chunk
rewritten, re-contextualised or dropped meanwhile keeps owing its vector (or has none)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fakes import BagOfWordsEmbedder
from numpy.typing import NDArray
from support.claude import conversation, write_session

from funes.ingest import IndexJob, Progress, index
from funes.ingest.embed_input import stored_embedding_inputs
from funes.ingest.pump import VectorPump
from funes.redact import RuleScanner
from funes.settings import INDEX
from funes.store import Store
from funes.traces import AgentHomes, discover

PAIRS = [
    ("user", "Why does the checkout page time out under load?"),
    ("assistant", "The payment webhook handler holds a row lock while it calls the bank API."),
    ("user", "How do we fix it?"),
    ("assistant", "Move the bank call out of the transaction and retry with an idempotency key."),
]


class GatedEmbedder(BagOfWordsEmbedder):
    """Embeds only once `go` is set; `started` is set by each call (on the pump's thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.go = threading.Event()
        self.batches: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.batches.append(list(texts))
        self.started.set()
        assert self.go.wait(30), "the test never let the embedder go"
        return super().embed(texts)


def _store_lexically(store: Store, pairs: list[tuple[str, str]], home: Path) -> None:
    """Write the session and index it without an embedder: every chunk owes its vector."""
    write_session(home, conversation(pairs))
    job = IndexJob(store, None, RuleScanner(), params=replace(INDEX, budget_s=0))
    index(discover(AgentHomes.resolve()), job)


def _owing(path: Path, home: Path, emb: BagOfWordsEmbedder) -> Store:
    """A memory stamped for `emb` holding PAIRS lexically, every chunk owing its vector."""
    store = Store.open(path)
    store.stamp_model(emb.model_id, emb.dim)
    _store_lexically(store, PAIRS, home)
    return store


def _assert_every_vector_is_of_its_current_input(store: Store) -> None:
    """Each chunk's vector, when it has one, is the embedding of its input as stored now; no
    vector belongs to a chunk that is not stored."""
    chunks = dict(store.raw.execute("select rowid, text from chunks").fetchall())
    vectors = dict(store.raw.execute("select rowid, embedding from chunks_vec").fetchall())
    assert set(vectors) <= set(chunks), "a vector of a chunk no longer stored"
    rowids = sorted(vectors)
    inputs = stored_embedding_inputs(store, [(r, chunks[r]) for r in rowids])
    expected = store._vector_bytes(BagOfWordsEmbedder().embed(inputs))
    for rowid, blob in zip(rowids, expected, strict=True):
        assert vectors[rowid] == blob, f"chunk {rowid}: a vector of another input"


@pytest.mark.parametrize(
    ("changed", "again"),
    [
        # the reply itself is rewritten while its vector is computed
        (lambda pairs: [*pairs[:1], ("assistant", "Shard the ledger by merchant."), *pairs[2:]], 1),
        # the prompt before the reply is: the reply's text is the same, its input is not
        (lambda pairs: [("user", "Why is the invoice export slow?"), *pairs[1:]], 2),
        # the last exchange is gone from the transcript (its chunks are dropped)
        (lambda pairs: pairs[:2], 0),
    ],
    ids=["reply-rewritten", "prompt-rewritten", "turns-dropped"],
)
def test_a_vector_lands_only_for_the_input_it_was_computed_from(
    isolated_env: Path, tmp_path: Path, changed: object, again: int
) -> None:
    emb = GatedEmbedder()
    with _owing(tmp_path / "m.db", isolated_env, emb) as store:
        owed = store.owed_total()
        assert owed == len(PAIRS)
        with VectorPump(store, emb, batch=len(PAIRS)) as pump:
            assert pump.feed() == 0  # submitted; nothing is ready to write yet
            assert emb.started.wait(30)
            _store_lexically(store, changed(PAIRS), isolated_env)  # type: ignore[operator]
            emb.go.set()
            pump.drain()
        _assert_every_vector_is_of_its_current_input(store)
        assert store.owed_total() == 0  # what changed was embedded again, from its new input
        # the first batch, then only the chunks whose input changed meanwhile
        assert [len(b) for b in emb.batches] == [len(PAIRS)] + ([again] if again else [])


def test_feeding_never_waits_for_the_model_and_keeps_at_most_depth_batches_in_it(
    isolated_env: Path, tmp_path: Path
) -> None:
    emb = GatedEmbedder()
    with _owing(tmp_path / "m.db", isolated_env, emb) as store:
        with VectorPump(store, emb, batch=1, depth=2) as pump:
            for _ in range(3):
                assert pump.feed() == 0
            assert emb.started.wait(30)
            assert len(emb.batches) == 1  # one running; one waiting behind it; no third
            emb.go.set()
            assert pump.drain() == len(PAIRS)
        assert [len(b) for b in emb.batches] == [1] * len(PAIRS)
        assert len({b[0] for b in emb.batches}) == len(PAIRS)  # each chunk embedded once
        _assert_every_vector_is_of_its_current_input(store)


def test_a_drain_told_to_stop_writes_the_running_batch_and_leaves_the_rest_owed(
    isolated_env: Path, tmp_path: Path
) -> None:
    emb = BagOfWordsEmbedder()
    with _owing(tmp_path / "m.db", isolated_env, emb) as store:
        asked = []

        def stop() -> bool:
            asked.append(1)
            return len(asked) > 1  # the first batch goes ahead

        with VectorPump(store, emb, batch=1) as pump:
            written = pump.drain(stop=stop)
        assert 1 <= written <= 2  # the batch it fetched, and the one behind it if it ran
        assert store.owed_total() == len(PAIRS) - written
        _assert_every_vector_is_of_its_current_input(store)


def test_an_index_run_embeds_the_prose_while_it_stores_the_next_units(
    isolated_env: Path, tmp_path: Path
) -> None:
    """The tier-0 pass feeds the pump between units: vectors of the first sessions' prose are
    written before the pass has stored the last session, prose before anything else."""
    for n in range(6):
        pairs = [(role, f"{text} (session {n})") for role, text in PAIRS]
        write_session(isolated_env, conversation(pairs, session=f"s{n}"), session=f"s{n}")
    emb = BagOfWordsEmbedder()
    vectors_seen: list[int] = []
    with Store.open(tmp_path / "m.db") as store:

        def on_unit(event: Progress) -> None:
            if event.tier == 0:
                vectors_seen.append(
                    store.raw.execute("select count(*) from chunks_vec").fetchone()[0]
                )
                if len(vectors_seen) == 1:
                    threading.Event().wait(0.2)  # the pump's thread embeds (microseconds)

        job = IndexJob(
            store, emb, RuleScanner(), params=replace(INDEX, budget_s=0), progress=on_unit
        )
        report = index(discover(AgentHomes.resolve()), job)
        assert report.vectors_backfilled == report.chunks_written == 6 * len(PAIRS)
        _assert_every_vector_is_of_its_current_input(store)
    assert vectors_seen[0] == 0 and vectors_seen[-1] > 0, vectors_seen


def test_a_long_session_is_embedded_while_the_rest_of_it_is_stored(
    isolated_env: Path, tmp_path: Path
) -> None:
    """A session is written in batches; the pump is fed after each, so the model starts on
    the first batch of a long session instead of waiting for the whole of it."""
    import sqlite3

    pairs = [(role, f"{text} (exchange {n})") for n in range(200) for role, text in PAIRS[:2]]
    write_session(isolated_env, conversation(pairs))
    db = tmp_path / "m.db"

    class Watching(BagOfWordsEmbedder):
        """Notes how many chunks are committed when each batch reaches the model."""

        def __init__(self) -> None:
            super().__init__()
            self.stored_at_call: list[int] = []

        def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
            with sqlite3.connect(db) as peek:  # a reader of its own, on the pump's thread
                self.stored_at_call.append(
                    peek.execute("select count(*) from chunks").fetchone()[0]
                )
            return super().embed(texts)

    emb = Watching()
    with Store.open(db) as store:
        job = IndexJob(store, emb, RuleScanner(), params=replace(INDEX, budget_s=0))
        report = index(discover(AgentHomes.resolve()), job)
        assert report.chunks_written == report.vectors_backfilled == len(pairs)
        _assert_every_vector_is_of_its_current_input(store)
    assert emb.stored_at_call[0] < len(pairs), emb.stored_at_call


def test_an_interrupted_index_run_does_not_wait_for_the_model(
    isolated_env: Path, tmp_path: Path
) -> None:
    """Ctrl-C (or SIGTERM, which the CLI raises as KeyboardInterrupt) while the model runs
    ends the run without waiting for it: the model's first batch is the one that loads it
    (its int8 graph built, or downloaded: seconds to minutes). What was stored stays, owing
    its vectors, and the model's thread ends by itself once its call returns."""
    for n in range(2):
        pairs = [(role, f"{text} (session {n})") for role, text in PAIRS]
        write_session(isolated_env, conversation(pairs, session=f"s{n}"), session=f"s{n}")
    emb = GatedEmbedder()
    release = threading.Timer(3.0, emb.go.set)  # the model's load, as it goes on

    def on_unit(event: Progress) -> None:
        assert emb.started.wait(30)  # the model is busy with the first session's prose
        release.start()
        raise KeyboardInterrupt

    with Store.open(tmp_path / "m.db") as store:
        job = IndexJob(
            store, emb, RuleScanner(), params=replace(INDEX, budget_s=0), progress=on_unit
        )
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            index(discover(AgentHomes.resolve()), job)
        waited = time.monotonic() - started
        assert not emb.go.is_set() and waited < 2.0, f"the interrupt waited {waited:.1f} s"
        assert store.owed_total() == len(PAIRS)  # the first session, stored, owes its vectors
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == 0
    release.join()
    for thread in threading.enumerate():
        if thread.name == "funes-pump":
            thread.join(10)
            assert not thread.is_alive()
