"""agent-traces Parquet import: message index = seq, harness mapping, batches, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trace_fixtures import FIXTURES, PARQUET

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import BlockType, Harness, ReadStats, Role, Turn, sources_for_path
from funes.traces.parquet import ParquetSource, read_parquet_file

sys.path.insert(0, str(FIXTURES))
from fakes import BagOfWordsEmbedder  # noqa: E402
from make_fixtures import write_parquet  # noqa: E402  (the generator of the committed fixture)


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(read_parquet_file(path, stats)), stats


def test_each_message_index_is_its_turn_seq_even_when_messages_are_skipped() -> None:
    turns, stats = read(PARQUET)
    first = [t for t in turns if t.session_id == "pq-kilnbook-0001"]
    # 0 = system prompt (skipped), 4 = empty user message (skipped): numbering does not shift
    assert [(t.seq, t.turn_id, t.role) for t in first] == [
        (1, "1", Role.USER),
        (2, "2", Role.ASSISTANT),
        (3, "3", Role.TOOL),
        (5, "5", Role.ASSISTANT),
    ]
    assert [b.type for b in first[1].blocks] == [BlockType.THINKING, BlockType.TOOL_USE]
    assert json.loads(first[1].blocks[1].text) == {"command": "grep -n tariff kilnbook/costs.py"}
    assert first[2].blocks[0].tool_name == "shell"
    assert stats.corrupt_records == 0


def test_rows_carry_their_harness_host_cwd_and_timestamps() -> None:
    turns, _ = read(PARQUET)
    by_session = {t.session_id: t for t in turns}
    codex_row, other_row = by_session["pq-kilnbook-0001"], by_session["pq-kilnbook-0002"]
    assert codex_row.harness is Harness.CODEX
    assert other_row.harness is Harness.PARQUET  # "opencode" is not an agent funes knows
    assert (codex_row.host, codex_row.cwd) == ("atlas", "/home/dev/src/kilnbook")
    assert other_row.host == "kestrel"
    assert codex_row.ts == "2026-03-19T14:05:00.000Z"  # no message timestamps: sent_at
    second = [t for t in turns if t.session_id == "pq-kilnbook-0002"]
    assert [t.ts for t in second] == [
        "2026-03-20T09:30:05.000Z",
        "2026-03-20T09:30:09.000Z",
        "2026-03-20T09:30:10.000Z",
        "2026-03-20T09:30:15.000Z",
    ]
    assert second[2].blocks[0].tool_name == "read"  # back-filled from the call id


def test_the_committed_parquet_is_what_the_fixture_generator_writes(tmp_path: Path) -> None:
    rows = json.loads((FIXTURES / "parquet" / "sessions.json").read_text())
    fresh = tmp_path / "traces.parquet"
    write_parquet(rows, fresh)
    assert pq.read_table(fresh).to_pylist() == pq.read_table(PARQUET).to_pylist()


def test_many_row_groups_are_read_batch_by_batch(tmp_path: Path) -> None:
    rows = [
        {
            "session_id": f"s{i:03d}",
            "sent_at": "2026-01-01T00:00:00Z",
            "harness": "pi",
            "file_path": f"/x/{i}.jsonl",
            "metadata": {"cwd": "/w"},
            "messages": [
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": f"answer {i}"},
            ],
        }
        for i in range(60)
    ]
    path = tmp_path / "many.parquet"
    write_parquet(rows, path)
    assert pq.ParquetFile(path).num_row_groups == 60
    turns, _ = read(path)
    assert len(turns) == 120
    assert {t.harness for t in turns} == {Harness.PI}


def test_bad_rows_and_messages_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    table = pa.table(
        {
            "session_id": ["ok", None],
            "messages": [
                [
                    '{"role":"user","content":"fine"}',
                    "{not json",
                    '["a list"]',
                    '{"role":"critic","content":"?"}',
                ],
                ['{"role":"user","content":"orphan"}'],
            ],
        }
    )
    pq.write_table(table, path)
    turns, stats = read(path)
    assert [(t.session_id, t.seq) for t in turns] == [("ok", 0)]
    assert stats.corrupt_records == 3  # two undecodable messages + a row without a session id
    assert stats.unknown_records == 1  # an unknown role


def test_a_parquet_without_the_agent_traces_columns_yields_nothing_with_a_note(
    tmp_path: Path,
) -> None:
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    turns, stats = read(path)
    assert turns == []
    assert stats.notes and "not an agent-traces file" in stats.notes[0]


def test_a_file_that_is_not_parquet_raises_oserror_for_the_unit_guard(tmp_path: Path) -> None:
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"PAR1 nope")
    with pytest.raises(OSError):
        read(path)


def test_reindexing_an_unchanged_parquet_file_reads_nothing(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "memory.db")
    job = IndexJob(
        store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner(), all_tiers_at_once=True
    )
    with store.writing():
        first = index(sources_for_path(PARQUET), job)
        second = index(sources_for_path(PARQUET), job)
    store.close()
    assert first.units_indexed == 1 and first.chunks_written > 0
    assert second.units_indexed == 0 and second.turns == 0 and second.read.records == 0
    assert second.units_unchanged == 1


def test_the_default_parquet_source_has_no_location_and_no_units() -> None:
    assert list(ParquetSource().units()) == []
    assert ParquetSource([PARQUET]).unit_for_hook({"transcript_path": str(PARQUET)}) is None
