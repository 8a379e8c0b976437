"""The bench's vector cache answers only for the recipe that filled it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fakes import BagOfWordsEmbedder

from bench.vector_cache import CachedEmbedder


class Shifted(BagOfWordsEmbedder):
    """Another recipe of the same weights: same model id, other vectors for the same text."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return np.roll(super().embed(texts), 1, axis=1)


def test_a_recipe_change_misses_the_cache(tmp_path: Path) -> None:
    """The key held model id, kind and text: after a token cap or graph change (same text,
    other vectors) a run read the old recipe's vectors back for every text in common."""
    path = tmp_path / "vectors.db"
    texts = ["the importer waits for the lock", "WAL journal mode"]
    first = BagOfWordsEmbedder()
    old = CachedEmbedder(
        lambda: first, model_id=first.model_id, dim=first.dim, recipe="a/128", path=path
    )
    before = old.embed(texts)
    old.embed_query("why the lock")
    old.close()

    second = Shifted()
    new = CachedEmbedder(
        lambda: second, model_id=second.model_id, dim=second.dim, recipe="a/104", path=path
    )
    after = new.embed(texts)
    assert new.hits == 0 and new.misses == 2 and second.texts_embedded == 2
    assert np.array_equal(after, second.embed(texts)) and not np.array_equal(after, before)
    new.embed_query("why the lock")
    assert new.misses == 3

    again = CachedEmbedder(
        lambda: first, model_id=first.model_id, dim=first.dim, recipe="a/128", path=path
    )
    assert np.array_equal(again.embed(texts), before) and again.hits == 2 and again.misses == 0
