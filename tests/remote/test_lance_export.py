"""The Lance export on its own: streamed appends, index creation and delta maintenance, and
how `--memory` values name local memories, directory exports and Hub datasets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from funes.errors import IncompatibleStore, UsageError
from funes.memory import MemoryKind, Runtime, as_push_target, parse_memory
from funes.remote import lance_export
from funes.store import StoredChunk


def _rows(start: int, n: int, dim: int = 384) -> list[tuple[list[StoredChunk], np.ndarray]]:
    rng = np.random.default_rng(start)
    out = []
    for s in range(start, start + n, 100):
        m = min(100, start + n - s)
        rows = [
            StoredChunk(
                i,
                f"{i:016x}",
                f"row {i} about topic{i % 7} and word{i}",
                "s1",
                f"t{i}",
                None,
                i,
                "2026-11-20T10:00:00Z",
                "user",
                "text",
                0,
                0,
                None,
                "claude_code",
                "/w",
                None,
                None,
                "h",
                "/src.jsonl",
                None,
                0,
                1,
            )
            for i in range(s, s + m)
        ]
        v = rng.normal(size=(m, dim)).astype(np.float32)
        out.append((rows, v / np.linalg.norm(v, axis=1, keepdims=True)))
    return out


def test_appends_stream_in_and_indexes_are_built_then_kept_current(tmp_path: Path) -> None:
    ds_path = tmp_path / "chunks.lance"
    done: list[str] = []
    assert lance_export.write(ds_path, _rows(0, 300), model_id="m@1", dim=384, actions=done) == 300
    assert done == ["created vector_idx", "created text_idx"]
    done.clear()
    assert (
        lance_export.write(ds_path, _rows(300, 600), model_id="m@1", dim=384, actions=done) == 600
    )
    assert done == [
        "indexed 600 appended rows in vector_idx",
        "indexed 600 appended rows in text_idx",
    ]
    ds = lance_export.open_dataset(ds_path)
    assert {d.name: d.num_rows_indexed for d in ds.describe_indices()} == {
        "text_idx": 900,
        "vector_idx": 900,
    }
    assert sum(len(b) for b in lance_export.iter_ids(ds_path)) == 900
    back = list(lance_export.iter_rows(ds_path))
    assert sum(len(b) for b in back) == 900 and back[0].vectors.shape[1] == 384
    assert lance_export.maintain_indexes(ds_path) == []


def test_a_big_write_goes_in_bounded_appends_each_folded_into_the_vector_index(
    tmp_path: Path,
) -> None:
    """Memory stays flat whatever a push holds: one append's rows at a time, the vector
    index fed per append, the full-text index built once at the end (bench/push_memory.py)."""
    ds_path = tmp_path / "chunks.lance"
    done: list[str] = []
    written = lance_export.write(
        ds_path, _rows(0, 1500), model_id="m@1", dim=384, append_rows=600, actions=done
    )
    assert written == 1500
    ds = lance_export.open_dataset(ds_path)
    assert [f.count_rows() for f in ds.get_fragments()] == [600, 600, 300]
    assert done == [
        "created vector_idx",  # over the first append's 600 rows
        "indexed 600 appended rows in vector_idx",
        "created text_idx",  # the last 300 wait for the next delta (under REINDEX_THRESHOLD)
    ]
    assert {d.name: d.num_rows_indexed for d in ds.describe_indices()} == {
        "text_idx": 1500,
        "vector_idx": 1200,
    }


def test_appending_vectors_of_another_model_is_refused(tmp_path: Path) -> None:
    ds_path = tmp_path / "chunks.lance"
    lance_export.write(ds_path, _rows(0, 10), model_id="m@1", dim=384)
    with pytest.raises(IncompatibleStore, match="m@1"):
        lance_export.write(ds_path, _rows(10, 10), model_id="other@2", dim=384)


def test_memory_values_name_the_right_kind_of_memory(tmp_path: Path) -> None:
    rt = Runtime.resolve()
    export = tmp_path / "export"
    (export / "chunks.lance").mkdir(parents=True)
    sqlite_dir = tmp_path / "sqlite"
    sqlite_dir.mkdir()
    (sqlite_dir / "memory.db").write_bytes(b"")
    assert parse_memory(None, rt).kind is MemoryKind.LOCAL
    assert parse_memory(str(export), rt).kind is MemoryKind.DIR
    assert parse_memory(export.as_uri(), rt).kind is MemoryKind.DIR
    assert parse_memory(str(sqlite_dir), rt).kind is MemoryKind.PATH
    assert parse_memory(str(sqlite_dir / "memory.db"), rt).kind is MemoryKind.PATH
    pinned = parse_memory("team/mem@" + "a" * 40, rt)
    assert (pinned.kind, pinned.repo, pinned.revision) == (MemoryKind.REMOTE, "team/mem", "a" * 40)
    assert parse_memory("hf://datasets/team/mem", rt).label == "hf://datasets/team/mem"
    assert as_push_target(parse_memory(str(tmp_path / "new-dir"), rt)).kind is MemoryKind.DIR
    for bad in (str(sqlite_dir), None):
        with pytest.raises(UsageError):
            as_push_target(parse_memory(bad, rt))
    with pytest.raises(UsageError):
        as_push_target(pinned)
