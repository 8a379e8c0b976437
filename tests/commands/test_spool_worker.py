"""The spool worker for real: hook processes, `funes spool drain` subprocesses, a real memory.

Uses the offline ONNX embedder (FUNES_EMBEDDER from conftest), so vectors are written too.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from support.claude import append_turns, session_path, stop_payload
from support.spool import drain_counts, fire_hook, wait_idle, worker_log

from funes.commands.index import IndexRequest, run_index
from funes.commands.spool import retry_failed, run_drain, run_spool_status
from funes.errors import StoreLocked
from funes.ingest import Spool, SpoolEntry
from funes.memory import Runtime, parse_memory
from funes.settings import SPOOL
from funes.store import Store
from funes.store.lock import writer_lock


def memory_rows(db: Path) -> tuple[set[str], int, int, int]:
    """(chunk ids, chunk rows, FTS rows, vector rows + chunks recorded as owing one) of a memory.

    A worker embeds a bounded slice per drain, so a chunk may still owe its vector; it must
    then be recorded in `vectors_owed`, never both embedded and owed, never an orphan."""
    store = Store.open(db, readonly=True)
    try:
        ids = [r[0] for r in store.raw.execute("select id from chunks")]
        fts = store.raw.execute("select count(*) from chunks_fts").fetchone()[0]
        if not store.vectors_available:
            return set(ids), len(ids), int(fts), -1
        raw = store.raw
        both = raw.execute(
            "select count(*) from vectors_owed o join chunks_vec v on v.rowid = o.rowid"
        ).fetchone()[0]
        orphans = raw.execute(
            "select count(*) from vectors_owed o where not exists "
            "(select 1 from chunks c where c.rowid = o.rowid)"
        ).fetchone()[0]
        assert both == 0 and orphans == 0
        vec = raw.execute("select count(*) from chunks_vec").fetchone()[0]
        owed = raw.execute("select count(*) from vectors_owed").fetchone()[0]
        return set(ids), len(ids), int(fts), int(vec) + int(owed)
    finally:
        store.close()


def swept_reference(tmp_path: Path) -> set[str]:
    """Chunk ids one `funes index` sweep of the same agent homes produces, in another memory."""
    rt = Runtime.resolve({**os.environ, "FUNES_HOME": str(tmp_path / "reference")})
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    ids, count, fts, vec = memory_rows(rt.paths.memory_db)
    assert count == fts == vec
    return ids


@pytest.fixture
def rt() -> Runtime:
    return Runtime.resolve()


def test_fifty_parallel_hooks_for_one_session_give_exactly_the_chunks_of_one_sweep(
    rt: Runtime, isolated_env: Path, tmp_path: Path
) -> None:
    path = session_path(isolated_env / ".claude", "/work/parallel", "parallel-session")
    append_turns(path, "parallel-session", "/work/parallel", range(12))
    payload = stop_payload(path, "parallel-session", "/work/parallel")
    with ThreadPoolExecutor(max_workers=50) as pool:
        list(pool.map(lambda _: fire_hook(rt.paths.spool, payload), range(50)))
    spool = Spool(rt.paths.spool)
    wait_idle(spool)
    ids, count, fts, vec = memory_rows(rt.paths.memory_db)
    assert ids == swept_reference(tmp_path) and len(ids) == 24
    assert count == fts == vec == 24
    acked = drain_counts(spool, "acked")
    assert sum(acked) == 50, worker_log(spool)
    # the lock + starting marker keep it to (about) one worker
    assert 1 <= len(acked) <= 5, worker_log(spool)
    assert list(spool.failed.iterdir()) == []


def test_a_drain_leaves_entries_untouched_when_the_memory_stays_locked(
    rt: Runtime, isolated_env: Path
) -> None:
    path = session_path(isolated_env / ".claude", "/w", "locked-session")
    append_turns(path, "locked-session", "/w", range(2))
    fire_hook(rt.paths.spool, stop_payload(path, "locked-session", "/w"), worker=False)
    rt.paths.ensure()
    with writer_lock(rt.paths.lock_file):
        report = run_drain(
            rt, params=replace(SPOOL, store_wait_s=0.2, settle_s=0.0, idle_exit_s=0.0)
        )
    assert report.store_busy and report.released == 1 and report.acked == 0
    spool = Spool(rt.paths.spool)
    [name] = spool.pending()
    assert SpoolEntry.parse((spool.new / name).read_bytes()).attempts == 0
    report = run_drain(rt, params=replace(SPOOL, settle_s=0.0, idle_exit_s=0.0))
    assert report.acked == 1 and report.chunks_written == 4 and spool.pending() == []


def test_a_worker_waiting_for_a_growing_transcript_leaves_the_memory_free(
    rt: Runtime, isolated_env: Path
) -> None:
    # The agent is still appending when its hook fires: the worker waits for the transcript to
    # settle, and must not hold the memory's writer lock meanwhile (a `funes index` run then
    # would be refused with 75 for up to settle_max_s, batch after batch).
    import threading

    path = session_path(isolated_env / ".claude", "/w", "growing-session")
    append_turns(path, "growing-session", "/w", range(2))
    fire_hook(rt.paths.spool, stop_payload(path, "growing-session", "/w"), worker=False)
    rt.paths.ensure()
    params = replace(SPOOL, settle_s=0.5, settle_max_s=4.0, idle_exit_s=0.0)
    reports = []
    worker = threading.Thread(target=lambda: reports.append(run_drain(rt, params=params)))
    worker.start()
    free, refused = 0, 0
    for n in range(2, 14):  # ~2.4 s of appends, every 0.2 s: the transcript never settles
        append_turns(path, "growing-session", "/w", [n])
        try:
            with writer_lock(rt.paths.lock_file):
                free += 1
        except StoreLocked:
            refused += 1
        time.sleep(0.2)
    worker.join(timeout=60)
    assert refused == 0 and free == 12
    [report] = reports
    assert report.acked == 1 and Spool(rt.paths.spool).pending() == []
    _, count, _, _ = memory_rows(rt.paths.memory_db)
    assert count >= 4  # it indexed what was there once it stopped waiting


def test_a_second_drain_steps_aside_while_a_worker_holds_the_lock(rt: Runtime) -> None:
    from funes.ingest import worker_lock

    spool = Spool(rt.paths.spool).ensure()
    spool.enqueue(SpoolEntry(agent="claude_code"))
    with worker_lock(spool) as held:
        assert held
        report = run_drain(rt, params=replace(SPOOL, idle_exit_s=0.0))
    assert report.busy and report.entries == 0 and len(spool.pending()) == 1


def test_a_worker_that_steps_aside_clears_the_start_marker_its_hook_left(rt: Runtime) -> None:
    # A hook saw no lock, the running worker took it, the hook spawned a second worker: that
    # one must not leave `worker.starting` behind, or no hook starts a worker for 30 s.
    from funes.ingest import worker_lock

    spool = Spool(rt.paths.spool).ensure()
    with worker_lock(spool) as held:
        assert held
        spool.starting_marker.write_text("12345")
        report = run_drain(rt, params=replace(SPOOL, idle_exit_s=0.0))
        assert report.busy
        assert not spool.starting_marker.exists()


def test_funes_index_also_drains_the_spool(rt: Runtime, isolated_env: Path) -> None:
    path = session_path(isolated_env / ".claude", "/w", "indexed-session")
    append_turns(path, "indexed-session", "/w", range(3))
    for _ in range(3):
        fire_hook(rt.paths.spool, stop_payload(path, "indexed-session", "/w"), worker=False)
    outcome = run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    assert outcome.report.chunks_written == 6
    assert (
        outcome.drain is not None and outcome.drain.acked == 3 and outcome.drain.chunks_written == 0
    )
    status = run_spool_status(rt)
    assert status.waiting == 0 and status.agents["claude_code"].last_fired is not None


@pytest.mark.slow
def test_killing_the_worker_at_random_instants_loses_and_duplicates_nothing(
    rt: Runtime, isolated_env: Path, tmp_path: Path
) -> None:
    seed = int(os.environ.get("FUNES_KILL_SEED", "20261129"))
    rng = random.Random(seed)
    sessions = [f"killed-session-{i}" for i in range(3)]
    paths = {s: session_path(isolated_env / ".claude", f"/work/{s}", s) for s in sessions}
    next_turn = dict.fromkeys(sessions, 0)
    spool = Spool(rt.paths.spool)
    kills = 0
    for _ in range(10):
        # The agents keep working: turns are appended and hooks fire between kills.
        for s in rng.sample(sessions, 2):
            append_turns(paths[s], s, f"/work/{s}", range(next_turn[s], next_turn[s] + 25))
            next_turn[s] += 25
            fire_hook(rt.paths.spool, stop_payload(paths[s], s, f"/work/{s}"), worker=False)
        worker = subprocess.Popen(
            [sys.executable, "-m", "funes", "spool", "drain"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 3.5))
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            kills += 1
        worker.wait()
    final = subprocess.run(
        [sys.executable, "-m", "funes", "spool", "drain"], capture_output=True, timeout=600
    )
    assert final.returncode == 0, final.stderr.decode()
    wait_idle(spool)
    ids, count, fts, vec = memory_rows(rt.paths.memory_db)
    assert kills >= 5, f"seed {seed}: only {kills} workers were killed mid-run"
    assert count == fts == vec, f"seed {seed}: duplicated or orphaned rows"
    assert ids == swept_reference(tmp_path), f"seed {seed}: chunk sets differ"
    assert list(spool.failed.iterdir()) == []


def test_the_worker_reads_the_agent_home_the_hook_ran_with(rt: Runtime, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "claude-config"
    path = session_path(moved, "/w/moved", "moved-session")
    append_turns(path, "moved-session", "/w/moved", range(2))
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(moved))
    payload = stop_payload(path, "moved-session", "/w/moved")
    fire_hook(rt.paths.spool, payload, worker=False, env=env)
    report = run_drain(rt, params=replace(SPOOL, settle_s=0.0, idle_exit_s=0.0))
    assert report.acked == 1 and report.units == 1 and report.chunks_written == 4


def test_funes_spool_status_and_funes_status_show_each_agents_hook(
    rt: Runtime, isolated_env: Path
) -> None:
    from click.testing import CliRunner

    from funes.cli import cli
    from funes.commands import run_add
    from funes.wiring import agent_harness

    run_add(rt, agent_harness("claude"), force=True)
    spool = Spool(rt.paths.spool)
    fire_hook(rt.paths.spool, {"session_id": "nowhere"}, worker=False)
    name = spool.pending()[0]
    spool.claim(name)
    spool.park(name, "ValueError: synthetic failure\ntraceback line")
    runner = CliRunner()
    out = runner.invoke(cli, ["spool", "status"]).output
    assert "claude_code: waiting=0 failed=1 last fired=20" in out
    assert f"failed: {name}: ValueError: synthetic failure" in out
    status = runner.invoke(cli, ["status", "--format", "agent"]).output
    assert (
        "agent claude_code: hook installed, last fired 20" in status
        and "failed 1, mcp registered" in status
    )
    assert (
        "attention: 1 hook entry failed to index" in status and "next: funes spool retry" in status
    )
    runner.invoke(cli, ["spool", "retry"])
    assert spool.backlog()["claude_code"].failed == 0


def test_retry_turns_an_unreadable_parked_entry_into_a_sweep_of_its_agent(
    rt: Runtime, isolated_env: Path
) -> None:
    # A damaged entry file (or one a newer funes wrote) was parked at once; `spool retry` used
    # to skip it silently, so status asked for a retry forever and its turn waited for a sweep.
    path = session_path(isolated_env / ".claude", "/w", "damaged-session")
    append_turns(path, "damaged-session", "/w", range(2))
    spool = Spool(rt.paths.spool).ensure()
    (spool.failed / "00000000000000000001-1-abcd.claude_code.json").write_bytes(b'{"v": 99, "ag')
    (spool.failed / "00000000000000000002-1-abcd.json").write_bytes(b"\xff")  # agent unknown
    assert retry_failed(rt) == 1
    [name] = spool.pending()
    entry = SpoolEntry.parse((spool.new / name).read_bytes())
    assert entry.agent == "claude_code" and entry.sweep
    report = run_drain(rt, params=replace(SPOOL, settle_s=0.0, idle_exit_s=0.0))
    assert report.acked == 1 and report.sweeps == 1 and report.chunks_written == 4
    assert [p.name for p in spool.failed.glob("*.json")] == ["00000000000000000002-1-abcd.json"]
