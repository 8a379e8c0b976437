"""Index throughput: funes' whole write path next to the bare model on the same texts.

* pipeline: `funes.ingest.index` over the dev set (parse → redact → chunk → embed → store) into
  a fresh store, timed end to end, models already loaded;
* bare: a plain onnxruntime + tokenizers loop over the very chunk texts the pipeline embedded
  (tokenize all, group the whole set into batches of similar token length with funes'
  `length_batches`, mean-pool, normalise): what the model alone costs, with the least padding.
  The ratio pipeline/bare is the figure; its target is ≥ 0.85.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.devset import DevsetSource
from bench.models import EMBEDDER_SPEC, RecordingEmbedder
from funes.chunks import chunk_turn
from funes.inference.onnx_backend import length_batches
from funes.ingest import IndexJob, IndexReport, index
from funes.redact import Scanner, redact
from funes.settings import INDEX
from funes.store import Store


def devset_chunk_texts(source: DevsetSource, scanner: Scanner) -> list[str]:
    """The texts the pipeline embeds: every block redacted, chunked (all tiers)."""
    from dataclasses import replace as dc_replace

    texts: list[str] = []
    for turn in source.turns():
        blocks = tuple(dc_replace(b, text=redact(b.text, scanner)[0]) for b in turn.blocks)
        texts.extend(c.text for c in chunk_turn(dc_replace(turn, blocks=blocks)))
    return texts


class BareEmbedder:
    """The model with nothing around it: onnxruntime session + tokenizer, no funes code."""

    def __init__(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from funes.inference.onnx_backend import resolve_file

        options = ort.SessionOptions()
        options.intra_op_num_threads = 0
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(resolve_file(EMBEDDER_SPEC, EMBEDDER_SPEC.onnx)),
            options,
            providers=["CPUExecutionProvider"],
        )
        self.tokenizer = Tokenizer.from_file(
            str(resolve_file(EMBEDDER_SPEC, EMBEDDER_SPEC.tokenizer))
        )
        self.tokenizer.enable_truncation(max_length=EMBEDDER_SPEC.max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts: Sequence[str], batch: int = 32) -> int:
        """Embed `texts` in batches of similar token length over the whole set (the least
        padding any batching gets); returns the tokens processed."""
        import numpy as np

        self.tokenizer.no_padding()
        lengths = [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        for group in length_batches(lengths, max_batch=batch):
            enc = self.tokenizer.encode_batch([texts[i] for i in group])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self.session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        return sum(lengths)

    def embed_one(self, text: str) -> None:
        self.embed([text])


@dataclass(slots=True)
class ThroughputResult:
    chunks: int
    tokens: int
    pipeline_s: float
    bare_s: list[float]
    peak_rss_mb: float
    report: IndexReport

    @property
    def pipeline_chunks_per_s(self) -> float:
        return self.chunks / self.pipeline_s

    @property
    def bare_chunks_per_s(self) -> float:
        return self.chunks / (sum(self.bare_s) / len(self.bare_s))

    @property
    def ratio(self) -> float:
        return self.pipeline_chunks_per_s / self.bare_chunks_per_s


def index_devset(
    source: DevsetSource,
    store_path: Path,
    embedder: RecordingEmbedder,
    scanner: Scanner,
    *,
    element: str = "int8",
) -> tuple[Store, IndexReport, float]:
    """Index the whole dev set into a fresh store; returns (open store, report, seconds)."""
    store = Store.open(store_path)
    store.stamp_model(embedder.model_id, embedder.dim, element=element)
    job = IndexJob(
        store, embedder, scanner, params=replace(INDEX, budget_s=0), all_tiers_at_once=True
    )
    t0 = time.perf_counter()
    report = index([source], job)
    return store, report, time.perf_counter() - t0


def measure(
    source: DevsetSource,
    store_path: Path,
    embedder: RecordingEmbedder,
    scanner: Scanner,
    *,
    bare_runs: int,
) -> tuple[Store, ThroughputResult]:
    """Bare, then the pipeline, then bare again when `bare_runs` ≥ 2 (noise on a shared machine
    then hits both sides). The store built by the pipeline is returned open for the quality runs."""
    texts = devset_chunk_texts(source, scanner)
    bare = BareEmbedder()
    bare.embed(texts[:8])  # warm-up: first-run allocations
    embedder.inner.embed(texts[:8])
    bare_s: list[float] = []
    t0 = time.perf_counter()
    tokens = bare.embed(texts)
    bare_s.append(time.perf_counter() - t0)
    store, report, pipeline_s = index_devset(source, store_path, embedder, scanner)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    for _ in range(bare_runs - 1):
        t0 = time.perf_counter()
        bare.embed(texts)
        bare_s.append(time.perf_counter() - t0)
    if report.chunks_written != len(texts):
        raise RuntimeError(f"pipeline wrote {report.chunks_written} chunks, expected {len(texts)}")
    return store, ThroughputResult(len(texts), tokens, pipeline_s, bare_s, peak, report)
