"""--project, --since/--until and --session restrict each candidate leg before its top-k cut.

The memory is built so that a post-filter of a top-k list would find nothing: 40 turns of
another project match the query better (more query words) than the 3 turns in scope, and the
legs are cut at 5 candidates. Only a filter applied inside the BM25 query and inside the
sqlite-vec KNN returns the turns in scope.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from support.memory import memory_with

from funes.commands.scope import Scope, filters_for, match_session, parse_time, project_scope
from funes.errors import UsageError
from funes.retrieval import get_turns, recall
from funes.settings import RECALL, Leg
from funes.store import NO_FILTERS, Filters, ProjectScope, Store, project_matches
from funes.traces import Block, BlockType, Harness, Role, Turn

NOW = datetime(2026, 6, 1, tzinfo=UTC)
QUERY = "kestrel cache eviction policy"


def _turn(session: str, seq: int, text: str, *, cwd: str, ts: str) -> Turn:
    return Turn(
        harness=Harness.CLAUDE_CODE,
        session_id=session,
        turn_id=f"{session}-t{seq}",
        seq=seq,
        ts=ts,
        role=Role.ASSISTANT,
        blocks=(Block.make(BlockType.TEXT, text),),
        source_path=f"/tmp/{session}.jsonl",
        cwd=cwd,
    )


@pytest.fixture
def memory(tmp_path: Path) -> Store:
    loud = [
        _turn(
            f"loud-{i:02d}",
            0,
            f"kestrel cache eviction policy kestrel cache eviction {i}",
            cwd="/home/dev/noisy",
            ts="2026-05-20T10:00:00.000Z",
        )
        for i in range(40)
    ]
    quiet = [
        _turn("quiet-a", 0, "the kestrel policy note", cwd="/home/dev/shop", ts="2026-03-01T09:00:00.000Z"),
        _turn("quiet-a", 1, "eviction was settled", cwd="/home/dev/shop/api", ts="2026-03-02T09:00:00.000Z"),
        _turn("quiet-b", 0, "cache kestrel later", cwd="/home/dev/shop", ts="2026-04-10T09:00:00.000Z"),
    ]  # fmt: skip
    return memory_with(tmp_path / "m.db", [*loud, *quiet], BagOfWordsEmbedder())


def _sessions(store: Store, rowids: list[int]) -> set[str]:
    return {c.session_id for c in store.fetch(rowids).values()}


def test_both_legs_filter_by_project_before_their_top_k(memory: Store) -> None:
    scope = Filters(project=ProjectScope(path="/home/dev/shop"))
    unfiltered = [r for r, _ in memory.lexical(QUERY, k=5)]
    assert _sessions(memory, unfiltered) <= {f"loud-{i:02d}" for i in range(40)}
    bm25 = [r for r, _ in memory.lexical(QUERY, k=5, filters=scope)]
    vector = BagOfWordsEmbedder().embed_query(QUERY)
    knn = [r for r, _ in memory.semantic(vector, k=5, filters=scope)]
    assert _sessions(memory, bm25) == {"quiet-a", "quiet-b"}
    assert len(bm25) == 3  # every chunk in scope that matches a word
    assert _sessions(memory, knn) == {"quiet-a", "quiet-b"} and len(knn) == 3


def test_both_legs_filter_by_time_and_by_session(memory: Store) -> None:
    vector = BagOfWordsEmbedder().embed_query(QUERY)
    march = Filters(since="2026-03-01T00:00:00.000Z", until="2026-04-01T00:00:00.000Z")
    for leg in (
        memory.lexical(QUERY, k=5, filters=march),
        memory.semantic(vector, k=5, filters=march),
    ):
        assert _sessions(memory, [r for r, _ in leg]) == {"quiet-a"}
    one = Filters(session="quiet-b")
    for leg in (memory.lexical(QUERY, k=5, filters=one), memory.semantic(vector, k=5, filters=one)):
        assert _sessions(memory, [r for r, _ in leg]) == {"quiet-b"}


def test_recall_with_a_scope_returns_the_hits_in_scope_at_a_shallow_leg_depth(
    memory: Store,
) -> None:
    params = replace(RECALL, leg_depth=5, candidates=5, k=3, neighbors=0)
    filters = filters_for(Scope(project="/home/dev/shop/api", since="2026-03-02"), memory, now=NOW)
    result = recall(
        memory, QUERY, embedder=BagOfWordsEmbedder(), reranker=None, params=params,
        filters=filters, now=NOW,
    )  # fmt: skip
    assert [h.chunk.turn_id for h in result.hits] == ["quiet-a-t1"]
    for legs in ((Leg.BM25,), (Leg.VECTOR,)):
        only = recall(
            memory, QUERY, embedder=BagOfWordsEmbedder(), reranker=None,
            params=replace(params, legs=legs), filters=Filters(project=ProjectScope(name="shop")),
            now=NOW,
        )  # fmt: skip
        assert {h.chunk.session_id for h in only.hits} == {"quiet-a", "quiet-b"}, legs


def test_get_counts_and_shows_only_turns_in_scope(memory: Store) -> None:
    everything = get_turns(memory, "quiet-a", "quiet-a-t1", window=3)
    assert [t.turn_id for t in everything] == ["quiet-a-t0", "quiet-a-t1"]
    later = get_turns(
        memory, "quiet-a", "quiet-a-t1", window=3,
        filters=Filters(since="2026-03-02T00:00:00.000Z"),
    )  # fmt: skip
    assert [t.turn_id for t in later] == ["quiet-a-t1"]
    assert (
        get_turns(
            memory, "quiet-a", "quiet-a-t0", filters=Filters(since="2026-03-02T00:00:00.000Z")
        )
        == []
    )


def test_a_short_session_id_resolves_when_it_names_one_session(memory: Store) -> None:
    assert filters_for(Scope(session="quiet-b"), memory).session == "quiet-b"
    assert filters_for(Scope(session="loud-07"), memory).session == "loud-07"
    with pytest.raises(UsageError, match="several sessions"):
        filters_for(Scope(session="quiet"), memory)
    with pytest.raises(UsageError, match="no session"):
        filters_for(Scope(session="heron"), memory)


def test_times_parse_as_dates_days_ages_and_iso_times() -> None:
    assert parse_time("2026-04-02T15:30Z") == "2026-04-02T15:30:00.000Z"
    assert parse_time("2026-04-02T15:30:00+02:00") == "2026-04-02T13:30:00.000Z"
    assert parse_time("7d", now=NOW) == "2026-05-25T00:00:00.000Z"
    assert parse_time("12h", now=NOW) == "2026-05-31T12:00:00.000Z"
    assert parse_time("2w", now=NOW) == "2026-05-18T00:00:00.000Z"
    day = parse_time("2026-04-02", now=NOW)
    end = parse_time("2026-04-02", end=True, now=NOW)
    start, stop = datetime.fromisoformat(day), datetime.fromisoformat(end)
    assert (stop - start).total_seconds() == 86400  # a bare date as --until includes the day
    for bad in ("", "soon", "2026-13-45", "3 fortnights"):
        with pytest.raises(UsageError, match="not a time"):
            parse_time(bad)
    with pytest.raises(UsageError, match="is not after"):
        filters_for(Scope(since="2026-04-02", until="2026-04-01"), None)  # type: ignore[arg-type]


def test_a_project_path_inside_a_git_repository_means_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / "api" / "src").mkdir(parents=True)
    assert project_scope(str(repo / "api" / "src")) == ProjectScope(path=str(repo.resolve()))
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_scope(str(plain)) == ProjectScope(path=str(plain.resolve()))
    assert project_scope("shop") == ProjectScope(name="shop")
    with pytest.raises(UsageError):
        project_scope("  ")


@pytest.mark.parametrize(
    ("project", "cwd", "workdir", "matches"),
    [
        (ProjectScope(path="/home/dev/shop"), "/home/dev/shop", "-home-dev-shop", True),
        (ProjectScope(path="/home/dev/shop"), "/home/dev/shop/api", "-home-dev-shop-api", True),
        (ProjectScope(path="/home/dev/shop"), "/home/dev/shopfront", "-home-dev-shopfront", False),
        (ProjectScope(path="/home/dev/shop"), None, "-home-dev-shop", True),
        (ProjectScope(path="/home/dev/sh_p"), "/home/dev/shXp", "-home-dev-shXp", False),
        (ProjectScope(name="shop"), "/srv/shop", "-srv-shop", True),
        (ProjectScope(name="shop"), "/srv/shop/api", "-srv-shop-api", False),
        (ProjectScope(name="shop"), None, "-home-dev-shop", True),
        (ProjectScope(name="sh%p"), "/srv/shXp", "-srv-shXp", False),
    ],
)
def test_the_sql_and_the_python_project_rules_agree(
    tmp_path: Path, project: ProjectScope, cwd: str | None, workdir: str, matches: bool
) -> None:
    turn = _turn("s", 0, "kestrel", cwd=cwd or "", ts="2026-01-01T00:00:00.000Z")
    if cwd is None:
        turn = replace(turn, cwd=None, source_path=f"/x/projects/{workdir}/s.jsonl")
    with memory_with(tmp_path / "p.db", [turn], BagOfWordsEmbedder()) as store:
        stored = next(iter(store.fetch([1]).values()))
        assert stored.workdir == workdir
        found = store.lexical("kestrel", k=5, filters=Filters(project=project))
    assert project_matches(project, cwd, workdir) is matches
    assert bool(found) is matches


def test_the_label_a_recall_header_shows_names_its_session(tmp_path: Path) -> None:
    # a UUIDv7 session id (pi, Codex) is labelled by its last 8 hex digits, not its first 8:
    # `get <label> <turn>` copied from a recall header must still find it
    pi_id = "2025-11-03T09-12-44-301Z_019a4b5c-6d7e-7f80-9a1b-2c3d4e5f6a7b"
    other = "2025-11-03T09-12-44-301Z_019a4b5c-6d7e-7f80-9a1b-2c3d4e5f0000"
    store = memory_with(
        tmp_path / "m.db",
        [
            _turn(pi_id, 0, "glaze kiln", cwd="/home/dev/shop", ts="2026-03-01T09:00:00.000Z"),
            _turn(other, 0, "glaze kiln", cwd="/home/dev/shop", ts="2026-03-01T09:00:00.000Z"),
        ],
        BagOfWordsEmbedder(),
    )
    assert match_session(store, "4e5f6a7b") == pi_id
    assert match_session(store, "4e5f0000") == other
    assert match_session(store, "ffffffff") is None


def test_both_legs_filter_by_any_of_several_block_types_before_their_top_k(
    tmp_path: Path,
) -> None:
    # `--type thinking --type tool_result` kept only the last type; both legs must draw from
    # chunks of either type, before their top-k cut (40 text turns match the query better)
    loud = [
        _turn(f"loud-{i:02d}", 0, f"{QUERY} {QUERY} {i}", cwd="/w", ts="2026-05-20T10:00:00.000Z")
        for i in range(40)
    ]

    def quiet(seq: int, btype: BlockType, text: str) -> Turn:
        turn = _turn("quiet", seq, text, cwd="/w", ts="2026-03-01T09:00:00.000Z")
        return replace(turn, blocks=(Block.make(btype, text),))

    memory = memory_with(
        tmp_path / "m.db",
        [
            *loud,
            quiet(0, BlockType.THINKING, "the kestrel policy, thought over"),
            quiet(1, BlockType.TOOL_RESULT, "[tool_result Bash] kestrel cache evicted"),
            quiet(2, BlockType.TOOL_USE, "[tool_use Bash] kestrel eviction policy"),
        ],
        BagOfWordsEmbedder(),
    )
    both = filters_for(Scope(), memory, block_types=["thinking", "tool_result", "thinking"])
    assert both.block_types == ("thinking", "tool_result")
    vector = BagOfWordsEmbedder().embed_query(QUERY)
    for leg in (
        memory.lexical(QUERY, k=5, filters=both),
        memory.semantic(vector, k=5, filters=both),
    ):
        found = memory.fetch([r for r, _ in leg]).values()
        assert sorted(c.block_type for c in found) == ["thinking", "tool_result"]
    result = recall(
        memory, QUERY, embedder=BagOfWordsEmbedder(), reranker=None,
        params=replace(RECALL, leg_depth=5, candidates=5, neighbors=0), filters=both, now=NOW,
    )  # fmt: skip
    assert {h.chunk.block_type for h in result.hits} == {"thinking", "tool_result"}
    one = Filters(block_types=("tool_use",))  # a type the vector leg skips unless named
    assert [c.block_type for c in memory.fetch([r for r, _ in memory.semantic(vector, k=5, filters=one)]).values()] == ["tool_use"]  # fmt: skip


def test_the_vector_leg_leaves_tool_calls_out_before_its_top_k_not_after(tmp_path: Path) -> None:
    # `block_type not in ('tool_use')` is not a constraint sqlite-vec applies while it ranks:
    # SQLite dropped the tool calls from the k nearest afterwards, and 40 tool calls nearer
    # the query than the 5 prose chunks left the leg 2 of its 5 candidates
    def one(i: int, btype: BlockType, text: str) -> Turn:
        turn = _turn(f"s{i:02d}", 0, text, cwd="/w", ts="2026-03-01T09:00:00.000Z")
        return replace(turn, blocks=(Block.make(btype, text),))

    calls = [one(i, BlockType.TOOL_USE, f"{QUERY} {i}") for i in range(40)]
    prose = [one(50 + i, BlockType.TEXT, f"kestrel note {i}") for i in range(5)]
    memory = memory_with(tmp_path / "m.db", [*calls, *prose], BagOfWordsEmbedder())
    vector = BagOfWordsEmbedder().embed_query(QUERY)
    for filters in (NO_FILTERS, Filters(harness="claude_code"), Filters(project=ProjectScope(path="/w"))):  # fmt: skip
        found = memory.fetch([r for r, _ in memory.semantic(vector, k=5, filters=filters)])
        assert sorted(c.block_type for c in found.values()) == ["text"] * 5, filters
