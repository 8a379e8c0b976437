"""Pure ranking arithmetic: reciprocal rank fusion, recency weighting, logistic squashing.

RRF: Cormack, Clarke & Büttcher (SIGIR 2009), score(d) = Σ_legs 1 / (k + rank_leg(d)), ranks
from 1, k = 60 in the paper. Recency: exponential decay with a half-life in days; a hit
`half_life_days` old keeps half its weight (of the part above `floor`), future timestamps count
as fresh.
Turn aggregation (`turn_scores`): gold answers are turns, and one turn (a message) holds several
blocks (thinking, text, tool calls); a turn scores its best block plus `bonus` × the sum of its
other blocks' best scores (CombMAX with a small CombSUM share, Fox & Shaw, TREC-2 1994). A
block's score is its best chunk's: overlapping pieces of one split block are one piece of
evidence, not several.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
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


def turn_scores(
    fused: Sequence[tuple[K, float]],
    blocks: Mapping[K, tuple[Hashable, Hashable]],
    *,
    bonus: float,
) -> list[tuple[K, float]]:
    """One (best chunk, turn score) per turn, best first; see the module docstring.

    `blocks` maps each fused item to (turn key, block key); items it lacks are dropped. A turn's
    score is max over its blocks + `bonus` × the sum of the others, each block scored by its best
    item. Ties keep fused order.
    """
    best_item: dict[Hashable, K] = {}
    block_best: dict[Hashable, dict[Hashable, float]] = {}
    for item, score in fused:
        key = blocks.get(item)
        if key is None:
            continue
        turn, block = key
        per_block = block_best.setdefault(turn, {})
        if turn not in best_item:
            best_item[turn] = item  # fused is best first: the turn's first item is its best
        per_block[block] = max(per_block.get(block, score), score)
    out: list[tuple[K, float]] = []
    for turn, per_block in block_best.items():
        values = per_block.values()
        top = max(values)
        out.append((best_item[turn], top + bonus * (sum(values) - top)))
    order = {item: i for i, (item, _) in enumerate(out)}
    return sorted(out, key=lambda kv: (-kv[1], order[kv[0]]))


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
