"""A memory written by an older schema is upgraded in place: same rowids, ids, text and
provenance; recall's read paths (lexical, semantic, fetch, neighbors, turns) keep working."""

from __future__ import annotations

from dataclasses import astuple, replace
from pathlib import Path

from fakes import BagOfWordsEmbedder

from funes.chunks import chunk_turn
from funes.store import Filters, Store, StoredChunk
from funes.store.db import connect
from funes.store.schema import MIGRATIONS, SCHEMA_VERSION, _statements, create_vector_table
from funes.traces import Block, BlockType, Harness, Role, Turn

_V1_COLUMNS = (
    "id, text, session_id, turn_id, parent_id, seq, ts, role, block_type, block_idx, split_idx, "
    "tool_name, harness, workdir, cwd, git_branch, host, source_path, parent_session_id, "
    "scaffold, redaction_version"
)


def _turns() -> list[Turn]:
    """Two sessions; the first changes cwd and branch mid-way, the second is a pi subagent."""
    out = []
    for seq in range(6):
        out.append(
            Turn(
                Harness.CLAUDE_CODE,
                "sess-a",
                f"turn-{seq}",
                seq,
                f"2026-01-0{1 + seq}T10:00:00Z",
                Role.USER if seq % 2 == 0 else Role.ASSISTANT,
                (Block(BlockType.TEXT, f"message {seq} about max_connections {seq * 7}"),),
                "/home/dev/.claude/projects/app/sess-a.jsonl",
                cwd="/home/dev/app" if seq < 3 else "/home/dev/app/sub",
                git_branch=None if seq < 4 else "fix-pool",
                host="laptop",
            )  # fmt: skip
        )
    for seq in range(3):
        out.append(
            Turn(
                Harness.PI,
                "sess-b",
                f"t{seq}",
                seq,
                f"2026-02-0{1 + seq}T10:00:00Z",
                Role.USER,
                (Block(BlockType.TEXT, f"pi says gamma {seq}"),),
                "/home/dev/.pi/sess-b.jsonl",
                parent_session_id="sess-a",
            )  # fmt: skip
        )
    return out


def _v1_memory(path: Path) -> list[tuple[object, ...]]:
    """Write a schema-1 memory the way funes 1 did; returns its rows (rowid + v1 columns)."""
    emb = BagOfWordsEmbedder()
    chunks = [c for t in _turns() for c in chunk_turn(t)]
    conn = connect(path)
    raw = conn.raw
    for statement in _statements(MIGRATIONS[0]):
        raw.execute(statement)
    raw.execute("pragma user_version = 1")
    for key, value in (
        ("embedding_model", emb.model_id), ("embedding_dim", str(emb.dim)),
        ("vector_element", "float"), ("vector_scale", "400.0"),
    ):  # fmt: skip
        raw.execute("insert into meta (key, value) values (?, ?)", (key, value))
    create_vector_table(raw, dim=emb.dim, element="float")
    vectors = emb.embed([c.text for c in chunks])
    for c, v in zip(chunks, vectors, strict=True):
        cur = raw.execute(
            f"insert into chunks ({_V1_COLUMNS}, indexed_at) values ({','.join('?' * 22)})",
            (
                c.id, c.text, c.session_id, c.turn_id, c.parent_id, c.seq, c.ts, c.role.value,
                c.block_type.value, c.block_idx, c.split_idx, c.tool_name, c.harness.value,
                c.workdir, c.cwd, c.git_branch, c.host, c.source_path, c.parent_session_id,
                int(c.scaffold), 3, "2026-01-09T00:00:00Z",
            ),
        )  # fmt: skip
        raw.execute(
            "insert into chunks_vec (rowid, embedding, harness, block_type) values (?, ?, ?, ?)",
            (cur.lastrowid, v.tobytes(), c.harness.value, c.block_type.value),
        )
    raw.commit()
    rows = raw.execute(f"select rowid, {_V1_COLUMNS} from chunks order by rowid").fetchall()
    conn.close()
    return [tuple(r) for r in rows]


def _as_rows(chunks: dict[int, StoredChunk]) -> list[tuple[object, ...]]:
    """The schema-1 columns of each chunk (a v1 memory has no model or session label yet)."""
    assert all((c.model, c.session_label) == (None, None) for c in chunks.values())
    return [
        tuple(int(v) if isinstance(v, bool) else v for v in astuple(chunks[r])[:22])
        for r in sorted(chunks)
    ]


