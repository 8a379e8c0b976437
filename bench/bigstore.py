"""Large synthetic memories for the latency probes, built once and cached (bench/cache/).

A store of N chunks holds the dev set's real chunks (with their real vectors) plus filler
(`latency.fill_synthetic`: the dev set's own words at its chunk lengths, random unit
vectors). Building 1M chunks takes minutes (FTS5 and sqlite-vec inserts), so each size is
kept under `bench/cache/` keyed by everything that shapes it: the filler generator, the size,
the redaction version, the embedder and its recipe, and the real chunks' content (an older
schema is migrated on open). The vector index beside it (funes.store.vecindex) is built with
it. A key that changes builds a new file; stale files of the same size are removed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

from bench.latency import GENERATOR, fill_synthetic
from funes.store import Store, StoredChunk

CACHE = Path(__file__).resolve().parent / "cache"


# Bumped when a cached file cannot be migrated in place: "2" — files built on the speed branch
# numbered its owed-vector and vector-log migrations 3 and 4, which main's transcripts and
# forgetting migrations now hold (the vector ones are 5 and 6).
LAYOUT = "2"


def store_key(size: int, real: Sequence[StoredChunk], model_id: str, dim: int) -> str:
    from funes.chunks import EMBED_INPUT
    from funes.redact import default_scanner

    # the schema is not part of the key: opening an older file migrates it in place; the
    # embedding recipe is (the real chunks' vectors are the current recipe's)
    digest = hashlib.sha1()
    for part in (LAYOUT, GENERATOR, str(size), str(default_scanner().version), EMBED_INPUT):
        digest.update(part.encode() + b"\0")
    digest.update(f"{model_id}:{dim}".encode() + b"\0")
    for c in real:
        digest.update(f"{c.id}\0{c.text}\0".encode())
    return digest.hexdigest()[:12]


def cached_store(
    size: int,
    real: Sequence[StoredChunk],
    vectors: object,
    *,
    model_id: str,
    dim: int,
    cache: Path = CACHE,
) -> tuple[Path, float | None]:
    """The path of a store of `size` chunks (built now when missing) and the seconds the build
    took (None when it was cached)."""
    cache.mkdir(parents=True, exist_ok=True)
    key = store_key(size, real, model_id, dim)
    path = cache / f"synthetic-{size}-{key}.db"
    if path.is_file():
        return path, None
    for stale in cache.glob(f"synthetic-{size}-*.db*"):
        stale.unlink()
    building = path.with_suffix(".building")
    for leftover in cache.glob(building.name + "*"):
        leftover.unlink()
    t0 = time.perf_counter()
    store = Store.open(building)
    try:
        store.stamp_model(model_id, dim)
        fill_synthetic(store, size, real, vectors)
        store.raw.execute("pragma wal_checkpoint(TRUNCATE)")
        store.sync_vector_index()
    finally:
        store.close()
    building.rename(path)
    index = building.with_name(building.name + ".vecidx")
    if index.exists():  # the index names its memory by id, not by path: it follows the rename
        index.rename(path.with_name(path.name + ".vecidx"))
    return path, time.perf_counter() - t0
