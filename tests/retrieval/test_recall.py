from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from fakes import BagOfWordsEmbedder, OverlapReranker
from support.memory import memory_with

from funes.retrieval import get_turns, recall
from funes.settings import RECALL
from funes.store import Filters, Store
from funes.traces import Block, BlockType, Harness, Role, Turn

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _store(tmp_path: Path, turns: list[Turn]) -> Store:
    return memory_with(tmp_path / "m.db", turns, BagOfWordsEmbedder())


def _t(
    session: str,
    seq: int,
    text: str,
    ts: str = "2026-02-28T00:00:00.000Z",
    btype: BlockType = BlockType.TEXT,
) -> Turn:
    return Turn(
        Harness.CODEX,
        session,
        f"{session}-{seq}",
        seq,
        ts,
        Role.ASSISTANT,
        (Block(btype, text),),
        "/x",
        cwd="/w",
    )


def test_recall_returns_the_matching_passage_first_with_neighbors(tmp_path: Path) -> None:
    texts = [f"unrelated chatter {i}" for i in range(5)]
    texts.insert(2, "the websocket reconnect backoff was capped at thirty seconds")
    turns = [_t("s1", i, text) for i, text in enumerate(texts)]
    store = _store(tmp_path, turns)
    result = recall(
        store,
        "websocket reconnect backoff",
        embedder=BagOfWordsEmbedder(),
        reranker=OverlapReranker(),
        params=replace(RECALL, half_life_days=0),
        now=NOW,
    )
    assert result.reranked
    top = result.hits[0]
    assert "websocket" in top.chunk.text
    assert len(top.neighbors) == 2
    assert {"embed_query", "bm25", "vector", "fusion", "rerank", "neighbors"} <= set(
        result.timings_ms
    )


def test_recency_prefers_the_newer_of_two_equal_passages(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            _t("old", 0, "we deploy with blue green switching", ts="2025-06-01T00:00:00.000Z"),
            _t("new", 0, "we deploy with blue green switching", ts="2026-02-20T00:00:00.000Z"),
        ],
    )
    result = recall(
        store,
        "blue green deploy",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=replace(RECALL, neighbors=0, half_life_days=30),
        now=NOW,
    )
    assert [h.chunk.session_id for h in result.hits] == ["new"]  # the copy is merged into it
    assert [d.session_id for d in result.hits[0].duplicates] == ["old"]
    flat = recall(
        store,
        "blue green deploy",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=replace(RECALL, neighbors=0, half_life_days=0),
        now=NOW,
    )
    assert len(flat.hits) == 1 and len(flat.hits[0].duplicates) == 1


def test_filters_restrict_hits_to_one_block_type(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            _t("s", 0, "pytest failed with ImportError", btype=BlockType.TOOL_RESULT),
            _t("s", 1, "pytest failed because of an ImportError in conftest"),
        ],
    )
    result = recall(
        store,
        "pytest ImportError",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        filters=Filters(block_types=("tool_result",)),
        now=NOW,
    )
    assert {h.chunk.block_type for h in result.hits} == {"tool_result"}


def test_without_an_embedder_recall_is_lexical_and_says_so(tmp_path: Path) -> None:
    store = _store(tmp_path, [_t("s", 0, "the cache key includes the locale")])
    result = recall(store, "cache locale", embedder=None, reranker=None, now=NOW)
    assert result.hits and "lexical" in result.notes[0]


def test_nothing_matching_returns_no_hits(tmp_path: Path) -> None:
    store = _store(tmp_path, [_t("s", 0, "alpha")])
    assert recall(store, "!!!", embedder=None, reranker=None, now=NOW).hits == []


def test_get_reassembles_a_split_block_and_shows_the_window(tmp_path: Path) -> None:
    long_text = " ".join(f"word{i}" for i in range(900))
    turns = [
        _t("s", 0, "question"),
        _t("s", 1, long_text),
        _t("s", 2, "thanks"),
        _t("s", 3, "later"),
    ]
    store = _store(tmp_path, turns)
    views = get_turns(store, "s", "s-1", window=1)
    assert [v.seq for v in views] == [0, 1, 2]
    assert views[1].blocks == (long_text,)
    assert get_turns(store, "s", "missing", window=1) == []


