"""Publishing a bound memory at session boundaries, and recalling through the binding.

Two FUNES_HOMEs and two agent homes in one process play two hosts; the shared memory is a
directory (the Hub's failure paths are in tests/remote/test_publish_hub.py). The spool worker
runs in-process (`run_drain` with publishing on), real memories, the offline embedder.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from support.claude import WrittenSession, write_claude_session

from funes.commands import (
    IndexRequest,
    RecallRequest,
    run_add,
    run_get,
    run_index,
    run_recall,
    run_remove,
    run_status,
)
from funes.commands.add import create_shared
from funes.commands.publish import publish_due, request_publishing
from funes.commands.push import record_landed
from funes.commands.scope import Scope
from funes.commands.sessions import SessionsRequest, run_sessions
from funes.commands.spool import run_drain
from funes.ingest import Spool, SpoolEntry
from funes.memory import MemoryKind, MemoryRef, PublishQueue, Runtime, load_bindings, parse_memory
from funes.remote import PushReport
from funes.render import agent as agent_render
from funes.settings import SPOOL, PublishParams
from funes.store import Store
from funes.traces import Harness, short_id

pytestmark = pytest.mark.models

FAST = replace(SPOOL, idle_exit_s=0.0, settle_s=0.0)
NO_RETRY = PublishParams(backoff_s=())
CLAUDE = Harness.CLAUDE_CODE


def host(tmp_path: Path, name: str) -> Runtime:
    """One simulated machine: its own HOME (agent homes) and FUNES_HOME."""
    home = tmp_path / name / "home"
    home.mkdir(parents=True)
    (home / ".claude").mkdir()  # Claude Code is set up there (`funes add` checks)
    return Runtime.resolve({**os.environ, "HOME": str(home), "FUNES_HOME": str(tmp_path / name)})


def shared_dir(rt: Runtime, path: Path) -> MemoryRef:
    ref = MemoryRef(path.resolve().as_uri(), MemoryKind.DIR, path.resolve())
    create_shared(rt, ref)
    return parse_memory(str(path), rt)


def session(rt: Runtime, turns: list[tuple[str, str]]) -> WrittenSession:
    return write_claude_session(rt.homes.of(CLAUDE), turns)


def hook(rt: Runtime, written: WrittenSession, event: str) -> None:
    """What the installed hook leaves in the spool for one event of the session."""
    payload = {
        "session_id": written.session_id,
        "transcript_path": str(written.path),
        "hook_event_name": event,
    }
    Spool(rt.paths.spool).enqueue(
        SpoolEntry(
            agent=CLAUDE.value,
            event=event,
            session_id=written.session_id,
            transcript_path=str(written.path),
            payload=payload,
        )
    )


def remote_ids(path: Path) -> list[str]:
    import lance

    table = lance.dataset(str(path / "chunks.lance")).to_table(columns=["id"])
    return [str(v) for v in table.column("id").to_pylist()]


def local_ids(rt: Runtime) -> set[str]:
    store = Store.open(rt.paths.memory_db, readonly=True)
    try:
        return {r[0] for r in store.raw.execute("select id from chunks")}
    finally:
        store.close()


A_TURNS = [
    ("user", "why does the ocelot firmware brick on reboot?"),
    ("assistant", "The ocelot bootloader skips the watchdog reset; we flash v2.3 to fix it."),
]
B_TURNS = [
    ("user", "what broke the ocelot firmware build on the second host?"),
    ("assistant", "The ocelot build on this host lacked the arm toolchain; installed gcc-arm."),
]


def test_a_session_end_of_a_bound_agent_publishes_its_turns_and_a_turn_end_does_not(
    tmp_path: Path,
) -> None:
    a = host(tmp_path, "a")
    memory = shared_dir(a, tmp_path / "shared")
    run_add(a, CLAUDE, memory)
    assert load_bindings(a.paths)["claude_code"].memory == memory.label
    written = session(a, A_TURNS)

    hook(a, written, "Stop")
    turn = run_drain(a, params=FAST, publish=NO_RETRY)
    assert turn.acked == 1 and turn.publish_requests == 0 and turn.pushes == 0
    assert not (tmp_path / "shared" / "chunks.lance").exists()  # indexed, not published

    hook(a, written, "SessionEnd")
    end = run_drain(a, params=FAST, publish=NO_RETRY)
    assert end.publish_requests == 1 and end.pushes == 1 and end.push_failures == 0
    assert sorted(remote_ids(tmp_path / "shared")) == sorted(local_ids(a))

    [bound] = run_status(a, parse_memory(None, a)).bindings
    assert (bound.agent, bound.memory, bound.state) == ("claude_code", memory.label, "published")
    assert (bound.last_push_commit or "").startswith("v")  # a directory's commit: v<version>
    assert bound.last_pushed == len(local_ids(a))
    assert bound.pending_chunks == 0
    line = agent_render.status(run_status(a, parse_memory(None, a)))
    assert f"binding claude_code: {memory.label}; last push " in line
    assert f"commit {bound.last_push_commit} (2 chunks sent, 0 held back)" in line
    assert "; 0 chunks in 0 sessions not pushed" in line


def test_an_unbound_agent_publishes_nothing_and_remove_drops_the_binding(tmp_path: Path) -> None:
    a = host(tmp_path, "a")
    memory = shared_dir(a, tmp_path / "shared")
    run_add(a, CLAUDE, memory)
    run_remove(a, CLAUDE)
    assert load_bindings(a.paths) == {}
    written = session(a, A_TURNS)
    hook(a, written, "SessionEnd")
    report = run_drain(a, params=FAST, publish=NO_RETRY)
    assert report.acked == 1 and report.publish_requests == 0
    assert not (tmp_path / "shared" / "chunks.lance").exists()


def test_recall_through_a_bound_memory_shows_the_remote_and_this_hosts_unpublished_turns_once(
    tmp_path: Path,
) -> None:
    a, b = host(tmp_path, "a"), host(tmp_path, "b")
    memory = shared_dir(a, tmp_path / "shared")
    run_add(a, CLAUDE, memory)
    hook(a, session(a, A_TURNS), "SessionEnd")
    assert run_drain(a, params=FAST, publish=NO_RETRY).pushes == 1

    run_add(b, CLAUDE, parse_memory(str(tmp_path / "shared"), b))  # B joins
    mine = write_claude_session(b.homes.of(CLAUDE), B_TURNS, start="2026-11-21T10:00")  # newer
    run_index(b, parse_memory(None, b), IndexRequest(unbudgeted=True))  # indexed, not published

    def recalled() -> tuple[dict[str, str], Counter[str], str]:
        out = run_recall(b, memory, RecallRequest("ocelot firmware"))
        text = agent_render.recall(out)
        sessions = {h.chunk.session_id: out.memory_of(h.chunk.id) for h in out.result.hits}
        return sessions, Counter(h.chunk.id for h in out.result.hits), text

    sessions, ids, text = recalled()
    a_session = next(s for s in sessions if s != mine.session_id)
    assert sessions[a_session] == memory.label  # A's turn, from the shared memory
    assert sessions[mine.session_id] == "local"  # B's own turn, not published yet
    assert max(ids.values()) == 1
    assert f"--memory {memory.label}" in text and "--memory local" in text

    # the `→ get` line of the unpublished hit opens it, and so does the bound memory
    local_hit = next(
        line for line in text.splitlines() if "→ get" in line and line.endswith("local")
    )
    session_id, turn_id = local_hit.split()[2:4]
    for where in (parse_memory("local", b), memory):
        got = run_get(b, where, session_id, turn_id, window=1)
        assert any("arm toolchain" in block for t in got.turns for block in t.blocks), where
    # so does the short label a header shows, for `get` and `--session`, through the binding
    label = short_id(mine.session_id)
    assert label != mine.session_id
    got = run_get(b, memory, label, turn_id, window=1)
    assert got.session_id == mine.session_id and got.turns
    scoped = run_recall(b, memory, RecallRequest("ocelot firmware", scope=Scope(session=label)))
    assert {h.chunk.session_id for h in scoped.result.hits} == {mine.session_id}
    # `sessions` through the binding lists both, each once, newest first
    listed = run_sessions(b, memory, SessionsRequest()).page
    assert [s.session_id for s in listed.sessions] == [mine.session_id, a_session]
    assert listed.total == 2 and not listed.more
    second = run_sessions(b, memory, SessionsRequest(limit=1, offset=1)).page
    assert [s.session_id for s in second.sessions] == [a_session] and second.total == 2

    hook(b, mine, "SessionEnd")
    assert run_drain(b, params=FAST, publish=NO_RETRY).pushes == 1
    sessions, ids, _ = recalled()
    assert sessions[mine.session_id] == memory.label  # published now: shown from the remote
    assert max(ids.values()) == 1  # …and still once
    assert run_sessions(b, memory, SessionsRequest()).page.total == 2
    assert Counter(remote_ids(tmp_path / "shared")) == Counter(local_ids(a) | local_ids(b))


def test_a_failing_push_backs_off_then_parks_with_its_fix_and_the_next_boundary_retries(
    tmp_path: Path,
) -> None:
    a = host(tmp_path, "a")
    memory = shared_dir(a, tmp_path / "shared")
    run_add(a, CLAUDE, memory)
    written = session(a, A_TURNS)
    hook(a, written, "Stop")
    run_drain(a, params=FAST)
    # the shared directory goes away and a file takes its place: every push fails
    (tmp_path / "shared" / "funes.json").unlink()
    (tmp_path / "shared").rmdir()
    (tmp_path / "shared").write_text("not a directory")
    request_publishing(a, [SpoolEntry(agent="claude_code", event="SessionEnd")], now=0.0)

    clock = [1000.0]
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        clock[0] += s

    [outcome] = publish_due(
        a, params=PublishParams(backoff_s=(5.0, 30.0)), sleep=sleep, clock=lambda: clock[0]
    )
    assert (outcome.pushes, outcome.failures) == (0, 3) and waits == [5.0, 30.0]
    assert outcome.parked is not None and "not a directory" in outcome.parked
    report = run_status(a, parse_memory(None, a))
    [bound] = report.bindings
    assert bound.state == "parked" and bound.fix == f"funes push {tmp_path / 'shared'}"
    assert any("publishing to" in item and "stopped" in item for item in report.attention)
    assert bound.fix in report.next_steps
    # parked: a worker does not retry it on its own…
    assert publish_due(a, params=NO_RETRY, sleep=sleep, clock=lambda: clock[0]) == []
    # …the next session boundary does, and it lands once the directory is back
    (tmp_path / "shared").unlink()
    create_shared(a, MemoryRef(memory.label, MemoryKind.DIR, memory.path))
    hook(a, written, "SessionEnd")
    assert run_drain(a, params=FAST, publish=NO_RETRY).pushes == 1
    assert run_status(a, parse_memory(None, a)).bindings[0].state == "published"


# held back by the push gate's own detectors, let through by index-time redaction
LEAK = "The key you pasted (`opensesameforever`) returns 401"


def test_a_boundary_that_finds_only_blocks_held_back_before_lands_without_a_failure(
    tmp_path: Path,
) -> None:
    a = host(tmp_path, "a")
    memory = shared_dir(a, tmp_path / "shared")
    run_add(a, CLAUDE, memory)
    written = session(a, [("user", "why does the ocelot login fail?"), ("assistant", LEAK)])
    hook(a, written, "SessionEnd")
    first = run_drain(a, params=FAST, publish=NO_RETRY)
    assert (first.pushes, first.push_failures) == (1, 0)  # the prompt went, the reply stayed
    assert len(remote_ids(tmp_path / "shared")) == 1

    for _ in range(2):  # later boundaries with nothing new: landed, never a failure or a park
        hook(a, written, "SessionStart")
        again = run_drain(a, params=FAST, publish=NO_RETRY)
        assert (again.publish_requests, again.pushes, again.push_failures) == (1, 1, 0)
        [bound] = run_status(a, parse_memory(None, a)).bindings
        assert (bound.state, bound.attempts, bound.reason) == ("published", 0, None)
        assert (bound.last_pushed, bound.last_held_back) == (0, 1)

    # a session whose every block holds a secret: refused and parked at once (documented)…
    leak_only = session(a, [("assistant", LEAK.replace("opensesame", "swordfish"))])
    hook(a, leak_only, "SessionEnd")
    refused = run_drain(a, params=FAST, publish=NO_RETRY)
    assert (refused.pushes, refused.push_failures) == (0, 1)
    status = run_status(a, parse_memory(None, a))
    [parked] = status.bindings
    assert parked.state == "parked" and parked.fix in status.next_steps
    # what publishes it: the gate's own detectors found it, so scrub (index-time rules) cannot
    assert parked.fix is not None and parked.fix.startswith(
        "take the secret out of the transcript, then funes index --yes, then funes push "
    )
    # …and the next boundary, with nothing new, lands: the parked state does not come back
    hook(a, leak_only, "SessionStart")
    assert run_drain(a, params=FAST, publish=NO_RETRY).push_failures == 0
    [bound] = run_status(a, parse_memory(None, a)).bindings
    assert (bound.state, bound.last_held_back) == ("published", 2)
    assert len(remote_ids(tmp_path / "shared")) == 1


def test_a_push_that_lands_serves_only_the_requests_made_before_it_started(
    tmp_path: Path,
) -> None:
    rt = host(tmp_path, "a")
    queue = PublishQueue(rt.paths)
    queue.request("k", "hf://datasets/o/r", now=1.0)
    generation = queue.load("k", "hf://datasets/o/r").requested
    queue.request("k", "hf://datasets/o/r", now=2.0)  # a boundary while the push runs
    report = PushReport("hf://datasets/o/r", commit="c" * 40, pushed=3)
    state = queue.update("k", "hf://datasets/o/r", lambda s: record_landed(s, generation, report))
    assert state.wanted and state.due(3.0)  # the second request is still owed
    assert state.last_ok_commit == "c" * 40 and state.last_ok_pushed == 3
