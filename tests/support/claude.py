"""Write Claude Code transcripts in its exact JSONL record shapes (synthetic content).

Record shapes follow the real files captured from Claude Code 2.1.197 (../shared/agent-e2e):
`queue-operation` noise, `user` records with string content, `assistant` records with a list
of content blocks, each record carrying uuid/parentUuid/sessionId/cwd/timestamp/version.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from pathlib import Path

NAMESPACE = uuidlib.UUID("6f1c3a52-0000-4000-8000-00000000f00d")


def session_path(claude_home: Path, cwd: str, session_id: str) -> Path:
    slug = "".join(c if c.isalnum() else "-" for c in cwd)
    return claude_home / "projects" / slug / f"{session_id}.jsonl"


def _uuid(session_id: str, n: int, role: str) -> str:
    return str(uuidlib.uuid5(NAMESPACE, f"{session_id}:{n}:{role}"))


def turn_records(session_id: str, cwd: str, n: int) -> list[dict[str, object]]:
    """The records of turn `n`: one user prompt and one assistant reply (deterministic ids)."""
    ts = f"2026-11-29T08:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    user_id = _uuid(session_id, n, "user")
    common = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
    }
    user = {
        "parentUuid": _uuid(session_id, n - 1, "assistant") if n else None,
        **common,
        "type": "user",
        "message": {
            "role": "user",
            "content": f"turn {n}: why does the frobnicator need widget {n}?",
        },
        "uuid": user_id,
        "timestamp": ts,
        "permissionMode": "default",
    }
    reply = {
        "parentUuid": user_id,
        **common,
        "type": "assistant",
        "message": {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [
                {
                    "type": "text",
                    "text": f"Widget {n} keeps the frobnicator aligned; decision {n} recorded.",
                }
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        "requestId": f"req_{n}",
        "uuid": _uuid(session_id, n, "assistant"),
        "timestamp": ts,
    }
    return [user, reply]


def append_turns(path: Path, session_id: str, cwd: str, turns: range) -> Path:
    """Append turns to a transcript (creating it and its folder), as Claude Code does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        if path.stat().st_size == 0:
            f.write(
                json.dumps(
                    {
                        "type": "queue-operation",
                        "operation": "enqueue",
                        "timestamp": "2026-11-29T08:00:00.000Z",
                        "sessionId": session_id,
                        "content": "hello",
                    }
                )
                + "\n"
            )
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
