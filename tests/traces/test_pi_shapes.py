"""pi record shapes (issue 13): error results, tool calls that never ran, models, labels.

Written here in pi's v3 entry shapes (pi 0.7x); contents are invented.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes.traces import BlockType, ReadStats, Role, ToolStatus, Turn
from funes.traces.pi import read_pi_file

STEM = "2025-11-03T09-12-44-301Z_019a4b5c-6d7e-7f80-9a1b-2c3d4e5f6a7b"


def entry(eid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2025-11-03T09:13:00.000Z",
        "message": message,
    }


def assistant(content: list[dict[str, Any]], stop: str, model: str = "gpt-5") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-responses",
        "provider": "openai",
        "model": model,
        "stopReason": stop,
        "timestamp": 1762161180000,
    }


def call(cid: str, command: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": command}}


def session(tmp_path: Path) -> Path:
    records = [
        {
            "type": "session",
            "version": 3,
            "id": STEM.split("_")[1],
            "timestamp": "2025-11-03T09:12:44.301Z",
            "cwd": "/home/dev/ledger",
        },
        {
            "type": "model_change",
            "id": "m0",
            "parentId": None,
            "provider": "openai",
            "modelId": "gpt-5",
        },
        entry("e1", None, {"role": "user", "content": "Reset the test database", "timestamp": 1}),
        entry("e2", "e1", assistant([call("c1", "dropdb ledger_test")], "error")),
        entry("e3", "e2", assistant([call("c2", "make reset-db")], "toolUse", "gpt-5-mini")),
        entry(
            "e4",
            "e3",
            {
                "role": "toolResult",
                "toolCallId": "c2",
                "toolName": "bash",
                "content": [{"type": "text", "text": "make: *** No rule to make target"}],
                "isError": True,
            },
        ),
        entry(
            "e5", "e4", assistant([{"type": "text", "text": "There is no reset target."}], "stop")
        ),
    ]
    path = tmp_path / "sessions" / "--home-dev-ledger--" / f"{STEM}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def read(path: Path) -> list[Turn]:
    return list(read_pi_file(path, ReadStats()))


def test_calls_of_a_response_that_ended_in_error_are_marked_never_run(tmp_path: Path) -> None:
    turns = read(session(tmp_path))
    calls = [b for t in turns for b in t.blocks if b.type is BlockType.TOOL_USE]
    assert [(b.tool_use_id, b.status) for b in calls] == [
        ("c1", ToolStatus.NOT_RUN),
        ("c2", None),
    ]


def test_an_error_result_is_marked(tmp_path: Path) -> None:
    [result] = [
        b for t in read(session(tmp_path)) for b in t.blocks if b.type is BlockType.TOOL_RESULT
    ]
    assert result.status is ToolStatus.ERROR and result.tool_name == "bash"


def test_each_assistant_turn_records_its_model_and_the_session_a_distinct_label(
    tmp_path: Path,
) -> None:
    turns = read(session(tmp_path))
    assert [(t.role, t.model) for t in turns] == [
        (Role.USER, None),
        (Role.ASSISTANT, "gpt-5"),
        (Role.ASSISTANT, "gpt-5-mini"),
        (Role.TOOL, None),
        (Role.ASSISTANT, "gpt-5"),
    ]
    # the stem starts with the date; the label is the v7 uuid's random tail
    assert {t.session_label for t in turns} == {"4e5f6a7b"}
