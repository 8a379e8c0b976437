"""The vector index beside a large memory (funes.store.vecindex): the same neighbours as
sqlite-vec while its candidates cover them, never a deleted chunk, nothing written meanwhile
missed, and a damaged, stale or foreign file is skipped and rebuilt."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from support.memory import numbered_chunks

from funes.store import Store
from funes.store.queries import NO_FILTERS, Filters, semantic

DIM = 32
RNG = np.random.default_rng(15)


def _unit(n: int) -> np.ndarray:
    v = RNG.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _memory(path: Path, n: int) -> Store:
    store = Store.open(path)
    store.vector_index_min_rows = 100
    store.stamp_model("test/random@1", DIM)
    store.add(numbered_chunks(0, n), _unit(n))
    return store


def _exact(store: Store, q: np.ndarray, k: int) -> list[int]:
    """sqlite-vec's k nearest, equal distances in rowid order (the index's tie order; the
    scan's own is unspecified). The k-th place is settled by asking for more."""
    blob = store._vector_bytes(q.reshape(1, -1))[0]
    found = semantic(store.raw, blob, element="int8", k=k + 20, filters=NO_FILTERS)
    return [r for r, _ in sorted(found, key=lambda rd: (round(rd[1], 4), rd[0]))][:k]


def _indexed(store: Store, q: np.ndarray, k: int) -> list[int] | None:
    blob = store._vector_bytes(q.reshape(1, -1))[0]
    found = store._indexed_search(blob, k)
    return None if found is None else [r for r, _ in found]


def _same_neighbours(store: Store, queries: np.ndarray, k: int = 20) -> None:
    for q in queries:
        got = _indexed(store, q, k)
        assert got is not None, "the index did not answer"
        assert got == _exact(store, q, k)


def test_below_the_threshold_there_is_no_file(tmp_path: Path) -> None:
    store = _memory(tmp_path / "m.db", 50)
    assert store.sync_vector_index() == "none"
    assert store.vector_index_path is not None and not store.vector_index_path.exists()
    assert store.raw.execute("select count(*) from vector_log").fetchone()[0] == 0
    store.close()


def test_the_index_finds_exactly_what_sqlite_vec_finds(tmp_path: Path) -> None:
    store = _memory(tmp_path / "m.db", 1500)
    assert store.sync_vector_index() == "built"
    assert store.raw.execute("select count(*) from vector_log").fetchone()[0] == 0
    _same_neighbours(store, _unit(25))
    # recall goes through it: same rowids as the sqlite-vec scan
    q = _unit(1)[0]
    assert [r for r, _ in store.semantic(q, k=10)] == _exact(store, q, 10)
    store.close()


def test_rows_written_replaced_or_deleted_after_the_file_are_seen_as_sqlite_has_them(
    tmp_path: Path,
) -> None:
    store = _memory(tmp_path / "m.db", 1500)
    store.sync_vector_index()
    queries = _unit(15)
    # new chunks whose vectors sit right on the queries, not in the file yet
    store.add(numbered_chunks(5000, 15), queries)
    # replaced vectors and deleted chunks
    victims = [
        r
        for (r,) in store.raw.execute(
            "select rowid from chunks where rowid % 7 = 0 and rowid <= 1500"
        )
    ]
    store.replace_vectors(victims[:40], _unit(40))
    store.rewrite_chunks([], None, redaction_version=1, drop=victims[40:])
    dropped = set(victims[40:])
    for i, q in enumerate(queries):
        got = _indexed(store, q, 20)
        assert got is not None and got == _exact(store, q, 20)
        assert not dropped & set(got)
        fetched = {c.id for c in store.fetch(got).values()}
        assert f"c{5000 + i:08d}" in fetched  # written after the file: found anyway
    assert store.sync_vector_index() == "caught-up"
    assert store.raw.execute("select count(*) from vector_log").fetchone()[0] == 0
    _same_neighbours(store, queries)
    _same_neighbours(store, _unit(10))
    store.close()


