"""Index throughput: the current recipe next to today's float32 one and to the bare model, on
the same texts, plus what that means for a 300k-chunk history.

* new: funes' write path over the dev set into a fresh store with the current embedding recipe
  (funes.chunks EMBED_INPUT: the dynamic-int8 graph, one text per run on two threads, 128
  tokens), run as a budgeted sweep runs it (funes.ingest.index, tiers in turn, no deadline):
  every unit's prose stored while the vector pump embeds what is stored (funes.ingest.pump),
  the rest of the prose embedded, then tool calls and output stored while the pump goes on,
  then every vector left. Timed from the run's own progress callbacks: when the prose tier is
  stored and embedded ("prose"), when every tier is stored and prose and tool output embedded
  ("tools"), when every vector exists ("tool_calls");
* old: the very same sweep with today's recipe (`prompt-context/1`: the model's float32 graph
  on length-sorted batches, its own 256-token limit, one session with a thread per core) into
  a second fresh store — the embedder is the only difference;
* bare: a plain onnxruntime + tokenizers loop over the very embedding inputs of the new recipe
  (the int8 graph, one text per run on two threads, mean-pooled, normalised): what the model
  alone costs.

The three run in turn, round by round (full mode: four rounds): new, bare, old. Reported: chunks/s of each, the
ratio new/old ("until searchable": every chunk stored, prose and tool output embedded; "every
vector": tool calls too), new/bare, and the 300k-chunk extrapolation: the dev set's mix of
chunks scaled to 300,000 (its rates applied), the time until the prose tier is searchable by
meaning, until every tier is (BM25 on all, vectors on prose and tool output), and until every
vector exists.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.devset import DevsetSource
from bench.models import EMBEDDER_SPEC, RecordingEmbedder
from funes.chunks import EMBED_INPUT, PROMPT_CONTEXT, chunk_turn, embedding_input, turn_prompt
from funes.inference import Embedder
from funes.ingest import (
    TOP_TIER,
    IndexJob,
    IndexReport,
    Progress,
    index,
)
from funes.redact import Scanner, redact
from funes.settings import INDEX
from funes.store import Store

HISTORY = 300_000  # chunks of the history the extrapolation speaks of
# the sweep's spans, in order: prose stored and embedded; tool calls and output stored, tool
# output embedded; tool calls embedded (see the module docstring)
STAGES = ("prose", "tools", "tool_calls")


def devset_chunk_texts(
    source: DevsetSource, scanner: Scanner, recipe: str = EMBED_INPUT
) -> list[str]:
    """The texts the pipeline embeds: every block redacted, chunked (all tiers), each chunk's
    embedding input under `recipe`, as funes.ingest builds it."""
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
    """The current recipe's model with nothing around it: the int8 graph's onnxruntime session
    (one intra-op thread), the tokenizer cut at EMBED_TOKENS, one text per run on two threads."""

    def __init__(self, workers: int = 2) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from funes.inference.files import resolve_file
        from funes.inference.onnx_backend import int8_graph
        from funes.inference.quantize import DISABLED_OPTIMIZERS
        from funes.inference.tokens import EMBED_TOKENS

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        graph = int8_graph(
            EMBEDDER_SPEC, resolve_file(EMBEDDER_SPEC, EMBEDDER_SPEC.onnx), None, None
        )
        self.session = ort.InferenceSession(
            str(graph),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(DISABLED_OPTIMIZERS),
        )
        self.tokenizer = Tokenizer.from_file(
            str(resolve_file(EMBEDDER_SPEC, EMBEDDER_SPEC.tokenizer))
        )
        self.tokenizer.enable_truncation(max_length=min(EMBED_TOKENS, EMBEDDER_SPEC.max_tokens))
        self.tokenizer.no_padding()
        self.pool = ThreadPoolExecutor(workers)
        self.tokens = 0

    def _one(self, encoding: object) -> None:
        import numpy as np

        ids = np.array([encoding.ids], dtype=np.int64)  # type: ignore[attr-defined]
        hidden = self.session.run(
            None,
            {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0},
        )[0][0]
        pooled = hidden.mean(axis=0)
        pooled /= np.linalg.norm(pooled)

    def embed(self, texts: Sequence[str]) -> int:
        """Embed `texts`; returns the tokens processed."""
        encodings = self.tokenizer.encode_batch(list(texts))
        list(self.pool.map(self._one, encodings))
        n = sum(len(e.ids) for e in encodings)
        self.tokens += n
        return n

    def embed_one(self, text: str) -> None:
        self.embed([text])


@dataclass(slots=True)
class RecipeTimes:
    """Seconds one recipe's sweep spent per span, summed over rounds (see STAGES)."""

    stages: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def add(self, stage: str, seconds: float) -> None:
        self.stages[stage] += seconds

    @property
    def searchable_s(self) -> float:
        """Every chunk stored, prose and tool output embedded (tool calls: BM25)."""
        return self.stages["prose"] + self.stages["tools"]

    @property
    def total_s(self) -> float:
        return sum(self.stages.values())


