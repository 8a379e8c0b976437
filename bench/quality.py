"""Recall quality on a benchmark set: each pipeline over the same memories, scored per question.

Pipelines differ only in RecallParams (legs, rerank, half-life); the memories, the embedder and
each memory's fixed "now" are shared, so differences are the pipelines' own. Hits map back to
gold through (chunk.session_id, chunk.seq) (see bench.devset, bench.locomo). A set with several
memories (LoCoMo: one per conversation) asks each question of its own memory and micro-averages
over all questions. Categories listed in `APART` (LoCoMo's adversarial questions) are scored
but kept out of the overall figures; questions without gold (no-answer) are counted, not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from bench.devset import Question
from bench.metrics import Breakdown, QuestionScore, TurnKey, breakdown, percentile, score_question
from bench.sets import BenchSet
from funes.inference import Embedder, Reranker
from funes.retrieval import RecallResult, recall
from funes.settings import RECALL, Leg, RecallParams
from funes.store import Store

EVAL_K = 20  # hits ranked per question: hit@1, hit@5 and MRR@20 are read from them
APART = frozenset({"adversarial"})  # scored, reported apart from the overall figures


@dataclass(frozen=True, slots=True)
class Pipeline:
    name: str
    params: RecallParams
    needs_reranker: bool = False


def pipelines(base: RecallParams = RECALL) -> list[Pipeline]:
    """The compared pipelines, cheapest first; the last one is funes' default.

    `bm25`, `vector`, `hybrid_rrf`: the legs' fused (RRF) order, turn by turn, as funes ranked
    before evidence scoring; `before`: that order with recency (30-day half-life, floor 0.9),
    funes' default up to commit 4190960, the figures issue 14 started from. `lexical_evidence`: the default pipeline in a memory without
    vectors (BM25 leg only). `hybrid_rerank`: the default with the cross-encoder (only where
    its weights load). `default`: funes' RECALL as it is (evidence scoring; rerank when a
    reranker exists)."""
    plain = replace(base, k=EVAL_K, neighbors=0, rerank=False, half_life_days=0.0)
    fused = replace(plain, evidence=False)
    return [
        Pipeline("bm25", replace(fused, legs=(Leg.BM25,))),
        Pipeline("vector", replace(fused, legs=(Leg.VECTOR,))),
        Pipeline("hybrid_rrf", replace(fused, legs=(Leg.BM25, Leg.VECTOR))),
        # funes' default up to 4190960: the fused order with a 30-day half-life floored at 0.9
        Pipeline("before", replace(fused, half_life_days=30.0)),
        Pipeline("lexical_evidence", replace(base, k=EVAL_K, neighbors=0, legs=(Leg.BM25,))),
        Pipeline("hybrid_rerank", replace(base, k=EVAL_K, neighbors=0), needs_reranker=True),
        Pipeline("default", replace(base, k=EVAL_K, neighbors=0)),
    ]


@dataclass(slots=True)
class PipelineResult:
    name: str
    available: bool
    note: str = ""
    breakdown: Breakdown | None = None
    apart: Breakdown | None = None  # categories in APART (LoCoMo's adversarial), None if none
    scores: list[QuestionScore] = field(default_factory=list)
    apart_scores: list[QuestionScore] = field(default_factory=list)
    rankings: dict[str, list[TurnKey]] = field(default_factory=dict)
    results: dict[str, RecallResult] = field(default_factory=dict)
    no_answer_with_hits: int = 0
    no_answer_total: int = 0


def rank_question(
    store: Store,
    question: Question,
    *,
    embedder: Embedder | None,
    reranker: Reranker | None,
    params: RecallParams,
    now: datetime,
) -> RecallResult:
    return recall(
        store, question.question, embedder=embedder, reranker=reranker, params=params, now=now
    )


def evaluate(
    bench_set: BenchSet,
    pipeline: Pipeline,
    *,
    embedder: Embedder | None,
    reranker: Reranker | None,
    reranker_note: str = "",
) -> PipelineResult:
    """Score one pipeline on every question of every memory of the set."""
    if pipeline.needs_reranker and reranker is None:
        return PipelineResult(pipeline.name, False, reranker_note)
    use_reranker = reranker if pipeline.params.rerank else None
    note = ""
    if pipeline.params.rerank and reranker is None:
        note = "no reranker: fused order + recency"
    out = PipelineResult(pipeline.name, True, note)
    for memory in bench_set.memories:
        for q in memory.questions:
            result = rank_question(
                memory.store,
                q,
                embedder=embedder,
                reranker=use_reranker,
                params=pipeline.params,
                now=memory.now,
            )
            ranking = [(h.chunk.session_id, h.chunk.seq) for h in result.hits]
            out.rankings[q.qid] = ranking
            out.results[q.qid] = result
            if not q.answerable:
                out.no_answer_total += 1
                out.no_answer_with_hits += int(bool(ranking))
                continue
            score = score_question(q.qid, q.category, ranking, q.gold)
            (out.apart_scores if q.category in APART else out.scores).append(score)
    out.breakdown = breakdown(out.scores)
    out.apart = breakdown(out.apart_scores) if out.apart_scores else None
    return out


@dataclass(frozen=True, slots=True)
class NoAnswerProbe:
    """How separable no-answer questions are by the best cosine similarity in the memory."""

    answerable_median: float
    no_answer_median: float
    threshold: float  # the 5th percentile of answerable questions' best cosine
    no_answer_below: int  # no-answer questions a threshold at `threshold` would answer "nothing"
    no_answer_total: int


def no_answer_probe(
    questions: Sequence[Question], embedder: Embedder, passage_vectors: object
) -> NoAnswerProbe:
    """Best cosine (query · passage, unit vectors) per question over all passage vectors."""
    import numpy as np

    matrix = np.asarray(passage_vectors, dtype=np.float32)
    best = {q.qid: float(np.max(matrix @ embedder.embed_query(q.question))) for q in questions}
    ans = [best[q.qid] for q in questions if q.answerable]
    none = [best[q.qid] for q in questions if not q.answerable]
    threshold = percentile(ans, 5)
    return NoAnswerProbe(
        answerable_median=percentile(ans, 50),
        no_answer_median=percentile(none, 50),
        threshold=threshold,
        no_answer_below=sum(1 for v in none if v < threshold),
        no_answer_total=len(none),
    )
