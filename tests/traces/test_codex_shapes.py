"""Old and new Codex rollout shapes (issue 13): cwd, JSON-envelope outputs, models, labels.

The records are written here, in the shapes the Codex versions named write (pre-envelope
2025-09 rollouts: a bare header without cwd, bare items; 0.4x envelope rollouts; sub-agent
threads with `parent_thread_id`). Contents are invented.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes.traces import BlockType, ReadStats, Role, Turn
from funes.traces.codex import read_codex_file

OLD = "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
ENV_CONTEXT = (
    "<environment_context>\n  <cwd>/home/dev/ledger</cwd>\n  <approval_policy>on-request"
    "</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"
)


def lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def read(path: Path) -> list[Turn]:
    return list(read_codex_file(path, ReadStats()))


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def old_rollout(tmp_path: Path) -> Path:
    """A 2025-09 pre-envelope rollout: header without cwd, the cwd only in the env context,
    shell output and an apply_patch output as JSON envelopes."""
    return lines(
        tmp_path / f"rollout-2025-09-02T08-00-00-{OLD}.jsonl",
        [
            {"id": OLD, "timestamp": "2025-09-02T08:00:00.000Z", "instructions": None},
            {"record_type": "state"},
            user(ENV_CONTEXT),
            user("Show the ledger schema version"),
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["bash","-lc","cat schema.txt"]}',
                "call_id": "call_a",
            },
            {
                "type": "function_call_output",
                "call_id": "call_a",
                "output": json.dumps(
                    {"output": "schema_version = 14\n", "metadata": {"exit_code": 0}}
                ),
            },
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: schema.txt\n*** End Patch",
                "call_id": "call_b",
                "status": "completed",
            },
            {
                "type": "custom_tool_call_output",
                "call_id": "call_b",
                "output": json.dumps(
                    {
                        "output": "Success. Updated the following files:\nM schema.txt\n",
                        "metadata": {"exit_code": 0, "duration_seconds": 0.0},
                    }
                ),
            },
        ],
    )


def test_an_old_rollout_takes_its_cwd_from_the_environment_context(tmp_path: Path) -> None:
    turns = read(old_rollout(tmp_path))
    assert {t.cwd for t in turns} == {"/home/dev/ledger"}
    assert {t.workdir for t in turns} == {"-home-dev-ledger"}


def test_json_envelope_outputs_are_indexed_by_their_output_text(tmp_path: Path) -> None:
    outputs = [
        (b.tool_name, b.text)
        for t in read(old_rollout(tmp_path))
        for b in t.blocks
        if b.type is BlockType.TOOL_RESULT
    ]
    assert outputs == [
        ("shell", "schema_version = 14\n"),
        ("apply_patch", "Success. Updated the following files:\nM schema.txt\n"),
    ]


def test_a_plain_json_output_without_an_envelope_stays_as_written(tmp_path: Path) -> None:
    path = lines(
        tmp_path / f"rollout-2025-09-02T08-00-00-{OLD}.jsonl",
        [
            {"id": OLD, "timestamp": "2025-09-02T08:00:00.000Z"},
            {"type": "function_call_output", "call_id": "c", "output": '{"rows": [1, 2]}'},
        ],
    )
    [turn] = read(path)
    assert turn.blocks[0].text == '{"rows": [1, 2]}'


def env(ts: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def test_models_projects_and_labels_of_a_sub_agent_thread(tmp_path: Path) -> None:
    parent = "019d2222-aaaa-7bbb-8ccc-000000000001"
    child = "019d2222-aaaa-7bbb-8ccc-0000000000f2"
    path = lines(
        tmp_path / f"rollout-2026-05-01T10-00-00-{child}.jsonl",
        [
            env(
                "2026-05-01T10:00:00Z",
                "session_meta",
                {
                    "id": child,
                    "timestamp": "2026-05-01T10:00:00Z",
                    "cwd": "/home/dev/ledger",
                    "parent_thread_id": parent,
                    "agent_role": "explorer",
                },
            ),
            env(
                "2026-05-01T10:00:01Z",
                "turn_context",
                {"cwd": "/home/dev/ledger", "model": "gpt-5-codex"},
            ),
            env("2026-05-01T10:00:02Z", "response_item", user("Find the import job")),
            env(
                "2026-05-01T10:00:03Z",
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "jobs/import.py"}],
                },
            ),
            env(
                "2026-05-01T10:00:04Z",
                "turn_context",
                {"cwd": "/tmp/scratch", "model": "gpt-5.1-codex"},
            ),
            env(
                "2026-05-01T10:00:05Z",
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "done"}],
                },
            ),
        ],
    )
    turns = read(path)
    assert [(t.role, t.model) for t in turns] == [
        (Role.USER, None),
        (Role.ASSISTANT, "gpt-5-codex"),
        (Role.ASSISTANT, "gpt-5.1-codex"),
    ]
    assert turns[-1].cwd == "/tmp/scratch" and {t.workdir for t in turns} == {"-home-dev-ledger"}
    # v7 ids share their first 8 hex digits when started together: the label uses the last 8
    assert {t.session_label for t in turns} == {"00000001/explorer-000000f2"}