@dataclass(slots=True)
class ThroughputResult:
    chunks: int  # per round
    chunks_by_priority: dict[int, int]
    rounds: int
    new: RecipeTimes
    old: RecipeTimes
    bare_s: float
    tokens: int
    peak_rss_mb: float
    report: IndexReport

    def per_s(self, seconds: float) -> float:
        return self.chunks * self.rounds / seconds if seconds > 0 else 0.0

    def extrapolate(self, history: int = HISTORY) -> dict[str, float]:
        """Minutes until a `history`-chunk history of the dev set's mix is searchable, per stage
        sum, at the rates measured here (new recipe; and the old recipe's total)."""
        scale = history / (self.chunks * self.rounds) / 60.0
        s = self.new.stages
        return {
            "prose_searchable_min": round(s["prose"] * scale, 1),
            "all_tiers_searchable_min": round(self.new.searchable_s * scale, 1),
            "every_vector_min": round(self.new.total_s * scale, 1),
            "old_recipe_min": round(self.old.total_s * scale, 1),
        }


def index_devset(
    source: DevsetSource,
    store_path: Path,
    embedder: Embedder,
    scanner: Scanner,
    *,
    element: str = "int8",
    recipe: str = EMBED_INPUT,
) -> tuple[Store, IndexReport, float]:
    """Index the whole dev set into a fresh store; returns (open store, report, seconds)."""
    store = Store.open(store_path)
    store.stamp_model(embedder.model_id, embedder.dim, element=element, embedding_input=recipe)
    job = IndexJob(
        store, embedder, scanner, params=replace(INDEX, budget_s=0), all_tiers_at_once=True
    )
    t0 = time.perf_counter()
    report = index([source], job)
    elapsed = time.perf_counter() - t0
    store.sync_vector_index()  # what a writer does when it lets go: trims the vector log
    return store, report, elapsed


def _sweep(
    source: DevsetSource, store: Store, embedder: Embedder, scanner: Scanner, times: RecipeTimes
) -> IndexReport:
    """Index the dev set into the fresh `store` as a budgeted sweep orders the work (no
    deadline), adding its spans to `times` (see STAGES). A span ends when its tiers are
    stored (the last unit's progress event) and nothing of its priorities is owed (checked
    there and after each batch of vectors written)."""
    ends: dict[str, float] = {}
    stored: set[int] = set()
    owed_by = {"prose": 0, "tools": 1}  # highest priority each span must have embedded
    needs = {"prose": 0, "tools": TOP_TIER}  # last tier each span must have stored

    def check(*_: object) -> None:
        counts = store.owed_counts() or {}
        for span, priority in owed_by.items():
            done = not any(n for p, n in counts.items() if p <= priority)
            if span not in ends and needs[span] in stored and done:
                ends[span] = time.perf_counter()

    def on_unit(event: Progress) -> None:
        if event.done == event.total:
            stored.add(event.tier)
            check()

    job = IndexJob(
        store,
        embedder,
        scanner,
        params=replace(INDEX, budget_s=0),
        progress=on_unit,
        vector_progress=check,
    )
    t0 = time.perf_counter()
    report = index([source], job)
    end = time.perf_counter()
    prose = ends.get("prose", end)
    tools = max(ends.get("tools", end), prose)
    times.add("prose", prose - t0)
    times.add("tools", tools - prose)
    times.add("tool_calls", end - tools)
    return report