def test_a_writer_syncs_the_file_when_it_lets_go(tmp_path: Path) -> None:
    store = _memory(tmp_path / "m.db", 1500)
    store.sync_vector_index()
    with store.writing():
        store.add(numbered_chunks(9000, 5), _unit(5))
    assert store.raw.execute("select count(*) from vector_log").fetchone()[0] == 0
    store.close()


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif how == "header":
        path.write_bytes(b"{not json" + bytes(data[9:]))
    elif how == "empty":
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated", "header", "empty"])
def test_a_damaged_file_is_skipped_then_rebuilt(tmp_path: Path, how: str) -> None:
    store = _memory(tmp_path / "m.db", 1500)
    store.sync_vector_index()
    assert store.vector_index_path is not None
    _damage(store.vector_index_path, how)
    reopened = Store.open(tmp_path / "m.db")
    reopened.vector_index_min_rows = 100
    q = _unit(1)[0]
    assert _indexed(reopened, q, 10) is None  # skipped: recall asks sqlite-vec
    assert [r for r, _ in reopened.semantic(q, k=10)] == _exact(reopened, q, 10)
    assert reopened.sync_vector_index() == "built"
    _same_neighbours(reopened, _unit(5))
    reopened.close()
    store.close()


def test_another_memorys_file_or_a_file_ahead_of_the_memory_is_not_used(tmp_path: Path) -> None:
    a = _memory(tmp_path / "a.db", 1500)
    b = _memory(tmp_path / "b.db", 1500)
    a.sync_vector_index()
    assert a.vector_index_path is not None and b.vector_index_path is not None
    shutil.copy(a.vector_index_path, b.vector_index_path)
    assert _indexed(b, _unit(1)[0], 10) is None
    # a backup of the memory restored under a newer file: the file reflects log entries the
    # memory no longer has
    backup = tmp_path / "a-backup.db"
    a.raw.execute("pragma wal_checkpoint(TRUNCATE)")
    shutil.copy(a.path, backup)
    a.add(numbered_chunks(7000, 5), _unit(5))
    a.sync_vector_index()
    restored = Store.open(backup)
    shutil.copy(a.vector_index_path, restored.vector_index_path)  # type: ignore[arg-type]
    assert _indexed(restored, _unit(1)[0], 10) is None
    for s in (a, b, restored):
        s.close()


def test_filtered_searches_and_float_memories_use_sqlite_vec(tmp_path: Path) -> None:
    store = _memory(tmp_path / "m.db", 1500)
    store.sync_vector_index()
    q = _unit(1)[0]
    blob = store._vector_bytes(q.reshape(1, -1))[0]
    codex = Filters(harness="codex")
    assert [r for r, _ in store.semantic(q, k=10, filters=codex)] == [
        r for r, _ in semantic(store.raw, blob, element="int8", k=10, filters=codex)
    ]
    store.close()
    floats = Store.open(tmp_path / "f.db")
    floats.vector_index_min_rows = 100
    floats.stamp_model("test/random@1", DIM, element="float")
    floats.add(numbered_chunks(0, 300), _unit(300))
    assert floats.sync_vector_index() == "none"
    floats.close()


def test_beyond_its_candidates_the_index_still_finds_close_neighbours(tmp_path: Path) -> None:
    """With more rows than it ranks exactly, a neighbour is found unless its sign code ranks it
    out of the candidates: on clustered vectors nearly all of the exact top 20 are found."""
    store = Store.open(tmp_path / "m.db")
    store.vector_index_min_rows = 100
    store.stamp_model("test/random@1", DIM)
    centers = _unit(40)
    n = 6000
    points = centers[np.arange(n) % 40] + 0.35 * RNG.standard_normal((n, DIM)).astype(np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    store.add(numbered_chunks(0, n), points)
    store.sync_vector_index()
    import funes.store.vecindex as vi

    found = 0
    queries = centers[:10] + 0.2 * RNG.standard_normal((10, DIM)).astype(np.float32)
    old = vi.OVERSAMPLE
    vi.OVERSAMPLE = 600
    try:
        for q in queries:
            got = _indexed(store, q, 20)
            assert got is not None
            found += len(set(got) & set(_exact(store, q, 20)))
    finally:
        vi.OVERSAMPLE = old
    assert found >= 0.9 * 20 * len(queries)
    store.close()
