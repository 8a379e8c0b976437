"""Spool mechanics and `process`: claim by rename, ack after commit, retry then park, coalescing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from support.claude import append_turns, session_path, stop_payload

from funes.errors import EntryError
from funes.ingest import DrainReport, IndexJob, Spool, SpoolEntry, claim_batch, process
from funes.redact import default_scanner
from funes.settings import SPOOL
from funes.store import Store
from funes.traces import AGENTS, AgentHomes, Block, BlockType, Harness, ReadStats, Role, Turn, Unit
from funes.traces.claude_code import ClaudeCodeSource

REPO = Path(__file__).resolve().parents[2]
QUICK = replace(SPOOL, settle_s=0.0)


def test_an_entry_written_by_the_hook_parses_into_the_same_pointer(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    payload = json.loads((REPO / "fixtures" / "hooks" / "codex-Stop.json").read_text())
    subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            str(REPO / "hooks" / "enqueue.py"),
            "--agent",
            "codex",
            "--spool",
            str(spool),
            "--no-worker",
        ],
        input=json.dumps(payload).encode(),
        check=True,
    )
    [path] = (spool / "new").iterdir()
    entry = SpoolEntry.parse(path.read_bytes())
    assert entry.harness is Harness.CODEX and entry.event == "Stop" and entry.attempts == 0
    assert (
        entry.session_id == payload["session_id"]
        and entry.transcript_path == payload["transcript_path"]
    )
    assert entry.payload["turn_id"] == payload["turn_id"]
    assert SpoolEntry.parse(entry.to_json()) == entry


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{", "not JSON"),
        (b"[]", "not a JSON object"),
        (b'{"agent": "pi"}', "version"),
        (b'{"v": 99, "agent": "pi"}', "newer"),
        (b'{"v": 1}', "no agent"),
    ],
)
def test_unreadable_entries_are_refused_with_the_reason(data: bytes, problem: str) -> None:
    with pytest.raises(EntryError, match=problem):
        SpoolEntry.parse(data)


def test_only_one_claimer_wins_an_entry(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    path = spool.enqueue(SpoolEntry(agent="pi"))
    first = spool.claim(path.name)
    assert isinstance(first, SpoolEntry)
    assert spool.claim(path.name) is None
    assert spool.pending() == [] and spool.is_claimed(path.name)


def test_a_failing_entry_is_retried_then_parked_with_its_error(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    name = spool.enqueue(SpoolEntry(agent="pi")).name
    for attempt in range(1, 3):
        entry = spool.claim(name)
        assert isinstance(entry, SpoolEntry) and entry.attempts == attempt - 1
        assert spool.retry_or_park(name, entry, "boom", max_attempts=3) is False
        assert spool.pending() == [name]
    entry = spool.claim(name)
    assert isinstance(entry, SpoolEntry)
    assert spool.retry_or_park(name, entry, "boom: the last straw", max_attempts=3) is True
    assert spool.pending() == [] and not spool.is_claimed(name)
    assert (spool.failed / f"{name}.err").read_text() == "boom: the last straw\n"
    assert spool.backlog()["pi"].failed == 1


def test_entries_left_claimed_by_a_killed_worker_are_taken_back(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    names = [spool.enqueue(SpoolEntry(agent="codex")).name for _ in range(3)]
    for name in names:
        spool.claim(name)
    assert spool.pending() == []
    assert spool.reclaim() == 3
    assert spool.pending() == sorted(names)


def test_an_unreadable_entry_is_parked_and_its_agent_swept_instead(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    (spool.new / "00000000000000000001-1-deadbeef.claude_code.json").write_bytes(b"{torn")
    report = DrainReport()
    assert claim_batch(spool, report, limit=10) == []
    assert report.parked == 1
    [replacement] = spool.pending()
    entry = SpoolEntry.parse((spool.new / replacement).read_bytes())
    assert entry.agent == "claude_code" and entry.payload == {}


class ExplodingSource:
    """A tiny in-test source whose one unit always fails to read."""

    harness = Harness.PI

    def __init__(self, path: Path) -> None:
        self.path = path
        self.reads = 0

    def units(self) -> Iterator[Unit]:
        yield Unit(key=str(self.path), signature="1:1", harness=self.harness, path=self.path)

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        self.reads += 1
        yield Turn(
            harness=self.harness,
            session_id="s",
            turn_id="t0",
            seq=0,
            ts="2026-11-29T08:00:00Z",
            role=Role.USER,
            blocks=(Block.make(BlockType.TEXT, "fine so far"),),
            source_path=str(unit.path),
        )
        raise OSError("disk vanished mid-read")

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return next(iter(self.units())) if payload.get("session_file") else None


def job_for(store: Store) -> IndexJob:
    return IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=default_scanner())


def test_process_acks_only_entries_whose_unit_committed(tmp_path: Path, store: Store) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    claude = ClaudeCodeSource(tmp_path / "home" / ".claude")
    good = session_path(claude.home, "/w/a", "good-session")
    append_turns(good, "good-session", "/w/a", range(4))
    bad = ExplodingSource(tmp_path / "pi.jsonl")
    spool.enqueue(
        SpoolEntry(agent="claude_code", payload=stop_payload(good, "good-session", "/w/a"))
    )
    spool.enqueue(SpoolEntry(agent="pi", payload={"session_file": str(bad.path)}))
    report = DrainReport()
    batch = claim_batch(spool, report, limit=10)
    process(
        spool,
        batch,
        job_for(store),
        homes=AgentHomes(tmp_path, {Harness.CLAUDE_CODE: claude.home}),
        agents={**AGENTS, Harness.PI: replace(AGENTS[Harness.PI], source=lambda home: bad)},
        params=QUICK,
        report=report,
    )
    assert report.acked == 1 and report.retried == 1 and report.units == 2
    assert store.stats().chunks == 8
    [left] = spool.pending()
    assert (
        left.endswith(".pi.json")
        and SpoolEntry.parse((spool.new / left).read_bytes()).attempts == 1
    )


def test_entries_for_one_session_are_indexed_once(tmp_path: Path, store: Store) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    claude = ClaudeCodeSource(tmp_path / "home" / ".claude")
    path = session_path(claude.home, "/w/a", "busy-session")
    append_turns(path, "busy-session", "/w/a", range(3))
    for _ in range(20):
        spool.enqueue(
            SpoolEntry(agent="claude_code", payload=stop_payload(path, "busy-session", "/w/a"))
        )
    report = DrainReport()
    process(
        spool,
        claim_batch(spool, report, limit=100),
        job_for(store),
        homes=AgentHomes(tmp_path, {Harness.CLAUDE_CODE: claude.home}),
        params=QUICK,
        report=report,
    )
    assert report.entries == 20 and report.acked == 20 and report.units == 1
    assert store.stats().chunks == 6 and spool.pending() == []


def test_an_entry_that_names_nothing_sweeps_its_agent(tmp_path: Path, store: Store) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    claude = ClaudeCodeSource(tmp_path / "home" / ".claude")
    for sid in ("s-one", "s-two"):
        append_turns(session_path(claude.home, "/w/b", sid), sid, "/w/b", range(2))
    spool.enqueue(
        SpoolEntry(agent="claude_code", event="SessionStart", payload={"session_id": "brand-new"})
    )
    report = DrainReport()
    process(
        spool,
        claim_batch(spool, report, limit=10),
        job_for(store),
        homes=AgentHomes(tmp_path, {Harness.CLAUDE_CODE: claude.home}),
        params=QUICK,
        report=report,
    )
    assert report.sweeps == 1 and report.acked == 1
    assert store.stats().sessions == 2


def test_an_entry_for_an_unknown_agent_fails_without_sinking_the_batch(
    tmp_path: Path, store: Store
) -> None:
    spool = Spool(tmp_path / "spool").ensure()
    spool.enqueue(SpoolEntry(agent="someday-agent"))
    report = DrainReport()
    process(
        spool,
        claim_batch(spool, report, limit=10),
        job_for(store),
        homes=AgentHomes(tmp_path),
        params=replace(QUICK, max_attempts=1),
        report=report,
    )
    assert report.parked == 1
    [err] = spool.failed.glob("*.err")
    assert "no source for agent 'someday-agent'" in err.read_text()


def test_old_debris_in_tmp_is_cleaned_but_fresh_writes_are_not(tmp_path: Path) -> None:
    import os
    import time

    spool = Spool(tmp_path / "spool").ensure()
    old, fresh = spool.tmp / "old.json", spool.tmp / "fresh.json"
    old.write_text("{}")
    fresh.write_text("{}")
    past = time.time() - 7200
    os.utime(old, (past, past))
    assert spool.clean_tmp(older_than_s=3600) == 1
    assert not old.exists() and fresh.exists()
