"""`StoreHandle`: an open memory file's connection, transactions, meta and vector encoding.

The base of `Store` (store.py) and of its rewriting methods (upkeep.py): what every method
of an open memory stands on. `reads` turns the binding's errors in a read into StoreError.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from funes.chunks import EMBED_INPUT, LEGACY_EMBED_INPUT
from funes.errors import IncompatibleStore, StoreError
from funes.store import meta, vecindex, writes
from funes.store.db import REBUILD_LOSES, Connection, open_hint
from funes.store.frequencies import TermFrequencies
from funes.store.meta import DEFAULT_VECTOR_ELEMENT, VECTOR_SCALE, now_utc
from funes.store.schema import create_vector_table

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

P = ParamSpec("P")
R = TypeVar("R")
H = TypeVar("H", bound="StoreHandle")


def reads(method: Callable[Concatenate[H, P], R]) -> Callable[Concatenate[H, P], R]:
    """Turn the binding's errors in a read (a damaged page, a lock held past the busy
    timeout) into StoreError, so a reader gets a message and an exit status, not a traceback."""

    def wrapper(self: H, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except self._conn.module.Error as exc:
            hint = open_hint(exc, self.path)
            raise StoreError(f"cannot read memory {self.path}: {exc}", hint=hint) from exc

    functools.update_wrapper(wrapper, method)
    return wrapper


class StoreHandle:
    """An open memory file (see `Store`, which is what callers hold)."""

    def __init__(
        self, path: Path, conn: Connection, *, lock_path: Path | None, has_schema: bool = True
    ) -> None:
        self.path = path
        self._conn = conn
        self._raw = conn.raw
        self._lock_path = lock_path
        # False for a read-only open of a file no writer has migrated yet (just created, or
        # its creator was killed first): it reads as an empty memory.
        self._has_schema = has_schema
        self._meta = self._read_meta() if has_schema else {}
        # The sibling reader of `reader()`: None until opened; False once it cannot be (and in
        # a sibling itself, which has none of its own).
        self._reader: StoreHandle | bool | None = None
        self._vector_index: vecindex.Reader | None = None  # opened on the first search
        self._frequencies = TermFrequencies()  # document frequencies, while the index is unchanged

    @property
    def raw(self) -> Any:
        """The DB-API connection (for store-internal helpers and tests of the schema)."""
        return self._raw

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._raw.execute("begin immediate")
        try:
            yield
        except BaseException:
            self._raw.execute("rollback")
            raise
        self._raw.execute("commit")

    def _read_meta(self) -> dict[str, str]:
        return meta.read(self._raw)

    @property
    def model_id(self) -> str | None:
        return self._meta.get("embedding_model")

    @property
    def embedding_input(self) -> str:
        """The recipe this memory's vectors were embedded with (see funes.chunks); memories
        stamped before recipes were recorded say LEGACY_EMBED_INPUT."""
        return self._meta.get("embedding_input", LEGACY_EMBED_INPUT)

    @property
    def reembedding(self) -> tuple[str, int] | None:
        """(target recipe, last rowid done) of an unfinished in-place re-embedding, else None.

        Rows up to the watermark hold vectors of the target recipe, later rows (including
        those written meanwhile, rowids only grow) still of `embedding_input`."""
        target = self._meta.get("reembed_target")
        if target is None:
            return None
        return target, int(self._meta.get("reembed_upto", "0"))

    def mark_reembedded(self, target: str, upto: int, *, finished: bool = False) -> None:
        """Record re-embedding progress; `finished`: every row now holds `target` vectors, so
        `embedding_input` becomes `target` and the progress keys go."""
        with self._tx():
            if finished:
                meta.put(self._raw, [("embedding_input", target)])
                meta.drop(self._raw, ("reembed_target", "reembed_upto"))
            else:
                meta.put(self._raw, [("reembed_target", target), ("reembed_upto", str(upto))])
        self._meta = self._read_meta()

    @property
    def dim(self) -> int | None:
        value = self._meta.get("embedding_dim")
        return int(value) if value else None

    @property
    def vector_element(self) -> str | None:
        return self._meta.get("vector_element")

    @property
    def vectors_available(self) -> bool:
        """sqlite-vec is loaded in this process (vectors can be written and searched)."""
        return self._conn.vectors

    @property
    def vectors_unavailable_reason(self) -> str | None:
        return self._conn.vector_error

    def stamp_model(
        self,
        model_id: str,
        dim: int,
        *,
        element: str = DEFAULT_VECTOR_ELEMENT,
        embedding_input: str = EMBED_INPUT,
    ) -> None:
        """Record the embedding model of this memory (first write) or check it (later writes).

        The first stamp also records `embedding_input`, the recipe every later write of this
        memory embeds with (an existing memory keeps its own). Raises IncompatibleStore when
        the memory was built with another model and holds vectors of it; a memory stamped
        but never embedded into (its first index stopped before the model loaded: offline,
        killed) is taken over by `model_id`, its chunks still owed their vectors.
        """
        if self.model_id == model_id:
            return
        self.check_model(model_id, writing=True)
        with self._tx():
            if self.model_id is not None:  # stamped, never embedded into: start over
                meta.drop(self._raw, ("reembed_target", "reembed_upto"))
                self._raw.execute("drop table if exists chunks_vec")
            meta.put(
                self._raw,
                [
                    ("embedding_model", model_id),
                    ("embedding_dim", str(dim)),
                    ("vector_element", element),
                    ("vector_scale", str(VECTOR_SCALE)),
                    ("embedding_input", embedding_input),
                    ("created_at", now_utc()),
                ],
            )
            if self._conn.vectors:
                create_vector_table(self._raw, dim=dim, element=element)
        self._meta = self._read_meta()

    def _holds_vectors(self) -> bool:
        """Whether any vector was ever stored (True when that cannot be read: the table
        exists but sqlite-vec is not loaded in this process)."""
        table = "select 1 from sqlite_master where name = 'chunks_vec'"
        if self._raw.execute(table).fetchone() is None:
            return False
        if not self._conn.vectors:
            return True
        return self._raw.execute("select 1 from chunks_vec limit 1").fetchone() is not None

    def check_model(
        self, model_id: str, *, writing: bool = False, selector: str | None = None
    ) -> None:
        """Raise IncompatibleStore unless this memory's vectors come from `model_id`.

        `writing`: a writer about to embed with `model_id` may also take over a memory that
        holds no vector yet (`stamp_model` then re-stamps it); a reader may not (its query
        vector would not fit the memory's vector table), and is told that an index takes it
        over rather than to rebuild it. `selector`: the FUNES_EMBEDDER value that selects this
        memory's own model (funes.inference.embedder_for_model_id), named by the hint; None
        when no known embedder has it."""
        if self.model_id is None or self.model_id == model_id:
            return
        holds_vectors = self._holds_vectors()
        if writing and not holds_vectors:
            return
        # unset, FUNES_EMBEDDER means the memory's own model when funes knows it
        own = (
            f"FUNES_EMBEDDER={selector}, or FUNES_EMBEDDER unset" if selector else "FUNES_EMBEDDER"
        )
        hint = (
            f"use the model it was built with ({own}), or rebuild: move {self.path} "
            f"away and run `funes index --yes` ({REBUILD_LOSES})"
            if holds_vectors
            else "it holds no vector yet: `funes index` with this model takes it over and "
            f"embeds its chunks (or use the model it was stamped with: {own})"
        )
        raise IncompatibleStore(
            f"this memory was built with {self.model_id}, not {model_id}", hint=hint
        )

    @property
    def _vector_scale(self) -> float:
        """The int8 scale this memory's vectors were stored with (VECTOR_SCALE when unstamped)."""
        return float(self._meta.get("vector_scale", VECTOR_SCALE))

    def _vector_bytes(self, vectors: NDArray[np.float32]) -> list[bytes]:
        return meta.vector_bytes(vectors, element=self.vector_element, scale=self._vector_scale)

    def _insert_vector(self, rowid: int, blob: bytes, harness: str, block_type: str) -> None:
        writes.insert_vector(
            self._raw,
            rowid,
            blob,
            harness=harness,
            block_type=block_type,
            element=self.vector_element,
        )
