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
    # 2: provenance normalised (issue 7: bytes per chunk). A chunk keeps an integer `session`
    # (sessions: one row per session id) and `origin` (origins: one row per distinct harness,
    # workdir, cwd, git_branch, host, source_path, parent_session_id) instead of repeating
    # those strings; the unread `indexed_at` and the `chunks_by_turn` index go (turn lookups
    # use the position index: seq is the turn's position). Rowids, ids and text are kept, so
    # chunks_fts and chunks_vec stay valid. `chunk_rows` is the denormalised read view.
    """
    create table sessions (id integer primary key, session_id text not null unique);
    create table origins (
        id integer primary key,
        harness text not null,
        workdir text not null,
        cwd text,
        git_branch text,
        host text,
        source_path text not null,
        parent_session_id text
    );
    create index origins_by_path on origins (source_path, workdir);
    insert into sessions (session_id)
        select session_id from chunks group by session_id order by min(rowid);
    insert into origins (harness, workdir, cwd, git_branch, host, source_path, parent_session_id)
        select harness, workdir, cwd, git_branch, host, source_path, parent_session_id
        from chunks
        group by harness, workdir, cwd, git_branch, host, source_path, parent_session_id
        order by min(rowid);
    create table chunks_v2 (
        rowid integer primary key,
        id text not null unique,
        text text not null,
        session integer not null references sessions (id),
        turn_id text not null,
        parent_id text,
        seq integer not null,
        ts text not null,
        role text not null,
        block_type text not null,
        block_idx integer not null,
        split_idx integer not null,
        tool_name text,
        origin integer not null references origins (id),
        scaffold integer not null default 0,
        redaction_version integer not null default 0
    );
    insert into chunks_v2 (rowid, id, text, session, turn_id, parent_id, seq, ts, role,
        block_type, block_idx, split_idx, tool_name, origin, scaffold, redaction_version)
        select c.rowid, c.id, c.text, s.id, c.turn_id, c.parent_id, c.seq, c.ts, c.role,
            c.block_type, c.block_idx, c.split_idx, c.tool_name, o.id, c.scaffold,
            c.redaction_version
        from chunks c
        join sessions s on s.session_id = c.session_id
        join origins o on o.source_path = c.source_path and o.workdir = c.workdir
            and o.harness = c.harness and o.cwd is c.cwd and o.git_branch is c.git_branch
            and o.host is c.host and o.parent_session_id is c.parent_session_id
        order by c.rowid;
    drop table chunks;
    alter table chunks_v2 rename to chunks;
    create index chunks_by_position on chunks (session, seq, block_idx, split_idx);
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
    create view chunk_rows as
        select c.rowid as rowid, c.id as id, c.text as text, s.session_id as session_id,
            c.turn_id as turn_id, c.parent_id as parent_id, c.seq as seq, c.ts as ts,
            c.role as role, c.block_type as block_type, c.block_idx as block_idx,
            c.split_idx as split_idx, c.tool_name as tool_name, o.harness as harness,
            o.workdir as workdir, o.cwd as cwd, o.git_branch as git_branch, o.host as host,
            o.source_path as source_path, o.parent_session_id as parent_session_id,
            c.scaffold as scaffold, c.redaction_version as redaction_version,
            c.session as session, c.origin as origin
        from chunks c
        join sessions s on s.id = c.session
        join origins o on o.id = c.origin;
    """,
    # 3: what real transcripts needed (issue 13). `origins.model`: the model that wrote a turn
    # (assistant turns). `sessions.label`: the short name recall headers show. `turn_links`:
    # a turn of one session whose record is held by another session (a Claude Code record
    # replayed under the same uuid by --resume or an aside_question subagent): stored once,
    # shown in `get` context at its position in both. `chunks_by_turn_id` (one entry per
    # block, not per chunk: split 0 only) finds whether a turn id is already held.
    """
    alter table origins add column model text;
    alter table sessions add column label text;
    create table turn_links (
        session integer not null references sessions (id),
        seq integer not null,
        turn_id text not null,
        holder integer not null references sessions (id),
        primary key (session, seq)
    ) without rowid;
    create index chunks_by_turn_id on chunks (turn_id) where split_idx = 0;
    drop view chunk_rows;
    create view chunk_rows as
        select c.rowid as rowid, c.id as id, c.text as text, s.session_id as session_id,
            c.turn_id as turn_id, c.parent_id as parent_id, c.seq as seq, c.ts as ts,
            c.role as role, c.block_type as block_type, c.block_idx as block_idx,
            c.split_idx as split_idx, c.tool_name as tool_name, o.harness as harness,
            o.workdir as workdir, o.cwd as cwd, o.git_branch as git_branch, o.host as host,
            o.source_path as source_path, o.parent_session_id as parent_session_id,
            c.scaffold as scaffold, c.redaction_version as redaction_version,
            o.model as model, s.label as session_label,
            c.session as session, c.origin as origin
        from chunks c
        join sessions s on s.id = c.session
        join origins o on o.id = c.origin;
    """,
    # 4: forgetting (`funes forget`). `forgotten` holds what must never be stored again: a
    # session id (kind `session`), or a rule (kind `rule`, a JSON object with `before` and/or
    # `project`) that new sessions are checked against before their chunks are written.
    # `forgotten_copies` remembers, per forgotten session, the remotes this host had pushed
    # its chunks to (from the push receipts), until `funes forget --remote` deletes them there.
    # (`if not exists`: a migration of this table is idempotent whatever its number.)
    """
    create table if not exists forgotten (
        kind text not null,
        value text not null,
        forgotten_at text not null,
        primary key (kind, value)
    ) without rowid;
    create table if not exists forgotten_copies (
        session_id text not null,
        remote text not null,
        chunks integer not null,
        primary key (session_id, remote)
    ) without rowid;
    """,
    # 5: what is owed is tracked, not searched for (issue 15: no full-table scan per run).
    # `vectors_owed` holds every chunk stored without a vector, with the priority its vector
    # is computed in (OWED_PRIORITY: prose, then tool output, then tool calls) and its turn
    # time (newest first within a priority). A row leaves when its chunk gets a vector or is
    # deleted. A memory that already has chunks is filled once from chunks_vec by the first
    # writer that can read it (`owed_scan` in meta until then).
    """
    create table vectors_owed (
        rowid integer primary key,
        priority integer not null,
        ts text not null
    );
    create index vectors_owed_by_priority on vectors_owed (priority, ts desc, rowid);
    create trigger chunks_owed_ad after delete on chunks begin
        delete from vectors_owed where rowid = old.rowid;
    end;
    insert into meta (key, value) select 'owed_scan', '1' where exists (select 1 from chunks);
    """,
    # 6: every change to chunks_vec (a vector written or dropped) is logged by rowid, so the
    # auxiliary vector index beside a large memory (funes.store.vecindex) catches up from the
    # log instead of re-reading the table; its writer trims what it has applied. `memory_id`
    # (random) tells that file which memory it belongs to.
    """
    create table vector_log (seq integer primary key autoincrement, rowid integer not null);
    insert or ignore into meta (key, value) values ('memory_id', lower(hex(randomblob(16))));
    """,
    # 7: every chunk rewritten in place (its text, or the block it belongs to) or deleted is
    # logged by its block, before and after (`session`, `turn_seq`, `turn_id`, `block_idx`), so
    # what judged blocks once and remembers the verdict (the publish gate's count beside the
    # memory, funes.commands.scrub) re-judges those blocks only: new chunks it finds by rowid
    # (rowids only grow). A raised `redaction_version` alone is not logged (index marks a
    # chunk so only once today's rules found nothing in it). Writers keep the last entries
    # only (redaction.LOG_KEEP); a reader whose mark is older than the oldest kept re-reads all.
    """
    create table chunk_log (
        seq integer primary key autoincrement,
        session integer not null,
        turn_seq integer not null,
        turn_id text not null,
        block_idx integer not null
    );
    create trigger chunks_log_au after update on chunks
    when old.text is not new.text or old.session is not new.session or old.seq is not new.seq
        or old.turn_id is not new.turn_id or old.block_idx is not new.block_idx
        or old.split_idx is not new.split_idx
    begin
        insert into chunk_log (session, turn_seq, turn_id, block_idx)
            values (old.session, old.seq, old.turn_id, old.block_idx);
        insert into chunk_log (session, turn_seq, turn_id, block_idx)
            select new.session, new.seq, new.turn_id, new.block_idx
            where new.session is not old.session or new.seq is not old.seq
                or new.turn_id is not old.turn_id or new.block_idx is not old.block_idx;
    end;
    create trigger chunks_log_ad after delete on chunks begin
        insert into chunk_log (session, turn_seq, turn_id, block_idx)
            values (old.session, old.seq, old.turn_id, old.block_idx);
    end;
    """,
)

