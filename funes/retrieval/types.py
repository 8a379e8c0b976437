"""Result types of the read path."""

from __future__ import annotations

from dataclasses import dataclass, field

from funes.store import StoredChunk


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled chunk, its final score and the neighbor chunks shown around it."""

    chunk: StoredChunk
    score: float
    neighbors: tuple[StoredChunk, ...] = ()


@dataclass(slots=True)
class RecallResult:
    """Hits best first, plus notes for the reader (degradations) and per-stage timings (ms)."""

    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    reranked: bool = False


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn reassembled for `get`: its blocks' full texts in block order."""

    session_id: str
    turn_id: str
    seq: int
    ts: str
    role: str
    blocks: tuple[str, ...]
