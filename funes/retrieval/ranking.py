"""Evidence ranking: the fused candidates' turns, their neighbourhood, scored by evidence.

From the fused (RRF) chunk candidates of the BM25 and vector legs, the first `pool` turns are
taken, together with each one's previous and next turn, the user prompt that opened its
exchange and, for a prompt, the turns of its exchange (at most `exchange_limit`). Every chunk
of those turns is read; the query terms each contains are matched as FTS5 would
(funes.store.terms) and weighted by the memory's IDF; the vector leg's distance to it gives
its cosine (read as deep as `RecallParams.cosine_budget` allows).
funes.retrieval.evidence turns that into each turn's evidence and score. A turn is shown by its
best chunk (the highest w × term share + (1 − w) × cosine among the chunks the filters allow).

`support` is the best evidence of any scored turn: the number recall compares with
`RecallParams.min_support` to say whether anything in the memory supports the query.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from funes.retrieval.evidence import TurnFacts, Weights, score_turns
from funes.retrieval.periods import query_periods
from funes.retrieval.types import Searchable
from funes.store import Filters, StoredChunk, idf, query_terms, term_presence
from funes.traces import parse_ts

TurnKey = tuple[str, int]  # (session_id, seq)


@dataclass(slots=True)
class RankedTurn:
    chunk: StoredChunk  # the turn's best chunk (what a hit shows)
    score: float
    evidence: float
    prompt_of_agent_exchange: bool = False
    answers: TurnKey | None = None  # the best-scored turn of the exchange this prompt opened
    duplicates: list[StoredChunk] = field(default_factory=list)


@dataclass(slots=True)
class Ranking:
    turns: list[RankedTurn]  # best first, one per turn, identical passages merged
    # the best evidence of any scored turn, in [0, 1]; without vectors the best term share
    # (the BM25 share of a lexical-only evidence is relative to the query's best, no support)
    support: float


def rank_by_evidence(
    store: Searchable,
    query: str,
    cosines: Mapping[int, float] | None,
    fused: Sequence[int],
    *,
    bm25: Mapping[int, float],
    frequencies: tuple[int, list[int]] | None = None,
    weights: Weights,
    pool: int,
    exchange_limit: int,
    filters: Filters,
) -> Ranking:
    """Score the neighbourhood of the first `pool` turns of `fused` (rowids, best first).

    `cosines`: the vector leg's cosine by rowid, as deep as it was read (`cosine_depth`); a
    chunk it does not hold counts the lowest cosine it does (no closer than that one); None
    without vectors. `bm25`: the BM25 leg's scores by rowid (positive, higher = better; chunks
    past the leg's depth count 0). Without vectors, a chunk's BM25 relative to the best one
    stands in for its cosine in the evidence (support stays the term share alone: see
    `Ranking.support`). `frequencies`: (chunks, rows each of query_terms(query) occurs in)
    when the BM25 leg counted them (else counted here)."""
    first = store.fetch(list(fused))
    seen: dict[TurnKey, None] = {}
    for r in fused:
        c = first.get(r)
        if c is not None:
            seen.setdefault((c.session_id, c.seq), None)
            if len(seen) >= pool:
                break
    keys = list(seen)
    if not keys:
        return Ranking([], 0.0)
    outlines = {
        sid: _Outline.read(store, sid, [q for s, q in keys if s == sid], exchange_limit)
        for sid in dict.fromkeys(s for s, _ in keys)
    }
    wanted: set[TurnKey] = set(keys)
    for sid, seq in keys:
        o = outlines[sid]
        prev, nxt, prompt = o.previous(seq), o.next(seq), o.prompt(seq)
        wanted.update((sid, s) for s in (prev, nxt, prompt) if s is not None)
        if prompt == seq:
            wanted.update((sid, s) for s in o.exchange(seq))
    chunks = store.turn_chunks(sorted(wanted))
    terms = query_terms(query)
    if frequencies is not None and len(frequencies[1]) == len(terms):
        total, dfs = frequencies
    else:
        total, dfs = store.document_frequencies(terms)
    idfs = [idf(total, df) for df in dfs]
    presence = term_presence(terms, [c.text for c in chunks])
    chunk_terms: list[set[int]] = [set() for _ in chunks]
    for t, rows in enumerate(presence):
        for i in rows:
            chunk_terms[i].add(t)
    total_idf = sum(idfs)
    term_share = [
        sum(idfs[t] for t in found) / total_idf if total_idf > 0 else 0.0 for found in chunk_terms
    ]
    semantic = bool(cosines)
    if cosines:
        floor = min(cosines.values())
        cosine = [cosines.get(c.rowid, floor) for c in chunks]
    else:
        top = max((bm25.get(c.rowid, 0.0) for c in chunks), default=0.0)
        cosine = [bm25.get(c.rowid, 0.0) / top if top > 0 else 0.0 for c in chunks]
    members: dict[TurnKey, list[int]] = {}
    for i, c in enumerate(chunks):
        members.setdefault((c.session_id, c.seq), []).append(i)
    facts: dict[TurnKey, TurnFacts[TurnKey]] = {}
    for key, idx in members.items():
        sid, seq = key
        o = outlines[sid]
        prev, prompt = o.previous(seq), o.prompt(seq)
        head = chunks[idx[0]]
        opener = (sid, prompt) if prompt is not None and prompt != seq else None
        facts[key] = TurnFacts(
            terms=set().union(*(chunk_terms[i] for i in idx)),
            cosine=max(cosine[i] for i in idx),
            ts=parse_ts(head.ts),
            asks=any("?" in chunks[i].text for i in idx),
            tool=head.role == "tool",
            prompt=prompt == seq,
            previous=(sid, prev) if prev is not None else None,
            opener=opener,
            agent_exchange=opener is not None and o.agent_exchange(opener[1]),
            scaffold=head.scaffold,
            says=any(chunks[i].block_type in ("text", "tool_result") for i in idx),
            session=sid,
        )
    scored = score_turns(facts, idfs, weights=weights, periods=query_periods(query))
    w = weights.lexical_weight

    def chunk_value(i: int) -> float:
        return w * term_share[i] + (1 - w) * cosine[i]

    turns: list[RankedTurn] = []
    for key, idx in members.items():
        allowed = [i for i in idx if filters.admits(chunks[i])]
        if not allowed or scored.score[key] <= 0:  # a neighbour nothing supports is no hit
            continue
        best = max(allowed, key=lambda i: (chunk_value(i), -i))
        f = facts[key]
        turns.append(
            RankedTurn(
                chunks[best],
                scored.score[key],
                scored.evidence[key],
                prompt_of_agent_exchange=f.prompt and outlines[key[0]].agent_exchange(key[1]),
            )
        )
    order = {key: i for i, key in enumerate(keys)}
    turns.sort(
        key=lambda t: (
            -t.score,
            order.get((t.chunk.session_id, t.chunk.seq), len(order)),
            t.chunk.rowid,
        )
    )
    _note_answers(turns, facts)
    support = max((scored.evidence if semantic else scored.lexical).values(), default=0.0)
    return Ranking(turns, support)


class _Outline:
    """The turns of one session around the pool's turns: (seq, holds a user prompt), from
    `exchange_limit` turns before the first to `exchange_limit` after the last (an exchange
    longer than that is seen in part)."""

    def __init__(self, rows: list[tuple[int, bool]]) -> None:
        self.seqs = [seq for seq, _ in rows]
        self.prompts = [seq for seq, is_prompt in rows if is_prompt]

    @classmethod
    def read(cls, store: Searchable, session_id: str, seqs: list[int], limit: int) -> _Outline:
        return cls(store.session_outline(session_id, min(seqs) - limit, max(seqs) + limit))

    def previous(self, seq: int) -> int | None:
        i = bisect_left(self.seqs, seq)
        return self.seqs[i - 1] if i > 0 else None

    def next(self, seq: int) -> int | None:
        i = bisect_right(self.seqs, seq)
        return self.seqs[i] if i < len(self.seqs) else None

    def prompt(self, seq: int) -> int | None:
        """The latest prompt at or before `seq` (the one whose exchange `seq` is in)."""
        i = bisect_right(self.prompts, seq)
        return self.prompts[i - 1] if i > 0 else None

    def exchange(self, prompt: int) -> list[int]:
        """The turns after `prompt` up to the next prompt."""
        i = bisect_right(self.prompts, prompt)
        upto = self.prompts[i] if i < len(self.prompts) else None
        lo = bisect_right(self.seqs, prompt)
        hi = bisect_left(self.seqs, upto) if upto is not None else len(self.seqs)
        return self.seqs[lo:hi]

    def agent_exchange(self, prompt: int) -> bool:
        """Whether the prompt was answered over several turns (≥ 2 before the next prompt)."""
        return len(self.exchange(prompt)) >= 2


def _note_answers(turns: list[RankedTurn], facts: dict[TurnKey, TurnFacts[TurnKey]]) -> None:
    """For each prompt of an agent exchange, the best-ranked turn of its exchange."""
    best: dict[TurnKey, TurnKey] = {}
    for t in turns:
        f = facts.get((t.chunk.session_id, t.chunk.seq))
        if f is not None and f.opener is not None and f.opener not in best:
            best[f.opener] = (t.chunk.session_id, t.chunk.seq)
    for t in turns:
        if t.prompt_of_agent_exchange:
            t.answers = best.get((t.chunk.session_id, t.chunk.seq))


def place_answers(turns: list[RankedTurn]) -> list[RankedTurn]:
    """Each agent-exchange prompt followed directly by the best turn of its exchange (when
    that turn ranks lower), so the turn that answered a matching prompt is beside it."""
    by_key = {(t.chunk.session_id, t.chunk.seq): t for t in turns}
    out: list[RankedTurn] = []
    placed: set[TurnKey] = set()
    for t in turns:
        key = (t.chunk.session_id, t.chunk.seq)
        if key in placed:
            continue
        out.append(t)
        placed.add(key)
        if t.answers is not None and t.answers not in placed and t.answers in by_key:
            out.append(by_key[t.answers])
            placed.add(t.answers)
    return out


def diversify_sessions(turns: list[RankedTurn], *, keep: int, factor: float) -> list[RankedTurn]:
    """From the (`keep` + 1)-th turn of a session on (in rank order), each turn's score is
    multiplied by `factor`, and the list re-sorted (stable): a result shows more sessions
    before it shows a session's every matching turn. factor 1 changes nothing."""
    if factor >= 1.0:
        return turns
    seen: dict[str, int] = {}
    for t in turns:
        n = seen.get(t.chunk.session_id, 0)
        seen[t.chunk.session_id] = n + 1
        if n >= keep:
            t.score *= factor
    return sorted(turns, key=lambda t: -t.score)


def merge_duplicates(turns: list[RankedTurn]) -> list[RankedTurn]:
    """Turns whose shown passage is identical (whitespace folded) to a better-ranked one's are
    dropped; the kept turn lists their chunks in `duplicates` (provenance of the copies)."""
    kept: dict[str, RankedTurn] = {}
    out: list[RankedTurn] = []
    for t in turns:
        text = " ".join(t.chunk.text.split())
        first = kept.get(text)
        if first is not None:
            first.duplicates.append(t.chunk)
            continue
        kept[text] = t
        out.append(t)
    return out
