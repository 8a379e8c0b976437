"""Synthetic Claude Code transcripts in Claude's exact JSONL record shapes (invented content).

The one place tests write Claude Code transcripts. Record shapes follow what Claude Code 2.1.x
writes (captured in shared/agent-e2e): `queue-operation` noise, `user` records with string
content for prompts and `tool_result` blocks for tool output, `assistant` records with one
content block each, every record carrying uuid, parentUuid, sessionId, cwd, gitBranch,
version and timestamp. `record` builds one; the writers below use nothing else.

    write_claude_session  a whole transcript of (role, text) or (role, kind, payload) turns
    conversation + write_session   raw lines (tests that craft hostile or odd lines)
    append_turns          a transcript growing turn by turn, as an agent appends it
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMESPACE = uuidlib.UUID("6f1c3a52-0000-4000-8000-00000000f00d")
SESSION = "0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10"  # conversation()/write_session() default
SESSION_ID = "5e0d1c2a-7b3f-4a56-9c8d-0e1f2a3b4c5d"  # the DEFAULT_TURNS session
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


def record(
    role: str,
    content: Any,
    *,
    session_id: str,
    uuid: str,
    parent: str | None,
    timestamp: str,
    cwd: str = CWD,
    message: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """One Claude Code `user` or `assistant` record. `message` adds keys to the message (an
    assistant's id, model, usage); `fields` adds top-level keys (requestId, permissionMode)."""
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
        "type": role,
        "message": {"role": role, "content": content, **(message or {})},
        "uuid": uuid,
        "timestamp": timestamp,
        **fields,
    }


def slug(cwd: str) -> str:
    """The project folder Claude Code names after a working directory."""
    return "".join(c if c.isalnum() else "-" for c in cwd)


def session_path(claude_home: Path, cwd: str, session_id: str) -> Path:
    return claude_home / "projects" / slug(cwd) / f"{session_id}.jsonl"


@dataclass(frozen=True)
class WrittenSession:
    path: Path
    session_id: str
    turn_ids: list[str]  # uuid of each record, in order


def _content(role: str, kind: str, payload: Any, tool_use_id: str) -> tuple[Any, dict[str, Any]]:
    """(content, message keys) of one turn."""
    if role == "user":
        if kind == "tool_result":
            block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": payload}
            return [{**block, "is_error": False}], {}
        return payload, {}
    if kind == "tool_use":
        name, tool_input = payload
        block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}
    else:
        block = {"type": "text", "text": payload}
    stop = "tool_use" if kind == "tool_use" else "end_turn"
    return [block], {"type": "message", "model": "claude-opus-4-8", "stop_reason": stop}


def write_claude_session(
    claude_home: Path,
    turns: Sequence[tuple[Any, ...]] = DEFAULT_TURNS,
    *,
    session_id: str | None = None,
    cwd: str = "/home/dev/app",
    project: str | None = None,
    start: str = "2026-11-20T10:00",
) -> WrittenSession:
    """Write `<claude_home>/projects/<project>/<session_id>.jsonl` of `turns`, one record each.

    A turn is (role, text) or (role, kind, payload) as in DEFAULT_TURNS. Records are a second
    apart from `start` (a minute, `YYYY-MM-DDTHH:MM`); session_id None: a fresh uuid4, so two
    calls write two sessions; project None: the folder Claude Code names after `cwd`.
    """
    session_id = session_id or str(uuidlib.uuid4())
    path = claude_home / "projects" / (project or slug(cwd)) / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    tool_use_id = "toolu_01Synthetic000000000001"
    lines: list[str] = []
    uuids: list[str] = []
    parent: str | None = None
    for i, turn in enumerate(turns):
        role, kind, payload = turn if len(turn) == 3 else (turn[0], "text", turn[1])
        uid = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{session_id}/{i}"))
        content, message = _content(role, kind, payload, tool_use_id)
        extra: dict[str, Any] = {}
        if role == "assistant":
            message["id"] = f"msg_{i:04d}"
            extra["requestId"] = f"req_{i:04d}"
        rec = record(
            role,
            content,
            session_id=session_id,
            uuid=uid,
            parent=parent,
            timestamp=f"{start}:{i:02d}.000Z",
            cwd=cwd,
            message=message,
            **extra,
        )
        lines.append(json.dumps(rec))
        uuids.append(uid)
        parent = uid
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return WrittenSession(path, session_id, uuids)