def measure(
    source: DevsetSource,
    store_path: Path,
    embedder: RecordingEmbedder,
    scanner: Scanner,
    *,
    rounds: int,
    old_embedder: Embedder | None = None,
) -> tuple[Store, ThroughputResult]:
    """New recipe, bare model and old recipe in turn, round by round (see module docstring).

    Repeated `rounds` times (fresh stores); the new recipe's store of the first round is
    returned open for the quality runs. Peak RSS is read after the first round.
    """
    from funes.inference.onnx_backend import OnnxEmbedder

    old = old_embedder or OnnxEmbedder(EMBEDDER_SPEC, recipe=PROMPT_CONTEXT)
    texts = devset_chunk_texts(source, scanner)
    bare = BareEmbedder()
    bare.embed(texts[:8])  # warm-up: first-run allocations
    embedder.inner.embed(texts[:8])
    old.embed(texts[:8])
    new_t, old_t = RecipeTimes(), RecipeTimes()
    bare_s = 0.0
    bare.tokens = 0
    first: tuple[Store, IndexReport] | None = None
    peak = 0.0
    for r in range(rounds):
        path = store_path if r == 0 else store_path.with_name(f"{store_path.stem}-round{r}.db")
        stores: dict[str, tuple[Store, IndexReport]] = {}
        for name, emb, recipe, times in (
            ("new", embedder, EMBED_INPUT, new_t),
            ("old", old, PROMPT_CONTEXT, old_t),
        ):
            p = path if name == "new" else path.with_name(f"{path.stem}-old.db")
            st = Store.open(p)
            st.stamp_model(emb.model_id, emb.dim, embedding_input=recipe)
            stores[name] = (st, _sweep(source, st, emb, scanner, times))
            if name == "new":  # the bare model right after the new recipe's sweep
                t0 = time.perf_counter()
                bare.embed(texts)
                bare_s += time.perf_counter() - t0
        for name, (st, report) in stores.items():
            if report.chunks_written != len(texts) or report.failures:
                raise RuntimeError(
                    f"{name} recipe wrote {report.chunks_written} of {len(texts)} chunks: "
                    f"{report.failures}"
                )
            if st.owed_total():
                raise RuntimeError(f"{name} recipe left {st.owed_total()} vectors owed")
        for st, _ in stores.values():
            st.sync_vector_index()  # what a writer does when it lets go: trims the vector log
        if first is None:
            first = stores["new"]
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        else:
            stores["new"][0].close()
            path.unlink(missing_ok=True)
        old_store = stores["old"][0]
        old_store.close()
        old_store.path.unlink(missing_ok=True)
    assert first is not None
    store, report = first
    priorities = {
        int(p): int(n)
        for p, n in store.raw.execute(
            """select case block_type when 'tool_result' then 1 when 'tool_use' then 2 else 0
               end, count(*) from chunks group by 1"""
        )
    }
    return store, ThroughputResult(
        chunks=len(texts),
        chunks_by_priority=priorities,
        rounds=rounds,
        new=new_t,
        old=old_t,
        bare_s=bare_s,
        tokens=bare.tokens // max(rounds, 1),
        peak_rss_mb=peak,
        report=report,
    )
