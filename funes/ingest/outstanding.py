"""What `funes index` still owes, counted in chunks per tier without embedding or writing.

Each unit on this machine is compared with the memory as the index loop does (`owed`): a new
or changed unit is owed from tier 0, one indexed to a lower tier from the next tier up. Its
turns are read, redacted and chunked as indexing would, and a chunk counts when its id is not
stored yet and its session is not forgotten, so the counts are the chunks the next unbudgeted
`funes index` writes. Reading stops after `budget_s`; the counts are then lower bounds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from funes.chunks import Chunk, chunk_turn
from funes.ingest.indexing import TIERS, TOP_TIER, owed
from funes.redact import Scanner, redact
from funes.store import Store
from funes.traces import BlockType, ReadStats, TraceSource, Turn

OWED_BUDGET_S = 1.0  # seconds of reading before the counts become lower bounds (status stays quick)


@dataclass(slots=True)
class OwedChunks:
    """Chunks the next index writes, per tier (TIERS order), and the units they come from."""

    chunks: list[int] = field(default_factory=lambda: [0] * len(TIERS))
    units: list[int] = field(default_factory=lambda: [0] * len(TIERS))
    files: int = 0  # units (session files) with at least one owed chunk
    # units owed a read that hold no owed chunk: every chunk stored already (the same
    # transcripts indexed from a copy) or of a forgotten session; an index only records them
    nothing_new: int = 0
    complete: bool = True  # False: the budget ran out, the counts are lower bounds
    failed: int = 0  # units that could not be read (indexing reports them too)

    @property
    def total(self) -> int:
        return sum(self.chunks)


def count_owed(
    sources: Sequence[TraceSource],
    store: Store,
    scanner: Scanner,
    *,
    budget_s: float = OWED_BUDGET_S,
    host: str | None = None,
    include_thinking: bool = True,
) -> OwedChunks:
    """Count what the next unbudgeted `funes index` of `sources` writes (module docstring)."""
    out = OwedChunks()
    deadline = time.monotonic() + budget_s
    for source in sources:
        for unit in source.units():
            first = next(
                (
                    t
                    for t in range(len(TIERS))
                    if owed(store, unit, t, include_thinking=include_thinking)
                ),
                None,
            )
            if first is None:
                continue
            if time.monotonic() > deadline:
                out.complete = False
                return out
            try:
                turns = [_redacted(t, scanner) for t in source.read(unit, ReadStats())]
            except Exception:  # the index loop's per-unit guard: it reports the failure
                out.failed += 1
                continue
            any_fresh = False
            for tier in range(first, TOP_TIER + 1):
                types = set(TIERS[tier])
                if not include_thinking:
                    types.discard(BlockType.THINKING)
                chunks = [c for t in turns for c in chunk_turn(t, types=types, host=host)]
                fresh = _fresh(store, chunks)
                out.chunks[tier] += fresh
                out.units[tier] += 1 if fresh else 0
                any_fresh = any_fresh or fresh > 0
            out.files += any_fresh
            out.nothing_new += not any_fresh
    return out


def _fresh(store: Store, chunks: list[Chunk]) -> int:
    unique = {c.id: c for c in chunks}
    stored = store.existing_ids(list(unique))
    forgotten, caught = store.forgotten_among(list(unique.values()))
    gone = forgotten | caught
    return sum(1 for cid, c in unique.items() if cid not in stored and c.session_id not in gone)


def _redacted(turn: Turn, scanner: Scanner) -> Turn:
    blocks = tuple(replace(b, text=redact(b.text, scanner)[0]) for b in turn.blocks)
    return replace(turn, blocks=blocks)
