"""Memories for tests: real SQLite files in tmp_path, filled through the store's own API.

The `store` fixture (tests/conftest.py) is an empty writable memory; `fill` stamps a memory
with an embedder and adds the chunks of some turns with their vectors, as indexing would.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from funes.chunks import chunk_turn
from funes.inference import Embedder
from funes.store import DEFAULT_VECTOR_ELEMENT, Store
from funes.traces import Turn


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
