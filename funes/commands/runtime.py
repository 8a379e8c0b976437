"""The Runtime: resolved locations, model choice and lazily loaded models, built once per process.

The CLI, the MCP server and the spool worker each build one at their edge and hand it to
every command. Models load on first use and are then reused (the MCP server answers many
recalls with one load).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import ModelUnavailable
from funes.inference import (
    Embedder,
    LazyEmbedder,
    ModelSpec,
    Reranker,
    embedder_for_model_id,
    embedder_spec,
    load_reranker,
    reranker_spec,
)
from funes.paths import AgentHomes, Paths
from funes.settings import DEFAULT_EMBEDDER, REMOTE, ModelChoice, RemoteParams, hub_offline


@dataclass
class Runtime:
    """Everything a command needs from the outside world, resolved once."""

    paths: Paths
    homes: AgentHomes
    models: ModelChoice
    host: str = field(default_factory=socket.gethostname)
    offline: bool = False  # remote memories: read the last cached commit, no network
    remote: RemoteParams = REMOTE
    _embedders: dict[str, LazyEmbedder] = field(default_factory=dict)
    _reranker: Reranker | None = None
    _reranker_error: str | None = None
    _reranker_tried: bool = False

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Runtime:
        return cls(
            Paths.resolve(env),
            AgentHomes.resolve(env),
            ModelChoice.resolve(env),
            offline=hub_offline(env),
            remote=RemoteParams.resolve(env),
        )

    @property
    def stamp_dir(self) -> Path:
        return self.paths.data / "verified-models"

    def embedder_spec_for(self, stamped_model_id: str | None) -> ModelSpec:
        """The embedder to use with a memory stamped with `stamped_model_id` (None: new memory).

        An explicit FUNES_EMBEDDER wins (a mismatch is then refused by the store); otherwise the
        memory's own model when funes knows it, else the default.
        """
        if self.models.embedder:
            return embedder_spec(self.models.embedder)
        if stamped_model_id:
            known = embedder_for_model_id(stamped_model_id)
            if known is not None:
                return known
        return embedder_spec(DEFAULT_EMBEDDER)

    def embedder(self, spec: ModelSpec) -> Embedder:
        """A lazily loading embedder for `spec` (one per spec per process)."""
        if spec.name not in self._embedders:
            self._embedders[spec.name] = LazyEmbedder(spec, stamp_dir=self.stamp_dir)
        return self._embedders[spec.name]

    def reranker(self) -> Reranker | None:
        """The cross-encoder, or None when disabled (`none`) or unavailable (see reranker_note)."""
        if self._reranker_tried:
            return self._reranker
        self._reranker_tried = True
        if self.models.reranker == "none":
            self._reranker_error = "disabled (FUNES_RERANKER=none)"
            return None
        try:
            self._reranker = load_reranker(
                reranker_spec(self.models.reranker), stamp_dir=self.stamp_dir
            )
        except ModelUnavailable as exc:
            self._reranker_error = exc.message
        return self._reranker

    @property
    def reranker_note(self) -> str | None:
        """Why there is no reranker (after `reranker()` was asked), else None."""
        return self._reranker_error
