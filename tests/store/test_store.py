from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fakes import BagOfWordsEmbedder

from funes.chunks import chunk_turn
from funes.errors import IncompatibleStore, StoreError, StoreLocked
from funes.store import Filters, Store, StoreState, fts_query
from funes.store.db import open_hint
from funes.store.export import Outbox
from funes.store.queries import adjacent, turns_window
from funes.store.schema import SCHEMA_VERSION
from funes.traces import Block, BlockType, Harness, Role, Turn


def _turn(
    seq: int,
    text: str,
    *,
    session: str = "sess-1",
    role: Role = Role.USER,
    harness: Harness = Harness.CLAUDE_CODE,
) -> Turn:
    return Turn(
        harness,
        session,
        f"turn-{seq}",
        seq,
        f"2026-01-0{1 + seq % 9}T10:00:00.000Z",
        role,
        (Block(BlockType.TEXT, text),),
        "/tmp/x.jsonl",
        cwd="/home/dev/app",
    )


def _fill(store: Store, texts: list[str], **kw: object) -> None:
    emb = BagOfWordsEmbedder()
    store.stamp_model(emb.model_id, emb.dim)
    chunks = [c for i, t in enumerate(texts) for c in chunk_turn(_turn(i, t, **kw))]  # type: ignore[arg-type]
    store.add(chunks, emb.embed([c.text for c in chunks]))


def test_a_new_memory_is_migrated_to_the_current_schema_and_is_private(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = Store.open(tmp_path / "m.db")
    finally:
        os.umask(old)
    assert store.raw.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.raw.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert stat.S_IMODE((tmp_path / "m.db").stat().st_mode) == 0o600
    assert store.state() is StoreState.EMPTY
    store.close()


def test_a_memory_from_a_newer_funes_is_refused(tmp_path: Path) -> None:
    Store.open(tmp_path / "m.db").close()
    import sqlite3

    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute(f"pragma user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(IncompatibleStore, match="schema version"):
        Store.open(tmp_path / "m.db")


def test_recall_with_another_embedding_model_is_refused_with_how_to_rebuild(tmp_path: Path) -> None:
    emb = BagOfWordsEmbedder()
    chunks = list(chunk_turn(_turn(0, "the payment webhook holds a row lock")))
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        store.add(chunks, emb.embed([c.text for c in chunks]))  # its vectors are that model's
        with pytest.raises(IncompatibleStore) as err:
            store.check_model("b/model@2")
    assert emb.model_id in err.value.message
    assert err.value.hint is not None and "rebuild" in err.value.hint
    # a rebuild re-reads the transcripts: the hint says what that brings back and loses
    assert "sessions you forgot stay out" in err.value.hint, err.value.hint
    assert ".forgotten.json" in err.value.hint and "deleted since are gone" in err.value.hint


def test_recall_with_another_model_of_a_memory_without_vectors_is_told_to_index_not_rebuild(
    tmp_path: Path,
) -> None:
    """A memory stamped by a first index that could not load its model holds no vector: the
    next index takes it over. A reader with another model is still refused (its query vector
    would not fit), but its hint said to move the memory away and rebuild it; it points at
    `funes index`, which keeps every stored chunk."""
    chunks = list(chunk_turn(_turn(0, "the payment webhook holds a row lock")))
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model("unreachable/model@1", 32)
        assert store.add(chunks, None) == 1
        with pytest.raises(IncompatibleStore) as err:
            store.check_model("b/model@2")
    hint = err.value.hint or ""
    assert "`funes index`" in hint and "takes it over" in hint, hint
    assert "away" not in hint and "--yes" not in hint, hint


def test_a_memory_stamped_but_never_embedded_into_is_taken_over_by_the_next_writer(
    tmp_path: Path,
) -> None:
    """A first index that stamped the memory and then could not load its model (offline,
    killed) must not lock the memory to that model: the next writer's model takes it over,
    the chunks already stored stay and are owed their vectors. Once a vector exists, it is
    the model's memory."""
    emb = BagOfWordsEmbedder()
    chunks = list(chunk_turn(_turn(0, "the payment webhook holds a row lock")))
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model("unreachable/model@1", 32, element="float")
        assert store.add(chunks, None) == 1  # prose stored first, its vector owed
        with pytest.raises(IncompatibleStore):
            store.check_model(emb.model_id)  # a reader's query vector would not fit
        store.stamp_model(emb.model_id, emb.dim)
        assert (store.model_id, store.dim, store.vector_element) == (emb.model_id, emb.dim, "int8")
        owed = store.owed_vectors(limit=10)
        assert [text for _, text, _, _ in owed] == [chunks[0].text]
        store.add_vectors(owed, emb.embed([chunks[0].text]))
        assert len(store.semantic(emb.embed(["webhook row lock"])[0], k=3)) == 1
        with pytest.raises(IncompatibleStore, match=emb.model_id):
            store.stamp_model("unreachable/model@1", 32)


def test_adding_the_same_chunks_twice_writes_them_once(tmp_path: Path) -> None:
    emb = BagOfWordsEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        chunks = list(chunk_turn(_turn(0, "hello world")))
        assert store.add(chunks, emb.embed([c.text for c in chunks])) == 1
        assert store.add(chunks, emb.embed([c.text for c in chunks])) == 0
        assert store.stats().chunks == 1
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == 1


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "AND OR NOT",
        "NEAR(a b)",
        "col:value",
        "a* ^b",
        "()",
        "'; drop table chunks; --",
        "***",
        "-",
        "--",
        "😀",
    ],
)
def test_fts5_syntax_in_a_query_is_searched_as_text_and_never_errors(
    tmp_path: Path, query: str
) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, ["drop table chunks is dangerous", "value of col", "a b c"])
        store.lexical(query, k=5)  # must not raise
        assert store.stats().chunks == 3


