"""Synthetic Claude Code transcripts in Claude's exact JSONL record shapes, and indexing them.

The records follow what Claude Code 2.1.x writes (see shared/agent-e2e/captured/claude-code):
`user` records with string content for prompts and `tool_result` blocks for tool output,
`assistant` records with one content block each, every record carrying uuid, parentUuid,
sessionId, cwd, gitBranch, version and timestamp. The content is invented (no real data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_ID = "5e0d1c2a-7b3f-4a56-9c8d-0e1f2a3b4c5d"
CWD = "/home/dev/projects/ledger"

# (role, kind, payload): kind "text" for prose, "tool_use" (name, input), "tool_result" (text)
DEFAULT_TURNS: list[tuple[str, str, Any]] = [
    (
        "user",
        "text",
        "The nightly import keeps failing with 'database is locked'. What is going on?",
    ),
    (
        "assistant",
        "text",
        "Two writers open the ledger database at the same time: the importer and the report cron. "
        "SQLite allows one writer; the second gets SQLITE_BUSY and the importer gives up.",
    ),
    ("assistant", "tool_use", ("Bash", {"command": "grep -rn busy_timeout src/"})),
    ("user", "tool_result", "src/db.py:14:    conn.execute('PRAGMA busy_timeout = 0')"),
    (
        "assistant",
        "text",
        "Decision: we set PRAGMA busy_timeout to 5000 ms and switched the database to WAL journal mode, "
        "so readers no longer block the importer. We rejected moving to Postgres because the ledger "
        "must stay a single local file that the auditors can copy.",
    ),
    ("user", "text", "Great, that fixed it. Add a regression test for the lock."),
    (
        "assistant",
        "text",
        "Added tests/test_import_lock.py: it holds a write transaction in a second connection and "
        "checks that the importer waits instead of failing.",
    ),
]


@dataclass(frozen=True)
class WrittenSession:
    path: Path
    session_id: str
    turn_ids: list[str]  # uuid of each record, in order


def write_claude_session(
    projects_dir: Path,
    *,
    session_id: str = SESSION_ID,
    cwd: str = CWD,
    turns: list[tuple[str, str, Any]] | None = None,
    start: str = "2026-11-20T09:00:00",
) -> WrittenSession:
    """Write `<projects_dir>/<cwd slug>/<session_id>.jsonl` and return its path and turn uuids."""
    turns = DEFAULT_TURNS if turns is None else turns
    slug = cwd.replace("/", "-")
    path = projects_dir / slug / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    uuids: list[str] = []
    parent: str | None = None
    tool_use_id = "toolu_01Synthetic000000000001"
    for i, (role, kind, payload) in enumerate(turns):
        uid = f"{i:08x}-1111-4222-8333-{session_id[-12:]}"
        ts = f"{start}.{i:03d}Z"
        base: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": "2.1.197",
            "gitBranch": "main",
            "uuid": uid,
            "timestamp": ts,
        }
        if role == "user":
            if kind == "tool_result":
                content: Any = [
                    {
                        "tool_use_id": tool_use_id,
                        "type": "tool_result",
                        "content": payload,
                        "is_error": False,
                    }
                ]
            else:
                content = payload
            record = {**base, "type": "user", "message": {"role": "user", "content": content}}
        else:
            if kind == "tool_use":
                name, tool_input = payload
                block: dict[str, Any] = {
                    "type": "tool_use",
                    "id": tool_use_id,
                    "name": name,
                    "input": tool_input,
                }
            else:
                block = {"type": "text", "text": payload}
            record = {
                **base,
                "type": "assistant",
                "requestId": f"req_synthetic_{i:04d}",
                "message": {
                    "id": f"msg_synthetic_{i:04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-8",
                    "content": [block],
                    "stop_reason": "tool_use" if kind == "tool_use" else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 20},
                },
            }
        records.append(record)
        uuids.append(uid)
        parent = uid
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return WrittenSession(path, session_id, uuids)


def index_into_local_memory(path: Path) -> int:
    """Index `path` into the local memory of the current (test-isolated) environment.

    Returns the number of chunks written (the caller asserts on it).
    """
    from funes.commands.index import IndexRequest, run_index
    from funes.memory import Runtime, parse_memory

    rt = Runtime.resolve()
    outcome = run_index(rt, parse_memory(None, rt), IndexRequest(path=path))
    return outcome.report.chunks_written
