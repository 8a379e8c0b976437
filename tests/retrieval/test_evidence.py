"""Evidence ranking: term coverage by IDF, answers after the turns they answer, honest misses,
identical passages once, named periods."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder

from funes.chunks import chunk_turn
from funes.retrieval import recall
from funes.retrieval.evidence import TurnFacts, Weights, score_turns
from funes.retrieval.periods import query_periods
from funes.settings import RECALL, Leg
from funes.store import Store, idf
from funes.traces import Block, BlockType, Harness, Role, Turn

NOW = datetime(2026, 3, 1, tzinfo=UTC)
W1 = Weights(lexical_weight=1.0)  # terms only: no cosine in these hand-made facts
PLAIN = replace(RECALL, neighbors=0, rerank=False, half_life_days=0)


def _turn(
    session: str,
    seq: int,
    role: Role,
    *blocks: tuple[BlockType, str],
    ts: str = "2026-02-20T00:00:00.000Z",
) -> Turn:
    return Turn(
        Harness.CLAUDE_CODE,
        session,
        f"{session}-{seq}",
        seq,
        ts,
        role,
        tuple(
            Block.make(t, x, tool_name="Bash" if t is not BlockType.TEXT else None)
            for t, x in blocks
        ),
        f"/tmp/{session}.jsonl",
        cwd="/home/dev/proj",
    )


def _store(tmp_path: Path, turns: list[Turn], *, vectors: bool = True) -> Store:
    store = Store.open(tmp_path / "memory.db")
    chunks = [c for t in turns for c in chunk_turn(t)]
    if vectors:
        emb = BagOfWordsEmbedder()
        store.stamp_model(emb.model_id, emb.dim, element="float")
        store.add(chunks, emb.embed([c.text for c in chunks]))
    else:
        store.add(chunks, None)
    return store


def _filler(session: str, n: int) -> list[Turn]:
    return [
        _turn(session, i, Role.ASSISTANT, (BlockType.TEXT, f"routine note {i} about lunch plans"))
        for i in range(n)
    ]


# -- the arithmetic ---------------------------------------------------------------------------


def test_idf_follows_fts5_and_floors_terms_in_most_chunks() -> None:
    assert idf(100, 1) == pytest.approx(math.log(99.5 / 1.5))
    assert idf(100, 0) > idf(100, 1) > idf(100, 10)
    assert idf(100, 60) == 1e-6


def test_a_rare_term_outweighs_a_common_one() -> None:
    facts = {
        "rare": TurnFacts[str](terms={0}, cosine=0.0, ts=None),
        "common": TurnFacts[str](terms={1}, cosine=0.0, ts=None),
    }
    scored = score_turns(facts, [4.0, 0.5], weights=W1)
    assert scored.evidence["rare"] == pytest.approx(4.0 / 4.5)
    assert scored.evidence["common"] == pytest.approx(0.5 / 4.5)


def test_the_turn_after_a_question_or_a_tool_result_gets_a_share_of_its_evidence() -> None:
    w = Weights(lexical_weight=1.0, context_share=0.0)
    for kind in ("asks", "tool"):
        before = TurnFacts[str](terms={0}, cosine=0.0, ts=None, **{kind: True})
        after = TurnFacts[str](terms=set(), cosine=0.0, ts=None, previous="q")
        scored = score_turns({"q": before, "a": after}, [1.0], weights=w)
        assert scored.score["a"] == pytest.approx(w.answer_share)
    plain = TurnFacts[str](terms={0}, cosine=0.0, ts=None)
    after = TurnFacts[str](terms=set(), cosine=0.0, ts=None, previous="q")
    assert score_turns({"q": plain, "a": after}, [1.0], weights=w).score["a"] == 0


def test_an_agent_prompt_lends_its_evidence_to_replies_not_to_exploring_steps() -> None:
    prompt = TurnFacts[str](terms={0}, cosine=0.0, ts=None, prompt=True)
    reply = TurnFacts[str](
        terms=set(), cosine=0.0, ts=None, opener="p", agent_exchange=True, previous="x"
    )
    exploring = replace(reply, says=False)
    scored = score_turns({"p": prompt, "r": reply, "x": exploring}, [1.0], weights=W1)
    assert scored.score["r"] == pytest.approx(Weights().exchange_share)
    assert scored.score["x"] == 0


def test_turns_outside_a_named_period_lose_part_of_their_score() -> None:
    inside = TurnFacts[str](terms={0}, cosine=0.0, ts=datetime(2023, 6, 16, 9, tzinfo=UTC))
    outside = TurnFacts[str](terms={0}, cosine=0.0, ts=datetime(2023, 9, 1, tzinfo=UTC))
    periods = query_periods("what happened on 16 June, 2023?")
    w = W1
    scored = score_turns({"in": inside, "out": outside}, [1.0], weights=w, periods=periods)
    assert scored.score["in"] == 1.0
    assert scored.score["out"] == pytest.approx(1 - w.period_penalty)
    # a period no turn falls in changes nothing
    none = score_turns(
        {"in": inside, "out": outside},
        [1.0],
        weights=w,
        periods=query_periods("in 1999"),
    )
    assert none.score == {"in": 1.0, "out": 1.0}


def test_a_session_that_supports_the_query_in_several_turns_wins_a_near_tie() -> None:
    w = replace(W1, session_share=0.3, session_turns=3)
    idfs = [1.0] * 20
    facts = {
        "stray": TurnFacts[str](terms=set(range(11)), cosine=0.0, ts=None, session="a"),
        "best": TurnFacts[str](terms=set(range(10)), cosine=0.0, ts=None, session="b"),
        "more": TurnFacts[str](terms=set(range(9)), cosine=0.0, ts=None, session="b"),
        "less": TurnFacts[str](terms=set(range(8)), cosine=0.0, ts=None, session="b"),
    }
    alone = score_turns(facts, idfs, weights=W1)
    assert alone.score["stray"] > alone.score["best"]  # evidence 0.55 vs 0.50
    scored = score_turns(facts, idfs, weights=w)
    # + 0.3 × the mean of the session's 3 best evidences (a session of one counts 0 twice)
    assert scored.score["stray"] == pytest.approx(0.55 + 0.3 * 0.55 / 3)
    assert scored.score["best"] == pytest.approx(0.50 + 0.3 * (0.50 + 0.45 + 0.40) / 3)
    assert scored.score["best"] > scored.score["stray"]
    assert scored.evidence == alone.evidence  # support (the best evidence) is untouched
    # within a session every turn gets the same amount: its order is the evidence order
    gains = {k: scored.score[k] - alone.score[k] for k in ("best", "more", "less")}
    assert max(gains.values()) == pytest.approx(min(gains.values()))


def test_named_periods_are_read_only_where_unambiguous() -> None:
    day = query_periods("the deploy on 2025-03-14")
    assert day == [(datetime(2025, 3, 14, tzinfo=UTC), datetime(2025, 3, 15, tzinfo=UTC))]
    assert query_periods("March 2025")[0][0] == datetime(2025, 3, 1, tzinfo=UTC)
    assert query_periods("on June 7th, 2024") == query_periods("7 June 2024")
    assert query_periods("what did we do in May?") == []
    assert query_periods("port 20000 and error 4040") == []


# -- the pipeline on a real store ---------------------------------------------------------------


def test_the_reply_to_a_matching_prompt_is_ranked_right_after_it(tmp_path: Path) -> None:
    turns = [
        _turn("s", 0, Role.USER, (BlockType.TEXT, "why does the nightly invoice export time out")),
        _turn("s", 1, Role.ASSISTANT, (BlockType.TOOL_USE, '{"command": "tail worker.log"}')),
        _turn("s", 2, Role.TOOL, (BlockType.TOOL_RESULT, "WORKER TIMEOUT pid 4411")),
        _turn(
            "s", 3, Role.ASSISTANT, (BlockType.TEXT, "gunicorn killed the sync worker after 30 s")
        ),
        # shares most of the prompt's words, and so outscores the reply on its own evidence
        _turn(
            "d",
            0,
            Role.ASSISTANT,
            (BlockType.TEXT, "the nightly invoice export time out is set to 600"),
        ),
        *_filler("f", 6),
    ]
    store = _store(tmp_path, turns)
    result = recall(
        store,
        "nightly invoice export time out",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=PLAIN,
        now=NOW,
    )
    seqs = [(h.chunk.session_id, h.chunk.seq) for h in result.hits]
    prompt = seqs.index(("s", 0))
    assert seqs[prompt + 1] in {("s", 2), ("s", 3)}  # a turn that answered it, right beside it
    assert result.hits[prompt + 1].chunk.role != "user"


def test_a_session_that_works_on_the_query_outranks_a_stray_line_that_names_it(
    tmp_path: Path,
) -> None:
    turns = [
        # one line that names every query word in passing (the best single turn)
        _turn(
            "stray",
            0,
            Role.ASSISTANT,
            (BlockType.TEXT, "todo list: websocket reconnect retry budget, lint, docs"),
        ),
        # a session that works on it over several turns, none of them naming it all
        _turn(
            "work",
            0,
            Role.USER,
            (BlockType.TEXT, "the websocket reconnect fails every few minutes in staging"),
        ),
        _turn(
            "work",
            1,
            Role.ASSISTANT,
            (BlockType.TEXT, "the websocket reconnect loop gives up after one retry"),
        ),
        _turn(
            "work", 2, Role.ASSISTANT, (BlockType.TEXT, "raised the retry budget; it stays up now")
        ),
        *_filler("f", 6),
    ]
    store = _store(tmp_path, turns)

    def order(share: float) -> list[tuple[str, int]]:
        result = recall(
            store,
            "websocket reconnect retry budget",
            embedder=BagOfWordsEmbedder(),
            reranker=None,
            params=replace(PLAIN, session_evidence_share=share),
            now=NOW,
        )
        return [(h.chunk.session_id, h.chunk.seq) for h in result.hits[:4]]

    assert order(0.0)[0] == ("stray", 0)  # turn evidence alone
    assert RECALL.session_evidence_share > 0
    ranked = order(RECALL.session_evidence_share)
    assert ranked[0] == ("work", 1)
    work = [key for key in order(0.0) if key[0] == "work"]
    assert [key for key in ranked if key[0] == "work"] == work  # the session's own order holds


def test_identical_passages_are_returned_once_with_the_copies_noted(tmp_path: Path) -> None:
    text = "the staging database password rotates every ninety days"
    turns = [
        _turn("a", 0, Role.ASSISTANT, (BlockType.TEXT, text)),
        _turn("b", 0, Role.ASSISTANT, (BlockType.TEXT, text)),  # a replayed copy
        _turn("c", 0, Role.ASSISTANT, (BlockType.TEXT, "the staging database lives on port 5433")),
    ]
    store = _store(tmp_path, turns)
    result = recall(
        store,
        "staging database password rotation",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=PLAIN,
        now=NOW,
    )
    shown = [" ".join(h.chunk.text.split()) for h in result.hits]
    assert len(shown) == len(set(shown))
    first = result.hits[0]
    assert first.chunk.text == text
    assert [d.session_id for d in first.duplicates] == ["b"]


def test_support_separates_an_answered_query_from_nonsense(tmp_path: Path) -> None:
    turns = [
        _turn(
            "s", 0, Role.ASSISTANT, (BlockType.TEXT, "we pinned pgbouncer to transaction pooling")
        ),
        *_filler("f", 8),
    ]
    store = _store(tmp_path, turns)
    emb = BagOfWordsEmbedder()
    good = recall(
        store, "pgbouncer transaction pooling", embedder=emb, reranker=None, params=PLAIN, now=NOW
    )
    assert good.supported and good.support is not None and good.support >= RECALL.min_support
    bad = recall(
        store, "zzzzqqq nonexistentterm", embedder=emb, reranker=None, params=PLAIN, now=NOW
    )
    assert not bad.supported and bad.support is not None and bad.support < RECALL.min_support


def test_a_memory_without_vectors_ranks_by_term_evidence(tmp_path: Path) -> None:
    turns = [
        _turn("s", 0, Role.ASSISTANT, (BlockType.TEXT, "rotate the signing keys every month")),
        *_filler("f", 5),
    ]
    store = _store(tmp_path, turns, vectors=False)
    result = recall(store, "signing keys", embedder=None, reranker=None, params=PLAIN, now=NOW)
    assert result.hits[0].chunk.session_id == "s"
    assert result.support == pytest.approx(1.0)


def test_evidence_recall_is_deterministic(tmp_path: Path) -> None:
    turns = [
        _turn("s", i, Role.ASSISTANT, (BlockType.TEXT, f"cache warmup step {i % 3}"))
        for i in range(9)
    ]
    store = _store(tmp_path, turns)
    emb = BagOfWordsEmbedder()
    runs = [
        [
            (h.chunk.rowid, h.score)
            for h in recall(
                store, "cache warmup step", embedder=emb, reranker=None, params=PLAIN, now=NOW
            ).hits
        ]
        for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]


def test_the_fused_order_measures_no_support(tmp_path: Path) -> None:
    store = _store(tmp_path, [_turn("s", 0, Role.ASSISTANT, (BlockType.TEXT, "alpha beta"))])
    params = replace(PLAIN, evidence=False, legs=(Leg.BM25,))
    result = recall(store, "alpha", embedder=None, reranker=None, params=params, now=NOW)
    assert result.support is None and result.supported
