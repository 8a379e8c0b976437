"""Indexing a transcript while it is written gives exactly the chunks of indexing it once.

The agent appends line by line, and a read can land in the middle of a line. Whatever the
cut points, indexing after every append into a real store must end with the same chunk set
(ids, texts, positions) as indexing the finished file once. Also: a 50 MB line is skipped
with bounded memory.
"""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from pathlib import Path

from fakes import BagOfWordsEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_fixtures import CLAUDE_PROJECT, CODEX_046, CODEX_NEW, CODEX_PRE, PI_V1, PI_V3

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import ReadStats, sources_for_path
from funes.traces.claude_code import read_claude_file
from funes.traces.codex import read_codex_file
from funes.traces.pi import read_pi_file

TRANSCRIPTS = [
    CLAUDE_PROJECT / "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb.jsonl",
    CODEX_NEW,
    CODEX_046,
    CODEX_PRE,
    PI_V3,
    PI_V1,
]

Row = tuple[str, str, str, str, int, int, int, str]


def chunk_rows(store: Store) -> set[Row]:
    rows = store.raw.execute(
        "select id, text, session_id, turn_id, seq, block_idx, split_idx, harness from chunk_rows"
    ).fetchall()
    return {tuple(r) for r in rows}


def index_path(store: Store, path: Path) -> None:
    job = IndexJob(
        store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner(), all_tiers_at_once=True
    )
    with store.writing():
        report = index(sources_for_path(path), job)
    assert not report.failures, report.failures


def once(path: Path, work: Path) -> set[Row]:
    store = Store.open(work / "once.db")
    try:
        index_path(store, path)
        return chunk_rows(store)
    finally:
        store.close()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    transcript=st.sampled_from(TRANSCRIPTS),
    mid_line=st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=8),
)
def test_indexing_after_every_append_equals_indexing_the_whole_file_once(
    transcript: Path, mid_line: list[float]
) -> None:
    data = transcript.read_bytes()
    line_ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cuts = sorted({*line_ends, *(int(f * len(data)) for f in mid_line), len(data)} - {0})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        growing = work / "agent" / transcript.name  # same name: the same session id
        growing.parent.mkdir()
        store = Store.open(work / "incremental.db")
        try:
            for cut in cuts:
                growing.write_bytes(data[:cut])
                index_path(store, growing)
            incremental = chunk_rows(store)
        finally:
            store.close()
        whole = once(growing, work)
    assert incremental == whole
    assert whole, "the transcript produced chunks"


def test_a_50_mb_line_is_skipped_and_counted_without_holding_it_in_memory(tmp_path: Path) -> None:
    session = "5f0c8e8a-0000-4000-8000-000000000050"
    head = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": session,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "dump the log"},
    }
    tail = {
        "type": "assistant",
        "uuid": "u3",
        "parentUuid": "u2",
        "sessionId": session,
        "timestamp": "2026-01-01T00:00:09Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "the log is huge"}]},
    }
    path = tmp_path / f"{session}.jsonl"
    with path.open("wb") as f:
        f.write(json.dumps(head).encode() + b"\n")
        f.write(
            b'{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"'
        )
        block = b"x" * (1 << 20)
        for _ in range(50):
            f.write(block)
        f.write(b'"}]}}\n')
        f.write(json.dumps(tail).encode() + b"\n")
    assert path.stat().st_size > 50 * (1 << 20)
    for reader in (read_claude_file, read_codex_file, read_pi_file):
        stats = ReadStats()
        tracemalloc.start()
        try:
            list(reader(path, stats))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert stats.oversized_records == 1, reader.__name__
        assert stats.records == 2
        assert peak < 40 * (1 << 20), f"{reader.__name__} peaked at {peak / (1 << 20):.0f} MiB"
    stats = ReadStats()
    turns = list(read_claude_file(path, stats))
    assert [t.turn_id for t in turns] == ["u1", "u3"]
