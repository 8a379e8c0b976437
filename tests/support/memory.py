"""Memories for tests: real SQLite files in tmp_path, filled through the store's own API.

The `store` fixture (tests/conftest.py) is an empty writable memory; `fill` stamps a memory
with an embedder and adds the chunks of some turns with their vectors, as indexing would.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from funes.chunks import Chunk, chunk_turn
from funes.inference import Embedder
from funes.store import DEFAULT_VECTOR_ELEMENT, Store
from funes.traces import BlockType, Harness, Role, Turn


def fill(
    store: Store,
    turns: Iterable[Turn],
    embedder: Embedder,
    *,
    element: str = DEFAULT_VECTOR_ELEMENT,
) -> Store:
    """Stamp `store` with `embedder` (vectors of `element`) and add the chunks of `turns`."""
    store.stamp_model(embedder.model_id, embedder.dim, element=element)
    chunks = [c for turn in turns for c in chunk_turn(turn)]
    store.add(chunks, embedder.embed([c.text for c in chunks]))
    return store


def memory_with(
    path: Path, turns: Iterable[Turn], embedder: Embedder, *, element: str = DEFAULT_VECTOR_ELEMENT
) -> Store:
    """A new memory at `path` holding `turns` (the caller closes it)."""
    return fill(Store.open(path), turns, embedder, element=element)


def numbered_chunks(start: int, n: int) -> list[Chunk]:
    """Chunks `start` … `start + n - 1`: ten turns a session, mixed block types and harnesses."""
    return [
        Chunk(
            id=f"c{i:08d}",
            text=f"chunk {i}",
            session_id=f"s{i // 10}",
            turn_id=f"t{i % 10}",
            seq=i % 10,
            ts="2026-01-01T00:00:00Z",
            role=Role.ASSISTANT,
            block_type=BlockType.TEXT if i % 3 else BlockType.TOOL_RESULT,
            block_idx=0,
            split_idx=0,
            harness=Harness.CLAUDE_CODE if i % 2 else Harness.CODEX,
            workdir="w",
            source_path=f"/p/s{i // 10}.jsonl",
        )  # fmt: skip
        for i in range(start, start + n)
    ]
