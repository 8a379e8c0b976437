"""Build Claude Code transcript lines (the exact native record shapes) for tests."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

SESSION = "0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10"


def record(
    kind: str, content: Any, *, n: int, session: str = SESSION, cwd: str = "/home/dev/shop"
) -> str:
    rec = {
        "parentUuid": None if n == 0 else str(uuid.UUID(int=n)),
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.197",
        "gitBranch": "main",
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": str(uuid.UUID(int=n + 1)),
        "timestamp": f"2026-04-02T10:{n // 60:02d}:{n % 60:02d}.000Z",
    }
    return json.dumps(rec)


def conversation(pairs: list[tuple[str, str]], *, session: str = SESSION) -> list[str]:
    """user/assistant text turns, one record each."""
    lines = []
    for i, (kind, text) in enumerate(pairs):
        content: Any = text if kind == "user" else [{"type": "text", "text": text}]
        lines.append(record(kind, content, n=i, session=session))
    return lines


def write_session(
    root: Path, lines: list[str], *, session: str = SESSION, project: str = "-home-dev-shop"
) -> Path:
    """Write lines as ~/.claude/projects/<project>/<session>.jsonl under `root` (a HOME)."""
    path = root / ".claude" / "projects" / project / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
