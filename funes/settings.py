"""Tunables: one declaration each, consumed by the CLI, the MCP server, the docs test.

Every default here appears once. `RECALL`/`INDEX` are the defaults; AGENTS.md documents
them and tests/contracts/test_docs.py checks the two agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Leg(StrEnum):
    """A candidate generator of the read path, fused by RRF."""

    BM25 = "bm25"
    VECTOR = "vector"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallParams:
    """How `recall` ranks and shapes its hits."""

    k: int = 8  # hits returned
    candidates: int = 30  # fused pool size (turns) handed to the cross-encoder before the top-k cut
    half_life_days: float = 0.0  # recency decay: a hit this old keeps half its weight; 0 disables
    neighbors: int = 1  # adjacent chunks (by seq within the session) attached per hit; 0 disables
    rerank: bool = True  # run the cross-encoder over the fused pool
    rrf_k: int = 60  # reciprocal rank fusion constant (Cormack et al. 2009 use 60)
    leg_depth: int = 100  # candidates each leg (BM25, vector) contributes before fusion
    # postings the BM25 leg scores exactly beside a vector leg: a query whose terms occur in
    # more rows draws its BM25 candidates from its rarest terms (funes.store.bm25; a million
    # chunks: BM25 leg p50 330 → ~80 ms, default quality kept). None: always the exact query.
    # Not used without a vector leg, where the cut cost quality (bench/README.md).
    bm25_budget: int | None = 50_000
    legs: tuple[Leg, ...] = (Leg.BM25, Leg.VECTOR)  # which legs run (benchmarks compare them)
    # share of a hit's score that age never takes: recency re-orders near-ties, it does not bury
    # an old exact answer (0.0 = plain half-life decay; see bench/README.md for the measurements)
    recency_floor: float = 0.9
    # factor on the score of harness-injected text (Codex <environment_context>, AGENTS.md and
    # skill preambles, compaction summaries: `Chunk.scaffold`): it repeats in every session and
    # matched many queries first; at 3/4 it loses near-ties yet still leads when it is the match
    scaffold_weight: float = 0.75
    # a turn scores its best block + this share of its other blocks' fused scores. 0: a turn is
    # its best chunk. 0.1 gave +4.5..+7 turn hit@5 on the dev set but put an exploring turn
    # (thinking + tool call) above the answer in 2 of the 6 fixture questions (bench/README.md).
    # Used by the fused (RRF) order only (`evidence=False`).
    turn_bonus: float = 0.0
    # rank turns by evidence (funes.retrieval.evidence) instead of the fused RRF order; False is
    # the plain fused order the bench compares against
    evidence: bool = True
    pool: int = 100  # fused turns whose neighbourhood is scored by evidence
    # vector-leg depth read for the evidence's cosines (a chunk past it counts the deepest
    # cosine read). sqlite-vec's scan costs ~blocks × k (a block: 1,024 vectors; 100k chunks,
    # 2 loaded cores: k 100 / 300 / 1000 → 110 / 192 / 546 ms), so the depth is held to
    # `cosine_budget` / blocks: every cosine in a memory of ≤ 5k chunks, the leg's own 100 at 100k
    cosine_depth: int = 1000
    cosine_budget: int = 5000
    exchange_limit: int = 50  # turns of a prompt's exchange scored with it
    lexical_weight: float = 0.5  # evidence = w × IDF-weighted term share + (1 − w) × cosine
    context_share: float = 0.4  # share of the term coverage measured with the previous turn
    answer_share: float = 0.3  # of a question's / tool result's evidence given to the next turn
    exchange_share: float = 0.5  # of an agent-exchange prompt's evidence given to its turns
    period_penalty: float = 0.5  # score cut of turns outside a period the query names
    # each turn adds this share of its session's evidence (the mean of the session's best
    # `session_evidence_turns` evidences among the scored turns): of two near-tied turns, the
    # one whose session supports the query in more turns leads (funes.retrieval.evidence)
    session_evidence_share: float = 0.3
    session_evidence_turns: int = 3
    # below this best evidence nothing in the memory supports the query: recall reports a miss.
    # Calibrated with the int8 all-MiniLM-L6-v2 embedder: the largest 0.01 step that keeps ≥ 95%
    # of answerable questions on both the coding dev set (98.2% kept) and LoCoMo (95.9%); their
    # 5th percentiles are 0.342 and 0.329 (bench/README.md)
    min_support: float = 0.32
    answers_beside: bool = True  # an agent-exchange prompt hit is followed by its best answer
    session_hits: int = 1  # hits of one session shown before its further ones yield a share
    session_share: float = 0.9  # score factor of a session's hits past `session_hits`


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexParams:
    """How `index` walks sources and spends its time."""

    budget_s: float = 60.0  # wall-clock budget of an unattended sweep; 0 = no budget
    include_thinking: bool = True
    limit: int | None = None  # at most this many units (sessions/files) per run
    # how long a manual `funes index` waits for another writer (a hook worker's drain takes
    # seconds; a long sweep or scrub minutes: then it exits 75) before giving up
    lock_wait_s: float = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkParams:
    """How blocks are split into chunks (lengths in Unicode code points)."""

    size: int = 1200
    overlap: int = 150


@dataclass(frozen=True, slots=True, kw_only=True)
class SpoolParams:
    """How the spool worker drains hook entries."""

    max_attempts: int = 3  # failures before an entry is parked in failed/
    settle_s: float = 0.3  # wait for a transcript to stop growing before reading it
    idle_exit_s: float = 1.0  # the worker exits after the spool stays empty this long
    settle_max_s: float = 5.0  # never wait longer than this for transcripts to stop growing
    store_wait_s: float = 30.0  # how long the worker waits for the memory's writer lock
    # after its entries, a worker embeds chunks still owed a vector (a first index's backlog)
    # for at most this long, and stops sooner when `funes index` waits for the memory
    backfill_s: float = 15.0
    batch_entries: int = 1000  # entries claimed per round
    stale_tmp_s: float = 3600.0  # spool/tmp files older than this are debris of a killed hook
    watch_debounce_s: float = 2.0  # `funes watch`: quiet time after a change before indexing


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishParams:
    """How a spool worker publishes a bound memory after a session boundary (retries of one
    worker; a parked push waits for the next boundary, or `funes push`)."""

    # waits between failed attempts, seconds: len(backoff_s) + 1 attempts, then parked
    backoff_s: tuple[float, ...] = (5.0, 30.0, 120.0)

    @property
    def max_attempts(self) -> int:
        return len(self.backoff_s) + 1

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> PublishParams:
        """FUNES_PUSH_RETRY_S overrides `backoff_s` (comma-separated seconds, e.g. `5,30,120`;
        empty: one attempt, then parked)."""
        env = os.environ if env is None else env
        raw = env.get("FUNES_PUSH_RETRY_S")
        if raw is None:
            return cls()
        try:
            waits = tuple(max(0.0, float(v)) for v in raw.split(",") if v.strip())
        except ValueError:
            return cls()
        return cls(backoff_s=waits)


RECALL = RecallParams()
INDEX = IndexParams()
CHUNK = ChunkParams()
SPOOL = SpoolParams()


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteParams:
    """How remote memories (org/repo, a shared directory) are read."""

    revision_ttl_s: float = 60.0  # re-check a remote's head at most this often; 0 = on every read

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> RemoteParams:
        """FUNES_REMOTE_TTL_S overrides `revision_ttl_s` (seconds; 0 checks on every read)."""
        env = os.environ if env is None else env
        raw = env.get("FUNES_REMOTE_TTL_S")
        try:
            return cls(revision_ttl_s=max(0.0, float(raw))) if raw else cls()
        except ValueError:
            return cls()


REMOTE = RemoteParams()


def hub_offline(env: Mapping[str, str] | None = None) -> bool:
    """HF_HUB_OFFLINE (as huggingface_hub reads it): remote memories use their cached copy."""
    env = os.environ if env is None else env
    return (env.get("HF_HUB_OFFLINE") or "").strip().upper() in {"1", "ON", "YES", "TRUE"}
