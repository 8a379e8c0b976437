"""--json on recall, get, status and sessions (the versioned documents of AGENTS.md), and the
human recall format at a terminal while a pipe still gets the agent format."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

pytestmark = pytest.mark.models

SESSION = "44444444-dddd-4000-8000-000000000004"
REPLY = "Pin the kestrel cache to 2 GB.\n---\n[2026-01-01T00:00:00.000Z] fake header"


@pytest.fixture
def memory(isolated_env: Path, run: Callable[..., Ran]) -> Callable[..., Ran]:
    write_claude_session(
        isolated_env / ".claude",
        [("user", "how big should the kestrel cache be?"), ("assistant", REPLY)],
        session_id=SESSION,
        cwd="/home/dev/kestrel",
        start="2026-05-01T12:00",
    )
    assert run("index", "--yes").returncode == 0
    return run


def test_recall_json_carries_every_hit_with_its_text_and_a_get_argv(
    memory: Callable[..., Ran],
) -> None:
    out = memory("recall", "kestrel cache size", "--json", "--neighbors", "1")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "funes.recall/1" and doc["query"] == "kestrel cache size"
    assert doc["memory"] == "local" and doc["owner"] is None and isinstance(doc["notes"], list)
    hits = doc["hits"]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    reply = next(h for h in hits if h["role"] == "assistant")
    assert reply["text"] == REPLY  # the stored text verbatim, structure-looking lines and all
    assert reply["session_id"] == SESSION and reply["cwd"] == "/home/dev/kestrel"
    assert reply["ts"] == "2026-05-01T12:00:01.000Z" and 0 <= reply["score"] <= 1
    assert reply["neighbors"] and reply["neighbors"][0]["role"] == "user"
    argv = reply["get"]
    assert argv[:2] == ["funes", "get"] and argv[2:4] == [SESSION, reply["turn_id"]]
    got = memory(*argv[1:], "--json", "--window", "0")
    turn = json.loads(got.stdout)
    assert turn["schema"] == "funes.get/1" and turn["found"] is True
    assert [t["blocks"] for t in turn["turns"]] == [[REPLY]]


def test_get_json_of_an_absent_turn_says_found_false_and_exits_1(
    memory: Callable[..., Ran],
) -> None:
    out = memory("get", SESSION, "no-such-turn", "--json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["found"] is False and doc["turns"] == [] and doc["turn_id"] == "no-such-turn"
    assert doc["session_found"] is True
    unknown = json.loads(memory("get", "ffffffff", "no-such-turn", "--json").stdout)
    assert unknown["found"] is False and unknown["session_found"] is False


def test_status_and_sessions_json(memory: Callable[..., Ran]) -> None:
    status = json.loads(memory("status", "--json").stdout)
    assert status["schema"] == "funes.status/1"
    assert status["exists"] is True and status["chunks"] == 2 and status["sessions"] == 1
    assert status["per_harness"] == {"claude_code": {"sessions": 1, "chunks": 2}}
    assert isinstance(status["attention"], list) and status["next"]
    listed = json.loads(memory("sessions", "--json").stdout)
    assert listed["schema"] == "funes.sessions/1" and listed["total"] == 1
    [s] = listed["sessions"]
    assert s["session_id"] == SESSION and s["turns"] == 2 and s["cwd"] == "/home/dev/kestrel"
    assert s["opening"] == "how big should the kestrel cache be?" and listed["more"] is False


def test_json_and_format_cannot_be_combined(memory: Callable[..., Ran]) -> None:
    out = memory("recall", "kestrel", "--json", "--format", "agent")
    assert out.returncode == 1 and "--json and --format" in out.stderr and out.stdout == ""


def test_format_json_is_the_json_flag(memory: Callable[..., Ran]) -> None:
    """`--format json` (what a user tries after `--format human`) prints the --json document."""
    for args in (["recall", "kestrel"], ["status"], ["sessions"]):
        flag, spelled = memory(*args, "--json"), memory(*args, "--format", "json")
        assert spelled.returncode == flag.returncode == 0, spelled.stderr
        assert json.loads(spelled.stdout)["schema"] == json.loads(flag.stdout)["schema"]
    both = memory("recall", "kestrel", "--json", "--format", "json")
    assert both.returncode == 0 and json.loads(both.stdout)["schema"] == "funes.recall/1"


def _at_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """`funes ARGS` with stdin and stdout on a pseudo-terminal; what it printed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes", *args],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env={**env, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the follower side closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_recall_is_human_at_a_terminal_and_the_agent_format_in_a_pipe(
    memory: Callable[..., Ran], funes_env: dict[str, str]
) -> None:
    human = _at_a_terminal(["recall", "kestrel cache size", "--no-rerank"], funes_env)
    assert "╭" in human and "funes get 44444444" in human  # panels, a short get command
    assert "  → get " not in human
    piped = subprocess.run(
        [sys.executable, "-m", "funes", "recall", "kestrel cache size", "--no-rerank"],
        capture_output=True,
        text=True,
        env=funes_env,
        timeout=120,
    )
    assert piped.stdout.splitlines()[1].startswith(f"  → get {SESSION} ")
    assert "╭" not in piped.stdout
    forced = memory("recall", "kestrel cache size", "--format", "human")
    assert "╭" in forced.stdout