def test_a_schema_1_memory_is_upgraded_in_place_and_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    before = _v1_memory(path)
    assert len({r[15] for r in before if r[3] == "sess-a"}) == 2  # cwd changes in a session
    with Store.open(path) as store:
        assert store.raw.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION == 7
        assert _as_rows(store.fetch([int(r[0]) for r in before])) == before
        assert store.raw.execute("select count(*) from sessions").fetchone()[0] == 2
        # one origin per distinct (harness, workdir, cwd, branch, host, path, parent)
        assert store.raw.execute("select count(*) from origins").fetchone()[0] == 4
        assert "indexed_at" not in {r[1] for r in store.raw.execute("pragma table_info(chunks)")}
        top = store.lexical("max_connections", k=10)
        assert len(top) == 6
        assert store.lexical("gamma", k=10, filters=Filters(harness="claude_code")) == []
        assert len(store.lexical("gamma", k=10, filters=Filters(harness="pi"))) == 3
        emb = BagOfWordsEmbedder()
        hit = store.semantic(emb.embed_query("pi says gamma 1"), k=1, filters=Filters(harness="pi"))
        assert store.fetch([hit[0][0]])[hit[0][0]].text == "pi says gamma 1"
        middle = next(c for c in store.fetch([r for r, _ in top]).values() if c.seq == 3)
        assert [n.seq for n in store.neighbors(middle, 1)] == [2, 4]
        assert sorted({c.seq for c in store.turns_around("sess-a", "turn-3", 1)}) == [2, 3, 4]
        stats = store.stats()
        assert (stats.chunks, stats.sessions) == (9, 2)
        assert stats.per_harness == {"claude_code": (1, 6), "pi": (1, 3)}
        # the FTS index still follows the table: a rewrite is found by its new text only
        rowid = int(before[0][0])
        mark = store.rewrite_mark()
        store.rewrite_chunks([(rowid, "now about pool_recycle")], None, redaction_version=4)
        assert [r for r, _ in store.lexical("pool_recycle", k=5)] == [rowid]
        # and the rewrite is logged by its block (schema 7), for the publish gate's count
        [block] = store.rewritten_blocks(mark) or []
        assert block[1:] == (before[0][6], before[0][4], before[0][10])  # seq, turn, block
        assert len(store.lexical("max_connections", k=10)) == 5


