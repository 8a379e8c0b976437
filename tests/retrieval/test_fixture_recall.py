"""The main job on the shipped fixtures: `funes index` then `funes recall` returns the seeded
passage first (fixtures/README.md), with a working `→ get` line; one question only the vector
leg can answer, one BM25 answers first and the vector leg does not. Real CLI, real SQLite, real
offline ONNX embedder."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from funes.inference import MINILM_L6_INT8_PKG, load_embedder
from funes.store import Store

pytestmark = pytest.mark.models

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

SEEDED = [
    (
        "Why did tiny pigment quantities disappear when mixing?",
        "2026-03-21T10-20-33-118Z_019cd9f0-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
        {"f6a7b8c9"},
    ),
    (
        "pool_recycle_seconds",
        "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb",
        {"8f558f91-7ab8-5029-8a6a-e9420669d3d6", "6c888c3a-0f6a-5bf6-bc76-aef3652bdb2f"},
    ),
    (
        "error KLN-7731",
        "019cd3a4-5b2e-7c41-9a7d-3e5f6a7b8c9d",
        {"out-8941c50336ebb45b", "msg-c6413632f792f3df"},
    ),
    (
        "why did the database connection fail and how was it fixed",
        "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb",
        {"8f558f91-7ab8-5029-8a6a-e9420669d3d6"},
    ),
    (
        "Where are the kiln firing logs backed up to, and how long are they kept?",
        "20260317_201533_7c1e9a",
        {"5", "2"},
    ),
    ("Why was electricity zero in the February cost report?", "pq-kilnbook-0001", {"1", "5"}),
]


# Seeded questions whose best evidence stays under the support threshold: the paraphrase shares
# no word or stem with its passage (fixtures/README.md), so its support is the cosine's share
# alone (0.24 < 0.32 with all-minilm-l6-v2-int8)
WEAK = {"Why did tiny pigment quantities disappear when mixing?"}


def _funes(*args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "funes", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("fixture-memory")
    # Module scope runs before the per-test isolation: set what the CLI needs explicitly.
    keys = ("FUNES_HOME", "HOME", "FUNES_EMBEDDER", "FUNES_RERANKER", "HF_HUB_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    (home / "home").mkdir()
    os.environ.update(
        FUNES_HOME=str(home),
        HOME=str(home / "home"),
        FUNES_EMBEDDER="all-minilm-l6-v2-int8",
        FUNES_RERANKER="none",
        HF_HUB_OFFLINE="1",
    )
    try:
        _funes("index", str(FIXTURES), "--yes")
        db = home / "hermes-state.db"
        with sqlite3.connect(db) as conn:
            conn.executescript((FIXTURES / "hermes" / "state.sql").read_text())
        _funes("index", str(db), "--yes")
        yield home
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(autouse=True)
def _use_indexed_home(indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUNES_HOME", str(indexed))


@pytest.mark.parametrize(
    ("question", "session", "turns"), SEEDED, ids=[q[:30] for q, _, _ in SEEDED]
)
def test_a_seeded_question_recalls_its_passage_first_with_a_working_get_line(
    question: str, session: str, turns: set[str]
) -> None:
    out = _funes("recall", question, "-k", "3").stdout
    if question in WEAK:
        # the default recall says it holds no supporting passage; --all shows the candidates,
        # the right one first (fixtures/README.md says so)
        assert out.startswith("no supporting passage"), out
        out = _funes("recall", question, "-k", "3", "--all").stdout
        assert out.startswith("no supporting passage"), out
        out = out.split("\n", 1)[1]
    first = out.split("---\n")[0].splitlines()
    get_line = first[1].split()
    assert get_line[:2] == ["→", "get"] and get_line[4:] == ["--memory", "local"]
    assert get_line[2] == session, out
    assert get_line[3] in turns, out
    got = _funes("get", session, get_line[3], "--window", "1", "--format", "agent").stdout
    assert f"turn={get_line[3]}" in got
    assert got.count("\n---\n") + got.startswith("---") >= 2, "the turn and at least one neighbour"


def _rank(rowids: list[int], store: Store, session: str, turns: set[str]) -> int | None:
    rows = store.fetch(rowids)
    for i, rowid in enumerate(rowids, 1):
        if rows[rowid].session_id == session and rows[rowid].turn_id in turns:
            return i
    return None


def test_the_paraphrase_is_found_only_by_the_vector_leg_and_the_error_code_first_by_bm25(
    indexed: Path,
) -> None:
    """The paraphrase shares no term with its answer; the bare error code is an identifier
    the vector leg ranks below BM25's first (the 104-token recipe, 7f30f6b, puts it third
    where the 128-token one left it out of the top three)."""
    embedder = load_embedder(MINILM_L6_INT8_PKG)
    with Store.open(indexed / "data" / "memory.db", readonly=True) as store:
        question, session, turns = SEEDED[0]
        assert _rank([r for r, _ in store.lexical(question, k=50)], store, session, turns) is None
        assert (
            _rank(
                [r for r, _ in store.semantic(embedder.embed_query(question), k=3)],
                store,
                session,
                turns,
            )
            == 1
        )
        _, session, turns = SEEDED[2]
        question = "KLN-7731"  # the bare error code: an identifier, no prose around it
        assert _rank([r for r, _ in store.lexical(question, k=3)], store, session, turns) == 1
        vector_rank = _rank(
            [r for r, _ in store.semantic(embedder.embed_query(question), k=50)],
            store,
            session,
            turns,
        )
        assert vector_rank is None or vector_rank > 1
