"""Transcripts read while their agent is still writing them: nothing duplicated, nothing lost.

For every committed JSONL fixture (Claude Code main and subagent files, every Codex and pi
generation) hypothesis picks byte offsets to grow the file by, including offsets inside a
line and inside a multi-byte UTF-8 character. After each growth the memory is indexed into
the same store, and must then hold exactly the chunks of a clean index of the file as it is
now (the complete turns: a half-written last line is left for later, never stored half,
never skipped for good). At the end it equals a clean index of the whole file.

Hermes: rows are committed by another connection between runs, during a run (between the
pages a read fetches), and held in an open transaction during a run (invisible until
committed, then picked up).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import CLAUDE_FIXTURES, CODEX_FIXTURES, PI_FIXTURES, build_hermes_db

from funes.ingest import IndexJob, IndexReport, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import ReadStats, TraceSource, Turn, Unit, sources_for_path
from funes.traces.hermes import HermesSource

TRANSCRIPTS = CLAUDE_FIXTURES + CODEX_FIXTURES + PI_FIXTURES
Row = tuple[str, str, str, int, int, int]


def rows(store: Store) -> set[Row]:
    return set(
        store.raw.execute(
            "select id, text, turn_id, seq, block_idx, split_idx from chunks"
        ).fetchall()
    )


def index_into(store: Store, sources: list[TraceSource]) -> IndexReport:
    job = IndexJob(
        store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner(), all_tiers_at_once=True
    )
    with store.writing():
        report = index(sources, job)
    assert not report.failures, report.failures
    return report


def clean_index(path: Path, work: Path, name: str) -> set[Row]:
    with Store.open(work / f"{name}.db") as store:
        index_into(store, sources_for_path(path))
        return rows(store)


def test_every_jsonl_fixture_is_covered() -> None:
    names = {p.parent.name for p in CLAUDE_FIXTURES} | {
        p.name[:8] for p in CODEX_FIXTURES + PI_FIXTURES
    }
    assert "subagents" in names and len(CODEX_FIXTURES) == 4 and len(PI_FIXTURES) == 3


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    transcript=st.sampled_from(TRANSCRIPTS),
    cuts=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=8),
    in_char=st.lists(st.integers(min_value=0), max_size=3),
)
def test_a_transcript_indexed_while_it_grows_holds_exactly_its_complete_turns_each_time(
    transcript: Path, cuts: list[float], in_char: list[int]
) -> None:
    data = transcript.read_bytes()
    offsets = {int(f * len(data)) for f in cuts} | {len(data)}
    # also cut inside multi-byte characters, where a reader sees invalid UTF-8 at the end
    inside = [i for i, b in enumerate(data) if 0x80 <= b < 0xC0]
    offsets |= {inside[n % len(inside)] for n in in_char} if inside else set()
    offsets = sorted(offsets)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rel = transcript.relative_to(transcript.parents[2])  # keep subagents/ and dated dirs
        growing = work / "agent" / rel
        growing.parent.mkdir(parents=True)
        growing.write_bytes(b"")
        with Store.open(work / "live.db") as live:
            for n, offset in enumerate(offsets):
                with growing.open("ab") as f:
                    f.write(data[growing.stat().st_size : offset])
                index_into(live, sources_for_path(growing.parent))
                # the same name in a fresh directory: the same session id
                snapshot = work / f"snap{n}" / rel
                snapshot.parent.mkdir(parents=True)
                snapshot.write_bytes(data[:offset])
                now = clean_index(snapshot.parent, work, f"clean{n}")
                stored = rows(live)
                assert {r[0] for r in stored} == {r[0] for r in now}, (
                    f"after {offset}/{len(data)} bytes"
                )
            whole = clean_index(growing.parent, work, "whole")
            assert rows(live) == whole and whole


# -- Hermes -----------------------------------------------------------------------------------


def add_rows(
    db: Path, session: str, n: int, *, start: int, commit: bool = True
) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("begin")
    conn.execute(
        "insert or ignore into sessions (id, source, started_at, cwd) values (?, 'cli', 1775000000, '/home/dev/src/kilnbook')",
        (session,),
    )
    for i in range(start, start + n):
        conn.execute(
            "insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)",
            (
                session,
                "user" if i % 2 == 0 else "assistant",
                f"{session[-6:]} row {i}: kiln glaze cobalt",
                1775000000.0 + i,
            ),
        )
    if commit:
        conn.execute("commit")
        conn.close()
    return conn


class InterleavedHermes:
    """The real Hermes source, but another connection commits rows while a read is half done
    (after `after` turns of a unit): the agent keeps writing while funes pages through."""

    def __init__(self, inner: HermesSource, db: Path, after: int) -> None:
        self.inner = inner
        self.harness = inner.harness
        self.db = db
        self.after = after
        self.added = 0

    def units(self) -> list[Unit]:
        return list(self.inner.units())

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        for n, turn in enumerate(self.inner.read(unit, stats)):
            if n == self.after and unit.session is not None:
                add_rows(self.db, unit.session, 300, start=10_000 + self.added)
                self.added += 300
            yield turn

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


@pytest.mark.parametrize("after", [0, 150, 250])
def test_hermes_rows_added_between_and_during_runs_are_stored_once(
    tmp_path: Path, after: int
) -> None:
    db = build_hermes_db(tmp_path / "hermes" / "state.db")
    add_rows(db, "20260401_000001_aaaaaa", 260, start=0)
    with Store.open(tmp_path / "live.db") as live:
        index_into(live, [InterleavedHermes(HermesSource(databases=[db]), db, after)])
        add_rows(db, "20260401_000001_aaaaaa", 40, start=260)  # between runs
        add_rows(db, "20260401_000002_bbbbbb", 5, start=0)  # a new session
        pending = add_rows(db, "20260401_000002_bbbbbb", 7, start=5, commit=False)  # still open
        try:
            index_into(live, [HermesSource(databases=[db])])
            during = rows(live)
        finally:
            pending.execute("commit")
            pending.close()
        index_into(live, [HermesSource(databases=[db])])
        final = rows(live)
    with Store.open(tmp_path / "clean.db") as clean:
        index_into(clean, [HermesSource(databases=[db])])
        expected = rows(clean)
    assert final == expected
    assert len(expected) - len(during) == 7  # the open transaction's rows, picked up once committed
    added = sorted(r[1] for r in final if " row " in r[1])
    assert len(added) == len(set(added)) >= 260 + 40 + 5 + 7 + 300  # each added row once
