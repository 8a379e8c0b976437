"""The agent format is a published contract: byte-exact golden files pin it."""

from __future__ import annotations

from pathlib import Path

import pytest

from funes.commands.get import GetOutcome
from funes.commands.recall import RecallOutcome
from funes.render import agent
from funes.retrieval import Hit, RecallResult, TurnView
from funes.store import StoredChunk

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"


def _chunk(
    rowid: int, seq: int, text: str, *, role: str = "assistant", block_type: str = "text"
) -> StoredChunk:
    return StoredChunk(
        rowid=rowid,
        id=f"{rowid:016x}",
        text=text,
        session_id="7f3a9c2e-1b4d-4e8f-9a6b-0c2d4e6f8a1b",
        turn_id=f"turn-{seq}",
        parent_id=None,
        seq=seq,
        ts="2026-04-02T10:11:12.345Z",
        role=role,
        block_type=block_type,
        block_idx=0,
        split_idx=0,
        tool_name=None,
        harness="claude_code",
        workdir="-home-dev-shop",
        cwd="/home/dev/shop",
        git_branch="main",
        host="atlas",
        source_path="/home/dev/.claude/projects/-home-dev-shop/x.jsonl",
        parent_session_id=None,
        scaffold=False,
        redaction_version=1,
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
    ]
    out = agent.recall(RecallOutcome(RecallResult(hits), "local"))
    _check("recall.txt", out)


def test_recall_with_no_hits_prints_exactly_no_results() -> None:
    assert agent.recall(RecallOutcome(RecallResult([]), "local")) == "no results\n"


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
