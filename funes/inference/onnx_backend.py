"""ONNX Runtime + tokenizers implementations of the Embedder and Reranker protocols.

The only module that imports onnxruntime. Tokenizers load in funes.inference.tokens; weight
files come from the Hub (via funes.hf) or from an installed package, and are sha256-verified
before first use (funes.inference.files).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from funes.errors import ModelUnavailable
from funes.inference.files import resolve_file
from funes.inference.spec import ModelSpec, Pooling
from funes.inference.telemetry import keep_off
from funes.inference.tokens import EMBED_TOKENS, QueryTokens, load_tokenizer

keep_off()  # before onnxruntime's first import
import onnxruntime as ort  # noqa: E402

# Imported where used, not here: this module is on a cold recall's path to its query vector
# (funes.inference.prefetch), which needs none of them (funes.chunks alone, for two recipe
# names, brought in every transcript type: ~8 ms).
if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from numpy.typing import NDArray
    from tokenizers import Tokenizer

_BATCH = 32
# Padded tokens per onnxruntime run. Measured on the dev set (828 chunks, int8 MiniLM-L6):
# unbounded (32 × 256) peaked at 1.6 GB RSS; 2,048 peaked at 0.57 GB and ran ~20% faster.
_BATCH_TOKENS = 2048
# Intra-op threads for one query embedding. A single short sequence gains little from a thread
# pool (100k bench store, 2 cores: 11 ms on two threads, 18 ms on one), but the pool's workers
# spin on for a while after each run and take the core recall's BM25 leg and vector scan run
# on: embed + both legs, interleaved, 116 dev-set questions × 2, p50 145 → 100 ms (and
# 139 → 99 in a second run). The vectors are the same bits (GEMMs split over threads by
# output block, not by the reduction).
_QUERY_THREADS = 1


def _session(
    path: Path,
    threads: int,
    disabled: tuple[str, ...] = (),
    *,
    saved_optimized: bool = False,
    prepack: bool = True,
) -> ort.InferenceSession:
    """A CPU session of `path` with `threads` intra-op threads, without the graph optimizations
    named in `disabled` (the int8 graph's: funes.inference.quantize.DISABLED_OPTIMIZERS).

    `saved_optimized`: the graph was saved after onnxruntime's optimizations (the int8 graph,
    funes.inference.quantize), so none runs again at load: they found nothing left to change
    (the same vectors, bit for bit) and cost a third of building the session (warm, bench
    machine: 18-22 → 14 ms), which a cold `funes recall` pays before its first byte.

    `prepack` False: the weights are not re-laid out for onnxruntime's GEMM kernels at load.
    A session that runs a few short queries (a recall process) is built 5-8 ms faster and
    runs ~10% slower per 128-token text; the vectors are the same bits (integer GEMMs either
    way: tests/inference, query vs passage vectors)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if saved_optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if not prepack:
        options.add_session_config_entry("session.disable_prepacking", "1")
    return ort.InferenceSession(
        str(path),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(disabled),
    )


def length_batches(
    lengths: Sequence[int], *, max_batch: int, slack: float = 1.25, max_tokens: int = 2048
) -> list[list[int]]:
    """Indexes of `lengths` grouped for padded batching: shortest first, at most `max_batch` per
    group, and a group closes when the next length exceeds `slack` × its shortest + 8 tokens or
    would take the padded group (count × longest) past `max_tokens`.

    Every index appears exactly once; a single text longer than `max_tokens` is a group alone.
    Padded tokens per group stay within about `slack` × the real ones whatever the mix of
    lengths, and the token budget bounds the activations (and so the peak memory) of one run.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (
            len(current) >= max_batch
            or lengths[i] > slack * lengths[current[0]] + 8
            or (len(current) + 1) * lengths[i] > max_tokens
        ):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def _padded_feeds(
    session: ort.InferenceSession, encodings: list[Any], pad_id: int
) -> dict[str, NDArray[np.int64]]:
    """Right-pad unpadded encodings to the longest of them; feeds only the graph's inputs."""
    width = max(len(e.ids) for e in encodings)
    ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    types = np.zeros((len(encodings), width), dtype=np.int64)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n] = e.ids
        mask[row, :n] = 1
        types[row, :n] = e.type_ids
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    names = {i.name for i in session.get_inputs()}
    return {k: v for k, v in feeds.items() if k in names}


