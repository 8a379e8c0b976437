"""SQLite mechanics of a memory: the only package that contains SQL.

One file (WAL, busy timeout, 0600) holds chunks with provenance, an FTS5 index (BM25) over
their text, a sqlite-vec table of their embeddings, the units already indexed, and the
embedding model the vectors came from. Vectors arrive as arrays; the store never loads a
model and never parses a transcript.

    store.py       Store: open/close, writes, reads (thin: the SQL lives in the modules below)
    handle.py      its base: connection, transactions, meta, vector encoding
    upkeep.py      its rewrites in place (redaction upkeep, re-embedding)
    rows.py        the row shapes it hands out (StoredChunk, UnitRecord, StoreStats, StoreState)
    queries.py     read SQL        writes.py   write SQL       redaction.py   rewrite SQL
    forgetting.py  forgotten sessions: tombstones and rules every write checks, remote copies
    listing.py     the sessions of a memory, summarised (funes sessions)
    scope.py       Filters: which chunks a read may see (facets, session, time, project)
    meta.py        the meta table   schema.py   migrations      provenance.py  sessions/origins
    db.py          opening the file (binding, sqlite-vec, pragmas)   lock.py   the writer lock
    export.py      the SQL of sharing (push outbox, receipts, sealing a cache file)
    curation.py    sessions summarised for a project memory's review
    terms.py       which query terms a text holds, as the FTS5 index matches them
    reconcile.py   the SQL of re-reading a unit (rows held under produced ids, links)

Other packages import from this face, never from its modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.faces import lazy_face
from funes.store.lazy import EXPORTS

if TYPE_CHECKING:
    from funes.store.bm25 import idf
    from funes.store.curation import ReviewSummary, opening_prompts, session_summaries
    from funes.store.db import versions
    from funes.store.export import (
        Outbox,
        OutboxCounts,
        ReceiptStatus,
        receipt_forget,
        receipt_holds,
        receipt_meta,
        receipt_remote,
        receipt_status,
        seal,
    )
    from funes.store.forgetting import ForgetRule
    from funes.store.listing import SessionSummary
    from funes.store.meta import DEFAULT_VECTOR_ELEMENT
    from funes.store.queries import fts_query, query_terms
    from funes.store.reconcile import Held
    from funes.store.redaction import BlockRows
    from funes.store.rows import CHUNK_COLUMNS, StoredChunk, StoreState, StoreStats, UnitRecord
    from funes.store.scope import NO_FILTERS, Filters, ProjectScope, project_matches
    from funes.store.store import Store
    from funes.store.terms import term_presence

__all__ = [
    "CHUNK_COLUMNS",
    "DEFAULT_VECTOR_ELEMENT",
    "NO_FILTERS",
    "BlockRows",
    "Filters",
    "ForgetRule",
    "Held",
    "Outbox",
    "OutboxCounts",
    "ProjectScope",
    "ReceiptStatus",
    "ReviewSummary",
    "SessionSummary",
    "Store",
    "StoreState",
    "StoreStats",
    "StoredChunk",
    "UnitRecord",
    "fts_query",
    "idf",
    "opening_prompts",
    "project_matches",
    "query_terms",
    "receipt_forget",
    "receipt_holds",
    "receipt_meta",
    "receipt_remote",
    "receipt_status",
    "seal",
    "session_summaries",
    "term_presence",
    "versions",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