def conversation(pairs: list[tuple[str, str]], *, session: str = SESSION) -> list[str]:
    """user/assistant text turns as JSONL lines, one record each, a second apart."""
    lines = []
    for n, (role, text) in enumerate(pairs):
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        rec = record(
            role,
            content,
            session_id=session,
            uuid=str(uuidlib.UUID(int=n + 1)),
            parent=None if n == 0 else str(uuidlib.UUID(int=n)),
            timestamp=f"2026-04-02T10:{n // 60:02d}:{n % 60:02d}.000Z",
            cwd="/home/dev/shop",
        )
        lines.append(json.dumps(rec))
    return lines


def write_session(
    root: Path, lines: list[str], *, session: str = SESSION, project: str = "-home-dev-shop"
) -> Path:
    """Write raw lines as ~/.claude/projects/<project>/<session>.jsonl under `root` (a HOME)."""
    path = root / ".claude" / "projects" / project / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _uuid(session_id: str, n: int, role: str) -> str:
    return str(uuidlib.uuid5(NAMESPACE, f"{session_id}:{n}:{role}"))


def turn_records(session_id: str, cwd: str, n: int) -> list[dict[str, object]]:
    """The records of turn `n`: one user prompt and one assistant reply (deterministic ids)."""
    ts = f"2026-11-29T08:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    user_id = _uuid(session_id, n, "user")
    common: dict[str, Any] = {"session_id": session_id, "timestamp": ts, "cwd": cwd}
    user = record(
        "user",
        f"turn {n}: why does the frobnicator need widget {n}?",
        uuid=user_id,
        parent=_uuid(session_id, n - 1, "assistant") if n else None,
        entrypoint="cli",
        permissionMode="default",
        **common,
    )
    reply = record(
        "assistant",
        [
            {
                "type": "text",
                "text": f"Widget {n} keeps the frobnicator aligned; decision {n} recorded.",
            }
        ],
        uuid=_uuid(session_id, n, "assistant"),
        parent=user_id,
        message={
            "id": f"msg_{n}",
            "type": "message",
            "model": "claude-opus-4-8",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        entrypoint="cli",
        requestId=f"req_{n}",
        **common,
    )
    return [user, reply]


def append_turns(path: Path, session_id: str, cwd: str, turns: range) -> Path:
    """Append turns to a transcript (creating it and its folder), as Claude Code does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        if path.stat().st_size == 0:
            noise = {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": "2026-11-29T08:00:00.000Z",
                "sessionId": session_id,
                "content": "hello",
            }
            f.write(json.dumps(noise) + "\n")
        for n in turns:
            for rec in turn_records(session_id, cwd, n):
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    return path


def stop_payload(path: Path, session_id: str, cwd: str) -> dict[str, object]:
    """A Stop hook payload as Claude Code 2.1.197 sends it."""
    return {
        "session_id": session_id,
        "transcript_path": str(path),
        "cwd": cwd,
        "prompt_id": str(uuidlib.uuid4()),
        "permission_mode": "default",
        "effort": {"level": "high"},
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "FAKE_REPLY: private reply text",
        "background_tasks": [],
        "session_crons": [],
    }


def index_into_local_memory(path: Path) -> int:
    """Index `path` into the local memory of the current (test-isolated) environment.

    Returns the number of chunks written (the caller asserts on it).
    """
    from funes.commands import IndexRequest, run_index
    from funes.memory import Runtime, parse_memory

    rt = Runtime.resolve()
    outcome = run_index(rt, parse_memory(None, rt), IndexRequest(path=path))
    return outcome.report.chunks_written
