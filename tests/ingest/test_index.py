from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from support.claude import SESSION, conversation, write_session
from support.cli import Ran

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.retrieval import recall
from funes.settings import INDEX
from funes.store import Store
from funes.traces import AgentHomes, discover

PAIRS = [
    ("user", "Why does the checkout page time out under load?"),
    ("assistant", "The payment webhook handler holds a row lock while it calls the bank API."),
    ("user", "How do we fix it?"),
    ("assistant", "Move the bank call out of the transaction and retry with an idempotency key."),
]


def _job(store: Store, emb: BagOfWordsEmbedder, params: object = INDEX, **kw: object) -> IndexJob:
    return IndexJob(store=store, embedder=emb, scanner=RuleScanner(), params=params, **kw)  # type: ignore[arg-type]


def test_reindexing_an_unchanged_transcript_reads_and_embeds_nothing(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    emb = BagOfWordsEmbedder()
    sources = discover(AgentHomes.resolve())
    with Store.open(tmp_path / "m.db") as store:
        first = index(sources, _job(store, emb))
        embedded = emb.texts_embedded
        again = index(sources, _job(store, emb))
    assert first.chunks_written == 4 and first.units_indexed == 1
    assert again.chunks_written == 0 and again.units_unchanged == 1 and again.turns == 0
    assert emb.texts_embedded == embedded


def test_a_grown_transcript_adds_only_its_new_turns(isolated_env: Path, tmp_path: Path) -> None:
    path = write_session(isolated_env, conversation(PAIRS[:2]))
    emb = BagOfWordsEmbedder()
    sources = discover(AgentHomes.resolve())
    with Store.open(tmp_path / "m.db") as store:
        index(sources, _job(store, emb))
        before = emb.texts_embedded
        path.write_text("\n".join(conversation(PAIRS)) + "\n")
        report = index(sources, _job(store, emb))
        assert report.chunks_written == 2 and report.chunks_existing == 2
        assert emb.texts_embedded - before == 2


def test_recall_still_works_after_the_agent_deletes_its_transcript(
    isolated_env: Path, tmp_path: Path
) -> None:
    path = write_session(isolated_env, conversation(PAIRS))
    with Store.open(tmp_path / "m.db") as store:
        index(discover(AgentHomes.resolve()), _job(store, BagOfWordsEmbedder()))
        path.unlink()
        hits = recall(
            store, "idempotency key bank call", embedder=BagOfWordsEmbedder(), reranker=None
        ).hits
    assert "idempotency key" in hits[0].chunk.text


def test_a_transcript_that_disappears_mid_run_is_a_failure_not_a_crash(
    isolated_env: Path, tmp_path: Path
) -> None:
    """A unit that cannot be opened is recorded as failed and not marked indexed (retry next run)."""
    path = write_session(isolated_env, conversation(PAIRS))
    sources = discover(AgentHomes.resolve())
    units = list(sources[0].units())
    path.unlink()

    class Vanishing:
        harness = sources[0].harness

        def units(self):  # type: ignore[no-untyped-def]
            return units

        def read(self, unit, stats):  # type: ignore[no-untyped-def]
            return sources[0].read(unit, stats)

        def unit_for_hook(self, payload):  # type: ignore[no-untyped-def]
            return None

    with Store.open(tmp_path / "m.db") as store:
        report = index([Vanishing()], _job(store, BagOfWordsEmbedder()))
        assert len(report.failures) == 1 and "FileNotFoundError" in report.failures[0].error
        assert store.unit(units[0].key) is None
        write_session(isolated_env, conversation(PAIRS))
        assert (
            index(discover(AgentHomes.resolve()), _job(store, BagOfWordsEmbedder())).chunks_written
            == 4
        )


def test_a_secret_in_a_transcript_is_redacted_before_it_is_stored(
    isolated_env: Path, tmp_path: Path
) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    write_session(isolated_env, conversation([("user", f"my key is {key} please use it")]))
    with Store.open(tmp_path / "m.db") as store:
        report = index(discover(AgentHomes.resolve()), _job(store, BagOfWordsEmbedder()))
        texts = [r[0] for r in store.raw.execute("select text from chunks")]
    assert report.redactions == 1
    assert texts == ["my key is [REDACTED:aws_access_key_id] please use it"]


def test_the_redaction_count_covers_only_the_chunks_the_run_stored(
    isolated_env: Path, tmp_path: Path
) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    other = "7c1d2e3f-0a4b-4c5d-8e9f-1a2b3c4d5e6f"
    forgotten = write_session(isolated_env, conversation([("user", "the heron pier")]))
    kept = write_session(
        isolated_env,
        conversation([("user", f"old key {key} here")], session=other),
        session=other,
    )
    sources = discover(AgentHomes.resolve())
    with Store.open(tmp_path / "m.db") as store:
        first = index(sources, _job(store, BagOfWordsEmbedder()))
        assert first.redactions == 1
        store.forget([SESSION])
        # the forgotten session grows a secret (read, never stored); the kept one a turn with
        # another secret (its old turn, read again, was stored and counted before)
        secret = [("user", "the heron pier"), ("assistant", f"use {key} for the pier")]
        forgotten.write_text("\n".join(conversation(secret)) + "\n")
        grown = [("user", f"old key {key} here"), ("assistant", f"new key {key} there")]
        kept.write_text("\n".join(conversation(grown, session=other)) + "\n")
        report = index(sources, _job(store, BagOfWordsEmbedder()))
        stored = [r[0] for r in store.raw.execute("select text from chunks order by rowid")]
    assert report.forgotten == 2 and report.chunks_written == 1
    assert stored == [
        "old key [REDACTED:aws_access_key_id] here",
        "new key [REDACTED:aws_access_key_id] there",
    ]
    assert report.redactions == 1  # the one secret in what this run stored


def test_without_sqlite_vec_funes_indexes_and_recalls_lexically_with_a_warning(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sqlite_vec.py").write_text("raise ImportError('sqlite-vec blocked by the test')\n")
    env = dict(os.environ, PYTHONPATH=str(blocker))
    run = [sys.executable, "-m", "funes"]
    idx = subprocess.run(
        [*run, "index", "--yes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert idx.returncode == 0, idx.stderr
    assert "vector search unavailable" in idx.stderr
    rec = subprocess.run(
        [*run, "recall", "idempotency key"], env=env, capture_output=True, text=True, timeout=120
    )
    assert rec.returncode == 0, rec.stderr
    assert "idempotency key" in rec.stdout
    assert "lexical" in rec.stderr


def test_an_unloadable_model_is_reported_once_and_the_chunks_are_stored_without_vectors(
    isolated_env: Path, tmp_path: Path
) -> None:
    # it is no failure of a unit (every unit would fail the same way); the run used to stop
    # at the first vectors it owed, losing its report and the tiers after the prose
    from funes.errors import ModelUnavailable

    class Unloadable(BagOfWordsEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            raise ModelUnavailable("weights not cached")

    write_session(isolated_env, conversation(PAIRS))
    with Store.open(tmp_path / "m.db") as store:
        report = index(discover(AgentHomes.resolve()), _job(store, Unloadable()))
        assert report.failures == [] and report.units_indexed == 1
        assert report.model_unavailable is not None
        assert report.model_unavailable.message == "weights not cached"
        assert report.chunks_written > 0 and report.vectors_owed == report.chunks_written
        assert report.vectors_backfilled == 0


def test_a_run_without_thinking_does_not_stop_a_later_run_from_adding_it(
    isolated_env: Path, tmp_path: Path
) -> None:
    from dataclasses import replace

    lines = conversation(PAIRS)
    thinking = json.loads(lines[1])
    thinking["message"]["content"].insert(
        0,
        {
            "type": "thinking",
            "thinking": "the row lock is held across the bank call",
            "signature": "x",
        },
    )
    lines[1] = json.dumps(thinking)
    write_session(isolated_env, lines)
    sources = discover(AgentHomes.resolve())
    no_thinking = replace(INDEX, include_thinking=False)
    with Store.open(tmp_path / "m.db") as store:

        def count() -> int:
            return store.raw.execute(
                "select count(*) from chunks where block_type = 'thinking'"
            ).fetchone()[0]

        index(sources, _job(store, BagOfWordsEmbedder(), params=no_thinking))
        assert count() == 0
        again = index(sources, _job(store, BagOfWordsEmbedder(), params=no_thinking))
        assert again.turns == 0, "an unchanged unit is not re-read by another run without thinking"
        index(sources, _job(store, BagOfWordsEmbedder()))
        assert count() == 1
        assert index(sources, _job(store, BagOfWordsEmbedder(), params=no_thinking)).turns == 0


def test_chunks_are_stored_first_and_embedded_once_prose_first(
    isolated_env: Path, tmp_path: Path
) -> None:
    """What a budget leaves is owed, not lost: a run that stores without embedding (no budget
    left, or no embedder) records every chunk in vectors_owed; the next run embeds each once,
    prose (text, thinking) first, then tool output, tool calls last."""
    from dataclasses import replace

    from fakes import RecordingEmbedder
    from support.claude import DEFAULT_TURNS, write_claude_session

    from funes.ingest import IndexJob, index
    from funes.redact import RuleScanner
    from funes.settings import INDEX
    from funes.store import Store
    from funes.traces import AgentHomes, discover

    write_claude_session(isolated_env / ".claude", DEFAULT_TURNS)
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        store.stamp_model(emb.model_id, emb.dim)
        lexical = IndexJob(store, None, RuleScanner(), params=replace(INDEX, budget_s=0))
        first = index(discover(AgentHomes.resolve()), lexical)
        total = store.stats().chunks
        assert first.chunks_written == total > 0 and store.owed_total() == total
        assert store.lexical("busy_timeout", k=5)  # BM25 finds them before any vector
        again = replace(lexical, embedder=emb)
        second = index(discover(AgentHomes.resolve()), again)
        assert second.chunks_written == 0 and second.vectors_backfilled == total
        assert store.owed_total() == 0 and len(emb.inputs) == total
        kinds = [
            "prose" if not t.startswith(("[tool_use", "[tool_result")) else t.split()[0][1:]
            for t in (x.split("\n", 1)[-1] for x in emb.inputs)
        ]
        assert kinds == sorted(kinds, key=["prose", "tool_result", "tool_use"].index), kinds
        third = index(discover(AgentHomes.resolve()), again)
        assert third.vectors_backfilled == 0 and len(emb.inputs) == total


def test_the_readmes_offline_fix_works_after_a_first_index_without_model_weights(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """Offline, the default model is not cached: the first `funes index` fails with a hint to
    use the offline weights. Following it must work: the memory the failed run created is
    taken over by the offline model, not refused as "built with" a model that never wrote."""
    write_session(isolated_env, conversation(PAIRS))
    offline = os.environ["FUNES_EMBEDDER"]  # the offline weights the suite runs with
    monkeypatch.delenv("FUNES_EMBEDDER")  # the users' default model
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    failed = run("index", "--yes")
    assert failed.returncode != 0 and "FUNES_EMBEDDER=" in failed.stderr
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    fixed = run("index", "--yes")
    assert fixed.returncode == 0, fixed.stderr
    status = json.loads(run("status", "--json").stdout)
    assert status["without_vectors"] == 0 and status["chunks"] == len(PAIRS)
    found = run("recall", "--all", "how was the bank call timeout fixed")
    assert found.returncode == 0 and "idempotency key" in found.stdout


def test_a_prose_only_session_is_complete_after_the_prose_pass(
    isolated_env: Path, tmp_path: Path
) -> None:
    """A budgeted first index reads prose first; a session with no tool blocks has nothing
    for the later passes, so it is not re-read for them nor reported as not indexed (a
    55k-chunk prose history showed '1100 not indexed' next to 'owed: 0 chunks from 0 files',
    and the next index re-read every file). A session with tool blocks still owes them."""
    from support.claude import DEFAULT_TURNS, write_claude_session

    from funes.ingest import TOP_TIER, owed
    from funes.ingest.indexing import IndexReport, index_unit

    prose = write_session(isolated_env, conversation(PAIRS))
    write_claude_session(isolated_env / ".claude", DEFAULT_TURNS)
    with Store.open(tmp_path / "m.db") as store:
        job = _job(store, BagOfWordsEmbedder())
        units = [(s, u) for s in discover(AgentHomes.resolve()) for u in s.units()]
        assert len(units) == 2
        for source, unit in units:
            written, ok = index_unit(source, unit, job, tier=0, report=IndexReport())
            assert ok and written
        still_owed = [u.key for _, u in units if owed(store, u, TOP_TIER)]
        assert len(still_owed) == 1 and prose.name not in still_owed[0]
        kinds = {r[0] for r in store.raw.execute("select distinct block_type from chunks")}
        assert kinds <= {"text", "thinking"}  # the tool blocks wait for their own passes


def test_each_pass_redacts_only_the_blocks_it_may_store(isolated_env: Path, tmp_path: Path) -> None:
    """A budgeted sweep reads a unit once per tier. A turn the memory does not know yet has
    nothing stored to compare, so each pass redacts only its own blocks: every block once (the
    prose pass redacted the tool blocks too, ~a third of its work). A re-read of a grown
    session compares the turns it knows in full (their tool blocks twice: that first read and
    their own pass), the new turns' blocks once; what it stores is what a fresh index of the
    final file stores."""
    from collections import Counter

    from support.claude import DEFAULT_TURNS, write_claude_session

    from funes.traces import BlockType, ReadStats

    class Counting(RuleScanner):
        def __init__(self) -> None:
            super().__init__()
            self.scanned: Counter[str] = Counter()

        def scan(self, text):  # type: ignore[no-untyped-def]
            self.scanned[text] += 1
            return super().scan(text)

    def blocks() -> list[tuple[str, BlockType]]:
        return [
            (block.text, block.type)
            for source in discover(AgentHomes.resolve())
            for unit in source.units()
            for turn in source.read(unit, ReadStats())
            for block in turn.blocks
            if block.text
        ]

    def stored(store: Store) -> list[tuple[str, str]]:
        return sorted(store.raw.execute("select id, text from chunks").fetchall())

    home = isolated_env / ".claude"
    session = write_claude_session(home, DEFAULT_TURNS)
    first = blocks()
    assert len(first) > 3 and {t for _, t in first} > {BlockType.TEXT}
    scanner = Counting()
    with Store.open(tmp_path / "m.db") as store:
        job = IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=scanner)
        report = index(discover(AgentHomes.resolve()), job)
        assert report.failures == [] and report.chunks_written == store.stats().chunks > 0
        assert {t: scanner.scanned[t] for t, _ in first} == {t: 1 for t, _ in first}

        more = [
            ("assistant", "tool_use", ("Bash", {"command": "pytest tests/test_import_lock.py"})),
            ("user", "tool_result", "1 passed in 0.41s: the importer waited for the lock"),
            ("assistant", "text", "The regression test passes: the importer waits for the lock."),
        ]
        write_claude_session(home, DEFAULT_TURNS + more, session_id=session.session_id)
        scanner.scanned.clear()
        report = index(discover(AgentHomes.resolve()), job)
        assert report.failures == [] and report.chunks_written == 3
        known = {t: 1 if k in (BlockType.TEXT, BlockType.THINKING) else 2 for t, k in first}
        new = {t: 1 for t, _ in blocks() if t not in known}
        assert len(new) == 3
        assert {t: scanner.scanned[t] for t in known | new} == known | new
        grown = stored(store)
    with Store.open(tmp_path / "fresh.db") as fresh:
        index(discover(AgentHomes.resolve()), IndexJob(fresh, BagOfWordsEmbedder(), RuleScanner()))
        assert stored(fresh) == grown
