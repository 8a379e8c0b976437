"""RecallParams.legs chooses which candidate generators run (benchmarks compare them)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from fakes import BagOfWordsEmbedder
from support.memory import memory_with

from funes.retrieval import recall
from funes.settings import RECALL, Leg
from funes.store import Store
from funes.traces import Block, BlockType, Harness, Role, Turn

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def _turn(seq: int, text: str) -> Turn:
    return Turn(
        harness=Harness.CLAUDE_CODE,
        session_id="s1",
        turn_id=f"t{seq}",
        seq=seq,
        ts="2025-05-30T10:00:00.000Z",
        role=Role.ASSISTANT,
        blocks=(Block.make(BlockType.TEXT, text),),
        source_path="/tmp/s1.jsonl",
        cwd="/home/dev/proj",
    )


def _store(tmp_path: Path, embedder: BagOfWordsEmbedder) -> Store:
    texts = [
        "the pool size lives in settings",
        "rotate the signing keys every month",
        "pool pool pool",
    ]
    turns = [_turn(i, text) for i, text in enumerate(texts)]
    return memory_with(tmp_path / "memory.db", turns, embedder, element="float")


def test_bm25_only_recall_never_embeds_the_query(tmp_path: Path) -> None:
    embedder = BagOfWordsEmbedder()
    store = _store(tmp_path, embedder)
    calls = embedder.calls
    params = replace(
        RECALL, legs=(Leg.BM25,), evidence=False, rerank=False, half_life_days=0, neighbors=0
    )
    result = recall(store, "signing keys", embedder=embedder, reranker=None, params=params, now=NOW)
    assert embedder.calls == calls
    assert [h.chunk.turn_id for h in result.hits] == ["t1"]
    assert "embed_query" not in result.timings_ms and "bm25" in result.timings_ms


def test_vector_only_recall_skips_bm25_and_ranks_by_similarity(tmp_path: Path) -> None:
    embedder = BagOfWordsEmbedder()
    store = _store(tmp_path, embedder)
    params = replace(
        RECALL, legs=(Leg.VECTOR,), evidence=False, rerank=False, half_life_days=0, neighbors=0
    )
    result = recall(store, "signing keys", embedder=embedder, reranker=None, params=params, now=NOW)
    assert "bm25" not in result.timings_ms
    # the vector leg returns every stored chunk, nearest first
    assert len(result.hits) == 3
    assert result.hits[0].chunk.turn_id == "t1"


def test_default_legs_fuse_both_generators(tmp_path: Path) -> None:
    embedder = BagOfWordsEmbedder()
    store = _store(tmp_path, embedder)
    assert RECALL.legs == (Leg.BM25, Leg.VECTOR)
    params = replace(RECALL, rerank=False, half_life_days=0, neighbors=0)
    result = recall(store, "pool size", embedder=embedder, reranker=None, params=params, now=NOW)
    assert {"bm25", "vector", "embed_query"} <= set(result.timings_ms)
    assert result.hits[0].chunk.turn_id in {"t0", "t2"}