def test_identifiers_with_inner_punctuation_are_matched_as_phrases() -> None:
    assert fts_query("why max_connections?") == '"max_connections"'
    assert fts_query("the and of") is None
    assert fts_query('say "hi"') == '"say" OR "hi"'


def test_lexical_finds_an_exact_identifier_and_respects_filters(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, ["set pool_recycle_seconds to 280", "the pool was recycled", "nothing here"])
        top = store.lexical("pool_recycle_seconds", k=3)
        assert len(top) == 1
        row = store.fetch([top[0][0]])[top[0][0]]
        assert "pool_recycle_seconds" in row.text
        assert store.lexical("pool_recycle_seconds", k=3, filters=Filters(harness="codex")) == []
        assert (
            store.lexical("pool_recycle_seconds", k=3, filters=Filters(block_types=("text",)))
            == top
        )


def test_unfiltered_bm25_returns_the_rows_and_order_of_the_filtered_path(tmp_path: Path) -> None:
    # Without filters `lexical` skips its join to `chunks`; a filter every chunk passes takes
    # the joined path, so both must rank the same rows with the same scores.
    import random

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(60)] + ["pool", "timeout", "retry", "cache", "index"]
    texts = [" ".join(rng.choices(vocab, k=rng.randint(3, 40))) for _ in range(300)]
    every = Filters(harness=Harness.CLAUDE_CODE.value, block_types=(BlockType.TEXT.value,))
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, texts)
        for query in ("pool timeout", "w1 w2 w3 retry", "cache", "index w59 w7", "nomatch"):
            for k in (5, 100, 1000):
                plain = store.lexical(query, k=k)
                assert plain == store.lexical(query, k=k, filters=every)
                assert len(plain) == min(k, sum(1 for t in texts if _any_word(query, t)))


def _any_word(query: str, text: str) -> bool:
    return bool(set(query.split()) & set(text.split()))


def test_semantic_search_filters_before_ranking(tmp_path: Path) -> None:
    emb = BagOfWordsEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        chunks = [
            c for i in range(20) for c in chunk_turn(_turn(i, f"alpha beta {i}", session=f"s{i}"))
        ]
        chunks += list(chunk_turn(_turn(99, "gamma delta", session="p", harness=Harness.PI)))
        store.add(chunks, emb.embed([c.text for c in chunks]))
        hits = store.semantic(emb.embed_query("alpha beta"), k=3, filters=Filters(harness="pi"))
        assert len(hits) == 1
        assert store.fetch([hits[0][0]])[hits[0][0]].harness == "pi"


def test_a_vector_search_deeper_than_sqlite_vec_allows_returns_every_nearest(
    tmp_path: Path,
) -> None:
    """sqlite-vec refuses a KNN `k` above 4096; a deeper read (evidence ranking over a
    MemoryUnion asks its later members 10x deeper) gets what the table holds, nearest first."""
    emb = BagOfWordsEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        chunks = [c for i in range(5) for c in chunk_turn(_turn(i, f"alpha {i}", session=f"s{i}"))]
        store.add(chunks, emb.embed([c.text for c in chunks]))
        for filters in (Filters(), Filters(session="s1")):
            hits = store.semantic(emb.embed_query("alpha"), k=10_000, filters=filters)
            assert len(hits) == (5 if filters == Filters() else 1)
            assert [d for _, d in hits] == sorted(d for _, d in hits)


