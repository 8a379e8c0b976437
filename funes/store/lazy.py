"""Where each name of the funes.store face lives, loaded on first use (PEP 562).

A recall opens a Store and reads through it; the SQL of sharing (export.py: push outbox,
receipts) and of a project memory's review (curation.py) load only when a command uses them,
not on every cold `funes recall` (issue 15: cold start).
"""

from __future__ import annotations

# name on the face → (module of funes.store, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "ReviewSummary": ("curation", "ReviewSummary"),
    "opening_prompts": ("curation", "opening_prompts"),
    "session_summaries": ("curation", "session_summaries"),
    "versions": ("db", "versions"),
    "Outbox": ("export", "Outbox"),
    "OutboxCounts": ("export", "OutboxCounts"),
    "ReceiptStatus": ("export", "ReceiptStatus"),
    "receipt_forget": ("export", "receipt_forget"),
    "receipt_holds": ("export", "receipt_holds"),
    "receipt_meta": ("export", "receipt_meta"),
    "receipt_remote": ("export", "receipt_remote"),
    "receipt_status": ("export", "receipt_status"),
    "seal": ("export", "seal"),
    "ForgetRule": ("forgetting", "ForgetRule"),
    "SessionSummary": ("listing", "SessionSummary"),
    "DEFAULT_VECTOR_ELEMENT": ("meta", "DEFAULT_VECTOR_ELEMENT"),
    "fts_query": ("queries", "fts_query"),
    "idf": ("bm25", "idf"),
    "query_terms": ("queries", "query_terms"),
    "Held": ("reconcile", "Held"),
    "BlockRows": ("redaction", "BlockRows"),
    "CHUNK_COLUMNS": ("rows", "CHUNK_COLUMNS"),
    "StoredChunk": ("rows", "StoredChunk"),
    "StoreState": ("rows", "StoreState"),
    "StoreStats": ("rows", "StoreStats"),
    "UnitRecord": ("rows", "UnitRecord"),
    "NO_FILTERS": ("scope", "NO_FILTERS"),
    "Filters": ("scope", "Filters"),
    "ProjectScope": ("scope", "ProjectScope"),
    "project_matches": ("scope", "project_matches"),
    "Store": ("store", "Store"),
    "term_presence": ("terms", "term_presence"),
}
