"""BM25 with a postings budget (funes.store.bm25): candidates from the rarest terms, every
candidate scored exactly as FTS5's bm25() scores it with all the query's terms."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder

from funes.chunks import chunk_turn
from funes.store import Filters, Store, fts_query
from funes.store.bm25 import phrase_count, tokenized
from funes.store.queries import varints
from funes.traces import Block, BlockType, Harness, Role, Turn

COMMON = ["pool", "timeout", "retry", "cache", "server"]


def _fill(store: Store, texts: list[str], harness: Harness = Harness.CLAUDE_CODE) -> None:
    emb = BagOfWordsEmbedder()
    store.stamp_model(emb.model_id, emb.dim)
    turns = [
        Turn(harness, f"s-{harness.value}", f"turn-{i}", i, "2026-01-01T10:00:00.000Z",
             Role.USER, (Block(BlockType.TEXT, t),), "/tmp/x.jsonl", cwd="/home/dev/app")
        for i, t in enumerate(texts)
    ]  # fmt: skip
    chunks = [c for t in turns for c in chunk_turn(t)]
    store.add(chunks, emb.embed([c.text for c in chunks]))


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    rare = [f"rare{i}" for i in range(40)]
    out = []
    for _ in range(n):
        words = rng.choices(COMMON, k=rng.randint(2, 30)) + rng.choices(rare, k=rng.randint(0, 2))
        if rng.random() < 0.1:
            words += ["max_connections"] * rng.randint(1, 3)
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


def _exact(store: Store, query: str) -> dict[int, float]:
    match = fts_query(query)
    return {
        int(r): float(s)
        for r, s in store.raw.execute(
            "select rowid, bm25(chunks_fts) from chunks_fts where chunks_fts match ?", (match,)
        )
    }


QUERIES = (
    "pool timeout rare3",
    "retry cache rare7 rare12 server",
    "max_connections pool rare1",
    "timeouts pooling rare30",  # stemmed forms
    "rare5",
)


def test_every_candidate_gets_the_score_fts5_gives_it_for_the_whole_query(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, _texts(1, 600))
        for query in QUERIES:
            exact = _exact(store, query)
            got = store.lexical(query, k=50, budget=40)
            assert got, query
            for rowid, score in got:
                assert abs(score - exact[rowid]) <= 1e-9 * max(1.0, abs(score)), (query, rowid)
            assert got == sorted(got, key=lambda r: (r[1], r[0])), "best first, ties by rowid"


def test_candidates_come_from_the_rarest_terms_and_the_common_ones_only_add_weight(
    tmp_path: Path,
) -> None:
    texts = _texts(2, 600)
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, texts)
        got = store.lexical("pool timeout rare3", k=600, budget=40)
        rows = store.fetch([r for r, _ in got])
        assert rows and all("rare3" in rows[r].text.split() for r, _ in got)
        exact = store.lexical("pool timeout rare3", k=600)
        # without a budget, rows with only the common words are found too
        assert len(exact) > len(got)
        assert sorted(r for r, _ in got) == sorted(
            r for r, _ in exact if "rare3" in store.fetch([r])[r].text.split()
        )


def test_a_query_within_the_budget_is_the_exact_query(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, _texts(3, 300))
        for query in QUERIES:
            assert store.lexical(query, k=20, budget=10_000) == store.lexical(query, k=20)


def test_filters_restrict_the_candidates(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, _texts(4, 300), Harness.CLAUDE_CODE)
        _fill(store, _texts(5, 300), Harness.CODEX)
        got = store.lexical(
            "pool timeout rare3", k=100, budget=40, filters=Filters(harness="codex")
        )
        rows = store.fetch([r for r, _ in got])
        assert got and {rows[r].harness for r, _ in got} == {"codex"}


def test_filters_that_leave_none_of_the_rare_terms_rows_get_the_exact_query(
    tmp_path: Path,
) -> None:
    """The rare terms stand for the query over the whole memory, not inside a filter: a
    filter keeping none of their rows (a rare word said only in another agent's sessions)
    must not empty the leg while the filtered rows hold the query's other terms."""
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, ["pool timeout flakyword"] * 3, Harness.CLAUDE_CODE)
        _fill(store, [f"pool timeout retry {i}" for i in range(60)], Harness.CODEX)
        codex = Filters(harness="codex")
        query = "pool timeout flakyword"
        exact = store.lexical(query, k=10, filters=codex)
        assert len(exact) == 10
        assert store.lexical(query, k=10, budget=5, filters=codex) == exact


