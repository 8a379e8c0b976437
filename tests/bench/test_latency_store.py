"""The bench's large latency stores look like what `funes index` writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.latency import fill_synthetic
from funes.chunks import Chunk
from funes.redact import default_scanner
from funes.store import Store
from funes.traces import BlockType, Harness, Role


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(
        id=f"real{i:04d}", text=text, session_id="s1", turn_id=f"t{i}", seq=i,
        ts="2024-05-01T12:00:00.000Z", role=Role.USER, block_type=BlockType.TEXT, block_idx=0,
        split_idx=0, harness=Harness(list(Harness)[0]), workdir="-w", source_path="/s1.jsonl",
    )  # fmt: skip


def test_filler_and_copied_chunks_are_stored_at_the_current_redaction_version(
    tmp_path: Path,
) -> None:
    version = default_scanner().version
    dim = 8
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with Store.open(tmp_path / "dev.db") as dev:
        dev.stamp_model("test-model", dim)
        texts = ["pgbouncer moved to port 6433", "the pool size is twenty", "retry the deploy"]
        dev.add([_chunk(i, t) for i, t in enumerate(texts)], vectors, redaction_version=version)
        real = list(dev.fetch(range(1, 4)).values())
    with Store.open(tmp_path / "big.db") as big:
        big.stamp_model("test-model", dim)
        fill_synthetic(big, 40, real, vectors)
        rows = big.fetch(range(1, 41))
        assert len(rows) == 40
        assert {c.redaction_version for c in rows.values()} == {version}
