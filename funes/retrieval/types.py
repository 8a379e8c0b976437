"""Result types of the read path."""

from __future__ import annotations

from dataclasses import dataclass, field

from funes.store import StoredChunk


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled chunk, its final score and the neighbor chunks shown around it.

    `duplicates`: chunks of other turns holding the identical passage (a replayed or copied
    session), merged into this hit so it is shown once.
    """

    chunk: StoredChunk
    score: float
    neighbors: tuple[StoredChunk, ...] = ()
    duplicates: tuple[StoredChunk, ...] = ()


@dataclass(slots=True)
class RecallResult:
    """Hits best first, plus notes for the reader (degradations) and per-stage timings (ms).

    `support`: the best evidence any scored passage gives the query, in [0, 1]
    (funes.retrieval.evidence); None for the plain fused order, which measures none.
    `supported`: whether it reaches `RecallParams.min_support`; when False the hits are weak
    candidates and readers report *no supporting passage*.
    """

    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    reranked: bool = False
    support: float | None = None
    supported: bool = True
    min_support: float | None = None  # the threshold `supported` was decided with


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn reassembled for `get`: its blocks' full texts in block order."""

    session_id: str
    turn_id: str
    seq: int
    ts: str
    role: str
    blocks: tuple[str, ...]
