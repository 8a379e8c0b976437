"""The memory's `meta` table and how vectors are encoded for it.

`meta` records the embedding model a memory was built with (`embedding_model`,
`embedding_dim`), how its vectors are stored (`vector_element`, `vector_scale`), the recipe
of what was embedded (`embedding_input`) and the progress of an in-place re-embedding
(`reembed_target`, `reembed_upto`). Values are bound, never formatted into SQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# int8 vectors: component × VECTOR_SCALE, rounded and clipped to ±127. Unit vectors of
# 384-d sentence embedders have components within about ±0.3, so 400 keeps ~7 bits.
VECTOR_SCALE = 400.0
DEFAULT_VECTOR_ELEMENT = "int8"


def now_utc() -> str:
    """The current time as stored (ISO-8601 UTC, seconds)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read(raw: Any) -> dict[str, str]:
    """Every meta key and value ({} where the table does not exist yet)."""
    try:
        return {k: v for k, v in raw.execute("select key, value from meta")}
    except Exception:
        return {}


def put(raw: Any, items: Iterable[tuple[str, str]]) -> None:
    """Insert or replace meta keys (inside the caller's transaction)."""
    for key, value in items:
        raw.execute("insert or replace into meta (key, value) values (?, ?)", (key, value))


def drop(raw: Any, keys: Iterable[str]) -> None:
    """Delete meta keys (inside the caller's transaction)."""
    for key in keys:
        raw.execute("delete from meta where key = ?", (key,))


def query_blob(vector: bytes, *, element: str | None, scale: float) -> bytes:
    """`vector_bytes` of one vector given as float32s, little-endian (a query's vector as the
    prefetch child of a cold recall sends it: funes.inference.prefetch), byte for byte, without
    numpy. numpy multiplies a float32 array by a Python float in float32 (NEP 50): the scale is
    rounded to float32, and the product of two float32s, exact in a Python float, is rounded to
    float32 as numpy rounds it; then rounded half to even (np.rint, round) and clipped."""
    if element != "int8":
        return vector
    import array
    import sys

    values = array.array("f")
    values.frombytes(vector)
    if sys.byteorder == "big":
        values.byteswap()
    s = array.array("f", [scale])[0]
    # held within ±128 first, which changes no component that ends within ±127, and keeps
    # a product beyond float32's range (or infinite) from the float32 conversion
    products = array.array("f", [max(-128.0, min(128.0, x * s)) for x in values])
    # clipping before rounding is the same at integer bounds
    return bytes(round(max(-127.0, min(127.0, p))) & 0xFF for p in products)


def vector_bytes(vectors: NDArray[np.float32], *, element: str | None, scale: float) -> list[bytes]:
    """One blob per row of `vectors` (shape (n, dim)): int8 components × `scale`, rounded and
    clipped to ±127, when `element` is int8; float32 otherwise."""
    import numpy as np

    if element == "int8":
        q = np.clip(np.rint(vectors * scale), -127, 127).astype(np.int8)
        return [row.tobytes() for row in q]
    return [row.astype(np.float32).tobytes() for row in vectors]
