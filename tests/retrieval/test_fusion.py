from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from funes.retrieval.fusion import recency_weight, rrf, sigmoid, turn_scores

NOW = datetime(2026, 1, 31, tzinfo=UTC)


def test_rrf_sums_reciprocal_ranks_across_legs() -> None:
    fused = dict(rrf([["a", "b", "c"], ["b", "d"]], k=60))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [item for item, _ in rrf([["a", "b", "c"], ["b", "d"]], k=60)][:2] == ["b", "a"]


def test_rrf_of_nothing_is_empty_and_ties_keep_first_seen_order() -> None:
    assert rrf([[], []]) == []
    assert [i for i, _ in rrf([["x"], ["y"]])] == ["x", "y"]


@pytest.mark.parametrize(
    ("age_days", "half_life", "expected"),
    [(0, 30, 1.0), (30, 30, 0.5), (60, 30, 0.25), (15, 0, 1.0), (-10, 30, 1.0)],
)
def test_a_hit_one_half_life_old_keeps_half_its_weight(
    age_days: float, half_life: float, expected: float
) -> None:
    assert recency_weight(
        NOW - timedelta(days=age_days), NOW, half_life_days=half_life
    ) == pytest.approx(expected)


def test_an_undated_hit_is_not_penalised() -> None:
    assert recency_weight(None, NOW, half_life_days=30) == 1.0


def test_sigmoid_is_stable_for_large_magnitudes() -> None:
    assert sigmoid(1000) == 1.0
    assert sigmoid(-1000) == 0.0
    assert sigmoid(0) == 0.5


def test_a_turn_scores_its_best_block_plus_a_share_of_its_other_blocks() -> None:
    fused = [("t1-text", 0.030), ("t2-text", 0.029), ("t1-thinking", 0.020)]
    blocks = {
        "t1-text": ("t1", "text"),
        "t2-text": ("t2", "text"),
        "t1-thinking": ("t1", "thinking"),
    }
    scored = turn_scores(fused, blocks, bonus=0.1)
    assert [item for item, _ in scored] == ["t1-text", "t2-text"]  # one per turn, its best chunk
    assert dict(scored)["t1-text"] == pytest.approx(0.030 + 0.1 * 0.020)
    assert dict(scored)["t2-text"] == pytest.approx(0.029)


def test_pieces_of_one_split_block_count_once_and_no_bonus_is_plain_max() -> None:
    # two overlapping pieces of one block are one piece of evidence: no bonus between them
    fused = [("b-0", 0.020), ("a", 0.019), ("b-1", 0.018)]
    blocks = {"b-0": ("tb", 0), "b-1": ("tb", 0), "a": ("ta", 0)}
    assert turn_scores(fused, blocks, bonus=0.5) == [("b-0", 0.020), ("a", 0.019)]
    two_blocks = {"b-0": ("tb", 0), "b-1": ("tb", 1), "a": ("ta", 0)}
    assert [i for i, _ in turn_scores(fused, two_blocks, bonus=0.0)] == ["b-0", "a"]
    assert turn_scores([("x", 1.0)], {}, bonus=0.1) == []  # unknown items are dropped
