"""Ranking metrics over hand-checkable shapes: hit@k and MRR at turn and session level.

A ranking is the list of (session_id, turn) keys of the hits recall returned, best first,
repeats included (two hits from one turn take two places, as they do in what the agent
reads); gold is a set of such keys. Ranks count from 1. At session level each hit is reduced
to its session: a session hit@k is any of the first k hits coming from a gold session.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
TurnKey = tuple[str, int]


def first_rank(ranking: Sequence[K], gold: set[K]) -> int | None:
    """1-based position of the first gold key in the ranking; None when absent."""
    for rank, key in enumerate(ranking, 1):
        if key in gold:
            return rank
    return None


def hit_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


def sessions_of(ranking: Sequence[TurnKey]) -> list[str]:
    """Each hit's session, position for position."""
    return [sid for sid, _ in ranking]


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """First gold rank at turn and at session level for one answerable question."""

    qid: str
    category: str
    turn_rank: int | None
    session_rank: int | None


def score_question(
    qid: str, category: str, ranking: Sequence[TurnKey], gold: Iterable[TurnKey]
) -> QuestionScore:
    gold_turns = set(gold)
    gold_sessions = {sid for sid, _ in gold_turns}
    return QuestionScore(
        qid,
        category,
        first_rank(ranking, gold_turns),
        first_rank(sessions_of(ranking), gold_sessions),
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """Means over a set of questions (fractions in [0, 1])."""

    n: int
    turn_hit1: float
    turn_hit5: float
    turn_mrr: float
    session_hit1: float
    session_hit5: float
    session_mrr: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "turn_hit@1": round(self.turn_hit1, 4),
            "turn_hit@5": round(self.turn_hit5, 4),
            "turn_mrr": round(self.turn_mrr, 4),
            "session_hit@1": round(self.session_hit1, 4),
            "session_hit@5": round(self.session_hit5, 4),
            "session_mrr": round(self.session_mrr, 4),
        }


def summarize(scores: Sequence[QuestionScore]) -> Summary:
    """Mean hit@1, hit@5 and MRR at both levels; all zero for an empty list."""
    n = len(scores)
    if n == 0:
        return Summary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n

    return Summary(
        n,
        mean(hit_at(s.turn_rank, 1) for s in scores),
        mean(hit_at(s.turn_rank, 5) for s in scores),
        mean(reciprocal(s.turn_rank) for s in scores),
        mean(hit_at(s.session_rank, 1) for s in scores),
        mean(hit_at(s.session_rank, 5) for s in scores),
        mean(reciprocal(s.session_rank) for s in scores),
    )


@dataclass(slots=True)
class Breakdown:
    overall: Summary
    per_category: dict[str, Summary] = field(default_factory=dict)


def breakdown(scores: Sequence[QuestionScore]) -> Breakdown:
    """Overall and per-category summaries (categories in first-seen order)."""
    cats: dict[str, list[QuestionScore]] = {}
    for s in scores:
        cats.setdefault(s.category, []).append(s)
    return Breakdown(summarize(scores), {c: summarize(v) for c, v in cats.items()})


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]; NaN for no values."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
