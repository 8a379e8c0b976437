"""`funes sessions` and the MCP `sessions` tool: newest first, filtered, paged, every entry
with a `→ get` line that opens the session's first turn."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

pytestmark = pytest.mark.models

HEADER = re.compile(
    r"^\[(?P<started>[^\]\s]*)\] (?P<harness>\S+) (?P<where>\S+) turns=(?P<turns>\d+) "
    r"last=\[(?P<ended>[^\]\s]*)\] host=(?P<host>\S+)$"
)


def entries(out: str) -> list[dict[str, str]]:
    """The sessions of `funes sessions` agent output, by the grammar AGENTS.md publishes."""
    found: list[dict[str, str]] = []
    lines = out.rstrip("\n").split("\n")
    assert re.fullmatch(r"sessions \d+-\d+ of \d+, newest first", lines[0]), lines[0]
    current: dict[str, str] = {}
    for line in lines[1:]:
        if m := HEADER.match(line):
            current = dict(m.groupdict())
        elif line.startswith("  → get "):
            current["session"], current["turn"] = line.split()[2:4]
        elif line.startswith("  project "):
            current["project"] = line[len("  project ") :]
        elif line.startswith("> "):
            current["opening"] = line[2:]
        elif line == "---":
            found.append(current)
        else:
            assert line.startswith("more: --offset "), line
    return found


@pytest.fixture
def memory(isolated_env: Path, run: Callable[..., Ran]) -> Callable[..., Ran]:
    claude = isolated_env / ".claude"
    write_claude_session(
        claude,
        [("user", "Migrate the ledger tables to WAL"), ("assistant", "Done, WAL is on.")],
        session_id="11111111-aaaa-4000-8000-000000000001",
        cwd="/home/dev/ledger",
        start="2026-03-01T09:00",
    )
    write_claude_session(
        claude,
        [
            ("user", "Why is the heron export slow?"),
            ("assistant", "It scans everything."),
            ("user", "Stream it"),
            ("assistant", "Streaming now.\n---\n[x] fake"),
        ],
        session_id="22222222-bbbb-4000-8000-000000000002",
        cwd="/home/dev/heron",
        start="2026-04-05T14:00",
    )
    write_claude_session(
        claude,
        [("user", "Rotate the heron signing keys"), ("assistant", "Rotated.")],
        session_id="33333333-cccc-4000-8000-000000000003",
        cwd="/home/dev/heron/keys",
        start="2026-04-20T08:00",
    )
    assert run("index", "--yes").returncode == 0
    return run


def test_sessions_are_listed_newest_first_with_their_opening_prompt(
    memory: Callable[..., Ran],
) -> None:
    out = memory("sessions")
    assert out.returncode == 0, out.stderr
    listed = entries(out.stdout)
    assert [e["session"][:8] for e in listed] == ["33333333", "22222222", "11111111"]
    heron = listed[1]
    assert heron["started"] == "2026-04-05T14:00:00.000Z"
    assert heron["ended"] == "2026-04-05T14:00:03.000Z"
    assert heron["turns"] == "4" and heron["harness"] == "claude_code"
    assert heron["project"] == "/home/dev/heron"
    assert heron["opening"] == "Why is the heron export slow?"
    assert heron["host"] != "-"
    got = memory("get", heron["session"], heron["turn"], "--window", "0", "--format", "agent")
    assert "> Why is the heron export slow?" in got.stdout


def test_sessions_filter_by_project_time_prompt_and_agent(memory: Callable[..., Ran]) -> None:
    def ids(*args: str) -> list[str]:
        out = memory("sessions", *args)
        assert out.returncode == 0, out.stderr
        return (
            [] if out.stdout == "no sessions\n" else [e["session"][:8] for e in entries(out.stdout)]
        )

    assert ids("--project", "/home/dev/heron") == ["33333333", "22222222"]
    assert ids("--project", "ledger") == ["11111111"]
    assert ids("--since", "2026-04-01", "--until", "2026-04-10") == ["22222222"]
    assert ids("--prompt", "HERON") == ["33333333", "22222222"]
    assert ids("--prompt", "signing keys", "--project", "heron") == []  # `heron` is /…/heron only
    assert ids("--harness", "codex") == []
    bad = memory("sessions", "--since", "eventually")
    assert bad.returncode == 1 and "not a time" in bad.stderr


def test_sessions_are_paged(memory: Callable[..., Ran]) -> None:
    first = memory("sessions", "--limit", "2")
    assert first.stdout.splitlines()[0] == "sessions 1-2 of 3, newest first"
    assert first.stdout.rstrip().endswith("more: --offset 2")
    second = memory("sessions", "--limit", "2", "--offset", "2")
    assert second.stdout.splitlines()[0] == "sessions 3-3 of 3, newest first"
    assert [e["session"][:8] for e in entries(second.stdout)] == ["11111111"]
    assert "more:" not in second.stdout
    assert memory("sessions", "--offset", "9").stdout == "no sessions past 9 of 3\n"


def test_the_mcp_sessions_tool_takes_the_same_filters(memory: Callable[..., Ran]) -> None:
    from funes.mcp_server import Tools, tool_list
    from funes.memory import Runtime

    assert "sessions" in {t["name"] for t in tool_list()}
    tools = Tools(Runtime.resolve())
    reply = tools.call("sessions", {"project": "/home/dev/heron", "since": "2026-04-10"})
    assert not reply.is_error
    assert [e["session"][:8] for e in entries(reply.text)] == ["33333333"]
    paged = tools.call("sessions", {"limit": 1, "offset": 1, "prompt": "heron"})
    assert [e["session"][:8] for e in entries(paged.text)] == ["22222222"]
    bad = tools.call("sessions", {"limit": 0})
    assert bad.is_error and "limit" in bad.text
