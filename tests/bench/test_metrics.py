"""The bench's ranking metrics on tiny hand-made rankings."""

from __future__ import annotations

import math

import pytest

from bench.metrics import breakdown, first_rank, percentile, score_question, summarize

A0, A1, A2 = ("a", 0), ("a", 1), ("a", 2)
B0, B5 = ("b", 0), ("b", 5)


def test_first_rank_counts_from_one_and_is_none_when_gold_is_absent() -> None:
    assert first_rank([A0, A1, B0], {A1}) == 2
    assert first_rank([A0, A1, B0], {B5}) is None
    assert first_rank([], {A0}) is None


def test_repeated_hits_of_one_turn_each_take_a_place() -> None:
    # two hits from turn a/0 push the gold turn to position 3, as the agent would read it
    assert first_rank([A0, A0, B5], {B5}) == 3


def test_a_question_with_several_gold_turns_counts_the_first_one_found() -> None:
    score = score_question("q", "cat", [B0, A2, A1], [A1, A2])
    assert score.turn_rank == 2


def test_session_level_is_any_hit_from_a_gold_session() -> None:
    score = score_question("q", "cat", [B0, A0, A2], [A2])
    assert score.turn_rank == 3
    assert score.session_rank == 2


def test_summary_averages_hit_at_1_hit_at_5_and_mrr() -> None:
    ranking_first = [A1, B0]  # gold at 1
    ranking_third = [B0, B5, A1]  # gold at 3 (session a first at 3 too)
    ranking_missing = [B0] * 6  # gold never retrieved
    scores = [
        score_question("q1", "x", ranking_first, [A1]),
        score_question("q2", "x", ranking_third, [A1]),
        score_question("q3", "y", ranking_missing, [A1]),
    ]
    s = summarize(scores)
    assert s.n == 3
    assert s.turn_hit1 == pytest.approx(1 / 3)
    assert s.turn_hit5 == pytest.approx(2 / 3)
    assert s.turn_mrr == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert s.session_hit1 == pytest.approx(1 / 3)
    assert s.session_mrr == pytest.approx((1 + 1 / 3) / 3)


def test_a_gold_turn_at_position_six_is_not_a_hit_at_five() -> None:
    ranking = [B0, B0, B0, B0, B0, A0]
    s = summarize([score_question("q", "x", ranking, [A0])])
    assert s.turn_hit5 == 0.0
    assert s.turn_mrr == pytest.approx(1 / 6)


def test_breakdown_splits_by_category_and_keeps_the_overall_mean() -> None:
    scores = [
        score_question("q1", "x", [A0], [A0]),
        score_question("q2", "y", [B0], [A0]),
    ]
    b = breakdown(scores)
    assert b.overall.turn_hit1 == 0.5
    assert b.per_category["x"].turn_hit1 == 1.0
    assert b.per_category["y"].turn_hit1 == 0.0


def test_an_empty_set_of_questions_summarises_to_zero() -> None:
    assert summarize([]).n == 0
    assert summarize([]).turn_mrr == 0.0


def test_percentile_interpolates_and_is_nan_without_values() -> None:
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert percentile([5.0], 95) == 5.0
    assert math.isnan(percentile([], 50))
