"""How many chunks each query term occurs in, remembered while the full-text index is unchanged.

Both the BM25 leg (its postings budget, the IDF of the terms it adds) and evidence ranking
(IDF weights) need a query's document frequencies, and counting one costs ~25 ns per row the
term occurs in (a common word over a million chunks: ~10 ms). A memory served for many
recalls (the MCP server, `funes ask`) sees the same common words again and again. The counts
stay valid exactly as long as `chunks_fts` is unchanged: FTS5 rewrites its structure record
(rowid 10 of its data table, a few dozen bytes carrying a write counter) whenever a committed
change reaches the index, so that record keys the memo.
"""

from __future__ import annotations

import threading
from typing import Any

from funes.store.queries import fts_totals, quote_term

STRUCTURE_ROWID = 10  # FTS5's structure record (fts5_index.c: FTS5_STRUCTURE_ROWID)
MAX_TERMS = 4096  # remembered terms per index state (a long-lived server's memo stays small)


class TermFrequencies:
    """A memo of document frequencies, shared by a Store and its sibling reader (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: bytes | None = None
        self._counts: dict[str, int] = {}

    def get(self, raw: Any, terms: list[str]) -> tuple[int, list[int]]:
        """(chunks in the memory, for each term the chunks FTS5 matches it in), counting on
        `raw` only the terms not counted since the index last changed.

        Read in one snapshot of the memory (a read transaction, unless `raw` is in one): each
        statement of an autocommit connection sees the latest commit, so a writer committing
        between them gave a term more chunks than the memory held (seen in the concurrency
        test: `math domain error` in the IDF), and counts of a newer index remembered under
        an older structure record."""
        if raw.in_transaction:
            return self._read(raw, terms)
        raw.execute("begin")
        try:
            return self._read(raw, terms)
        finally:
            raw.execute("commit")  # a read transaction: nothing to write, ends the snapshot

    def _read(self, raw: Any, terms: list[str]) -> tuple[int, list[int]]:
        row = raw.execute(
            "select block from chunks_fts_data where id = ?", (STRUCTURE_ROWID,)
        ).fetchone()
        state = bytes(row[0]) if row is not None and row[0] is not None else b""
        total = fts_totals(raw)[0]
        with self._lock:
            if state != self._state or len(self._counts) > MAX_TERMS:
                self._state, self._counts = state, {}
            known = dict(self._counts)
        counts = [
            known[t]
            if t in known
            else int(
                raw.execute(
                    "select count(*) from chunks_fts where chunks_fts match ?", (quote_term(t),)
                ).fetchone()[0]
            )
            for t in terms
        ]
        with self._lock:
            if state == self._state:
                self._counts.update(zip(terms, counts, strict=True))
        return total, counts
