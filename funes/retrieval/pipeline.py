"""The recall pipeline: BM25 + vector candidates → RRF → evidence ranking of the fused turns'
neighbourhood (or, with `evidence=False`, turn aggregation of the fused order) → cross-encoder
rerank → recency → neighbors; and `get_turns`, a turn with the turns around it.

The two candidate legs overlap: BM25 runs on the store's sibling reader in a second thread
while the query is embedded and searched (sequentially where the store has no reader).

Sees only the Embedder/Reranker protocols and the Store; never a model backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import UTC, datetime
from functools import partial
from itertools import groupby

from funes.chunks import reassemble
from funes.errors import ModelUnavailable
from funes.inference import Embedder, Reranker, query_vector
from funes.plurals import counted
from funes.redact import Scanner, default_scanner
from funes.retrieval.beside import BesideCall
from funes.retrieval.evidence import Weights
from funes.retrieval.fusion import recency_weight, rrf, sigmoid, turn_scores
from funes.retrieval.guard import guard_block, guard_chunk, guard_chunks
from funes.retrieval.ranking import (
    diversify_sessions,
    merge_duplicates,
    place_answers,
    rank_by_evidence,
)
from funes.retrieval.types import Hit, RecallResult, Searchable, TurnView
from funes.settings import RECALL, Leg, RecallParams
from funes.store import NO_FILTERS, Filters, query_terms
from funes.traces import clean_text, parse_ts


class _Clock:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (now - self._t) * 1000.0
        self._t = now


def recall(
    store: Searchable,
    query: str,
    *,
    embedder: Embedder | None,
    reranker: Reranker | None,
    params: RecallParams = RECALL,
    filters: Filters = NO_FILTERS,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
    scanner: Scanner | None = None,
) -> RecallResult:
    """Rank the memory's chunks for `query`; see the module docstring for the stages.

    Without an embedder (or without vectors in this memory, or when the embedder's model cannot
    be loaded: ModelUnavailable) the vector leg is skipped; without a reranker the fused RRF
    order is kept. Both degradations are reported in `notes`.
    Chunks stored under older redaction rules are redacted by `scanner` (default: the
    current one) before they are reranked or returned (see funes.retrieval.guard).
    """
    scanner = scanner or default_scanner()
    clock = _Clock()
    query = clean_text(query)  # argv bytes that are not UTF-8 arrive as lone surrogates
    notes: list[str] = []
    now = now or datetime.now(UTC)
    legs: list[list[int]] = []
    lexical: list[tuple[int, float]] = []
    searchable = store.vectors_available and store.model_id is not None
    vector_by = embedder if Leg.VECTOR in params.legs and searchable else None
    if Leg.VECTOR in params.legs and vector_by is None:
        notes.append("vector search unavailable: lexical (BM25) results only")
    # With both legs, BM25 runs on a sibling connection in a second thread while the query is
    # embedded and searched (sqlite and onnxruntime release the GIL): the legs overlap. The
    # block ends only once that thread is done with the connection, even when a Ctrl-C or
    # SIGTERM ends it (funes.retrieval.beside): the store is closed after it.
    both = vector_by is not None and Leg.BM25 in params.legs
    beside = store.reader() if both else None
    leg = partial(_lexical, beside, query, params, filters, True) if beside else None
    with BesideCall(leg, name="funes-bm25") if leg is not None else nullcontext() as pending:
        cosines: dict[int, float] | None = None
        if vector_by is not None:
            try:
                qv = query_vector(vector_by, query)  # no numpy for the prefetch child's answer
            except ModelUnavailable as exc:  # not cached offline, a model cache it cannot build in
                notes.append(_model_unavailable_note(exc))
                vector_by = None
            else:
                clock.lap("embed_query")
                # one scan yields any depth: the first leg_depth are the leg, the rest cosines
                deep = store.semantic(qv, k=_vector_depth(store, params), filters=filters)
                legs.append([r for r, _ in deep[: params.leg_depth]])
                cosines = {r: store.cosine(d) for r, d in deep}
                clock.lap("vector")
        frequencies: tuple[int, list[int]] | None = None
        if pending is not None and vector_by is not None:
            lexical, clock.timings["bm25"], frequencies = pending.result()
            clock.lap("bm25_wait")  # how much longer than embed_query + vector BM25 took
            legs.insert(0, [r for r, _ in lexical])
        elif Leg.BM25 in params.legs:
            if pending is not None:  # ran with the budget of a vector leg that failed: again
                pending.result()  # exactly, as without vectors
            beside_vectors = vector_by is not None  # one connection: the legs take turns
            lexical, _, frequencies = _lexical(store, query, params, filters, beside_vectors)
            legs.insert(0, [r for r, _ in lexical])
            clock.lap("bm25")
    fused = rrf(legs, k=params.rrf_k)
    if params.evidence:
        clock.lap("fusion")
        return _evidence_recall(
            store,
            query,
            cosines,
            [r for r, _ in fused],
            bm25={r: -score for r, score in lexical},
            frequencies=frequencies,
            reranker=reranker,
            params=params,
            filters=filters,
            now=now,
            progress=progress,
            scanner=scanner,
            clock=clock,
            notes=notes,
        )
    keys = store.block_keys([r for r, _ in fused])
    blocks = {r: ((sid, tid), (sid, tid, b)) for r, (sid, tid, b) in keys.items()}
    fused = turn_scores(fused, blocks, bonus=params.turn_bonus)[: max(params.candidates, params.k)]
    clock.lap("fusion")
    if not fused:
        return RecallResult([], notes, clock.timings)
    rows = store.fetch([r for r, _ in fused])
    pool = [(guard_chunk(rows[r], scanner), s) for r, s in fused if r in rows]
    clock.lap("fetch")
    reranked = False
    if reranker is not None and params.rerank:
        if progress is not None:
            progress(f"reranking {counted(len(pool), 'candidate')}…")
        raw = reranker.score(query, [c.text for c, _ in pool])
        relevance = [sigmoid(s) for s in raw]
        reranked = True
        clock.lap("rerank")
    else:
        top = pool[0][1]
        relevance = [s / top for _, s in pool]
    scored = [
        (
            chunk,
            rel
            * recency_weight(
                parse_ts(chunk.ts),
                now,
                half_life_days=params.half_life_days,
                floor=params.recency_floor,
            )
            * (params.scaffold_weight if chunk.scaffold else 1.0),
        )
        for (chunk, _), rel in zip(pool, relevance, strict=True)
    ]
    scored.sort(key=lambda cs: -cs[1])
    top_hits = scored[: params.k]  # one chunk per turn already (turn_scores)
    clock.lap("recency")
    hits = [
        Hit(c, s, tuple(guard_chunks(store.neighbors(c, params.neighbors), scanner)))
        for c, s in top_hits
    ]
    clock.lap("neighbors")
    return RecallResult(hits, notes, clock.timings, reranked)


def _evidence_recall(
    store: Searchable,
    query: str,
    cosines: dict[int, float] | None,
    fused: list[int],
    *,
    bm25: dict[int, float],
    frequencies: tuple[int, list[int]] | None,
    reranker: Reranker | None,
    params: RecallParams,
    filters: Filters,
    now: datetime,
    progress: Callable[[str], None] | None,
    scanner: Scanner,
    clock: _Clock,
    notes: list[str],
) -> RecallResult:
    """Evidence ranking (funes.retrieval.ranking), optional cross-encoder rerank of the first
    `candidates` turns, recency and scaffold weights, answers placed beside their prompts,
    identical passages merged, top k."""
    ranking = rank_by_evidence(
        store,
        query,
        cosines,
        fused,
        bm25=bm25,
        frequencies=frequencies,
        weights=Weights(
            lexical_weight=params.lexical_weight,
            context_share=params.context_share,
            answer_share=params.answer_share,
            exchange_share=params.exchange_share,
            period_penalty=params.period_penalty,
            session_share=params.session_evidence_share,
            session_turns=params.session_evidence_turns,
        ),
        pool=params.pool,
        exchange_limit=params.exchange_limit,
        filters=filters,
    )
    clock.lap("evidence")
    supported = ranking.support >= params.min_support
    turns = ranking.turns
    reranked = False
    if reranker is not None and params.rerank and turns:
        head = turns[: max(params.candidates, params.k)]
        if progress is not None:
            progress(f"reranking {counted(len(head), 'candidate')}…")
        texts = [guard_chunk(t.chunk, scanner).text for t in head]
        for t, raw in zip(head, reranker.score(query, texts), strict=True):
            t.score = sigmoid(raw)
        turns = sorted(head, key=lambda t: -t.score) + turns[len(head) :]
        reranked = True
        clock.lap("rerank")
    for t in turns:
        t.score *= recency_weight(
            parse_ts(t.chunk.ts),
            now,
            half_life_days=params.half_life_days,
            floor=params.recency_floor,
        ) * (params.scaffold_weight if t.chunk.scaffold else 1.0)
    turns.sort(key=lambda t: -t.score)  # stable: ties keep the evidence order
    turns = diversify_sessions(turns, keep=params.session_hits, factor=params.session_share)
    if params.answers_beside:
        turns = place_answers(turns)
    turns = merge_duplicates(turns)[: params.k]
    clock.lap("recency")
    hits = [
        Hit(
            guard_chunk(t.chunk, scanner),
            t.score,
            tuple(guard_chunks(store.neighbors(t.chunk, params.neighbors), scanner)),
            tuple(guard_chunks(t.duplicates, scanner)),
        )
        for t in turns
    ]
    clock.lap("neighbors")
    return RecallResult(
        hits, notes, clock.timings, reranked, ranking.support, supported, params.min_support
    )


def _vector_depth(store: Searchable, params: RecallParams) -> int:
    """How deep to read the vector leg: `leg_depth`, or for evidence ranking as many cosines as
    `cosine_budget` allows for the memory's size (RecallParams.cosine_depth)."""
    if not params.evidence:
        return params.leg_depth
    blocks = -(-max(store.size_hint(), 1) // 1024)
    return max(params.leg_depth, min(params.cosine_depth, params.cosine_budget // blocks))


def _model_unavailable_note(exc: ModelUnavailable) -> str:
    """The one-line note of a recall whose embedding model cannot be loaded: why, in brief
    (`ModelUnavailable.brief`), and where the fix is (`funes status` gives the error's hint)."""
    return (
        f"vector search unavailable ({exc.brief}): lexical (BM25) results only; "
        "`funes status` says what fixes it"
    )


def _lexical(
    store: Searchable, query: str, params: RecallParams, filters: Filters, beside_vectors: bool
) -> tuple[list[tuple[int, float]], float, tuple[int, list[int]]]:
    """The BM25 leg's (rowid, bm25) pairs, best first (bm25: lower is better), its duration in
    ms, and (chunks, rows each query term occurs in): counted once here for the leg's budget
    (`bm25_budget`, beside a vector leg only) and for evidence ranking's IDF weights."""
    t0 = time.perf_counter()
    frequencies = store.document_frequencies(query_terms(query))
    rows = store.lexical(
        query,
        k=params.leg_depth,
        filters=filters,
        budget=params.bm25_budget if beside_vectors else None,
        frequencies=frequencies[1],
    )
    return rows, (time.perf_counter() - t0) * 1000.0, frequencies


def get_turns(
    store: Searchable,
    session_id: str,
    turn_id: str,
    *,
    window: int = 3,
    scanner: Scanner | None = None,
    filters: Filters = NO_FILTERS,
) -> list[TurnView]:
    """The named turn and the `window` turns on each side, splits reassembled; [] when absent
    (with `filters`: counting and showing only the turns' chunks they admit).

    Blocks with chunks stored under older redaction rules are redacted by `scanner` (default:
    the current one) after reassembly, so a secret split across two chunks is caught too.
    """
    scanner = scanner or default_scanner()
    chunks = store.turns_around(session_id, turn_id, window, filters=filters)
    views: list[TurnView] = []
    for (seq, tid), turn_chunks in groupby(chunks, key=lambda c: (c.seq, c.turn_id)):
        items = list(turn_chunks)
        blocks = []
        for _, group in groupby(items, key=lambda c: c.block_idx):
            pieces = sorted(group, key=lambda c: c.split_idx)
            blocks.append(guard_block(reassemble([c.text for c in pieces]), pieces, scanner))
        first = items[0]
        views.append(TurnView(session_id, tid, seq, first.ts, first.role, tuple(blocks)))
    return views
