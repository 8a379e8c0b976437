"""The reranker scores pairs in length-sorted batches: scores stay in input order and equal
scoring each pair alone; no query is too long to score.

No cross-encoder ships offline, so these run funes' OnnxReranker over the int8 MiniLM-L6
graph (the bench's latency proxy): the same tokenizer, pair encoding and batching code.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from funes.inference import MINILM_L6_INT8_PKG, MS_MARCO_MINILM_L6

pytestmark = pytest.mark.models

PASSAGES = [
    "pool size",
    "error[E0432]: unresolved import `clap::Parser` " * 30,
    "the connection was refused because pgbouncer moved to port 6433",
    "ok",
    "a much longer explanation of why the streaming parser was replaced by mmap " * 12,
]


@pytest.fixture(scope="module")
def reranker():  # type: ignore[no-untyped-def]
    from funes.inference.onnx_backend import OnnxReranker

    spec = replace(
        MS_MARCO_MINILM_L6, onnx=MINILM_L6_INT8_PKG.onnx, tokenizer=MINILM_L6_INT8_PKG.tokenizer
    )
    return OnnxReranker(spec)


def test_scores_come_back_in_input_order_and_equal_scoring_alone(reranker) -> None:  # type: ignore[no-untyped-def]
    query = "why was the streaming parser replaced"
    together = reranker.score(query, PASSAGES)
    alone = [reranker.score(query, [p])[0] for p in PASSAGES]
    assert together == pytest.approx(alone, rel=1e-4, abs=1e-5)
    assert reranker.score(query, PASSAGES[::-1])[::-1] == pytest.approx(together, rel=1e-4)
    assert len(set(together)) == len(PASSAGES)  # the order check above is not vacuous
    assert reranker.score(query, []) == []


def test_a_query_longer_than_the_model_window_is_scored_not_an_error(reranker) -> None:  # type: ignore[no-untyped-def]
    query = "why did the gateway drop connections after the pgbouncer move " * 40  # > 256 tokens
    scores = reranker.score(query, PASSAGES[:3])
    assert len(scores) == 3
