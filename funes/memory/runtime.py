"""The Runtime: resolved locations, model choice and lazily loaded models, built once per process.

The CLI, the MCP server and the spool worker each build one at their edge and hand it to
every command. Models load on first use and are then reused (the MCP server answers many
recalls with one load).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import ModelUnavailable
from funes.inference import (
    DEFAULT_EMBEDDER,
    Embedder,
    LazyEmbedder,
    LoadCheck,
    ModelChoice,
    ModelSpec,
    Reranker,
    available_locally,
    check_load,
    embedder_for_model_id,
    embedder_spec,
    load_reranker,
    reranker_spec,
    use_model_path,
)
from funes.paths import Paths, create_private_file
from funes.settings import REMOTE, RemoteParams, hub_offline
from funes.traces import AgentHomes

RERANKER_RETRY_S = 24 * 3600.0  # after a failed reranker download, try again this much later


def host_name() -> str:
    """This machine's host name (what socket.gethostname() returns), without importing the
    socket module on every command's start path (~4 ms of a cold `funes recall`)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    import socket  # no os.uname (Windows)

    return socket.gethostname()


@dataclass
class Runtime:
    """Everything a command needs from the outside world, resolved once."""

    paths: Paths
    homes: AgentHomes
    models: ModelChoice
    host: str = field(default_factory=host_name)
    offline: bool = False  # remote memories: read the last cached commit, no network
    # HF_HUB_OFFLINE: a model that is not cached cannot be downloaded (`--offline` leaves
    # downloads as they are; it only sets `offline`)
    models_offline: bool = False
    remote: RemoteParams = REMOTE
    _embedders: dict[str, LazyEmbedder] = field(default_factory=dict)
    _reranker: Reranker | None = None
    _reranker_error: str | None = None
    _reranker_tried: bool = False

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Runtime:
        models = ModelChoice.resolve(env)
        use_model_path(models.model_path)  # FUNES_MODEL_PATH: weight packages beside the install
        return cls(
            Paths.resolve(env),
            AgentHomes.resolve(env),
            models,
            offline=hub_offline(env),
            models_offline=hub_offline(env),
            remote=RemoteParams.resolve(env),
        )

    @property
    def stamp_dir(self) -> Path:
        return self.paths.verified_models

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

    def check_embedder(self, spec: ModelSpec) -> LoadCheck:
        """What loading embedder `spec` would meet here (funes.inference.check_load), judged
        from this machine's files: no network, nothing loaded; a file hashed only where no
        load has verified it at its size and mtime."""
        return check_load(
            spec, cache_dir=self.paths.models, offline=self.models_offline, stamp_dir=self.stamp_dir
        )

    def embedder(self, spec: ModelSpec) -> Embedder:
        """A lazily loading embedder for `spec` (one per spec per process)."""
        if spec.name not in self._embedders:
            self._embedders[spec.name] = LazyEmbedder(
                spec, stamp_dir=self.stamp_dir, cache_dir=self.paths.models
            )
        return self._embedders[spec.name]

    @property
    def _reranker_failure(self) -> Path:
        """Remembers a failed download of the reranker, so recall does not retry it every time."""
        return self.paths.data / "reranker-download-failed.json"

    def _recent_failure(self, spec: ModelSpec) -> float | None:
        """When the last download of `spec` failed, if within RERANKER_RETRY_S; else None."""
        try:
            failed = json.loads(self._reranker_failure.read_text())
        except (OSError, ValueError):
            return None
        at = failed.get("at") if failed.get("model_id") == spec.model_id else None
        if isinstance(at, (int, float)) and time.time() - at < RERANKER_RETRY_S:
            return float(at)
        return None

    def reranker(self) -> Reranker | None:
        """The cross-encoder, or None when disabled (`none`) or unavailable (see reranker_note).

        A reranker that is not on this machine is downloaded on first use; when that fails, the
        failure is remembered for RERANKER_RETRY_S so later recalls skip straight to the fused
        order instead of waiting on the network again.
        """
        if self._reranker_tried:
            return self._reranker
        self._reranker_tried = True
        if self.models.reranker == "none":
            self._reranker_error = "disabled (FUNES_RERANKER=none)"
            return None
        spec = reranker_spec(self.models.reranker)
        if not available_locally(spec) and (at := self._recent_failure(spec)) is not None:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
            self._reranker_error = (
                f"{spec.name} is not downloaded (the download failed at {when}; retried after "
                f"{RERANKER_RETRY_S // 3600:.0f} h; FUNES_RERANKER=none silences this)"
            )
            return None
        try:
            self._reranker = load_reranker(spec, stamp_dir=self.stamp_dir)
        except ModelUnavailable as exc:
            self._reranker_error = exc.message
            with contextlib.suppress(OSError):
                self.paths.ensure()
                failure = {"model_id": spec.model_id, "at": time.time()}
                create_private_file(self._reranker_failure).write_text(json.dumps(failure))
        return self._reranker

    def reranker_status(self) -> str:
        """The active reranker for `status`, checked without loading or downloading anything:
        what `reranker()` will do on the next recall (load it, try to download it, or run
        without it)."""
        if self.models.reranker == "none":
            return "none (FUNES_RERANKER=none)"
        spec = reranker_spec(self.models.reranker)
        if available_locally(spec):
            return f"{spec.name} ({spec.model_id})"
        if (at := self._recent_failure(spec)) is not None:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
            return f"{spec.name}: not downloaded, the download failed at {when}; recall runs without rerank"
        if self.models_offline:
            return (
                f"{spec.name}: not on this machine, and HF_HUB_OFFLINE is set so it cannot be "
                "downloaded; recall runs without rerank (FUNES_RERANKER=none silences its note)"
            )
        return (
            f"{spec.name}: not downloaded yet (the first recall downloads it from the Hugging "
            "Face Hub; where the Hub cannot be reached, recall runs without rerank)"
        )

    @property
    def reranker_note(self) -> str | None:
        """Why there is no reranker (after `reranker()` was asked), else None."""
        return self._reranker_error
