"""--project, --since/--until and --session through the real CLI and the MCP tools; `get`
with the 8-character session id a recall header prints."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.agent_format import parse_recall
from support.claude import write_claude_session
from support.cli import Ran

pytestmark = pytest.mark.models

A = "aaaa1111-0000-4000-8000-000000000001"
B = "bbbb2222-0000-4000-8000-000000000002"
B2 = "bbbb2222-9999-4000-8000-000000000003"  # shares B's first 8 characters
C = "cccc3333-0000-4000-8000-000000000004"


@pytest.fixture
def sessions(isolated_env: Path, run: Callable[..., Ran]) -> Callable[..., Ran]:
    claude = isolated_env / ".claude"
    heron = [("user", "why is the heron job slow?"), ("assistant", "The heron job scans the whole table.")]  # fmt: skip
    write_claude_session(
        claude, heron, session_id=A, cwd="/home/dev/shop", start="2026-03-01T10:00"
    )
    write_claude_session(
        claude, heron, session_id=B, cwd="/home/dev/shop/api", start="2026-04-10T10:00"
    )
    write_claude_session(
        claude, heron, session_id=B2, cwd="/home/dev/other", start="2026-04-11T10:00"
    )
    write_claude_session(claude, heron, session_id=C, cwd="/home/dev/other", start="2026-04-12T10:00")  # fmt: skip
    assert run("index", "--yes").returncode == 0
    return run


def _sessions_of(out: str) -> set[str]:
    """The sessions of every hit, and of the identical copies a hit names (`= also`)."""
    hits = parse_recall(out)[1]
    return {h.get.split()[2] for h in hits} | {a.split()[2] for h in hits for a in h.also}


def test_recall_filters_by_project_time_and_session(sessions: Callable[..., Ran]) -> None:
    run = sessions
    assert _sessions_of(run("recall", "heron job", "-k", "20").stdout) == {A, B, B2, C}
    assert _sessions_of(run("recall", "heron job", "--project", "/home/dev/shop").stdout) == {A, B}
    assert _sessions_of(run("recall", "heron job", "--project", "other").stdout) == {B2, C}
    april = run("recall", "heron job", "--since", "2026-04-01", "--until", "2026-04-11")
    assert _sessions_of(april.stdout) == {B, B2}  # the 11th counts whole
    assert _sessions_of(run("recall", "heron job", "--session", "cccc3333").stdout) == {C}
    both = run("recall", "heron job", "--project", "shop", "--since", "2026-04-01")
    assert both.stdout == "no results\n"  # `shop` names /home/dev/shop, not …/shop/api


def test_a_bad_scope_is_a_usage_error(sessions: Callable[..., Ran]) -> None:
    run = sessions
    ambiguous = run("recall", "heron", "--session", "bbbb2222")
    assert ambiguous.returncode == 1 and "names several sessions" in ambiguous.stderr
    assert B in ambiguous.stderr and B2 in ambiguous.stderr
    unknown = run("recall", "heron", "--session", "dddd")
    assert unknown.returncode == 1 and "no session 'dddd'" in unknown.stderr
    bad = run("recall", "heron", "--since", "last tuesday")
    assert bad.returncode == 1 and "not a time" in bad.stderr and "hint:" in bad.stderr
    # a time the calendar cannot hold is the same usage error, in every verb, not a traceback
    for args in (
        ("recall", "heron", "--since", "99999999d"),
        ("recall", "heron", "--until", "9999-12-31"),
        ("sessions", "--since", "999999999w"),
        ("forget", "--before", "99999999d", "--yes"),
    ):
        far = run(*args)
        assert far.returncode == 1 and "out of range" in far.stderr, (args, far.stderr)
        assert "Traceback" not in far.stderr


def test_get_accepts_the_short_session_id_of_a_recall_header(sessions: Callable[..., Ran]) -> None:
    run = sessions
    out = run("recall", "heron job", "--session", A).stdout
    _, hits = parse_recall(out)
    short = hits[0].header.split()[2].rsplit("/", 1)[1]
    turn = hits[0].get.split()[3]
    assert short == A[:8]
    got = run("get", short, turn, "--format", "agent", "--window", "0")
    assert got.returncode == 0 and f"turn={turn}" in got.stdout
    ambiguous = run("get", B[:8], turn)
    assert ambiguous.returncode == 1 and "names several sessions" in ambiguous.stderr
    missing = run("get", "ffff", turn)  # no session is named so: say that, not "no such turn"
    assert missing.returncode == 1
    assert missing.stdout == "session ffff not found in this memory\n"
    assert "funes: `funes sessions` lists the sessions this memory holds" in missing.stderr
    absent = run("get", A[:8], "no-such-turn")  # the session is there, the turn is not
    assert absent.returncode == 1
    assert absent.stdout == f"turn no-such-turn not found in session {A}\n"
    assert "funes sessions" not in absent.stderr


def test_get_with_a_time_range_shows_only_turns_in_it(sessions: Callable[..., Ran]) -> None:
    run = sessions
    out = run("recall", "heron job scans the whole table", "--session", A, "-k", "5").stdout
    answer = next(h for h in parse_recall(out)[1] if "scans the whole table" in h.text[0])
    turn = answer.get.split()[3]  # the reply, a second after the question
    whole = run("get", A, turn, "--format", "agent")
    assert whole.stdout.count("---\n") == 2 and "why is the heron job slow" in whole.stdout
    late = run("get", A, turn, "--format", "agent", "--since", "2026-03-01T10:00:01Z")
    assert late.returncode == 0 and late.stdout.count("---\n") == 1
    assert "why is the heron job slow" not in late.stdout
    early = run("get", A, turn, "--until", "2026-03-01T10:00:01Z")
    assert early.returncode == 1 and "not found" in early.stdout


def test_the_mcp_tools_take_the_same_scope(sessions: Callable[..., Ran]) -> None:
    from funes.mcp_server import Tools
    from funes.memory import Runtime

    tools = Tools(Runtime.resolve())
    reply = tools.call("recall", {"query": "heron job", "project": "/home/dev/shop/api"})
    assert not reply.is_error and _sessions_of(reply.text) == {B}
    dated = tools.call("recall", {"query": "heron job", "until": "2026-04-01"})
    assert _sessions_of(dated.text) == {A}
    short = tools.call("recall", {"query": "heron job", "session": "cccc"})
    assert _sessions_of(short.text) == {C}
    bad = tools.call("recall", {"query": "heron", "since": "whenever"})
    assert bad.is_error and "not a time" in bad.text
    far = tools.call("recall", {"query": "heron", "since": "99999999d"})
    assert far.is_error and "out of range" in far.text, far.text
    turn = parse_recall(short.text)[1][0].get.split()[3]
    got = tools.call("get", {"session_id": "cccc3333", "turn_uuid": turn, "since": "2027-01-01"})
    assert got.is_error and got.text == f"funes: turn {turn} not found in session {C}"
    unknown = tools.call("get", {"session_id": "ffff", "turn_uuid": turn})  # an error like others
    assert unknown.is_error and unknown.text == (
        "funes: session ffff not found in this memory\nhint: the `sessions` tool lists its sessions"
    )


def test_get_with_a_project_finds_only_turns_of_that_project(sessions: Callable[..., Ran]) -> None:
    run = sessions
    out = run("recall", "heron job", "--session", C).stdout
    turn = parse_recall(out)[1][0].get.split()[3]
    inside = run("get", C, turn, "--project", "/home/dev/other", "--format", "agent")
    assert inside.returncode == 0 and f"turn={turn}" in inside.stdout
    outside = run("get", C, turn, "--project", "/home/dev/shop")
    assert outside.returncode == 1 and "not found" in outside.stdout


def test_a_repeated_type_means_any_of_those_block_types(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    # `--type tool_use --type tool_result` kept only the last one (click's last-wins)
    write_claude_session(isolated_env / ".claude")  # text, a tool call and its output
    assert run("index", "--yes").returncode == 0

    def types(*flags: str) -> set[str]:
        out = run("recall", "busy_timeout database", "--all", "-k", "20", *flags)
        assert out.returncode == 0, out.stderr
        return {h.header.split()[3] for h in parse_recall(out.stdout)[1]}

    assert types("--type", "tool_result") == {"tool_result"}
    assert types("--type", "tool_use", "--type", "tool_result") == {"tool_use", "tool_result"}
    assert types("--type", "tool_result", "--type", "text") == {"tool_result", "text"}


def test_a_scope_that_matches_no_session_says_so_on_stderr(sessions: Callable[..., Ran]) -> None:
    # a bare `no results` read as "nothing relevant", not "your --project names nothing"
    run = sessions
    nowhere = run("recall", "heron job", "--project", "/nonexistent")
    assert (nowhere.returncode, nowhere.stdout) == (0, "no results\n")
    assert (
        "funes: no session in this memory matches --project /nonexistent; `funes sessions` "
        "lists the sessions it holds" in nowhere.stderr
    )
    later = run("recall", "heron job", "--session", "cccc3333", "--since", "2030-01-01")
    assert (later.returncode, later.stdout) == (0, "no results\n")
    assert "no session in this memory matches --since 2030-01-01 --session cccc3333" in later.stderr
    unknown = run("recall", "zebra", "--project", "shop")  # the scope holds sessions: no note
    assert unknown.returncode == 0 and "no session in this memory" not in unknown.stderr
