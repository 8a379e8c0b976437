"""Synthetic Claude Code sessions in the exact on-disk JSONL shape (no real person's data)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path


def write_claude_session(
    claude_home: Path,
    turns: Sequence[tuple[str, str]],
    *,
    project: str = "-home-dev-app",
    cwd: str = "/home/dev/app",
    session_id: str | None = None,
    start: str = "2026-11-20T10:00",
) -> Path:
    """Write one Claude Code transcript of (role, text) turns; returns its path.

    user turns are plain-string content; assistant turns are one `text` content block, as
    Claude Code writes them (one record per content block, each with its own uuid).
    """
    session_id = session_id or str(uuid.uuid4())
    path = claude_home / "projects" / project / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    parent: str | None = None
    lines = []
    for i, (role, text) in enumerate(turns):
        turn_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/{i}"))
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        message: dict[str, object] = {"role": role, "content": content}
        if role == "assistant":
            message.update({"id": f"msg_{i:04d}", "type": "message", "model": "claude-sonnet-4-5"})
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": "2.1.332",
                "gitBranch": "main",
                "type": role,
                "message": message,
                "uuid": turn_uuid,
                "timestamp": f"{start}:{i:02d}.000Z",
            }
        )
        parent = turn_uuid
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
