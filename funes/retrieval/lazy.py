"""Where each name of the funes.retrieval face lives, loaded on first use (PEP 562).

A recall loads the pipeline it runs; listing a memory's sessions a page at a time
(sessions.py, `funes sessions`) loads only when used (issue 15: cold start).
"""

from __future__ import annotations

# name on the face → (module of funes.retrieval, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "get_turns": ("pipeline", "get_turns"),
    "recall": ("pipeline", "recall"),
    "SessionPage": ("sessions", "SessionPage"),
    "list_sessions": ("sessions", "list_sessions"),
    "Hit": ("types", "Hit"),
    "RecallResult": ("types", "RecallResult"),
    "Searchable": ("types", "Searchable"),
    "TurnView": ("types", "TurnView"),
    "MemoryUnion": ("union", "MemoryUnion"),
}
