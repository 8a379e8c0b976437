"""With both legs, recall runs BM25 on the store's sibling reader in a second thread while the
query is embedded and searched: the same hits, scores and order as one leg after the other.
Real SQLite file, real int8 vectors, the real offline ONNX embedder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from funes.chunks import chunk_turn
from funes.inference import MINILM_L6_INT8_PKG, Embedder, load_embedder
from funes.retrieval import RecallResult, recall
from funes.settings import RECALL
from funes.store import Store
from funes.traces import Block, BlockType, Harness, Role, Turn

pytestmark = pytest.mark.models

NOW = datetime(2025, 6, 1, tzinfo=UTC)
TEXTS = [
    "the connection pool size lives in settings.py as POOL_SIZE",
    "rotate the signing keys every month with the vault CLI",
    "pool_recycle_seconds was too low, so idle connections were dropped",
    "the kiln firing logs are backed up nightly to the NAS and kept 90 days",
    "electricity read zero in the February cost report: the meter export failed",
    "we fixed the flaky test by freezing time in the recency fixture",
    "database connection failed because the password had a trailing newline",
    "the deploy script tags the image with the git short sha",
]
QUERIES = [
    "why did the database connection fail",
    "pool size",
    "where are the kiln logs backed up",
    "signing keys rotation",
    "February electricity",
    "nothing here matches zzzz",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(MINILM_L6_INT8_PKG)


@pytest.fixture
def store(tmp_path: Path, embedder: Embedder) -> Iterator[Store]:
    path = tmp_path / "memory.db"
    with Store.open(path) as writer:
        writer.stamp_model(embedder.model_id, embedder.dim)
        chunks = [
            c
            for i, text in enumerate(TEXTS * 5)
            for c in chunk_turn(_turn(i, f"{text} (note {i})", session=f"s{i % 3}"))
        ]
        writer.add(chunks, embedder.embed([c.text for c in chunks]))
    with Store.open(path, readonly=True) as reading:
        yield reading


def _ranked(result: RecallResult) -> list[tuple[int, float, tuple[int, ...]]]:
    return [(h.chunk.rowid, h.score, tuple(n.rowid for n in h.neighbors)) for h in result.hits]


def test_concurrent_legs_rank_exactly_as_sequential_legs(
    store: Store, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = replace(RECALL, rerank=False)
    assert store.reader() is not None
    together = [
        recall(store, q, embedder=embedder, reranker=None, params=params, now=NOW) for q in QUERIES
    ]
    monkeypatch.setattr(store, "reader", lambda: None)  # the fallback: one leg after the other
    one_by_one = [
        recall(store, q, embedder=embedder, reranker=None, params=params, now=NOW) for q in QUERIES
    ]
    assert [_ranked(r) for r in together] == [_ranked(r) for r in one_by_one]
    assert any(len(r.hits) >= 5 for r in together)
    # The BM25 leg's own time (overlapping embed_query + vector) and the wait for it after them.
    assert {"embed_query", "vector", "bm25", "bm25_wait"} <= set(together[0].timings_ms)
    assert "bm25_wait" not in one_by_one[0].timings_ms and "bm25" in one_by_one[0].timings_ms


def test_the_reader_is_reused_read_only_and_closed_with_its_store(store: Store) -> None:
    reader = store.reader()
    assert reader is not None and reader is store.reader() and reader.reader() is None
    assert reader.state() is store.state() and reader.model_id == store.model_id
    with pytest.raises(Exception, match="readonly"):
        reader.raw.execute("delete from chunks")
    store.close()
    with pytest.raises(Exception, match="closed"):
        reader.raw.execute("select 1")
    assert store.reader() is None


def test_an_in_memory_store_has_no_reader_and_recalls_one_leg_after_the_other(
    embedder: Embedder,
) -> None:
    with Store.open(Path(":memory:")) as mem:
        mem.stamp_model(embedder.model_id, embedder.dim)
        chunks = [c for i, t in enumerate(TEXTS) for c in chunk_turn(_turn(i, t))]
        mem.add(chunks, embedder.embed([c.text for c in chunks]))
        assert mem.reader() is None
        params = replace(RECALL, rerank=False)
        result = recall(mem, "pool size", embedder=embedder, reranker=None, params=params)
        assert result.hits and "bm25_wait" not in result.timings_ms


def _turn(i: int, text: str, *, session: str = "s0") -> Turn:
    return Turn(
        harness=Harness.CLAUDE_CODE,
        session_id=session,
        turn_id=f"t{i}",
        seq=i,
        ts=f"2025-05-{1 + i % 28:02d}T10:00:00.000Z",
        role=Role.ASSISTANT,
        blocks=(Block.make(BlockType.TEXT, text),),
        source_path=f"/tmp/{session}.jsonl",
        cwd="/home/dev/proj",
    )
