from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from funes.retrieval.fusion import recency_weight, rrf, sigmoid

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
