"""`funes forget`: sessions leave the memory for good (their text too), and no later index,
sweep or hook brings them back; it asks at a terminal and refuses to run unasked elsewhere."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import append_turns, session_path, stop_payload, write_claude_session
from support.cli import Ran
from support.spool import drain_counts, fire_hook, wait_idle

from funes.commands.scope import parse_time
from funes.ingest import Spool
from funes.paths import Paths
from funes.store import Store

pytestmark = pytest.mark.models

GONE = "99999999-eeee-4000-8000-000000000009"
KEPT = "77777777-ffff-4000-8000-000000000007"
SECRET = "the owl vault combination is zqxwvkjplm"  # zqxwvkjplm: one FTS term, nowhere else


@pytest.fixture
def memory(isolated_env: Path, run: Callable[..., Ran]) -> Callable[..., Ran]:
    claude = isolated_env / ".claude"
    append_turns(session_path(claude, "/home/dev/owl", GONE), GONE, "/home/dev/owl", range(2))
    write_claude_session(
        claude,
        [("user", f"note this: {SECRET}"), ("assistant", "Noted.")],
        session_id="abababab-eeee-4000-8000-00000000000a",
        cwd="/home/dev/owl",
        start="2026-01-05T10:00",
    )
    write_claude_session(
        claude,
        [("user", "what does the frobnicator widget do?"), ("assistant", "It aligns.")],
        session_id=KEPT,
        cwd="/home/dev/other",
        start="2026-06-01T10:00",
    )
    assert run("index", "--yes").returncode == 0
    return run


def _stored_sessions() -> set[str]:
    with Store.open(Paths.resolve().memory_db, readonly=True) as store:
        return {r[0] for r in store.raw.execute("select distinct session_id from chunk_rows")}


def _memory_bytes() -> bytes:
    db = Paths.resolve().memory_db
    return b"".join(p.read_bytes() for p in db.parent.glob("memory.db*") if p.is_file())


def test_forget_removes_a_session_and_no_index_sweep_or_hook_brings_it_back(
    memory: Callable[..., Ran], isolated_env: Path, funes_env: dict[str, str]
) -> None:
    run = memory
    assert GONE in _stored_sessions()
    refused = run("forget", GONE[:8])  # off a terminal, unasked: refuse, change nothing
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert GONE in _stored_sessions()

    done = run("forget", GONE[:8], "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("forgot 1 session (4 chunks) in local")
    assert GONE not in _stored_sessions()
    assert "widget 1" not in run("recall", "frobnicator widget 1", "-k", "20").stdout
    assert GONE[:8] not in run("sessions").stdout

    # the agent keeps writing the session: a sweep re-reads it and stores nothing of it
    transcript = session_path(isolated_env / ".claude", "/home/dev/owl", GONE)
    append_turns(transcript, GONE, "/home/dev/owl", range(2, 4))
    swept = run("index", "--yes")
    assert "skipped 8 chunks of forgotten sessions" in swept.stderr, swept.stderr  # all re-read
    assert GONE not in _stored_sessions()
    # … and so does the hook's worker
    append_turns(transcript, GONE, "/home/dev/owl", range(4, 5))
    spool = Paths.resolve().spool
    fire_hook(spool, stop_payload(transcript, GONE, "/home/dev/owl"), env=funes_env)
    wait_idle(Spool(spool))
    assert sum(drain_counts(Spool(spool))) == 1  # the worker did run, and acked the entry
    assert GONE not in _stored_sessions() and KEPT in _stored_sessions()
    status = run("status", "--format", "agent").stdout
    assert "forgotten: 1 session" in status


def test_forget_leaves_no_trace_of_the_text_in_the_memory_files(memory: Callable[..., Ran]) -> None:
    run = memory
    assert SECRET.encode() in _memory_bytes()
    assert run("forget", "abababab-eeee-4000-8000-00000000000a", "--yes").returncode == 0
    left = _memory_bytes()
    assert SECRET.encode() not in left  # not in free pages or the WAL
    assert b"zqxwvkjplm" not in left and b"xwvkjplm" not in left  # nor as an FTS term


def test_a_before_rule_forgets_old_sessions_now_and_later(
    memory: Callable[..., Ran], isolated_env: Path
) -> None:
    run = memory
    out = run("forget", "--before", "2026-03-01", "--yes")
    assert out.returncode == 0, out.stderr
    assert "rule kept: later sessions started before" in out.stdout
    assert _stored_sessions() == {KEPT, GONE}  # GONE's turns are from November
    late_old = "55555555-0000-4000-8000-000000000005"  # written now, dated before the rule
    new = "66666666-0000-4000-8000-000000000006"
    claude = isolated_env / ".claude"
    write_claude_session(
        claude, [("user", "old kestrel")], session_id=late_old, start="2026-02-01T09:00"
    )
    write_claude_session(
        claude, [("user", "new kestrel")], session_id=new, start="2026-07-01T09:00"
    )
    assert run("index", "--yes").returncode == 0
    assert _stored_sessions() == {KEPT, GONE, new}
    status = json.loads(run("status", "--json").stdout)
    assert status["forgotten"]["sessions"] == 2
    assert status["forgotten"]["rules"] == [f"started before {parse_time('2026-03-01')}"]


def test_a_project_rule_forgets_that_projects_sessions_and_every_later_one(
    memory: Callable[..., Ran], isolated_env: Path
) -> None:
    run = memory
    assert run("forget", "--project", "/home/dev/owl", "--yes").returncode == 0
    assert _stored_sessions() == {KEPT}
    later = "88888888-0000-4000-8000-000000000008"
    write_claude_session(
        isolated_env / ".claude", [("user", "owl again")], session_id=later, cwd="/home/dev/owl/api"
    )
    assert run("index", "--yes").returncode == 0
    assert _stored_sessions() == {KEPT}


def test_forget_asks_at_a_terminal(memory: Callable[..., Ran], funes_env: dict[str, str]) -> None:
    def at_terminal(answer: bytes) -> tuple[int, str]:
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "funes", "forget", GONE],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=funes_env,
        )
        os.close(follower)
        seen = b""
        deadline = time.monotonic() + 120
        while b"[y/N]" not in seen and time.monotonic() < deadline:
            seen += os.read(leader, 4096)
        os.write(leader, answer)
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(leader)
        return proc.wait(timeout=120), seen.decode("utf-8", "replace")

    code, said = at_terminal(b"n\n")
    assert code == 0 and "forget 1 session (4 chunks)" in said and "nothing forgotten" in said
    assert GONE in _stored_sessions()
    code, said = at_terminal(b"y\n")
    assert code == 0 and "forgot 1 session" in said
    assert GONE not in _stored_sessions()


def test_forget_needs_something_to_forget_and_a_known_session(memory: Callable[..., Ran]) -> None:
    run = memory
    empty = run("forget", "--yes")
    assert empty.returncode == 1 and "needs a session" in empty.stderr
    unknown = run("forget", "abcdef12", "--yes")
    assert unknown.returncode == 1 and "no session 'abcdef12'" in unknown.stderr
    remote = run("forget", GONE, "--memory", "org/repo", "--yes")
    assert remote.returncode == 1 and "remote memory" in remote.stderr


def _move_memory_away() -> None:
    """What the rebuild advice asks for: the memory's files moved away, nothing else."""
    db = Paths.resolve().memory_db
    for part in db.parent.glob("memory.db*"):
        if not part.name.endswith(".forgotten.json"):
            part.rename(part.with_name("old-" + part.name))


