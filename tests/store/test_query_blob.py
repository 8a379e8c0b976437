"""A query's vector handed to the store as float32 bytes (what a cold recall's prefetch child
sends: funes.inference.prefetch) is stored-form bytes identical to the numpy path's, so the
parent process can search without importing numpy and find exactly the same neighbours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import numbered_chunks

from funes.store import Store
from funes.store.meta import VECTOR_SCALE, query_blob, vector_bytes

RNG = np.random.default_rng(2026)


def _both(vector: np.ndarray, element: str, scale: float = VECTOR_SCALE) -> tuple[bytes, bytes]:
    v = np.asarray(vector, dtype=np.float32)
    got = query_blob(v.astype("<f4").tobytes(), element=element, scale=scale)
    with np.errstate(over="ignore"):  # numpy's product overflows to inf, then clips
        return got, vector_bytes(v.reshape(1, -1), element=element, scale=scale)[0]


def test_unit_vectors_quantize_byte_for_byte_as_numpy_does() -> None:
    vectors = RNG.standard_normal((2_000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for v in vectors:
        got, want = _both(v, "int8")
        assert got == want


def test_halves_the_clip_and_infinities_round_as_numpy_does() -> None:
    # components whose float32 product with the scale lands on or next to k + 0.5 (the
    # rounding ties numpy breaks to even), beyond ±127, and infinite
    halves = np.array([(k + 0.5) / VECTOR_SCALE for k in range(-130, 130)], dtype=np.float32)
    near = np.concatenate(
        [halves, np.nextafter(halves, np.float32(1)), np.nextafter(halves, np.float32(-1))]
    )
    edges = np.array([0.0, -0.0, 1.0, -1.0, 0.3174, np.inf, -np.inf], dtype=np.float32)
    for v in (near, edges):
        for scale in (VECTOR_SCALE, 127.0, 0.1 + 0.2):  # 0.3…: not a float32 either
            got, want = _both(v, "int8", scale)
            assert got == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=64))
def test_any_finite_or_infinite_component_matches(values: list[float]) -> None:
    got, want = _both(np.array(values, dtype=np.float32), "int8")
    assert got == want


def test_a_float_memory_takes_the_bytes_as_they_are() -> None:
    v = RNG.standard_normal(384).astype(np.float32)
    got, want = _both(v, "float")
    assert got == want


def test_the_store_finds_the_same_neighbours_from_bytes_as_from_an_array(tmp_path: Path) -> None:
    vectors = RNG.standard_normal((300, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = Store.open(tmp_path / "memory.db")
    store.stamp_model("test/random@1", 32)
    store.add(numbered_chunks(0, 300), vectors)
    for q in vectors[:25] + RNG.normal(0, 0.05, (25, 32)).astype(np.float32):
        assert store.semantic(q.astype("<f4").tobytes(), k=10) == store.semantic(q, k=10)
    store.close()
