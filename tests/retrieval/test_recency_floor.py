"""Recency weighting with a floor: the decaying part halves every half-life, the floor stays."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from support.memory import fill

from funes.retrieval import recall
from funes.retrieval.fusion import recency_weight
from funes.settings import RECALL, Leg
from funes.store import Store
from funes.traces import Block, BlockType, Harness, Role, Turn, iso_utc

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def test_without_a_floor_a_hit_one_half_life_old_keeps_half_its_weight() -> None:
    assert recency_weight(NOW - timedelta(days=30), NOW, half_life_days=30) == pytest.approx(0.5)


def test_with_a_floor_only_the_part_above_it_decays() -> None:
    w = recency_weight(NOW - timedelta(days=30), NOW, half_life_days=30, floor=0.9)
    assert w == pytest.approx(0.95)
    ancient = recency_weight(NOW - timedelta(days=3650), NOW, half_life_days=30, floor=0.9)
    assert ancient == pytest.approx(0.9)


def test_fresh_undated_future_and_disabled_hits_keep_their_whole_weight() -> None:
    assert recency_weight(NOW, NOW, half_life_days=30, floor=0.9) == 1.0
    assert recency_weight(None, NOW, half_life_days=30, floor=0.9) == 1.0
    assert recency_weight(NOW + timedelta(days=3), NOW, half_life_days=30, floor=0.9) == 1.0
    assert recency_weight(NOW - timedelta(days=300), NOW, half_life_days=0, floor=0.0) == 1.0


def _turn(seq: int, text: str, ts: datetime) -> Turn:
    return Turn(
        harness=Harness.CODEX,
        session_id=f"s{seq}",
        turn_id="t0",
        seq=0,
        ts=iso_utc(ts),
        role=Role.ASSISTANT,
        blocks=(Block.make(BlockType.TEXT, text),),
        source_path=f"/tmp/s{seq}.jsonl",
    )


def _store(tmp_path: Path) -> tuple[Store, BagOfWordsEmbedder]:
    embedder = BagOfWordsEmbedder()
    store = Store.open(tmp_path / "memory.db")
    # the exact answer, four months old, then fresh passages that match ever fewer query words
    turns = [
        _turn(
            0,
            "we sign access tokens with ES256 and publish the JWKS endpoint",
            NOW - timedelta(days=120),
        )
    ]
    words = ["sign", "access", "tokens", "ES256", "JWKS"]
    for i in range(1, 13):
        text = " ".join(words[: 1 + (12 - i) // 3]) + f" unrelated note number {i}"
        turns.append(_turn(i, text, NOW - timedelta(days=1)))
    return fill(store, turns, embedder, element="float"), embedder


QUERY = "sign access tokens ES256 JWKS"


def test_the_default_floor_keeps_an_old_exact_answer_above_fresh_weaker_matches(
    tmp_path: Path,
) -> None:
    store, embedder = _store(tmp_path)
    params = replace(RECALL, rerank=False, neighbors=0, legs=(Leg.BM25,), k=20, half_life_days=30)
    assert params.recency_floor > 0
    plain = recall(
        store,
        QUERY,
        embedder=embedder,
        reranker=None,
        params=replace(params, half_life_days=0),
        now=NOW,
    )
    assert plain.hits[0].chunk.session_id == "s0"
    result = recall(store, QUERY, embedder=embedder, reranker=None, params=params, now=NOW)
    # recency re-orders near-ties among the fresh passages but the old answer stays in the top 8
    position = [h.chunk.session_id for h in result.hits].index("s0")
    assert position < 8


def test_without_a_floor_a_thirty_day_half_life_buries_the_old_answer(tmp_path: Path) -> None:
    # in the fused (RRF) order, where scores are relative ranks, plain decay decides alone
    store, embedder = _store(tmp_path)
    params = replace(
        RECALL,
        evidence=False,
        rerank=False,
        neighbors=0,
        legs=(Leg.BM25,),
        recency_floor=0.0,
        half_life_days=30,
        k=20,
    )
    result = recall(store, QUERY, embedder=embedder, reranker=None, params=params, now=NOW)
    assert [h.chunk.session_id for h in result.hits].index("s0") == len(result.hits) - 1