def test_each_hit_is_a_different_turn(tmp_path: Path) -> None:
    turn = Turn(
        Harness.CODEX,
        "s",
        "s-0",
        0,
        "2026-02-28T00:00:00.000Z",
        Role.ASSISTANT,
        (
            Block(BlockType.THINKING, "the flaky retry test needs a fixed seed"),
            Block(BlockType.TEXT, "fixed the flaky retry test with a fixed seed"),
        ),
        "/x",
        cwd="/w",
    )
    store = _store(tmp_path, [turn, _t("s", 1, "unrelated words here")])
    result = recall(
        store, "flaky retry test seed", embedder=BagOfWordsEmbedder(), reranker=None, now=NOW
    )
    turns = [(h.chunk.session_id, h.chunk.turn_id) for h in result.hits]
    assert len(turns) == len(set(turns))
    assert turns[0] == ("s", "s-0")


def test_a_turn_matched_by_several_blocks_outranks_one_stray_match(tmp_path: Path) -> None:
    # turn s-0: its thinking and its reply each answer half the question; turn s-1 matches it
    # in one block, better than either block of s-0 alone
    both = Turn(
        Harness.CODEX,
        "s",
        "s-0",
        0,
        "2026-02-28T00:00:00.000Z",
        Role.ASSISTANT,
        (
            Block(BlockType.THINKING, "pgbouncer runs in transaction mode"),
            Block(BlockType.TEXT, "so prepared statements are off"),
        ),
        "/x",
        cwd="/w",
    )
    stray = _t("s", 1, "pgbouncer prepared statements transaction mode pooling")
    store = _store(tmp_path, [both, stray, _t("s", 2, "unrelated words here")])
    query = "pgbouncer prepared statements transaction mode"
    # turn_bonus belongs to the fused (RRF) order
    plain = replace(RECALL, evidence=False, turn_bonus=0.0, half_life_days=0, neighbors=0)
    first = recall(
        store, query, embedder=BagOfWordsEmbedder(), reranker=None, params=plain, now=NOW
    )
    assert first.hits[0].chunk.turn_id == "s-1"  # best single block wins without the bonus
    with_bonus = replace(RECALL, evidence=False, turn_bonus=0.1, half_life_days=0, neighbors=0)
    bonus = recall(
        store, query, embedder=BagOfWordsEmbedder(), reranker=None, params=with_bonus, now=NOW
    )
    assert [h.chunk.turn_id for h in bonus.hits[:2]] == ["s-0", "s-1"]


def test_harness_injected_scaffold_ranks_below_the_users_own_passage(tmp_path: Path) -> None:
    # Codex repeats <environment_context> (cwd, shell, sandbox) in every session: it shares the
    # query's words as much as the real answer does, and must not come first.
    scaffold = replace(
        _t("s1", 0, "<environment_context> cwd /srv/app shell bash sandbox workspace-write"),
        role=Role.USER,
        scaffold=True,
    )
    answer = _t("s1", 1, "the app workspace shell script now runs under bash with set -e")
    filler = [_t("s2", i, f"unrelated chatter {i}") for i in range(4)]
    store = _store(tmp_path, [scaffold, answer, *filler])
    result = recall(
        store,
        "app workspace shell bash",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=replace(RECALL, half_life_days=0, neighbors=0),
        now=NOW,
    )
    order = [h.chunk.turn_id for h in result.hits]
    assert order.index("s1-1") < order.index("s1-0")
    alone = recall(
        store,
        "environment_context sandbox",
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=replace(RECALL, half_life_days=0, neighbors=0),
        now=NOW,
    )
    assert alone.hits and alone.hits[0].chunk.turn_id == "s1-0"  # still found when it is the answer