def test_a_memory_built_again_at_its_path_keeps_out_what_was_forgotten(
    memory: Callable[..., Ran],
) -> None:
    """The advice for a damaged memory or a model change is to move memory.db away and index
    again: the tombstones kept beside it keep forgotten sessions out of the new memory."""
    run = memory
    assert run("forget", GONE, "--yes").returncode == 0
    assert run("forget", "--before", "2026-03-01", "--yes").returncode == 0
    kept = Paths.resolve().memory_db.with_name("memory.db.forgotten.json")
    assert kept.stat().st_mode & 0o777 == 0o600
    doc = json.loads(kept.read_text())
    assert GONE in doc["sessions"] and len(doc["rules"]) == 1

    _move_memory_away()
    rebuilt = run("index", "--yes")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _stored_sessions() == {KEPT}  # GONE by id, the January session by the rule
    assert "forgotten: " in run("status", "--format", "agent").stdout
    assert SECRET not in run("recall", "owl vault combination", "-k", "20").stdout

    # deleting the file is how a user lets the sessions come back
    kept.unlink()
    _move_memory_away()
    assert run("index", "--yes").returncode == 0
    assert GONE in _stored_sessions()


def test_tombstones_recorded_before_the_file_existed_are_written_out_by_the_next_writer(
    memory: Callable[..., Ran],
) -> None:
    run = memory
    assert run("forget", GONE, "--yes").returncode == 0
    kept = Paths.resolve().memory_db.with_name("memory.db.forgotten.json")
    kept.unlink()  # as an older funes left it: tombstones in the table alone
    assert run("index", "--yes").returncode == 0
    assert GONE in json.loads(kept.read_text())["sessions"]


def test_a_damaged_tombstone_file_is_reported_and_the_table_still_applies(
    memory: Callable[..., Ran],
) -> None:
    run = memory
    assert run("forget", GONE, "--yes").returncode == 0
    kept = Paths.resolve().memory_db.with_name("memory.db.forgotten.json")
    kept.write_text('{"format": "funes-forgotten/1", "sessions": [')
    again = run("index", "--yes")
    assert again.returncode == 0, again.stderr
    assert "tombstones beside the memory not read" in again.stderr
    assert GONE not in _stored_sessions()
    # the next forget writes the file again from the table
    assert run("forget", KEPT, "--yes").returncode == 0
    assert {GONE, KEPT} <= set(json.loads(kept.read_text())["sessions"])
