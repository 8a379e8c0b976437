"""The memory's schema, as numbered migrations applied in order (tracked by `user_version`).

A migration never edits an earlier one; a memory whose `user_version` is newer than this
code knows is refused (IncompatibleStore) instead of being half-understood.

The vector table is created separately (`create_vector_table`), when the first embedding
model is stamped, because its dimension and element type come from the model.
"""

from __future__ import annotations

from typing import Any

from funes.errors import IncompatibleStore

MIGRATIONS: tuple[str, ...] = (
    # 1: chunks with provenance, FTS5 over chunk text (external content), units, meta.
    """
    create table meta (key text primary key, value text not null);
    create table chunks (
        rowid integer primary key,
        id text not null unique,
        text text not null,
        session_id text not null,
        turn_id text not null,
        parent_id text,
        seq integer not null,
        ts text not null,
        role text not null,
        block_type text not null,
        block_idx integer not null,
        split_idx integer not null,
        tool_name text,
        harness text not null,
        workdir text not null,
        cwd text,
        git_branch text,
        host text,
        source_path text not null,
        parent_session_id text,
        scaffold integer not null default 0,
        redaction_version integer not null default 0,
        indexed_at text not null
    );
    create index chunks_by_position on chunks (session_id, seq, block_idx, split_idx);
    create index chunks_by_turn on chunks (session_id, turn_id);
    create virtual table chunks_fts using fts5 (
        text, content = 'chunks', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    create trigger chunks_ai after insert on chunks begin
        insert into chunks_fts (rowid, text) values (new.rowid, new.text);
    end;
    create trigger chunks_ad after delete on chunks begin
        insert into chunks_fts (chunks_fts, rowid, text) values ('delete', old.rowid, old.text);
    end;
    create trigger chunks_au after update of text on chunks begin
        insert into chunks_fts (chunks_fts, rowid, text) values ('delete', old.rowid, old.text);
        insert into chunks_fts (rowid, text) values (new.rowid, new.text);
    end;
    create table units (
        key text primary key,
        harness text not null,
        signature text,
        level integer not null,
        indexed_at text not null,
        turns integer not null default 0,
        chunks integer not null default 0
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(raw: Any) -> int:
    """Apply pending migrations in one transaction each; returns the resulting version.

    Safe when several processes open a new memory at once: each migration re-checks the
    version under the write lock, so it is applied exactly once.

    Raises IncompatibleStore when the file was written by a newer funes.
    """
    current = int(raw.execute("pragma user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise IncompatibleStore(
            f"this memory has schema version {current}; this funes knows up to {SCHEMA_VERSION}",
            hint="upgrade funes (pip install -U funes)",
        )
    for version in range(current + 1, SCHEMA_VERSION + 1):
        raw.execute("begin immediate")
        try:
            # Another process may have migrated between our read and our write lock.
            if int(raw.execute("pragma user_version").fetchone()[0]) >= version:
                raw.execute("commit")
                continue
            for statement in _statements(MIGRATIONS[version - 1]):
                raw.execute(statement)
            raw.execute(f"pragma user_version = {version}")
            raw.execute("commit")
        except BaseException:
            raw.execute("rollback")
            raise
    return SCHEMA_VERSION


def _statements(script: str) -> list[str]:
    """Split a migration into statements (trigger bodies keep their inner semicolons)."""
    out: list[str] = []
    buf: list[str] = []
    depth = 0
    for line in script.strip().splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER"):
            depth += 1
        if depth and upper.startswith("END;"):
            depth -= 1
            out.append("\n".join(buf))
            buf = []
            continue
        if not depth and stripped.endswith(";"):
            out.append("\n".join(buf))
            buf = []
    if buf:
        out.append("\n".join(buf))
    return out


def create_vector_table(raw: Any, *, dim: int, element: str) -> None:
    """Create `chunks_vec` (sqlite-vec vec0): one row per chunk, rowid = chunks.rowid.

    `element` is `float` (float32, 4 bytes per dimension) or `int8` (1 byte per dimension,
    scaled by `VECTOR_SCALE`). harness and block_type are vec0 metadata columns, so the KNN
    search filters before ranking (a selective filter still returns k rows).
    """
    if element not in ("float", "int8"):
        raise ValueError(f"unsupported vector element type {element!r}")
    raw.execute(
        f"create virtual table if not exists chunks_vec using vec0("
        f"embedding {element}[{int(dim)}], harness text, block_type text)"
    )
