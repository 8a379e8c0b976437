"""A disk cache of embedding vectors, so a ranking experiment re-runs in seconds, not minutes.

`CachedEmbedder` wraps a real embedder: a passage or query vector is looked up by
sha256(model_id, recipe, kind, exact input text) in one SQLite file (default `bench/.cache/
vectors.db`, git-ignored) and only the texts not found are embedded (then stored). The key holds
the text the embedder reads (chunk text with its prompt context), so a change of chunking,
redaction or prompt context misses the cache by itself; the recipe (funes.chunks.EMBED_INPUT:
it names the graph and the token cap, which change vectors of the same text) and `model_id`
(the weights) are in it too. Without the recipe, a run after a cap or graph change read the
previous recipe's vectors for every text they had in common. Vectors are stored as float32 bytes and come back bit for bit, so
a store built from cached vectors equals one built by the model (same int8 quantisation).

The wrapped model is loaded on the first miss: a fully cached run never loads onnxruntime.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from funes.inference import Embedder

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache" / "vectors.db"


def _key(model_id: str, recipe: str, kind: str, text: str) -> bytes:
    key = f"{model_id}\0{recipe}\0{kind}\0{text}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """An Embedder whose vectors come from a disk cache when it has them (see module doc).

    `load` builds the real embedder on the first cache miss; `recipe` names what it runs
    (default: the current recipe, funes.chunks.EMBED_INPUT). `misses` counts the texts that
    had to be embedded (passages and queries), `hits` those read from the cache.
    """

    def __init__(
        self,
        load: Callable[[], Embedder],
        *,
        model_id: str,
        dim: int,
        recipe: str | None = None,
        path: Path = DEFAULT_CACHE,
    ) -> None:
        if recipe is None:
            from funes.chunks import EMBED_INPUT

            recipe = EMBED_INPUT
        self.recipe = recipe
        self._load = load
        self._inner: Embedder | None = None
        self.model_id = model_id
        self.dim = dim
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("create table if not exists vec (key blob primary key, v blob not null)")
        self.hits = 0
        self.misses = 0

    @property
    def inner(self) -> Embedder:
        if self._inner is None:
            self._inner = self._load()
        return self._inner

    def _lookup(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for k, v in self._db.execute(f"select key, v from vec where key in ({marks})", part):
                found[bytes(k)] = bytes(v)
        return found

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = [_key(self.model_id, self.recipe, "passage", t) for t in texts]
        found = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        for i, k in enumerate(keys):
            if k in found:
                out[i] = np.frombuffer(found[k], dtype=np.float32)
        if todo:
            fresh = self.inner.embed([texts[i] for i in todo])
            with self._db:
                self._db.executemany(
                    "insert or replace into vec (key, v) values (?, ?)",
                    [(keys[i], fresh[j].astype(np.float32).tobytes()) for j, i in enumerate(todo)],
                )
            out[todo] = fresh
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        return out

    def embed_query(self, query: str) -> NDArray[np.float32]:
        import numpy as np

        key = _key(self.model_id, self.recipe, "query", query)
        found = self._lookup([key])
        if key in found:
            self.hits += 1
            return np.frombuffer(found[key], dtype=np.float32).copy()
        vector = self.inner.embed_query(query)
        with self._db:
            self._db.execute(
                "insert or replace into vec (key, v) values (?, ?)",
                (key, vector.astype(np.float32).tobytes()),
            )
        self.misses += 1
        return vector

    def close(self) -> None:
        self._db.close()
