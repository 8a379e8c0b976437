"""The write statements: chunks, their vectors, units. Bound parameters only.

Each function runs inside a transaction the caller (`Store`) opened; none commits. Reads live
in queries.py, redaction rewrites in redaction.py, the schema in schema.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funes.chunks import Chunk
from funes.store.provenance import Keys
from funes.store.schema import OWED_LAST, OWED_PRIORITY, owed_priority_sql


def existing_ids(raw: Any, ids: Sequence[str]) -> set[str]:
    """The subset of chunk `ids` already stored (looked up 500 at a time)."""
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        found.update(
            r[0] for r in raw.execute(f"select id from chunks where id in ({marks})", part)
        )
    return found


def insert_chunk(
    raw: Any, keys: Keys, chunk: Chunk, *, redaction_version: int, owed: bool = True
) -> int | None:
    """Insert one chunk unless its id is stored; its rowid when written, else None.

    `owed`: its vector is not written with it, so it is recorded in `vectors_owed`."""
    c = chunk
    origin = (
        c.harness.value, c.workdir, c.cwd, c.git_branch, c.host, c.source_path,
        c.parent_session_id, c.model,
    )  # fmt: skip
    cur = raw.execute(
        """insert or ignore into chunks (id, text, session, turn_id, parent_id, seq, ts,
           role, block_type, block_idx, split_idx, tool_name, origin, scaffold,
           redaction_version)
           values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
        (
            c.id,
            c.text,
            keys.session(c.session_id, c.session_label),
            c.turn_id,
            c.parent_id,
            c.seq,
            c.ts,
            c.role.value,
            c.block_type.value,
            c.block_idx,
            c.split_idx,
            c.tool_name,
            keys.origin(origin),
            int(c.scaffold),
            redaction_version,
        ),
    )
    if cur.rowcount != 1:
        return None
    rowid = int(cur.lastrowid)
    if owed:
        raw.execute(
            "insert or replace into vectors_owed (rowid, priority, ts) values (?, ?, ?)",
            (rowid, OWED_PRIORITY.get(c.block_type.value, OWED_LAST), c.ts),
        )
    return rowid


def insert_vector(
    raw: Any, rowid: int, blob: bytes, *, harness: str, block_type: str, element: str | None
) -> None:
    """Store the vector of chunk `rowid` (its facets are the vec0 metadata columns)."""
    wrap = "vec_int8(?)" if element == "int8" else "?"
    raw.execute(
        f"insert into chunks_vec (rowid, embedding, harness, block_type) values (?, {wrap}, ?, ?)",
        (rowid, blob, harness, block_type),
    )
    raw.execute("delete from vectors_owed where rowid = ?", (rowid,))
    log_vectors(raw, [rowid])


def delete_vector(raw: Any, rowid: int) -> None:
    """Drop the vector of chunk `rowid`; the chunk (when stored) is owed one again."""
    raw.execute("delete from chunks_vec where rowid = ?", (rowid,))
    owe(raw, [rowid])
    log_vectors(raw, [rowid])


def log_vectors(raw: Any, rowids: Sequence[int]) -> None:
    """Record that the vectors of `rowids` changed (written or dropped): schema 6's
    `vector_log`, which the auxiliary vector index catches up from (funes.store.vecindex)."""
    raw.executemany("insert into vector_log (rowid) values (?)", [(r,) for r in rowids])


def owe(raw: Any, rowids: Sequence[int]) -> None:
    """Record stored chunks `rowids` as owing a vector (rowids not stored are ignored)."""
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        raw.execute(
            f"""insert or replace into vectors_owed (rowid, priority, ts)
                select rowid, {owed_priority_sql()}, ts from chunks where rowid in ({marks})""",
            part,
        )


def settle_owed(raw: Any, *, vector_table: bool) -> None:
    """The one-time fill of `vectors_owed` for a memory indexed before it existed: every chunk
    without a vector (every chunk, when the memory has no vector table yet)."""
    missing = (
        "where not exists (select 1 from chunks_vec v where v.rowid = c.rowid)"
        if vector_table
        else ""
    )
    raw.execute(
        f"""insert or ignore into vectors_owed (rowid, priority, ts)
            select c.rowid, {owed_priority_sql("c.block_type")}, c.ts from chunks c {missing}"""
    )
    raw.execute("delete from meta where key = 'owed_scan'")


def upsert_unit(
    raw: Any,
    key: str,
    *,
    harness: str,
    signature: str | None,
    level: int,
    indexed_at: str,
    turns: int,
    chunks: int,
) -> None:
    """Record unit `key` at `signature` and tier `level`; its chunk count accumulates."""
    raw.execute(
        """insert into units (key, harness, signature, level, indexed_at, turns, chunks)
           values (?, ?, ?, ?, ?, ?, ?)
           on conflict (key) do update set harness = excluded.harness,
           signature = excluded.signature, level = excluded.level,
           indexed_at = excluded.indexed_at, turns = excluded.turns,
           chunks = units.chunks + excluded.chunks""",
        (key, harness, signature, level, indexed_at, turns, chunks),
    )
