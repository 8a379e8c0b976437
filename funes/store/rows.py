"""The shapes the store hands out: a chunk row, a unit record, a memory's stats and state.

`StoredChunk` is the one declaration of a chunk as stored: its fields, in order, are the
columns every chunk query selects (`CHUNK_COLUMNS`, from the `chunk_rows` view), and a push
exports the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import Enum, auto
from typing import Any


class StoreState(Enum):
    EMPTY = auto()  # no chunks yet
    READY = auto()


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored, with its rowid (the columns of `chunk_rows`, in this order)."""

    rowid: int
    id: str
    text: str
    session_id: str
    turn_id: str
    parent_id: str | None
    seq: int
    ts: str
    role: str
    block_type: str
    block_idx: int
    split_idx: int
    tool_name: str | None
    harness: str
    workdir: str
    cwd: str | None
    git_branch: str | None
    host: str | None
    source_path: str
    parent_session_id: str | None
    scaffold: bool
    redaction_version: int
    model: str | None = None  # the model that wrote the turn (schema 3)
    session_label: str | None = None  # the session's short name (schema 3)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> StoredChunk:
        """A chunk from a row selected as `CHUNK_COLUMNS` (SQLite's 0/1 scaffold made a bool)."""
        values = list(row)
        values[_SCAFFOLD] = bool(values[_SCAFFOLD])
        return cls(*values)


CHUNK_COLUMNS = ", ".join(f.name for f in fields(StoredChunk))
"""The columns of a chunk row, in `StoredChunk` order, as a select list over `chunk_rows`."""

_SCAFFOLD = [f.name for f in fields(StoredChunk)].index("scaffold")


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """What the store remembers of an indexed unit (a transcript file, a database session)."""

    key: str
    harness: str
    signature: str | None
    level: int
    indexed_at: str


@dataclass(frozen=True, slots=True)
class StoreStats:
    chunks: int
    sessions: int
    per_harness: dict[str, tuple[int, int]]  # harness → (sessions, chunks)
    last_indexed: str | None
    model_id: str | None
    vectors: bool
    vector_element: str | None
    units: int
    file_bytes: int