class OnnxEmbedder:
    """A sentence embedder (BERT family) on onnxruntime, running the embedding `recipe`.

    The current recipe (funes.chunks.EMBED_INPUT) runs the model's dynamic-int8 graph
    (funes.inference.quantize, built once into `cache_dir`) on one text at a time, each cut at
    `EMBED_TOKENS`, on `workers` threads sharing one single-threaded session. One text per run
    makes a vector independent of which texts share a call: the int8 graph quantizes its
    activations with one scale per run, so in a batch a text's vector would depend on its
    neighbours. It also pads nothing, which the graph relies on: its attention has no key
    padding mask (funes.inference.fusion), so it must never run a padded batch. The older recipes (`FLOAT32_RECIPES`, for memories not
    re-embedded yet and the bench's baseline) run the float32 graph on length-sorted batches
    cut at the model's own limit, on one session of `threads` intra-op threads (0: one per
    core). Sessions are built on first use.
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        stamp_dir: Path | None = None,
        cache_dir: Path | None = None,
        recipe: str | None = None,
        threads: int = 0,
        workers: int | None = None,
    ) -> None:
        # recipe None: the current one (funes.chunks.EMBED_INPUT), without importing
        # funes.chunks and every transcript type with it (~6 ms of a cold recall's child)
        if recipe is not None:
            from funes.chunks import EMBED_INPUT, FLOAT32_RECIPES

            if recipe != EMBED_INPUT and recipe not in FLOAT32_RECIPES:
                raise ModelUnavailable(f"unknown embedding recipe {recipe!r}")
        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        self.int8 = recipe is None or recipe == EMBED_INPUT
        self.recipe = recipe  # None: the current one
        self._cap = min(spec.max_tokens, EMBED_TOKENS) if self.int8 else spec.max_tokens
        self._tokenizer_file = resolve_file(spec, spec.tokenizer, stamp_dir=stamp_dir)
        self._loaded_tokenizer: tuple[Tokenizer, int] | None = None
        self._onnx = resolve_file(spec, spec.onnx, stamp_dir=stamp_dir)
        if self.int8:
            self._onnx = int8_graph(spec, self._onnx, cache_dir, stamp_dir)
        self._disabled: tuple[str, ...] = ()
        if self.int8:
            from funes.inference.quantize import DISABLED_OPTIMIZERS

            self._disabled = DISABLED_OPTIMIZERS
        self._threads = 1 if self.int8 else threads
        self._workers = max(1, workers if workers is not None else available_cores())
        self._pool: ThreadPoolExecutor | None = None
        self._sessions: dict[tuple[int, bool], ort.InferenceSession] = {}
        self._lock = threading.Lock()

    @property
    def _tokenizer(self) -> Tokenizer:
        """The tokenizer, loaded on first use (a process sent a query's tokens never loads
        it: funes.inference.prefetch)."""
        return self._tokenizer_and_pad()[0]

    @property
    def _pad_id(self) -> int:
        return self._tokenizer_and_pad()[1]

    def _tokenizer_and_pad(self) -> tuple[Tokenizer, int]:
        with self._lock:
            if self._loaded_tokenizer is None:
                self._loaded_tokenizer = load_tokenizer(self._tokenizer_file, self._cap)
            return self._loaded_tokenizer

    def _session_with(self, threads: int, *, prepack: bool = True) -> ort.InferenceSession:
        """The session with `threads` intra-op threads (0: onnxruntime's default), built on
        first use: a process that only recalls loads only the query session (`prepack`
        False, see `_session`)."""
        with self._lock:
            key = (threads, prepack)
            if key not in self._sessions:
                self._sessions[key] = _session(
                    self._onnx,
                    threads,
                    self._disabled,
                    saved_optimized=self.int8,
                    prepack=prepack,
                )
            return self._sessions[key]

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed passages. Returns shape (len(texts), dim), float32, rows L2-normalised.

        Each text is cut to the recipe's token limit (tail dropped). Empty input → (0, dim).
        int8 recipe: texts run one per session call on the worker threads (row i depends on
        texts[i] alone). float32 recipes: texts are tokenized once, ordered by token count
        and run in batches of similar length of at most `_BATCH_TOKENS` padded tokens
        (`length_batches`), so padding wastes little compute and peak memory stays bounded.
        """
        if not self.int8:
            return self._embed(texts, self._session_with(self._threads))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        session = self._session_with(1)
        encodings = self._tokenizer.encode_batch(list(texts))
        if self._workers == 1 or len(encodings) == 1:
            rows = [self._one(session, e) for e in encodings]
        else:
            with self._lock:
                if self._pool is None:
                    from concurrent.futures import ThreadPoolExecutor

                    self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="funes-embed")
            rows = list(self._pool.map(lambda e: self._one(session, e), encodings))
        for i, row in enumerate(rows):
            out[i] = row
        return out

    def _one(self, session: ort.InferenceSession, encoding: Any) -> NDArray[np.float32]:
        """One text's vector from its encoding: one run, no padding, pooled, normalised."""
        feeds = _padded_feeds(session, [encoding], self._pad_id)
        return self._pooled(session.run(None, feeds)[0][0])

    def _pooled(self, hidden: NDArray[np.float32]) -> NDArray[np.float32]:
        """One text's unpadded hidden states (tokens, dim) → its pooled, normalised vector."""
        pooled = hidden[0] if self.spec.pooling is Pooling.CLS else hidden.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        row: NDArray[np.float32] = (pooled / (norm if norm else 1.0)).astype(np.float32)
        return row

    def _embed(self, texts: Sequence[str], session: ort.InferenceSession) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        for idx in length_batches(lengths, max_batch=_BATCH, max_tokens=_BATCH_TOKENS):
            feeds = _padded_feeds(session, [encodings[i] for i in idx], self._pad_id)
            hidden = session.run(None, feeds)[0]
            if self.spec.pooling is Pooling.CLS:
                pooled = hidden[:, 0, :]
            else:
                mask = feeds["attention_mask"][..., None].astype(np.float32)
                pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.where(norms == 0, 1.0, norms)
        return out

    def embed_query(self, query: str) -> NDArray[np.float32]:
        """Embed one search query (with the model's query prefix). Shape (dim,).

        Runs on a single-threaded session (`_QUERY_THREADS`), so nothing of it spins on beside
        recall's legs; the vector equals `embed([query_prefix + query])[0]` bit for bit.
        """
        text = self.spec.query_prefix + query
        session = self._session_with(_QUERY_THREADS, prepack=not self.int8)
        if self.int8:
            return self._one(session, self._tokenizer.encode(text))
        vector: NDArray[np.float32] = self._embed([text], session)[0]
        return vector

    def embed_query_tokens(self, tokens: QueryTokens) -> NDArray[np.float32]:
        """`embed_query` of the query `tokens` came from (funes.inference.tokens.query_tokens,
        the same prefix and cut): the same vector, bit for bit, without the tokenizer. Current
        recipe only (raises ModelUnavailable for a float32 one)."""
        if not self.int8:
            raise ModelUnavailable(f"query tokens are for the current recipe, not {self.recipe}")
        session = self._session_with(_QUERY_THREADS, prepack=False)
        feeds = _padded_feeds(session, [tokens], pad_id=0)  # one text: nothing is padded
        return self._pooled(session.run(None, feeds)[0][0])

    def prepare_query(self) -> None:
        """Build the session `embed_query` runs on now, not at the first query (a process that
        loads the model before its query is known: funes.inference.prefetch)."""
        self._session_with(_QUERY_THREADS, prepack=not self.int8)

    def close(self) -> None:
        """Stop the worker threads (they also end with the process)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def available_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def int8_graph(
    spec: ModelSpec, source: Path, cache_dir: Path | None, stamp_dir: Path | None
) -> Path:
    """The verified dynamic-int8 graph of `spec` (`source`: its verified float graph), built
    into `cache_dir` (default: Paths' model cache) when missing or not matching its manifest.
    Raises ModelUnavailable when it cannot be built."""
    from funes.inference.quantize import build_graph, verify_graph

    cache_dir = _model_cache(cache_dir)
    found = _built_graph(spec, cache_dir, stamp_dir)
    if found is not None:
        return found
    built = build_graph(spec, source, cache_dir)  # missing, altered or partial: build it
    verify_graph(spec, built, stamp_dir)  # remembers it in stamp_dir
    return built[0]


def ready_embedder(
    spec: ModelSpec, *, stamp_dir: Path | None = None, cache_dir: Path | None = None
) -> OnnxEmbedder | None:
    """An embedder of the current recipe when everything it needs is already on this machine
    (weights, tokenizer and the built int8 graph); None when loading it would download or
    build something (funes.inference.prefetch leaves that to the caller, which reports it)."""
    from funes.inference.models import available_locally

    cache_dir = _model_cache(cache_dir)
    if not available_locally(spec) or _built_graph(spec, cache_dir, stamp_dir) is None:
        return None
    return OnnxEmbedder(spec, stamp_dir=stamp_dir, cache_dir=cache_dir)


def _model_cache(cache_dir: Path | None) -> Path:
    if cache_dir is not None:
        return cache_dir
    from funes.paths import Paths

    return Paths.resolve().models


def _built_graph(spec: ModelSpec, cache_dir: Path, stamp_dir: Path | None) -> Path | None:
    """The int8 graph of `spec` already built in `cache_dir` by this onnxruntime version and
    matching its manifest (funes.inference.quantize.cached_graph, then `verify_graph`); None when
    there is none, it was altered or it cannot be read (the caller builds it again: the build
    replaces an unreadable file, or says why the cache cannot hold a new one)."""
    from funes.inference.quantize import cached_graph, verify_graph

    found = cached_graph(spec, cache_dir, ort.__version__)
    if found is None:
        return None
    try:
        verify_graph(spec, found, stamp_dir)
    except (ModelUnavailable, OSError):
        return None
    return found[0]


class OnnxReranker:
    """A cross-encoder scoring (query, passage) pairs on onnxruntime."""

    def __init__(self, spec: ModelSpec, *, stamp_dir: Path | None = None, threads: int = 0) -> None:
        self.spec = spec
        self.model_id = spec.model_id
        self._tokenizer, self._pad_id = load_tokenizer(
            resolve_file(spec, spec.tokenizer, stamp_dir=stamp_dir), spec.max_tokens
        )
        # longest_first (what sentence-transformers CrossEncoder uses) cuts the passage tail as
        # only_second did, and also cuts a query longer than the window instead of raising.
        self._tokenizer.enable_truncation(max_length=spec.max_tokens, strategy="longest_first")
        self._session = _session(resolve_file(spec, spec.onnx, stamp_dir=stamp_dir), threads)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance logits, in input order; higher = more relevant. Empty input → [].

        Each pair is cut to the model's `max_tokens` (passage tail dropped). Pairs are
        tokenized once and run shortest first in batches of similar length of at most
        `_BATCH_TOKENS` padded tokens (`length_batches`), as `OnnxEmbedder.embed` does: a
        recall pool mixes one-line answers with full 256-token chunks (dev-set pairs: median
        ~120 tokens, 17% at the cap), and padding all 30 pairs to the longest cost 40–48% of
        the rerank time (int8 MiniLM-L6, interleaved on a loaded 2-core machine: p50 7.4 → 4.5 s
        and 19.0 → 10.0 s in two runs). Raises onnxruntime's errors unchanged.
        """
        scores = [0.0] * len(passages)
        if not passages:
            return scores
        encodings = self._tokenizer.encode_batch([(query, p) for p in passages])
        lengths = [len(e.ids) for e in encodings]
        for idx in length_batches(lengths, max_batch=_BATCH, max_tokens=_BATCH_TOKENS):
            feeds = _padded_feeds(self._session, [encodings[i] for i in idx], self._pad_id)
            logits = np.asarray(self._session.run(None, feeds)[0])
            if logits.ndim == 2 and logits.shape[1] == 2:
                logits = logits[:, 1] - logits[:, 0]
            for i, x in zip(idx, logits.reshape(len(idx), -1)[:, 0], strict=True):
                scores[i] = float(x)
        return scores


def describe(spec: ModelSpec) -> str:
    """A one-line JSON description of a spec, for status and bench output."""
    return json.dumps({"name": spec.name, "model_id": spec.model_id, "licence": spec.licence})
