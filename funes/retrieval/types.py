"""Result types of the read path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from funes.store import NO_FILTERS, Filters, StoredChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class Searchable(Protocol):
    """What the read path asks of a memory: a Store, or several read as one (union.py)."""

    @property
    def vectors_available(self) -> bool: ...

    @property
    def model_id(self) -> str | None: ...

    def reader(self) -> Searchable | None: ...

    def lexical(
        self,
        query: str,
        *,
        k: int,
        filters: Filters = NO_FILTERS,
        budget: int | None = None,
        frequencies: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]: ...

    def semantic(
        self, vector: NDArray[np.float32] | bytes, *, k: int, filters: Filters = NO_FILTERS
    ) -> list[tuple[int, float]]:
        """`vector`: shape (dim,), or its `dim` float32s little-endian."""
        ...

    def fetch(self, rowids: Sequence[int]) -> dict[int, StoredChunk]: ...

    def block_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, int]]: ...

    def neighbors(self, chunk: StoredChunk, n: int) -> list[StoredChunk]: ...

    def turns_around(
        self, session_id: str, turn_id: str, window: int, *, filters: Filters = NO_FILTERS
    ) -> list[StoredChunk]: ...

    def cosine(self, distance: float) -> float: ...

    def size_hint(self) -> int: ...

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, list[int]]: ...

    def turn_chunks(self, turns: Sequence[tuple[str, int]]) -> list[StoredChunk]: ...

    def session_outline(self, session_id: str, low: int, high: int) -> list[tuple[int, bool]]: ...


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
