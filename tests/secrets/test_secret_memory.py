"""End to end: secrets in a real Claude Code transcript never surface from the memory.

The transcript (native JSONL) carries every fake secret of the corpus; it goes through the
real `funes.ingest.index` into a real SQLite memory. Nothing secret may be found in stored
text, the raw database bytes, the FTS vocabulary, `get`, `recall` output or a push payload.
A memory indexed without redaction (older rules) is guarded on read and fixed by scrub.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from secret_bench import NullScanner
from secret_corpus import lookalike_cases, secret_cases, transcript_blocks, write_claude_session

from funes.commands.scrub import gate_store
from funes.commands.status import run_status
from funes.ingest import IndexJob, index
from funes.ingest.embed_input import stored_embedding_inputs
from funes.ingest.scrub import scrub
from funes.memory import Runtime, parse_memory
from funes.redact import RULES_VERSION, Scanner, default_scanner, gate_scanner
from funes.retrieval import get_turns, recall
from funes.store import Store
from funes.traces import sources_for_path

CASES = secret_cases()
VALUES = [v for c in CASES for v in c.values]


def _texts() -> list[str]:
    filler = transcript_blocks(60_000, seed=9)
    texts: list[str] = []
    for i, case in enumerate(CASES):
        texts.append(case.text)
        texts.append(filler[i % len(filler)])
    texts.extend(text for _, text in lookalike_cases())
    return texts


def _leaks(text: str) -> list[str]:
    return [v for v in VALUES if v in text]


def _db_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _fts_terms(store: Store) -> set[str]:
    raw = store.raw
    raw.execute(
        "create virtual table if not exists temp.vocab using fts5vocab(main, chunks_fts, 'row')"
    )
    return {row[0] for row in raw.execute("select term from temp.vocab")}


def _secret_tokens() -> set[str]:
    """Distinctive FTS tokens of the secret values (unicode61: runs of letters and digits)."""
    out: set[str] = set()
    for value in VALUES:
        for tok in re.findall(r"[^\W_]+", value.lower()):
            if len(tok) >= 10 and any(c.isdigit() for c in tok):
                out.add(tok)
    return out


def _index(tmp_path: Path, scanner, embedder) -> tuple[Store, Path]:
    session = write_claude_session(tmp_path / "home", _texts())
    store = Store.open(tmp_path / "memory.db")
    job = IndexJob(store=store, embedder=embedder, scanner=scanner, all_tiers_at_once=True)
    report = index(sources_for_path(session), job)
    assert not report.failures and report.chunks_written > len(CASES)
    return store, session


def _all_turn_ids(store: Store) -> list[tuple[str, str]]:
    return list(store.raw.execute("select distinct session_id, turn_id from chunk_rows"))


def _assert_nothing_surfaces(store: Store) -> None:
    scanner = default_scanner()
    for (text,) in store.raw.execute("select text from chunks"):
        assert not _leaks(text)
    assert not (_secret_tokens() & _fts_terms(store))
    for session_id, turn_id in _all_turn_ids(store):
        for view in get_turns(store, session_id, turn_id, window=0, scanner=scanner):
            assert not _leaks("\n".join(view.blocks))
    embedder = BagOfWordsEmbedder() if store.model_id == BagOfWordsEmbedder.model_id else None
    for case in CASES:
        for query in (case.name, *case.values):
            result = recall(store, query, embedder=embedder, reranker=None, scanner=scanner)
            for hit in result.hits:
                assert not _leaks(hit.chunk.text)
                assert not any(_leaks(n.text) for n in hit.neighbors)
    gated = gate_store(store)
    assert not gated.held_back_ids
    payload = store.raw.execute("select group_concat(text, char(10)) from chunks").fetchone()[0]
    assert not _leaks(payload)


def test_no_secret_survives_indexing_into_text_bytes_fts_get_recall_or_push(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, default_scanner(), BagOfWordsEmbedder())
    try:
        rows = store.raw.execute("select count(*), min(redaction_version) from chunks").fetchone()
        assert rows[0] > 0 and rows[1] == RULES_VERSION
        assert store.redaction_floor == RULES_VERSION
        marked = store.raw.execute(
            "select count(*) from chunks where text like '%[REDACTED:%'"
        ).fetchone()[0]
        assert marked >= len(CASES) // 2
        _assert_nothing_surfaces(store)
    finally:
        store.close()
    assert not [v for v in VALUES if v.encode("utf-8") in _db_bytes(tmp_path / "memory.db")]


def test_a_session_of_lookalikes_is_stored_without_any_redaction(tmp_path: Path) -> None:
    session = write_claude_session(
        tmp_path / "home", [t for _, t in lookalike_cases()] + transcript_blocks(100_000)
    )
    with Store.open(tmp_path / "memory.db") as store:
        job = IndexJob(
            store=store, embedder=None, scanner=default_scanner(), all_tiers_at_once=True
        )
        report = index(sources_for_path(session), job)
        assert report.chunks_written > 40 and report.redactions == 0
        marked = store.raw.execute(
            "select count(*) from chunks where text like '%[REDACTED:%'"
        ).fetchone()[0]
        assert marked == 0


def test_rows_indexed_under_older_rules_are_redacted_on_read(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, NullScanner(), BagOfWordsEmbedder())
    try:
        stored = "\n".join(t for (t,) in store.raw.execute("select text from chunks"))
        assert _leaks(stored), "fixture: without redaction the secrets are stored"
        scanner = default_scanner()
        for session_id, turn_id in _all_turn_ids(store):
            for view in get_turns(store, session_id, turn_id, window=0, scanner=scanner):
                assert not _leaks("\n".join(view.blocks))
        for value in VALUES:
            result = recall(store, value, embedder=BagOfWordsEmbedder(), reranker=None)
            for hit in result.hits:
                assert not _leaks(hit.chunk.text)
                assert not any(_leaks(n.text) for n in hit.neighbors)
        assert gate_store(store).held_back_ids
    finally:
        store.close()


def test_status_counts_the_rows_a_push_would_hold_back(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, NullScanner(), None)
    held = len(gate_store(store).held_back_ids)
    store.close()
    rt = Runtime.resolve()
    report = run_status(rt, parse_memory(str(tmp_path / "memory.db"), rt))
    assert report.push_held_back == held and held > 0
    assert any("held back" in item for item in report.attention)
    assert "funes scrub  (redact them in place)" in report.next_steps  # older rules: it helps


def test_status_does_not_offer_scrub_for_what_only_the_push_gate_holds_back(
    tmp_path: Path,
) -> None:
    """Chunks today's rules passed that the gate's own detectors still hold back: scrub
    (today's rules again) changes nothing, so status must not send the user round in a loop."""
    from support.claude import write_claude_session as claude_session

    written = claude_session(tmp_path / "home", LEAK_TURNS)
    with Store.open(tmp_path / "memory.db") as store:
        _reindex(store, written.path)  # today's rules: the prose password passes them
        held = len(gate_store(store).held_back_ids)
    rt = Runtime.resolve()
    report = run_status(rt, parse_memory(str(tmp_path / "memory.db"), rt))
    assert report.push_held_back == held > 0 and report.rescan_owed == 0
    assert not any("scrub" in step for step in report.next_steps)
    assert any("funes index --yes" in step for step in report.next_steps)


def test_status_offers_scrub_for_what_scrub_then_publishes(tmp_path: Path) -> None:
    """Raw secrets in chunks stamped with today's rules version (nothing is owed a rescan):
    status offers `funes scrub` because today's rules redact them, and after it they pass."""
    store, _ = _index(tmp_path, NullScanner(), None)
    store.raw.execute("update chunks set redaction_version = ?", (RULES_VERSION,))
    store.raw.commit()
    held = len(gate_store(store).held_back_ids)
    store.close()
    rt = Runtime.resolve()
    ref = parse_memory(str(tmp_path / "memory.db"), rt)
    report = run_status(rt, ref)
    assert report.push_held_back == held > 0 and report.rescan_owed == 0
    assert "funes scrub  (redact them in place)" in report.next_steps
    assert not any("funes index --yes" in step for step in report.next_steps)
    with Store.open(tmp_path / "memory.db") as again:
        scrub(again, default_scanner(), None, only_outdated=False)
    assert run_status(rt, ref).push_held_back == 0


def test_scrub_rewrites_old_rows_in_place_and_keeps_untouched_vectors(tmp_path: Path) -> None:
    embedder = BagOfWordsEmbedder()
    store, session = _index(tmp_path, NullScanner(), embedder)
    before_text = session.read_bytes()
    try:
        vec_before = dict(store.raw.execute("select rowid, embedding from chunks_vec"))
        text_before = dict(store.raw.execute("select rowid, text from chunks"))
        report = scrub(store, default_scanner(), embedder, only_outdated=True)
        assert report.chunks_rewritten > 0 and report.findings >= len(CASES)
        text_after = dict(store.raw.execute("select rowid, text from chunks"))
        vec_after = dict(store.raw.execute("select rowid, embedding from chunks_vec"))
        rewritten = {r for r in text_after if text_after[r] != text_before[r]}
        assert len(rewritten) == report.chunks_rewritten
        assert set(vec_after) == set(text_after)  # every surviving chunk still has a vector
        # Every vector is the embedding of what the memory embeds now: a rewritten chunk's new
        # text, and for a reply or tool output, the redacted prompt of its exchange too (the
        # prompts here hold secrets); a chunk whose input did not change keeps its vector.
        refreshed = 0
        for rowid in text_after:
            embedded = stored_embedding_inputs(store, [(rowid, text_after[rowid])])
            expected = store._vector_bytes(embedder.embed(embedded))[0]
            assert vec_after[rowid] == expected, rowid
            if rowid not in rewritten and vec_after[rowid] != vec_before[rowid]:
                refreshed += 1
        assert refreshed > 0  # replies to prompts that held a secret were re-embedded
        assert report.chunks_reembedded == report.chunks_rewritten + refreshed
        unchanged = [r for r in text_after if r not in rewritten and vec_after[r] == vec_before[r]]
        assert len(unchanged) > len(text_after) // 2  # and nothing else was
        assert (
            store.raw.execute("select min(redaction_version) from chunks").fetchone()[0]
            == RULES_VERSION
        )
        assert store.redaction_floor == RULES_VERSION
        _assert_nothing_surfaces(store)
        again = scrub(store, default_scanner(), embedder, only_outdated=False)
        assert again.findings == 0 and not again.changed
    finally:
        store.close()
    assert not [v for v in VALUES if v.encode("utf-8") in _db_bytes(tmp_path / "memory.db")]
    assert session.read_bytes() == before_text  # the source transcript is never modified


def test_an_index_run_upgrades_rows_stored_under_older_rules(tmp_path: Path) -> None:
    store, session = _index(tmp_path, NullScanner(), None)
    try:
        job = IndexJob(
            store=store, embedder=None, scanner=default_scanner(), all_tiers_at_once=True
        )
        report = index(sources_for_path(session), job)
        assert report.upgrade is not None and report.upgrade.chunks_rewritten > 0
        assert not _leaks("\n".join(t for (t,) in store.raw.execute("select text from chunks")))
        second = index(sources_for_path(session), job)
        assert second.upgrade is None
    finally:
        store.close()


def test_funes_scrub_command_redacts_a_memory_and_reports_counts(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    store, _ = _index(tmp_path, NullScanner(), None)
    store.close()
    db = tmp_path / "memory.db"
    proc = subprocess.run(
        [sys.executable, "-m", "funes", "scrub", str(db)],
        env=funes_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.match(r"scrubbed .*: \d+ secrets, \d+ rewritten, 0 removed", proc.stdout)
    assert not _leaks(proc.stdout + proc.stderr)
    with Store.open(db, readonly=True) as after:
        assert not _leaks("\n".join(t for (t,) in after.raw.execute("select text from chunks")))


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_scrub_leaves_no_secret_in_the_wal_or_free_pages(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, NullScanner(), None)
    try:
        assert [v for v in VALUES if v.encode("utf-8") in _db_bytes(tmp_path / "memory.db")]
        scrub(store, default_scanner(), None, only_outdated=False)
        assert not [v for v in VALUES if v.encode("utf-8") in _db_bytes(tmp_path / "memory.db")]
    finally:
        store.close()


class _CountingScanner:
    """A scanner (the default one unless told), counting the texts it is asked to scan."""

    def __init__(self, inner: Scanner | None = None) -> None:
        self.inner = inner or default_scanner()
        self.version = self.inner.version
        self.texts = 0

    def scan(self, text: str):  # type: ignore[no-untyped-def]
        self.texts += 1
        return self.inner.scan(text)


def test_the_held_back_count_is_cached_until_the_memory_changes(tmp_path: Path) -> None:
    from funes.commands.scrub import gate_cache_path, held_back_summary

    store, _ = _index(tmp_path, NullScanner(), None)
    try:
        first = _CountingScanner()
        held = held_back_summary(store, first)
        assert held.ids == set(gate_store(store).held_back_ids) and first.texts > 0
        again = _CountingScanner()
        assert held_back_summary(store, again) == held
        assert again.texts == 0, "an unchanged memory is not rescanned"
        assert (gate_cache_path(store).stat().st_mode & 0o777) == 0o600
        gate_cache_path(store).write_text("{not json")
        assert held_back_summary(store, _CountingScanner()) == held, "a damaged cache is rebuilt"
    finally:
        store.close()


def test_scrub_keeps_the_held_back_cache_and_status_judges_only_what_scrub_rewrote(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    """The memory logs every chunk rewritten in place or deleted (schema 7), so `funes scrub`
    no longer throws the gate's cache away: the next status judges the blocks scrub touched,
    not the whole memory again (a first status of a large memory takes seconds)."""
    from funes.commands.scrub import gate_cache_path, held_back_summary

    store, _ = _index(tmp_path, NullScanner(), None)
    try:
        blocks = store.raw.execute(
            "select count(*) from (select distinct session, turn_id, block_idx from chunks)"
        ).fetchone()[0]
        held_back_summary(store)
    finally:
        store.close()
    db = tmp_path / "memory.db"
    proc = subprocess.run([sys.executable, "-m", "funes", "scrub", str(db)], env=funes_env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Store.open(db) as after:
        assert gate_cache_path(after).exists()
        counting = _CountingScanner(gate_scanner())
        held = held_back_summary(after, counting)
        assert held.ids == set(gate_store(after).held_back_ids)
        assert 0 < counting.texts < blocks, (counting.texts, blocks)


# held back by the push gate's own detectors, let through by index-time redaction
LEAK = "The key you pasted (`opensesameforever`) returns 401"
LEAK_TURNS = [
    ("user", "why does the ocelot login fail?"),
    ("assistant", LEAK),
    ("user", "and the lynx login?"),
    ("assistant", "The lynx login works since the proxy fix."),
]


def _reindex(store: Store, transcript: Path) -> None:
    job = IndexJob(store=store, embedder=None, scanner=default_scanner(), all_tiers_at_once=True)
    assert not index(sources_for_path(transcript), job).failures


def _rewrite(transcript: Path, old: str, new: str) -> None:
    text = transcript.read_text(encoding="utf-8")
    assert old in text
    transcript.write_text(text.replace(old, new), encoding="utf-8")


def test_the_held_back_count_follows_chunks_rewritten_in_place_and_deleted(
    tmp_path: Path,
) -> None:
    from support.claude import write_claude_session as claude_session

    from funes.commands.scrub import held_back_summary

    written = claude_session(tmp_path / "home", LEAK_TURNS)
    store = Store.open(tmp_path / "memory.db")
    try:
        _reindex(store, written.path)
        [leak] = held_back_summary(store).ids
        assert gate_store(store).held_back_ids == [leak]

        # the secret taken out of the transcript: the re-read rewrites the chunk in place
        _rewrite(written.path, "opensesameforever", "the usual one")
        _reindex(store, written.path)
        assert store.existing_ids([leak]) == {leak}
        counting = _CountingScanner(gate_scanner())
        assert (
            held_back_summary(store, counting).ids == set() == set(gate_store(store).held_back_ids)
        )
        assert counting.texts == 2, "the canary and the one block rewritten, nothing else"

        # the reverse: a clean block rewritten in place to hold a secret
        lynx = LEAK.replace("open", "lynx")
        _rewrite(written.path, "The lynx login works since the proxy fix.", lynx)
        _reindex(store, written.path)
        held = held_back_summary(store).ids
        assert held == set(gate_store(store).held_back_ids) and len(held) == 1

        # a held chunk deleted (as scrub drops a block it cannot redact): no longer held back
        [rowid] = store.raw.execute("select rowid from chunks where id = ?", (*held,)).fetchone()
        store.rewrite_chunks([], None, redaction_version=RULES_VERSION, drop=[rowid])
        assert held_back_summary(store).ids == set() == set(gate_store(store).held_back_ids)

        # a log trimmed past the cache's mark: everything is judged again, and still right
        _rewrite(written.path, "the usual one", "opensesameforever")
        _reindex(store, written.path)  # (the re-read also stores the dropped block again)
        store.trim_rewrite_log(keep=0)
        counting = _CountingScanner(gate_scanner())
        held = held_back_summary(store, counting).ids
        assert held == set(gate_store(store).held_back_ids) and leak in held and len(held) == 2
        assert counting.texts == 5, "the canary and every block"
    finally:
        store.close()


def test_status_counts_the_chunks_owed_a_rescan_until_scrub(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, NullScanner(), None)
    total = store.raw.execute("select count(*) from chunks").fetchone()[0]
    assert store.owed_rescan(RULES_VERSION) == total > 0
    store.close()
    rt = Runtime.resolve()
    ref = parse_memory(str(tmp_path / "memory.db"), rt)
    report = run_status(rt, ref)
    assert report.rescan_owed == total
    assert any("older secret rules" in item for item in report.attention)
    with Store.open(tmp_path / "memory.db") as again:
        scrub(again, default_scanner(), None, only_outdated=True)
    assert run_status(rt, ref).rescan_owed == 0


class _OlderRules:
    """funes' rules as of redaction version 2 (before the vendor catalogue and context rules)."""

    version = RULES_VERSION - 1

    def scan(self, text: str):  # type: ignore[no-untyped-def]
        from funes.redact import RuleScanner
        from funes.redact.rules import BASE_RULES

        return RuleScanner(BASE_RULES).scan(text)


def test_scrub_brings_a_memory_redacted_by_older_rules_up_to_the_current_ones(
    tmp_path: Path,
) -> None:
    from field_corpus import URLSAFE, Gen, _p

    g = Gen(44)
    vault = _p("hv", "s.") + g.s(URLSAFE, 94)
    pw = g.s("abcdefghkmnpqrstuvwxyz23456789", 9)
    texts = [
        f"$ vault print token\n{vault}\n",
        f"the staging db password is {pw}, can you check it?",
    ]
    session = write_claude_session(tmp_path / "home", texts + transcript_blocks(20_000, seed=4))
    embedder = BagOfWordsEmbedder()
    with Store.open(tmp_path / "memory.db") as store:
        job = IndexJob(
            store=store, embedder=embedder, scanner=_OlderRules(), all_tiers_at_once=True
        )
        index(sources_for_path(session), job)
        stored = "\n".join(t for (t,) in store.raw.execute("select text from chunks"))
        assert vault in stored and pw in stored, "fixture: the older rules let both through"
        report = scrub(store, default_scanner(), embedder, only_outdated=True)
        assert report.chunks_rewritten >= 2 and report.chunks_reembedded >= 2
        stored = "\n".join(t for (t,) in store.raw.execute("select text from chunks"))
        assert vault not in stored and pw not in stored
        assert store.owed_rescan(RULES_VERSION) == 0
