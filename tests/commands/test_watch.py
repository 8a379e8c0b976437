"""`funes watch` with a real watchdog observer on temporary folders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from support.claude import append_turns, session_path, stop_payload

from funes.commands.watch import run_watch
from funes.ingest import Watcher, WatchRoot
from funes.memory import Runtime
from funes.settings import SPOOL
from funes.store import Store

REPO = Path(__file__).resolve().parents[2]
FAST = replace(SPOOL, watch_debounce_s=0.3, settle_s=0.0)


def chunk_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with Store.open(db, readonly=True) as store:
            return int(store.raw.execute("select count(*) from chunks").fetchone()[0])
    except Exception:  # the worker is still creating the memory
        return 0


def wait_for(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def test_the_watcher_reports_each_changed_root_once_after_it_goes_quiet(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    seen: list[set[str]] = []
    watcher = Watcher(
        [WatchRoot("a", a, match=lambda n: n.endswith(".jsonl")), WatchRoot("b", b)],
        seen.append,
        debounce_s=0.3,
    )
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,))
    thread.start()
    try:
        assert watcher.ready.wait(10)
        wait_for(lambda: seen == [{"a", "b"}], 10)  # the initial catch-up round
        for i in range(5):
            (a / "s.jsonl").write_text("x" * (i + 1))
        (a / "ignored.txt").write_text("not a transcript")
        wait_for(lambda: len(seen) >= 2, 10)
        time.sleep(0.8)
        assert seen[1:] == [{"a"}]
        (a / "s.jsonl").read_text()  # reading a transcript is not a change
        time.sleep(0.8)
        assert len(seen) == 2
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_watch_indexes_new_and_growing_sessions_and_stops_when_asked(isolated_env: Path) -> None:
    rt = Runtime.resolve()
    projects = isolated_env / ".claude" / "projects"
    projects.mkdir(parents=True)
    stop, ready = threading.Event(), threading.Event()
    result: list[object] = []
    thread = threading.Thread(
        target=lambda: result.append(run_watch(rt, stop, params=FAST, ready=ready))
    )
    thread.start()
    try:
        assert ready.wait(20)
        path = session_path(isolated_env / ".claude", "/w/watched", "watched-session")
        append_turns(path, "watched-session", "/w/watched", range(2))
        wait_for(lambda: chunk_count(rt.paths.memory_db) == 4)
        append_turns(path, "watched-session", "/w/watched", range(2, 5))
        wait_for(lambda: chunk_count(rt.paths.memory_db) == 10)
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive() and result


def test_watch_drains_hook_entries_that_arrive_in_the_spool(isolated_env: Path) -> None:
    rt = Runtime.resolve()
    path = session_path(isolated_env / ".claude", "/w/spooled", "spooled-session")
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(
        target=run_watch, args=(rt, stop), kwargs={"params": FAST, "ready": ready}
    )
    thread.start()
    try:
        assert ready.wait(20)
        append_turns(path, "spooled-session", "/w/spooled", range(3))
        subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                str(REPO / "hooks" / "enqueue.py"),
                "--agent",
                "claude",
                "--spool",
                str(rt.paths.spool),
                "--no-worker",
            ],
            input=json.dumps(stop_payload(path, "spooled-session", "/w/spooled")).encode(),
            check=True,
        )
        wait_for(
            lambda: (
                chunk_count(rt.paths.memory_db) == 6
                and not list((rt.paths.spool / "new").iterdir())
            )
        )
    finally:
        stop.set()
        thread.join(30)


def test_funes_watch_exits_cleanly_on_sigterm(isolated_env: Path) -> None:
    (isolated_env / ".claude" / "projects").mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes", "watch"],
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert "watching" in line, line
        path = session_path(isolated_env / ".claude", "/w/sig", "sig-session")
        append_turns(path, "sig-session", "/w/sig", range(2))
        wait_for(lambda: chunk_count(Runtime.resolve().paths.memory_db) == 4)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 0
    assert "stopped:" in proc.stderr.read()
