"""Which models this environment asks for: FUNES_EMBEDDER, FUNES_RERANKER, FUNES_MODEL_PATH.

Apart from funes.settings' tunables so that a cold recall's prefetch child, which resolves
only this before it loads its model (funes.inference.models.ready_query_model), does not
build every parameter class on its way (~5 ms of a path the first byte waits on).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_EMBEDDER = "bge-small-en-v1.5"
DEFAULT_RERANKER = "ms-marco-minilm-l6-v2"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """Which model specs to load (names from funes.inference.spec.SPECS)."""

    embedder: str | None  # None → the memory's stamped model, else DEFAULT_EMBEDDER
    reranker: str
    # folders holding offline-weight packages installed with `pip install --target` (for a
    # funes installed as a tool, whose own environment does not hold them): FUNES_MODEL_PATH
    model_path: tuple[str, ...] = ()

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> ModelChoice:
        """FUNES_EMBEDDER / FUNES_RERANKER pick a spec by name; `none` disables the reranker;
        FUNES_MODEL_PATH (folders, `os.pathsep`-separated) is where weight packages are looked
        up besides the installed ones."""
        env = os.environ if env is None else env
        path = tuple(p for p in (env.get("FUNES_MODEL_PATH") or "").split(os.pathsep) if p)
        return cls(
            embedder=env.get("FUNES_EMBEDDER") or None,
            reranker=env.get("FUNES_RERANKER") or DEFAULT_RERANKER,
            model_path=path,
        )
