"""Benchmark sets as funes memories: a set is one or more memories, each with its questions.

The coding dev set is one memory (all 40 sessions); LoCoMo is five (one per conversation, as
LoCoMo scores retrieval). Every question of a set is asked of its own memory and the figures
are micro-averaged over the set's questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bench.devset import Question
from funes.store import Store
from funes.traces import parse_ts


@dataclass(slots=True)
class Memory:
    """One memory of a set: its store, its questions and the fixed "now" recency scores from."""

    name: str
    store: Store
    questions: list[Question]
    now: datetime


@dataclass(slots=True)
class BenchSet:
    name: str  # "devset", "locomo"
    memories: list[Memory]

    @property
    def questions(self) -> int:
        return sum(len(m.questions) for m in self.memories)

    def close(self) -> None:
        for m in self.memories:
            m.store.close()


def max_ts(store: Store) -> datetime:
    """The latest chunk timestamp in a store (aware, UTC; the epoch when none parses)."""
    latest = datetime(1970, 1, 1, tzinfo=UTC)
    for (ts,) in store.raw.execute("select distinct ts from chunks"):
        at = parse_ts(ts) if ts else None
        if at is not None and at > latest:
            latest = at
    return latest