def test_a_schema_1_memory_opened_read_only_is_upgraded_first(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    before = _v1_memory(path)
    with Store.open(path, readonly=True) as store:
        assert store.raw.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
        assert _as_rows(store.fetch([int(r[0]) for r in before])) == before
        assert len(store.lexical("max_connections", k=10)) == 6


def test_new_chunks_reuse_the_session_and_origin_rows(tmp_path: Path) -> None:
    emb = BagOfWordsEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        turns = _turns()
        for part in (turns[:4], turns[4:]):
            chunks = [c for t in part for c in chunk_turn(t)]
            store.add(chunks, emb.embed([c.text for c in chunks]))
        assert store.raw.execute("select count(*) from sessions").fetchone()[0] == 2
        assert store.raw.execute("select count(*) from origins").fetchone()[0] == 4
        rows = store.fetch([r for r, _ in store.lexical("message", k=20)])
        assert sorted((c.seq, c.cwd, c.git_branch) for c in rows.values()) == [
            (0, "/home/dev/app", None), (1, "/home/dev/app", None), (2, "/home/dev/app", None),
            (3, "/home/dev/app/sub", None), (4, "/home/dev/app/sub", "fix-pool"),
            (5, "/home/dev/app/sub", "fix-pool"),
        ]  # fmt: skip


def test_an_older_memory_counts_its_owed_vectors_once_then_tracks_them(tmp_path: Path) -> None:
    """Schema 5 records chunks without a vector; a memory from before is filled once (by its
    first writer), after which nothing scans chunks_vec for missing vectors again."""
    path = tmp_path / "m.db"
    before = _v1_memory(path)
    conn = connect(path)
    conn.raw.execute("delete from chunks_vec where rowid in (?, ?)", (before[1][0], before[7][0]))
    conn.raw.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.owed_counts() is None  # not counted yet
        owed = store.owed_vectors(limit=10)
        assert sorted(r for r, _, _, _ in owed) == sorted([before[1][0], before[7][0]])
        assert store.owed_counts() == {0: 2}
        assert store.raw.execute(
            "select count(*) from meta where key = 'owed_scan'"
        ).fetchone() == (0,)
        emb = BagOfWordsEmbedder()
        store.add_vectors(owed, emb.embed([t for _, t, _, _ in owed]))
        assert store.owed_counts() == {} and store.owed_vectors(limit=10) == []


def test_owed_vectors_follow_every_write(tmp_path: Path) -> None:
    """Owed: stored without a vector, a vector dropped by a rewrite or re-embedding; not owed:
    a vector written, the chunk deleted. Priority: prose, tool output, tool calls; newest
    turn first within one."""
    emb = BagOfWordsEmbedder()
    turns = [
        Turn(
            Harness.CLAUDE_CODE,
            "s",
            f"t{seq}",
            seq,
            f"2026-01-0{1 + seq}T10:00:00Z",
            Role.ASSISTANT,
            (
                Block(BlockType.TOOL_USE, f"ls dir{seq}", tool_name="Bash"),
                Block(BlockType.TOOL_RESULT, f"file{seq}.txt", tool_name="Bash"),
                Block(BlockType.TEXT, f"listed dir{seq}"),
            ),
            "/p/s.jsonl",
        )  # fmt: skip
        for seq in range(3)
    ]
    chunks = [c for t in turns for c in chunk_turn(t)]
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        store.add(chunks, None)
        rows = store.owed_vectors(limit=20)
        got = [(bt, store.fetch([r])[r].seq) for r, _, _, bt in rows]
        assert got == [
            ("text", 2), ("text", 1), ("text", 0),
            ("tool_result", 2), ("tool_result", 1), ("tool_result", 0),
            ("tool_use", 2), ("tool_use", 1), ("tool_use", 0),
        ]  # fmt: skip
        assert store.owed_counts() == {0: 3, 1: 3, 2: 3}
        assert [bt for _, _, _, bt in store.owed_vectors(limit=20, max_priority=0)] == ["text"] * 3
        store.add_vectors(rows, emb.embed([t for _, t, _, _ in rows]))
        assert store.owed_counts() == {}
        text_rowid = rows[0][0]
        store.rewrite_chunks([(text_rowid, "listed dir9")], None, redaction_version=1)
        assert [r for r, _, _, _ in store.owed_vectors(limit=20)] == [text_rowid]
        store.replace_vectors([rows[3][0]], None)
        assert store.owed_counts() == {0: 1, 1: 1}
        store.rewrite_chunks([], None, redaction_version=1, drop=[text_rowid])
        assert store.owed_counts() == {1: 1}
        more = [c for c in chunk_turn(turns[0])]
        assert store.add(more, None) == 0  # already stored: nothing owed again
        assert store.owed_counts() == {1: 1}


def test_finding_owed_vectors_reads_the_owed_record_not_the_chunks(tmp_path: Path) -> None:
    """Issue 15: no per-run full-table scan. The query behind backfill walks vectors_owed's
    priority index and looks each chunk up by rowid (the old one scanned every chunk)."""
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model("test/x@1", 8)
        plan = " | ".join(
            str(row[-1])
            for row in store.raw.execute(
                """explain query plan select c.rowid from vectors_owed o
                   join chunk_rows c on c.rowid = o.rowid where o.priority <= 1
                   order by o.priority, o.ts desc, o.rowid limit 32"""
            )
        )
    assert "vectors_owed_by_priority" in plan, plan
    assert "SCAN c" not in plan and "SCAN chunks" not in plan, plan


def test_a_schema_2_memory_gains_models_labels_and_links_in_place(tmp_path: Path) -> None:
    """Schema 3 (issue 13): `origins.model`, `sessions.label`, `turn_links`, the per-block
    turn_id index. A schema-2 memory keeps its rows, ids and vectors; new writes fill them."""
    path = tmp_path / "m.db"
    before = _v1_memory(path)
    conn = connect(path)
    for statement in _statements(MIGRATIONS[1]):  # as the schema-2 release left it
        conn.raw.execute(statement)
    conn.raw.execute("pragma user_version = 2")
    conn.raw.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.raw.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
        assert _as_rows(store.fetch([int(r[0]) for r in before])) == before
        indexes = {r[1] for r in store.raw.execute("pragma index_list(chunks)")}
        assert "chunks_by_turn_id" in indexes
        assert store.raw.execute("select count(*) from turn_links").fetchone()[0] == 0
        turn = replace(
            _turns()[1], turn_id="turn-new", seq=9, model="claude-opus-4-1", session_label="sess-a!"
        )
        emb = BagOfWordsEmbedder()
        chunks = list(chunk_turn(turn))
        assert store.add(chunks, emb.embed([c.text for c in chunks])) == 1
        [new] = store.fetch(
            [store.raw.execute("select max(rowid) from chunks").fetchone()[0]]
        ).values()
        assert (new.model, new.session_label) == ("claude-opus-4-1", "sess-a!")
        # the session's earlier rows show the label too (it is the session's)
        old = store.fetch([int(before[0][0])])[int(before[0][0])]
        assert (old.model, old.session_label) == (None, "sess-a!")