# The order vectors owed are computed in (lower first), by block type: prose first (a first
# index makes text and thinking searchable by meaning soonest), then tool output (its vectors
# carry 5.6 points of dev-set turn hit@5), tool calls last (their vectors added nothing to the
# dev set's hit@5; BM25 has them from the start).
OWED_PRIORITY = {"text": 0, "thinking": 0, "tool_result": 1, "tool_use": 2}
OWED_LAST = max(OWED_PRIORITY.values())


def owed_priority_sql(column: str = "block_type") -> str:
    """OWED_PRIORITY as a SQL expression over a block-type column."""
    cases = " ".join(f"when '{k}' then {v}" for k, v in OWED_PRIORITY.items())
    return f"(case {column} {cases} else {OWED_LAST} end)"


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


def upgrade(path: Any) -> None:
    """Migrate the memory file at `path` to this code's schema when an older funes wrote it
    (readers that attach it read-only call this first). A no-op when it is current or new."""
    from funes.store.db import connect

    reader = connect(path, readonly=True)
    try:
        version = int(reader.raw.execute("pragma user_version").fetchone()[0])
    finally:
        reader.close()
    if 0 < version < SCHEMA_VERSION:
        writer = connect(path)
        try:
            migrate(writer.raw)
        finally:
            writer.close()


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
