"""The embedder batches texts of similar token length: less padding, same vectors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from funes.inference.onnx_backend import length_batches


@given(
    st.lists(st.integers(min_value=1, max_value=512), max_size=200),
    st.integers(min_value=1, max_value=64),
)
def test_every_text_lands_in_exactly_one_batch_of_bounded_size(
    lengths: list[int], max_batch: int
) -> None:
    groups = length_batches(lengths, max_batch=max_batch)
    flat = [i for g in groups for i in g]
    assert sorted(flat) == list(range(len(lengths)))
    assert all(1 <= len(g) <= max_batch for g in groups)


@given(st.lists(st.integers(min_value=1, max_value=512), min_size=1, max_size=200))
def test_a_batch_never_pads_a_text_beyond_the_slack(lengths: list[int]) -> None:
    for g in length_batches(lengths, max_batch=32, slack=1.25):
        shortest = min(lengths[i] for i in g)
        assert max(lengths[i] for i in g) <= 1.25 * shortest + 8


@given(st.lists(st.integers(min_value=1, max_value=512), min_size=1, max_size=200))
def test_a_batch_stays_within_the_token_budget_unless_one_text_alone_exceeds_it(
    lengths: list[int],
) -> None:
    for g in length_batches(lengths, max_batch=32, max_tokens=1024):
        widest = max(lengths[i] for i in g)
        assert len(g) * widest <= 1024 or len(g) == 1


def test_long_passages_run_in_smaller_batches_than_short_ones() -> None:
    lengths = [256] * 20 + [16] * 20
    groups = length_batches(lengths, max_batch=32, max_tokens=2048)
    assert sorted(len(g) for g in groups) == [4, 8, 8, 20]


def test_one_long_passage_does_not_pad_the_short_ones() -> None:
    lengths = [12, 256, 10, 14, 11]
    groups = length_batches(lengths, max_batch=32)
    assert [sorted(g) for g in groups] == [[0, 2, 3, 4], [1]]


@pytest.mark.models
def test_batched_vectors_equal_one_at_a_time_vectors() -> None:
    from funes.inference import MINILM_L6_INT8_PKG
    from funes.inference.onnx_backend import OnnxEmbedder

    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    texts = [
        "pool size",
        "error[E0432]: unresolved import `clap::Parser` " * 30,
        "the connection was refused because pgbouncer moved to port 6433",
        "ok",
        "a much longer explanation of why the streaming parser was replaced by mmap " * 12,
    ]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    assert together.shape == (5, 384)
    assert np.min(np.sum(together * alone, axis=1)) > 0.9999


@pytest.mark.models
def test_query_vectors_equal_passage_vectors_of_the_prefixed_query() -> None:
    """embed_query runs on its own single-threaded session; the bits must not change."""
    from funes.inference import MINILM_L6_INT8_PKG
    from funes.inference.onnx_backend import OnnxEmbedder

    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    queries = [
        "why did the pgbouncer connection get refused?",
        "error[E0432]: unresolved import `clap::Parser`",
        "ok",
        "which max_connections value did we settle on for the staging database " * 8,
    ]
    for q in queries:
        passage = embedder.embed([MINILM_L6_INT8_PKG.query_prefix + q])[0]
        assert np.array_equal(embedder.embed_query(q), passage), q
