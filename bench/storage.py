"""Bytes per chunk on disk, split into data, FTS and vectors (sqlite dbstat), and what other
FTS5 layouts would cost on the same texts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes.store import Store


@dataclass(frozen=True, slots=True)
class Footprint:
    chunks: int
    data: int  # the chunks table, its indexes and its provenance tables (sessions, origins)
    fts: int  # chunks_fts shadow tables
    vectors: int  # chunks_vec shadow tables (sqlite-vec)
    other: int  # schema, meta, units
    file_bytes: int

    @property
    def total(self) -> int:
        return self.data + self.fts + self.vectors + self.other

    def per_chunk(self) -> dict[str, float]:
        n = max(self.chunks, 1)
        return {
            "data": round(self.data / n, 1),
            "fts": round(self.fts / n, 1),
            "vectors": round(self.vectors / n, 1),
            "other": round(self.other / n, 1),
            "total": round(self.total / n, 1),
        }


def _bucket(name: str) -> str:
    if name.startswith("chunks_fts"):
        return "fts"
    if name.startswith("chunks_vec"):
        return "vectors"
    if name in ("chunks", "sessions", "origins") or name.startswith(
        ("chunks_by_", "origins_by_", "sqlite_autoindex_chunks", "sqlite_autoindex_sessions")
    ):
        return "data"
    return "other"


def footprint(store: Store) -> Footprint:
    """Checkpoint the WAL, then sum used pages per object from dbstat (file sizes as a fallback)."""
    raw: Any = store.raw
    raw.execute("pragma wal_checkpoint(TRUNCATE)")
    chunks = int(raw.execute("select count(*) from chunks").fetchone()[0])
    sizes = {"data": 0, "fts": 0, "vectors": 0, "other": 0}
    try:
        rows = raw.execute("select name, sum(pgsize) from dbstat group by name").fetchall()
    except Exception:
        rows = []
    for name, size in rows:
        sizes[_bucket(str(name))] += int(size)
    file_bytes = Path(store.path).stat().st_size
    if not rows:
        sizes["other"] = file_bytes
    return Footprint(
        chunks, sizes["data"], sizes["fts"], sizes["vectors"], sizes["other"], file_bytes
    )


def fts_variants(texts: list[str]) -> dict[str, float]:
    """Bytes per chunk of an FTS5 index over `texts` (external content, funes' tokenizer) for
    detail=full (funes today), detail=column and detail=none, in a scratch in-memory database."""
    from funes.store.db import connect

    out: dict[str, float] = {}
    for detail in ("full", "column", "none"):
        conn = connect(":memory:")
        raw = conn.raw
        raw.execute("create table docs (rowid integer primary key, text text)")
        raw.execute(
            "create virtual table f using fts5(text, content='docs', content_rowid='rowid', "
            f"tokenize='porter unicode61 remove_diacritics 2', detail={detail})"
        )
        raw.executemany("insert into docs (rowid, text) values (?, ?)", list(enumerate(texts, 1)))
        raw.execute("insert into f (f) values ('rebuild')")
        raw.execute("insert into f (f) values ('optimize')")
        size = raw.execute("select sum(pgsize) from dbstat where name like 'f_%'").fetchone()[0]
        out[detail] = round(int(size) / max(len(texts), 1), 1)
        conn.close()
    return out