def test_int8_vectors_keep_the_nearest_neighbour(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(50, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model("test/random@0", 64, element="int8")
        chunks = [c for i in range(50) for c in chunk_turn(_turn(i, f"text {i}", session=f"s{i}"))]
        store.add(chunks, vectors)
        for i in (0, 17, 42):
            hits = store.semantic(vectors[i], k=1)
            assert store.fetch([hits[0][0]])[hits[0][0]].session_id == f"s{i}"


def test_neighbors_and_turn_windows_follow_session_order(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, [f"message number {i}" for i in range(7)])
        rows = store.fetch([r for r, _ in store.lexical("message number 3", k=10)])
        middle = next(c for c in rows.values() if c.seq == 3)
        assert [n.seq for n in store.neighbors(middle, 1)] == [2, 4]
        assert [n.seq for n in store.neighbors(middle, 2)] == [1, 2, 4, 5]
        window = store.turns_around("sess-1", "turn-3", 2)
        assert sorted({c.seq for c in window}) == [1, 2, 3, 4, 5]
        assert store.turns_around("sess-1", "no-such-turn", 2) == []


def test_a_second_writer_fails_fast_with_exit_status_75(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "m.db")
    b = Store.open(tmp_path / "m.db")
    with a.writing(), pytest.raises(StoreLocked) as err, b.writing():
        pass
    assert err.value.exit_code == 75
    with b.writing():
        pass
    a.close()
    b.close()


def test_a_memory_under_a_path_with_uri_characters_opens_read_only(tmp_path: Path) -> None:
    odd = tmp_path / "dir with ?query#frag%20"
    odd.mkdir()
    with Store.open(odd / "m.db") as store:
        _fill(store, ["hello there"])
    with Store.open(odd / "m.db", readonly=True) as ro:
        assert ro.stats().chunks == 1


@contextlib.contextmanager
def _read_only_directory(path: Path) -> Iterator[None]:
    """Make `path` unwritable for this process: chmod for a normal user; for root (whom
    permissions do not stop) a read-only bind mount over it. Skips where neither works."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(0o755)
        return
    mount = shutil.which("mount")
    umount = shutil.which("umount")
    bind = [mount, "--bind", str(path), str(path)] if mount else None
    if bind is None or umount is None or subprocess.run(bind, capture_output=True).returncode:
        pytest.skip("running as root without mount: cannot make a directory read-only")
    try:
        ro = [mount, "-o", "remount,bind,ro", str(path)]
        if subprocess.run(ro, capture_output=True).returncode:
            pytest.skip("running as root, and a read-only remount is not allowed here")
        yield
    finally:
        subprocess.run([umount, "-l", str(path)], capture_output=True)  # lazy: even if busy


def test_a_memory_in_a_directory_this_user_cannot_write_is_still_readable(
    tmp_path: Path,
) -> None:
    # A WAL memory read from a read-only mount or another user's directory: SQLite cannot
    # create the -shm index there, and used to answer "unable to open database file".
    shared = tmp_path / "shared"
    shared.mkdir()
    with Store.open(shared / "memory.db") as store:
        _fill(store, ["the retry budget is three attempts"])
    assert not (shared / "memory.db-wal").exists()  # closed cleanly: all in the main file
    with _read_only_directory(shared):
        with Store.open(shared / "memory.db", readonly=True) as ro:
            assert ro.stats().chunks == 1
        with (
            tempfile.TemporaryDirectory() as scratch,
            Outbox(shared / "memory.db", Path(scratch) / "outbox.db") as box,
        ):
            assert box.model_id == BagOfWordsEmbedder().model_id


def test_a_memory_that_cannot_be_opened_names_the_cause_in_its_hint(tmp_path: Path) -> None:
    assert open_hint(Exception("database is locked"), tmp_path) == "retry in a moment"
    permissions = open_hint(Exception("unable to open database file"), tmp_path / "m.db")
    assert "may read" in permissions and "damaged" not in permissions
    # sqlite-vec's message for an unreadable vector page is damage, not a passing lock
    for damage in ("vectors blob read error for 1", "database disk image is malformed"):
        assert "damaged" in open_hint(Exception(damage), tmp_path / "m.db")
    (tmp_path / "m.db").write_bytes(b"this is not a database, just text" * 200)
    with pytest.raises(StoreError) as err:
        Store.open(tmp_path / "m.db", readonly=True)
    assert err.value.hint is not None and "damaged" in err.value.hint
    assert "sessions you forgot stay out" in err.value.hint, err.value.hint
    # a mistyped --memory naming some other file is not "damaged": nothing to move or rebuild
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(StoreError) as err:
        Store.open(tmp_path / "passwd", readonly=True)
    assert err.value.hint is not None and "is not a funes memory" in err.value.hint
    assert "move" not in err.value.hint


def test_a_huge_window_or_neighbour_count_means_all_of_them(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, ["one", "two", "three"])
        rows = turns_window(store.raw, session_id="sess-1", seq=1, window=10**20)
        assert sorted({r[6] for r in rows}) == [0, 1, 2]  # seq column
        assert len(adjacent(store.raw, session_id="sess-1", position=(1, 0, 0), n=10**20)) == 2


def _open_handles(path: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    targets = []
    for fd in fds.iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:
            continue
    return [t for t in targets if t.startswith(str(path))]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")
def test_a_failed_open_leaves_no_handle_on_the_file(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    Store.open(newer).close()
    raw = sqlite3.connect(newer)
    raw.execute("pragma user_version = 999")
    raw.close()
    # the error is kept (as a caller reporting it does): its traceback must pin no connection
    for readonly in (True, False):
        with pytest.raises(IncompatibleStore) as caught:
            Store.open(newer, readonly=readonly)
        assert _open_handles(newer) == [], caught
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError) as caught:
        Store.open(junk)
    assert _open_handles(junk) == [], caught
