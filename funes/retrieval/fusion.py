"""Pure ranking arithmetic: reciprocal rank fusion, recency weighting, logistic squashing.

RRF: Cormack, Clarke & Büttcher (SIGIR 2009), score(d) = Σ_legs 1 / (k + rank_leg(d)), ranks
from 1, k = 60 in the paper. Recency: exponential decay with a half-life in days; a hit
`half_life_days` old keeps half its weight (of the part above `floor`), future timestamps count
as fresh.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rrf(legs: Sequence[Sequence[K]], *, k: int = 60) -> list[tuple[K, float]]:
    """Fuse ranked lists (best first) into one, best first, with each item's RRF score.

    Ties keep the order in which items were first seen (leg order, then rank).
    """
    scores: dict[K, float] = {}
    for leg in legs:
        for rank, item in enumerate(leg, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def recency_weight(
    at: datetime | None, now: datetime, *, half_life_days: float, floor: float = 0.0
) -> float:
    """floor + (1 - floor) * 0.5 ** (age_days / half_life_days), in [floor, 1].

    The decaying part halves every `half_life_days`; `floor` is the share of a hit's score that
    age never takes (0: a hit one half-life old keeps half its weight). 1.0 when disabled
    (half-life ≤ 0), undated, or in the future.
    """
    if half_life_days <= 0 or at is None:
        return 1.0
    age_days = (now - at).total_seconds() / 86_400.0
    if age_days <= 0:
        return 1.0
    return float(floor + (1.0 - floor) * 0.5 ** (age_days / half_life_days))


def sigmoid(x: float) -> float:
    """Logistic function, numerically safe for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
