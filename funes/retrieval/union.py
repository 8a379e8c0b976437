"""Several memories read as one by the recall pipeline (a bound shared memory + this host's
turns not published to it yet).

`MemoryUnion([(label, store), …])` offers what `recall` and `get_turns` ask of a memory
(`Searchable`). A later member hides every chunk an earlier one holds (same chunk id: this
host's published turns are shown once, from the shared memory), so no passage appears twice.
Rowids are made unique across members (`rowid × members + index`), and every chunk the union
hands out carries its union rowid (the evidence stage keys cosines and BM25 scores by it);
every fetched chunk remembers its member, so `label_of(chunk)` says which memory a hit came from and its
neighbours come from the same memory.

The candidate legs are merged the way reciprocal rank fusion treats separate legs: BM25 by
rank (members interleaved: FTS5 scores of different corpora are not comparable), vectors by
distance (the same model's distances are). A later member is searched deeper
(`HIDDEN_DEPTH` × k) so its own unpublished chunks are found behind the hidden ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from funes.store import NO_FILTERS, Filters, SessionSummary, Store, StoredChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

HIDDEN_DEPTH = 10  # a later member is searched this many times deeper (its hidden chunks skipped)


class MemoryUnion:
    """Members read as one memory (see the module docstring). Closing it closes nothing: the
    caller owns the member stores."""

    def __init__(self, members: Sequence[tuple[str, Store]]) -> None:
        if not members:
            raise ValueError("a union needs at least one memory")
        self.labels = [label for label, _ in members]
        self.stores = [store for _, store in members]
        self._owner: dict[str, int] = {}  # chunk id → member index, for fetched chunks
        self._reader: MemoryUnion | None | bool = None

    # -- what the pipeline asks -----------------------------------------------------------

    @property
    def vectors_available(self) -> bool:
        return any(s.vectors_available for s in self.stores)

    @property
    def model_id(self) -> str | None:
        return self.stores[0].model_id

    def reader(self) -> MemoryUnion | None:
        """A union of the members' sibling readers (None when one has none)."""
        if self._reader is None:
            readers = [s.reader() for s in self.stores]
            self._reader = (
                MemoryUnion(list(zip(self.labels, readers, strict=True)))  # type: ignore[arg-type]
                if all(r is not None for r in readers)
                else False
            )
        return self._reader if isinstance(self._reader, MemoryUnion) else None

    def lexical(
        self,
        query: str,
        *,
        k: int,
        filters: Filters = NO_FILTERS,
        budget: int | None = None,
        frequencies: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(union rowid, bm25) best first: the members' rankings interleaved rank by rank.
        Each member counts its own term frequencies for the `budget` (the union's
        `frequencies` are sums)."""
        ranked = [
            self._visible(
                i, s.lexical(query, k=self._depth(i, k), filters=filters, budget=budget), k
            )
            for i, s in enumerate(self.stores)
        ]
        merged = [
            (rank, i, self._encode(rowid, i), score)
            for i, hits in enumerate(ranked)
            for rank, (rowid, score) in enumerate(hits)
        ]
        merged.sort(key=lambda m: (m[0], m[1]))
        return [(rowid, score) for _, _, rowid, score in merged[:k]]

    def semantic(
        self, vector: NDArray[np.float32] | bytes, *, k: int, filters: Filters = NO_FILTERS
    ) -> list[tuple[int, float]]:
        """(union rowid, distance) nearest first, over every member."""
        merged = [
            (distance, self._encode(rowid, i))
            for i, s in enumerate(self.stores)
            for rowid, distance in self._visible(
                i, s.semantic(vector, k=self._depth(i, k), filters=filters), k
            )
        ]
        merged.sort(key=lambda m: m[0])
        return [(rowid, distance) for distance, rowid in merged[:k]]

    def fetch(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        out: dict[int, StoredChunk] = {}
        for i, local in self._split(rowids).items():
            for rowid, chunk in self.stores[i].fetch(list(local)).items():
                out[local[rowid]] = self._adopt(chunk, i)
        return out

    def turn_chunks(self, turns: Sequence[tuple[str, int]]) -> list[StoredChunk]:
        """Every chunk of the (session_id, seq) turns from every member, each chunk id once
        (from the earliest member holding it), in session then position order."""
        seen: dict[str, StoredChunk] = {}
        for i, store in enumerate(self.stores):
            for chunk in store.turn_chunks(turns):
                if chunk.id not in seen:
                    seen[chunk.id] = self._adopt(chunk, i)
        return sorted(seen.values(), key=lambda c: (c.session_id, c.seq, c.block_idx, c.split_idx))

    def session_outline(self, session_id: str, low: int, high: int) -> list[tuple[int, bool]]:
        """(seq, holds a user prompt) over every member (a partly published session reads
        whole)."""
        prompts: dict[int, bool] = {}
        for store in self.stores:
            for seq, prompt in store.session_outline(session_id, low, high):
                prompts[seq] = prompts.get(seq, False) or prompt
        return sorted(prompts.items())

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """Chunks and per-term document frequencies summed over the members (a chunk both
        hold counts twice: IDF weights only)."""
        total, dfs = 0, [0] * len(terms)
        for store in self.stores:
            n, counts = store.document_frequencies(terms)
            total += n
            dfs = [a + b for a, b in zip(dfs, counts, strict=True)]
        return total, dfs

    def session_summaries(
        self, filters: Filters = NO_FILTERS, *, prompt: str | None = None, limit: int, offset: int
    ) -> tuple[int, list[SessionSummary]]:
        """(sessions matching, one page of them) over every member, newest first, a session
        several members hold listed once (the summary that saw its latest turn: a partly
        published session reads whole) and counted once (a later member's session counts
        only when the first member holds none of it). The first member (the shared memory,
        the large one) is read one page deep, later ones (this host's) whole."""
        first, *later = self.stores
        total, rows = first.session_summaries(
            filters, prompt=prompt, limit=offset + limit, offset=0
        )
        best = {row.session_id: row for row in rows}
        for store in later:
            n = store.session_summaries(filters, prompt=prompt, limit=1, offset=0)[0]
            for row in store.session_summaries(filters, prompt=prompt, limit=max(n, 1), offset=0)[
                1
            ]:
                kept = best.get(row.session_id)
                if kept is None and first.session_key(row.session_id) is None:
                    total += 1
                if kept is None or (row.ended, row.turns) > (kept.ended, kept.turns):
                    best[row.session_id] = row
        ordered = sorted(best.values(), key=lambda r: r.session_id)
        ordered.sort(key=lambda r: r.ended, reverse=True)  # stable: newest first, then by id
        return total, ordered[offset : offset + limit]

    def size_hint(self) -> int:
        return sum(s.size_hint() for s in self.stores)

    def cosine(self, distance: float) -> float:
        """As the first member measures it (every member holds the same model's vectors)."""
        return self.stores[0].cosine(distance)

    def block_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
        out: dict[int, tuple[str, str, int]] = {}
        for i, local in self._split(rowids).items():
            for rowid, key in self.stores[i].block_keys(list(local)).items():
                out[local[rowid]] = key
        return out

    def neighbors(self, chunk: StoredChunk, n: int) -> list[StoredChunk]:
        """Neighbours from the memory the chunk came from."""
        return self.stores[self._owner.get(chunk.id, 0)].neighbors(chunk, n)

    def turns_around(
        self, session_id: str, turn_id: str, window: int, *, filters: Filters = NO_FILTERS
    ) -> list[StoredChunk]:
        """The turn and its neighbours from every member that holds the turn (a session that
        is partly published reads whole), each chunk once, in session order."""
        seen: dict[str, StoredChunk] = {}
        for store in self.stores:
            for chunk in store.turns_around(session_id, turn_id, window, filters=filters):
                seen.setdefault(chunk.id, chunk)
        return sorted(seen.values(), key=lambda c: (c.seq, c.block_idx, c.split_idx))

    # -- provenance -----------------------------------------------------------------------

    def label_of(self, chunk: StoredChunk) -> str:
        """The label of the memory a fetched chunk came from."""
        return self.labels[self._owner.get(chunk.id, 0)]

    # -- internals ------------------------------------------------------------------------

    def _adopt(self, chunk: StoredChunk, i: int) -> StoredChunk:
        """`chunk` of member i as the union hands it out: its union rowid, its member noted."""
        self._owner[chunk.id] = i
        return replace(chunk, rowid=self._encode(chunk.rowid, i))

    def _depth(self, i: int, k: int) -> int:
        return k if i == 0 else k * HIDDEN_DEPTH

    def _encode(self, rowid: int, i: int) -> int:
        return rowid * len(self.stores) + i

    def _split(self, rowids: Sequence[int]) -> dict[int, dict[int, int]]:
        """member index → {member rowid: union rowid}."""
        out: dict[int, dict[int, int]] = {}
        n = len(self.stores)
        for u in rowids:
            out.setdefault(u % n, {})[u // n] = u
        return out

    def _visible(self, i: int, hits: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
        """Member i's hits without the chunks an earlier member holds, at most k."""
        if i == 0 or not hits:
            return hits[:k]
        store = self.stores[i]
        ids = {rowid: chunk.id for rowid, chunk in store.fetch([r for r, _ in hits]).items()}
        hidden: set[str] = set()
        for earlier in self.stores[:i]:
            hidden |= earlier.existing_ids(list(ids.values()))
        return [(r, s) for r, s in hits if r in ids and ids[r] not in hidden][:k]
