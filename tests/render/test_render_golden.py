"""The agent format is a published contract: byte-exact golden files pin it."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from funes.commands.get import GetOutcome
from funes.commands.recall import RecallOutcome
from funes.render import agent
from funes.retrieval import Hit, RecallResult, TurnView
from funes.store import StoredChunk

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"


def _chunk(
    rowid: int,
    seq: int,
    text: str,
    *,
    role: str = "assistant",
    block_type: str = "text",
    session_id: str = "7f3a9c2e-1b4d-4e8f-9a6b-0c2d4e6f8a1b",
    harness: str = "claude_code",
    session_label: str | None = None,
) -> StoredChunk:
    return StoredChunk(
        rowid=rowid,
        id=f"{rowid:016x}",
        text=text,
        session_id=session_id,
        turn_id=f"turn-{seq}",
        parent_id=None,
        seq=seq,
        ts="2026-04-02T10:11:12.345Z",
        role=role,
        block_type=block_type,
        block_idx=0,
        split_idx=0,
        tool_name=None,
        harness=harness,
        workdir="-home-dev-shop",
        cwd="/home/dev/shop",
        git_branch="main",
        host="atlas",
        source_path="/home/dev/.claude/projects/-home-dev-shop/x.jsonl",
        parent_session_id=None,
        scaffold=False,
        redaction_version=1,
        session_label=session_label,
    )


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if not path.exists():  # pragma: no cover - regenerate by deleting the file
        path.write_text(text)
        pytest.fail(f"golden file {name} was missing and has been written; review and commit it")
    assert text == path.read_text()


def test_recall_agent_format_matches_the_golden_file() -> None:
    neighbor_text = "Before that we tried raising the pool size.\nIt did not help: " + "x" * 200
    hits = [
        Hit(
            _chunk(
                1, 4, "Move the bank call out of the transaction.\nRetry with an idempotency key."
            ),
            0.91234,
            (
                _chunk(2, 3, neighbor_text, role="user"),
                _chunk(3, 5, "[tool_result Bash] ok", role="tool", block_type="tool_result"),
            ),
        ),
        Hit(_chunk(4, 9, '[tool_use Bash] {"command":"pytest -q"}', block_type="tool_use"), 0.5),
        # a subagent: the label its reader stored, under its parent session
        Hit(
            _chunk(
                5,
                2,
                "The pool settings live in config/db.toml.",
                session_id="agent-a2df51c9276581f81",
                session_label="7f3a9c2e/Explore-a2df51c9",
            ),
            0.42,
        ),
        # a pi session stored without a label: its uuid's random tail, not the date of its stem
        Hit(
            _chunk(
                6,
                1,
                "Scaled the glaze recipe.",
                session_id="2025-11-03T09-12-44-301Z_019a4b5c-6d7e-7f80-9a1b-2c3d4e5f6a7b",
                harness="pi",
            ),
            0.4,
        ),
    ]
    out = agent.recall(RecallOutcome(RecallResult(hits), "local"))
    _check("recall.txt", out)


def test_recall_with_no_hits_prints_exactly_no_results() -> None:
    assert agent.recall(RecallOutcome(RecallResult([]), "local")) == "no results\n"


def test_an_unsupported_recall_prints_one_miss_line_and_the_weak_candidates_only_on_request() -> (
    None
):
    weak = RecallResult([Hit(_chunk(1, 4, "some loosely related text"), 0.2)])
    weak.support, weak.supported, weak.min_support = 0.2134, False, 0.32
    outcome = RecallOutcome(weak, "local")
    assert agent.recall(outcome) == (
        "no supporting passage (best support 0.213 < 0.320; --all shows the weak candidates)\n"
    )
    shown = agent.recall(outcome, weak=True).splitlines()
    assert shown[0] == "no supporting passage (best support 0.213 < 0.320; weak candidates follow)"
    assert shown[1].startswith("[2026-04-02T10:11:12.345Z] claude_code -home-dev-shop/7f3a9c2e")
    assert "> some loosely related text" in shown
    # a supported recall prints no such line, with or without --all
    fine = RecallOutcome(RecallResult([Hit(_chunk(1, 4, "text"), 0.9)], support=0.8), "local")
    assert agent.recall(fine) == agent.recall(fine, weak=True)
    assert "no supporting passage" not in agent.recall(fine)


def test_a_merged_copy_of_a_passage_is_named_after_the_get_line() -> None:
    copy = replace(_chunk(7, 2, "same text"), session_id="0a1b2c3d-copy", turn_id="turn 2")
    out = agent.recall(
        RecallOutcome(RecallResult([Hit(_chunk(1, 4, "same text"), 0.9, (), (copy,))]), "local")
    )
    lines = out.splitlines()
    assert lines[1].startswith("  → get ")
    assert lines[2] == "  = also 0a1b2c3d-copy 'turn 2'"
    assert lines[3] == "> same text"


def test_get_agent_format_matches_the_golden_file() -> None:
    turns = [
        TurnView("s", "turn-3", 3, "2026-04-02T10:11:10.000Z", "user", ("How do we fix it?",)),
        TurnView(
            "s",
            "turn-4",
            4,
            "2026-04-02T10:11:12.345Z",
            "assistant",
            ("Thinking about locks.", "Move the call."),
        ),
    ]
    out = agent.get(GetOutcome(turns, "s", "turn-4", "local"))
    _check("get.txt", out)
    assert (
        agent.not_found(GetOutcome([], "s", "nope", "local")) == "turn nope not found in session s"
    )


def test_terminal_escape_sequences_never_reach_the_reader() -> None:
    hostile = "ok \x1b]0;pwned-title\x07 \x1b[31mred\x1b[0m \x9b2J done\r\n"
    out = agent.recall(
        RecallOutcome(
            RecallResult([Hit(_chunk(1, 1, hostile), 0.5, (_chunk(2, 2, hostile),))]), "local"
        )
    )
    got = agent.get(GetOutcome([TurnView("s", "t", 1, "", "user", (hostile,))], "s", "t", "local"))
    for text in (out, got):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
    assert "ok  red 2J done" in out


def test_sessions_name_each_session_by_the_label_recall_headers_show() -> None:
    # `sessions` showed the first 8 characters of the id (`2026-03-` for every pi session of
    # a month), which `get` could not resolve; recall headers show the label
    from funes.commands import SessionsOutcome
    from funes.retrieval import SessionPage
    from funes.store import SessionSummary

    def summary(session_id: str, label: str | None) -> SessionSummary:
        return SessionSummary(
            session_id, "pi", "/home/dev/shop", "-home-dev-shop", None, "2026-03-21T10:00:00.000Z",
            "2026-03-21T11:00:00.000Z", 2, 3, "turn-1", "Scale the glaze recipe", 2, label,
        )  # fmt: skip

    pi_id = "2026-03-21T10-00-00-000Z_019a4b5c-6d7e-7f80-9a1b-2c3d4e5f6a7b"
    page = SessionPage(2, 0, [summary(pi_id, None), summary("agent-a5", "a45e9651/Explore-a5")])
    out = agent.sessions(SessionsOutcome(page, "local", 20))
    assert "-home-dev-shop/4e5f6a7b " in out
    assert "-home-dev-shop/a45e9651/Explore-a5 " in out
    assert "/2026-03-" not in out


def test_status_counts_of_one_name_their_noun_in_the_singular() -> None:
    # a new user's first status said `claude_code: 1 sessions, 1 chunks`
    from rich.console import Console

    from funes.commands import PushStatus, SourceStatus, StatusReport
    from funes.ingest import OwedChunks
    from funes.render import human
    from funes.store import StoreStats

    stats = StoreStats(1, 1, {"claude_code": (1, 1)}, None, "m", True, "int8", 1, 1)
    report = StatusReport(
        "local",
        True,
        stats,
        "m",
        "none",
        sources=[SourceStatus("claude_code", 1, 0)],
        pushes=[PushStatus("hf://datasets/me/m", "c" * 40, "2026-01-01", 1, 1, 1)],
        unembedded=1,
        push_held_back=1,
        forgotten=1,
        owed=OwedChunks(chunks=[1, 1, 1], files=1),
    )
    out = agent.status(report)
    assert "claude_code: 1 session, 1 chunk\n" in out
    assert "size: 1 byte\n" in out and "without vectors: 1 chunk\n" in out
    assert "owed: 1 text, 1 tool call, 1 tool output chunk from 1 session file " in out
    assert "push: 1 chunk held back" in out and "forgotten: 1 session\n" in out
    assert "source claude_code: 1 session file, 0 not indexed" in out
    assert ": 1 chunk as of commit " in out and "; 1 chunk in 1 session not pushed" in out
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(human.status(report))
    shown = console.export_text()
    assert "1 session · 1 chunk" in shown and "1 chunk held back" in shown
    assert "1 sessions" not in shown and "1 chunks" not in shown


def test_status_names_held_back_chunks_apart_from_those_not_pushed_on_binding_lines() -> None:
    """A bound agent's line counts the chunks the secrets gate holds back once, apart from
    those a push sends, in `funes push`'s words."""
    from funes.commands import BindingStatus, StatusReport

    binding = BindingStatus(
        "claude_code",
        "me/memory",
        True,
        "published",
        last_push_at="2026-01-01T00:00:00Z",
        last_push_commit="c" * 40,
        last_pushed=3,
        last_held_back=2,
        pending_chunks=1,
        pending_sessions=1,
        held_back_chunks=2,
    )
    out = agent.status(StatusReport("local", False, None, None, "none", bindings=[binding]))
    line = next(line for line in out.splitlines() if line.startswith("binding "))
    assert line.endswith(
        "(3 chunks sent, 2 held back); 1 chunk in 1 session not pushed; "
        "2 chunks held back for secrets stay local"
    ), line