def test_tokens_and_phrases_are_counted_as_fts5_counts_them() -> None:
    positions = tokenized(["set max_connections and max connections; MAX_CONNECTIONS again"])[0]
    assert phrase_count(positions, ["max", "connect"]) == 3  # porter: connections -> connect
    assert phrase_count(positions, ["connect", "max"]) == 1  # across the ";": tokens only
    assert phrase_count(positions, ["max", "set"]) == 0
    only = tokenized(["pool pools pooling timeout"], {"pool"})[0]
    assert only == {"pool": [0, 1, 2]}


def test_varints_decode_sqlite_s_format() -> None:
    assert varints(bytes([0x05, 0x81, 0x00, 0x7F])) == [5, 128, 127]
    nine = bytes([0xFF] * 8 + [0x01])  # the ninth byte carries 8 bits
    assert varints(nine) == [(((1 << 56) - 1) << 8) | 1]


def test_recall_without_a_vector_leg_keeps_the_exact_bm25_query(tmp_path: Path) -> None:
    """The cut cost quality when BM25 is the only leg (bench/README.md): a budget changes
    nothing there; beside a vector leg it is used."""
    from dataclasses import replace

    from funes.retrieval import recall
    from funes.settings import RECALL, Leg

    with Store.open(tmp_path / "m.db") as store:
        _fill(store, _texts(6, 400))
        query = "pool timeout rare3 server"
        lexical_only = replace(RECALL, rerank=False, legs=(Leg.BM25,), k=20, evidence=False)
        exact = recall(
            store,
            query,
            embedder=None,
            reranker=None,
            params=replace(lexical_only, bm25_budget=None),
        )
        budgeted = recall(store, query, embedder=None, reranker=None,
                          params=replace(lexical_only, bm25_budget=1))  # fmt: skip
        assert [h.chunk.id for h in budgeted.hits] == [h.chunk.id for h in exact.hits]
        assert any("rare3" not in h.chunk.text for h in exact.hits)
        both = recall(store, query, embedder=BagOfWordsEmbedder(), reranker=None,
                      params=replace(RECALL, rerank=False, bm25_budget=1, k=20))  # fmt: skip
        assert both.hits


def test_document_frequencies_are_recounted_once_the_index_changes(tmp_path: Path) -> None:
    """Remembered counts (funes.store.frequencies) serve repeated queries, shared with the
    sibling reader, and never outlive a change to the index: an insert, a delete, an edit."""
    with Store.open(tmp_path / "m.db") as store:
        _fill(store, ["pool timeout", "pool", "cache"])
        reader = store.reader()
        assert reader is not None
        assert store.document_frequencies(["pool", "cache"]) == (3, [2, 1])
        assert reader.document_frequencies(["pool", "cache"]) == (3, [2, 1])
        _fill(store, ["pool again"], Harness.CODEX)
        assert reader.document_frequencies(["pool", "cache"]) == (4, [3, 1])
        rowid = store.lexical("cache", k=1)[0][0]
        with store._tx():
            # one token for one: the row count and the token total stay; the index does not
            store.raw.execute("update chunks set text = 'pool' where rowid = ?", (rowid,))
        assert store.document_frequencies(["pool", "cache"]) == (4, [4, 0])
        with store._tx():
            store.raw.execute("delete from chunks where rowid = ?", (rowid,))
        assert store.document_frequencies(["pool", "cache"]) == (3, [3, 0])


def test_document_frequencies_are_read_in_one_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer committing while the counts are read (the concurrency test: `math domain
    error` in a reader's IDF) must not give a term more chunks than the total says, nor be
    remembered under the older index state."""
    from funes.store import frequencies

    path = tmp_path / "m.db"
    with Store.open(path) as store:
        _fill(store, ["pool timeout", "cache"])
    real_totals = frequencies.fts_totals
    wrote: list[bool] = []

    def totals_then_a_commit(raw: object) -> tuple[int, int]:
        counted = real_totals(raw)
        if not wrote:  # another process's writer commits between the reads
            wrote.append(True)
            with Store.open(path) as writer:
                _fill(writer, ["pool"] * 6, Harness.CODEX)
        return counted

    monkeypatch.setattr(frequencies, "fts_totals", totals_then_a_commit)
    with Store.open(path, readonly=True) as reader:
        total, (pool,) = reader.document_frequencies(["pool"])
        assert wrote and (total, pool) == (2, 1)  # the memory as it was when the read began
        assert reader.document_frequencies(["pool"]) == (8, [7])  # then as it is now


def test_idf_of_counts_that_disagree_is_the_floor_not_an_error() -> None:
    """One IDF for the BM25 leg and the evidence stage (funes.store.idf)."""
    import math

    from funes.store import idf

    assert idf(3, 10) == 1e-6
    assert idf(0, 0) == idf(0, 3) == 1e-6  # an empty memory: no term weighs anything
    assert idf(100, 1) == pytest.approx(math.log(99.5 / 1.5))
