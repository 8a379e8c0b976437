"""Recall quality on the dev set: each pipeline over the same store, scored per question.

Pipelines differ only in RecallParams (legs, rerank, half-life); the store, the embedder and
the fixed "now" are shared, so differences are the pipelines' own. Hits map back to gold
through (chunk.session_id, chunk.seq) (see bench.devset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from bench.devset import Question
from bench.metrics import Breakdown, QuestionScore, TurnKey, breakdown, percentile, score_question
from funes.inference import Embedder, Reranker
from funes.retrieval import recall
from funes.settings import RECALL, Leg, RecallParams
from funes.store import Store

EVAL_K = 20  # hits ranked per question: hit@1, hit@5 and MRR@20 are read from them


@dataclass(frozen=True, slots=True)
class Pipeline:
    name: str
    params: RecallParams
    needs_reranker: bool = False


def pipelines(base: RecallParams = RECALL) -> list[Pipeline]:
    """The compared pipelines, cheapest first; the last one is funes' default."""
    plain = replace(base, k=EVAL_K, neighbors=0, rerank=False, half_life_days=0.0)
    return [
        Pipeline("bm25", replace(plain, legs=(Leg.BM25,))),
        Pipeline("vector", replace(plain, legs=(Leg.VECTOR,))),
        Pipeline("hybrid_rrf", replace(plain, legs=(Leg.BM25, Leg.VECTOR))),
        Pipeline("hybrid_rerank", replace(plain, rerank=True), needs_reranker=True),
        Pipeline("default", replace(base, k=EVAL_K, neighbors=0)),
    ]


@dataclass(slots=True)
class PipelineResult:
    name: str
    available: bool
    note: str = ""
    breakdown: Breakdown | None = None
    scores: list[QuestionScore] = field(default_factory=list)
    rankings: dict[str, list[TurnKey]] = field(default_factory=dict)
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
) -> list[TurnKey]:
    result = recall(
        store, question.question, embedder=embedder, reranker=reranker, params=params, now=now
    )
    return [(h.chunk.session_id, h.chunk.seq) for h in result.hits]


def evaluate(
    store: Store,
    questions: Sequence[Question],
    pipeline: Pipeline,
    *,
    embedder: Embedder | None,
    reranker: Reranker | None,
    now: datetime,
    reranker_note: str = "",
) -> PipelineResult:
    """Score one pipeline on every question (no-answer ones are counted, not scored)."""
    if pipeline.needs_reranker and reranker is None:
        return PipelineResult(pipeline.name, False, reranker_note)
    use_reranker = reranker if pipeline.params.rerank else None
    note = ""
    if pipeline.params.rerank and reranker is None:
        note = "no reranker: fused order + recency"
    out = PipelineResult(pipeline.name, True, note)
    for q in questions:
        ranking = rank_question(
            store, q, embedder=embedder, reranker=use_reranker, params=pipeline.params, now=now
        )
        out.rankings[q.qid] = ranking
        if q.answerable:
            out.scores.append(score_question(q.qid, q.category, ranking, q.gold))
        else:
            out.no_answer_total += 1
            out.no_answer_with_hits += int(bool(ranking))
    out.breakdown = breakdown(out.scores)
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
