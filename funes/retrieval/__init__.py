"""The read path: BM25 + vector candidates → RRF → evidence ranking → cross-encoder rerank →
recency → neighbors.

    pipeline.py  recall() and get_turns(): the stages in order
    ranking.py   evidence ranking: the fused turns' neighbourhood read, scored, placed, merged
    evidence.py  the evidence and score of a turn (pure arithmetic)
    periods.py   calendar periods a query names
    fusion.py    RRF, turn aggregation, recency weight (pure, table-tested)
    guard.py     redaction on the fly of rows stored under older rules
    sessions.py  list_sessions(): a memory's sessions, a page at a time
    types.py     Hit, RecallResult, TurnView, Searchable (what the pipeline asks of a memory)
    union.py     MemoryUnion: several memories read as one (a bound memory + unpublished turns)

Sees only the Embedder/Reranker protocols and the Store; never a model backend. Other
packages import from this face, never from its modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.faces import lazy_face
from funes.retrieval.lazy import EXPORTS

if TYPE_CHECKING:
    from funes.retrieval.pipeline import get_turns, recall
    from funes.retrieval.sessions import SessionPage, list_sessions
    from funes.retrieval.types import Hit, RecallResult, Searchable, TurnView
    from funes.retrieval.union import MemoryUnion

__all__ = [
    "Hit",
    "MemoryUnion",
    "RecallResult",
    "Searchable",
    "SessionPage",
    "TurnView",
    "get_turns",
    "list_sessions",
    "recall",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
