"""Evidence scores of turns: pure arithmetic over what recall gathered (no I/O).

A turn's **evidence** is how well the turn itself supports the query, in [0, 1]:

    evidence = w × lexical + (1 − w) × semantic          (w = `RecallParams.lexical_weight`)

* lexical: the IDF-weighted share of the query's terms the turn contains (any of its chunks),
  Σ idf(t)·[t in turn] / Σ idf(t) over the query terms, with BM25's IDF
  ln((N − df + 0.5) / (df + 0.5)) as FTS5 computes it (funes.store.idf, the BM25 leg's own) (a term in more than half the chunks
  weighs ~0; a term the memory never saw weighs most, so a query about something absent
  cannot reach 1). `context_share` of it is measured over the turn together with the turn
  before it (what the turn replies to): (1 − c)·share(turn) + c·share(turn ∪ previous).
* semantic: the best cosine between the query vector and the turn's chunk vectors. A memory
  without vectors uses the turn's best BM25 relative to the query's best chunk instead
  (funes.retrieval.ranking), which keeps BM25's term frequency and length normalisation in
  the ranking; its support is then the term share alone.

A turn's **score** adds shares of the evidence of the turn it answers (the answer follows the
evidence):
* `answer_share` × the previous turn's evidence when that turn asks a question (its text holds
  a `?`) or is a tool result (the turn after it reads the output);
* `exchange_share` × the evidence of the user prompt that opened the turn's exchange, when that
  prompt was answered over several turns (an agent exchange: ≥ 2 turns before the next prompt);
the larger of the two counts; the exchange share goes to turns that say something back (a text
block or a tool result), not to turns that only think or call tools. Within an agent exchange the prompt reaches its turns through
`exchange_share` only (no context share, no answer share from it), so the turn right after a
prompt is not favoured over the turn that answers it. Each turn then adds `session_share` ×
its session's evidence: the mean of the `session_turns` best evidences among the session's
scored turns (a session with fewer counts 0 for the rest). Passage-level evidence combined
with the evidence of the document around it (Callan, SIGIR 1994): a session that speaks of
the query in several turns is likelier to be the one asked about than a session with one
stray match, so a near-tie between sessions goes to the one with more support; within a
session the order is unchanged (every turn of it gets the same amount). Then turns outside a period the query names (`on 16 June, 2023`,
funes.retrieval.periods) are multiplied by 1 − `period_penalty` when some scored turns fall
inside it (a period with none, or all, inside changes nothing); the window runs from the
period's start to `PERIOD_SLACK_DAYS` after its end (a memory records when a thing was talked
about, which is at or after it happened).

All shares were chosen on the coding dev set and LoCoMo together (bench/README.md) and sit on
a plateau: ±0.1 around each moves neither set's hit@1 by more than ~2 points.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

PERIOD_SLACK_DAYS = 7.0


@dataclass(slots=True)
class TurnFacts(Generic[K]):
    """What the scorer knows of one turn (K: its key, e.g. (session_id, seq))."""

    terms: set[int]  # indexes of the query terms it contains
    cosine: float  # best cosine of its chunks (0 without vectors)
    ts: datetime | None
    asks: bool = False  # its text holds a question mark
    tool: bool = False  # a tool result (role `tool`)
    prompt: bool = False  # a user prompt (non-scaffold user text)
    previous: K | None = None  # the turn before it in its session
    opener: K | None = None  # the user prompt whose exchange it belongs to (not itself)
    agent_exchange: bool = False  # that prompt was answered over ≥ 2 turns
    scaffold: bool = False
    says: bool = True  # holds a text block or a tool result (not only thinking / tool calls)
    session: Hashable = None  # the session it belongs to (turns of one session share it)


@dataclass(frozen=True, slots=True)
class Weights:
    lexical_weight: float = 0.5
    context_share: float = 0.4
    answer_share: float = 0.3
    exchange_share: float = 0.5
    period_penalty: float = 0.5
    session_share: float = 0.0  # off in the bare arithmetic; recall passes RecallParams'
    session_turns: int = 3


@dataclass(slots=True)
class Scored(Generic[K]):
    evidence: dict[K, float] = field(default_factory=dict)
    score: dict[K, float] = field(default_factory=dict)
    lexical: dict[K, float] = field(default_factory=dict)


def score_turns(
    facts: Mapping[K, TurnFacts[K]],
    idfs: Sequence[float],
    *,
    weights: Weights,
    periods: Sequence[tuple[datetime, datetime]] = (),
) -> Scored[K]:
    """Evidence and score of every turn in `facts` (see the module docstring)."""
    total = sum(idfs)
    w = weights.lexical_weight
    out: Scored[K] = Scored()

    def share(terms: set[int]) -> float:
        return sum(idfs[i] for i in terms) / total if total > 0 else 0.0

    def replies_to(f: TurnFacts[K]) -> TurnFacts[K] | None:
        """The turn `f` follows, unless that is the prompt of `f`'s agent exchange (whose
        evidence reaches the exchange through `exchange_share` alone)."""
        before = facts.get(f.previous) if f.previous is not None else None
        if before is None or (f.agent_exchange and f.previous == f.opener):
            return None
        return before

    for key, f in facts.items():
        own = share(f.terms)
        before = replies_to(f)
        joint = share(f.terms | before.terms) if before is not None else own
        lexical = (1 - weights.context_share) * own + weights.context_share * joint
        out.lexical[key] = lexical
        out.evidence[key] = w * lexical + (1 - w) * f.cosine
    for key, f in facts.items():
        add = 0.0
        before = replies_to(f)
        if before is not None and (before.asks or before.tool):
            add = weights.answer_share * out.evidence[f.previous]  # type: ignore[index]
        if f.opener is not None and f.agent_exchange and f.says and f.opener in out.evidence:
            add = max(add, weights.exchange_share * out.evidence[f.opener])
        out.score[key] = out.evidence[key] + add
    if weights.session_share > 0 and weights.session_turns > 0:
        sessions = session_evidence(facts, out.evidence, weights.session_turns)
        for key, f in facts.items():
            out.score[key] += weights.session_share * sessions[f.session]
    if periods and weights.period_penalty > 0:
        inside = {key: _within(f.ts, periods) for key, f in facts.items()}
        if any(inside.values()) and not all(inside.values()):
            for key, hit in inside.items():
                if not hit:
                    out.score[key] *= 1 - weights.period_penalty
    return out


def session_evidence(
    facts: Mapping[K, TurnFacts[K]], evidence: Mapping[K, float], turns: int
) -> dict[Hashable, float]:
    """Each session's evidence: the mean of the `turns` best evidences among its turns in
    `facts` (`TurnFacts.session`; a session with fewer turns counts 0 for the rest)."""
    per: dict[Hashable, list[float]] = {}
    for key, f in facts.items():
        per.setdefault(f.session, []).append(evidence[key])
    return {sid: sum(sorted(v, reverse=True)[:turns]) / turns for sid, v in per.items()}


def _within(ts: datetime | None, periods: Sequence[tuple[datetime, datetime]]) -> bool:
    if ts is None:
        return False
    slack = timedelta(days=PERIOD_SLACK_DAYS)
    return any(start <= ts < end + slack for start, end in periods)
