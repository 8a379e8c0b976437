"""Index throughput: funes' whole write path next to the bare model on the same texts.

* pipeline: `funes.ingest.index` over the dev set (parse → redact → chunk → embed → store) into
  a fresh store, timed end to end, models already loaded;
* bare: a plain onnxruntime + tokenizers loop over the very chunk texts the pipeline embedded
  (tokenize all, group the whole set into batches of similar token length with funes'
  `length_batches`, mean-pool, normalise): what the model alone costs, with the least padding.
  The ratio pipeline/bare is the figure; its target is ≥ 0.85. The two run interleaved, unit
  by unit, so load from other processes on a shared machine falls on both sides alike.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.devset import DevsetSource
from bench.models import EMBEDDER_SPEC, RecordingEmbedder
from funes.chunks import EMBED_INPUT, chunk_turn, embedding_input, turn_prompt
from funes.inference.onnx_backend import length_batches
from funes.ingest import TOP_TIER, IndexJob, IndexReport, index, index_unit, order_units
from funes.redact import Scanner, redact
from funes.settings import INDEX
from funes.store import Store


def devset_chunk_texts(
    source: DevsetSource, scanner: Scanner, recipe: str = EMBED_INPUT
) -> list[str]:
    """The texts the pipeline embeds: every block redacted, chunked (all tiers), each chunk's
    embedding input under `recipe` (a fresh store's), as funes.ingest builds it."""
    from dataclasses import replace as dc_replace

    texts: list[str] = []
    prompt: str | None = None
    session: str | None = None
    for turn in source.turns():
        if turn.session_id != session:
            session, prompt = turn.session_id, None
        blocks = tuple(dc_replace(b, text=redact(b.text, scanner)[0]) for b in turn.blocks)
        turn = dc_replace(turn, blocks=blocks)
        prompt = turn_prompt(turn) or prompt
        texts.extend(embedding_input(c.text, c.role, prompt, recipe) for c in chunk_turn(turn))
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

    def prepare(self, texts: Sequence[str], batch: int = 32) -> list[list[str]]:
        """Tokenize once and group the whole set into batches of similar token length (the
        least padding any batching gets)."""
        self.tokenizer.no_padding()
        lengths = [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokens = sum(lengths)
        return [[texts[i] for i in group] for group in length_batches(lengths, max_batch=batch)]

    def run(self, group: Sequence[str]) -> None:
        """Embed one prepared batch: tokenize (padded), run, mean-pool, normalise."""
        import numpy as np

        enc = self.tokenizer.encode_batch(list(group))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed(self, texts: Sequence[str], batch: int = 32) -> int:
        """Embed `texts`; returns the tokens processed."""
        for group in self.prepare(texts, batch):
            self.run(group)
        return self.tokens

    def embed_one(self, text: str) -> None:
        self.embed([text])


@dataclass(slots=True)
class ThroughputResult:
    chunks: int
    tokens: int
    pipeline_s: list[float]
    bare_s: list[float]
    peak_rss_mb: float
    report: IndexReport

    @property
    def pipeline_chunks_per_s(self) -> float:
        return self.chunks / (sum(self.pipeline_s) / len(self.pipeline_s))

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
    rounds: int,
) -> tuple[Store, ThroughputResult]:
    """Pipeline and bare, interleaved finely so a shared machine's load hits both alike.

    The pipeline indexes one unit (session) at a time with `funes.ingest.index_unit` (what
    `index()` runs per unit), and after each unit the bare loop runs the matching slice of
    its globally length-sorted batches; each side's time is summed. Repeated `rounds` times
    (fresh stores); the store of the first round is returned open for the quality runs.
    Peak RSS is read after the first round.
    """
    texts = devset_chunk_texts(source, scanner)
    bare = BareEmbedder()
    bare.embed(texts[:8])  # warm-up: first-run allocations
    embedder.inner.embed(texts[:8])
    pipeline_s: list[float] = []
    bare_s: list[float] = []
    first: tuple[Store, IndexReport] | None = None
    peak = 0.0
    for r in range(rounds):
        path = store_path if r == 0 else store_path.with_name(f"{store_path.stem}-round{r}.db")
        store = Store.open(path)
        store.stamp_model(embedder.model_id, embedder.dim)
        job = IndexJob(
            store, embedder, scanner, params=replace(INDEX, budget_s=0), all_tiers_at_once=True
        )
        report = IndexReport()
        units = order_units(source.units())
        t0 = time.perf_counter()
        groups = bare.prepare(texts)
        b = time.perf_counter() - t0
        p = 0.0
        per_unit = -(-len(groups) // len(units))
        for i, unit in enumerate(units):
            t0 = time.perf_counter()
            index_unit(source, unit, job, tier=TOP_TIER, report=report)
            p += time.perf_counter() - t0
            t0 = time.perf_counter()
            for group in groups[i * per_unit : (i + 1) * per_unit]:
                bare.run(group)
            b += time.perf_counter() - t0
        pipeline_s.append(p)
        bare_s.append(b)
        if report.chunks_written != len(texts) or report.failures:
            raise RuntimeError(
                f"pipeline wrote {report.chunks_written} of {len(texts)} chunks: {report.failures}"
            )
        if first is None:
            first = (store, report)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        else:
            store.close()
            path.unlink(missing_ok=True)
    assert first is not None
    store, report = first
    return store, ThroughputResult(len(texts), bare.tokens, pipeline_s, bare_s, peak, report)
