"""Claude Code record shapes of particular versions, on top of `support.claude.record` (the one
record builder): 1.x inline sidechains, 2.0's Warmup pair, slash-command records, 2.1's spilled
tool results. Every record is invented (the `ledger` project below is fiction).
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support import claude

SESSION = "6f1d2c3b-4a59-4e68-8d7c-1b2a3c4d5e6f"
CWD = "/home/dev/ledger"
PROJECT = "-home-dev-ledger"


def uid(name: str) -> str:
    """A stable, readable-in-tests uuid for a record name."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"funes-test/{name}"))


def record(
    kind: str,
    content: Any,
    name: str,
    parent: str | None,
    *,
    session: str = SESSION,
    sidechain: bool = False,
    cwd: str = CWD,
    version: str = "1.0.98",
    model: str = "claude-sonnet-4-20250514",
    ts: str = "2025-09-04T10:00:00.000Z",
    **extra: Any,
) -> dict[str, Any]:
    """One user/assistant record (`support.claude.record`) named `name` (its uuid is `uid(name)`),
    as the Claude Code `version` writes it: `isSidechain`, an assistant's message id and model."""
    message: dict[str, Any] = {}
    if kind == "assistant":
        message = {"id": f"msg_{uid(name)[:12]}", "type": "message", "model": model}
        message["stop_reason"] = None
    rec = claude.record(
        kind,
        content,
        session_id=session,
        uuid=uid(name),
        parent=uid(parent) if parent else None,
        timestamp=ts,
        cwd=cwd,
        message=message,
        **extra,
    )
    rec.update({"isSidechain": sidechain, "version": version})
    return rec


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def tool_use(tool_id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": tool_id, "name": name, "input": args}]


def tool_result(tool_id: str, content: Any, *, is_error: bool = False) -> list[dict[str, Any]]:
    part: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        part["is_error"] = True
    return [part]


def write(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def session_path(claude_home: Path, session: str = SESSION) -> Path:
    return claude_home / "projects" / PROJECT / f"{session}.jsonl"


TASK_PROMPT = "Find every place the ledger opens a SQLite connection and list the busy_timeout"


def inline_sidechain_session(*, sidechains: int = 1) -> list[dict[str, Any]]:
    """A 1.x main session: the person asks, the main agent starts a Task whose subagent traffic
    (`isSidechain: true`: the agent-written prompt, the subagent's calls and answers) is written
    inline, then the main agent answers. `sidechains` > 1 repeats the subagent's grep calls
    to make a long sidechain (the person's turns must stay findable)."""
    recs = [
        record("user", "Why does the nightly import fail with database is locked?", "u1", None),
        record(
            "assistant",
            tool_use(
                "toolu_task1",
                "Task",
                {
                    "description": "Find connections",
                    "prompt": TASK_PROMPT,
                    "subagent_type": "general-purpose",
                },
            ),
            "a1",
            "u1",
        ),
        record("user", TASK_PROMPT, "s1", None, sidechain=True),
    ]
    parent = "s1"
    for i in range(sidechains):
        call, res = f"s-call{i}", f"s-res{i}"
        recs.append(
            record(
                "assistant",
                tool_use(f"toolu_grep{i}", "Grep", {"pattern": f"connect{i}"}),
                call,
                parent,
                sidechain=True,
            )
        )
        recs.append(
            record(
                "user",
                tool_result(f"toolu_grep{i}", f"src/db.py:{i}: sqlite3.connect(path)"),
                res,
                call,
                sidechain=True,
            )
        )
        parent = res
    recs += [
        record(
            "assistant",
            text("Subagent report: two connections, neither sets busy_timeout."),
            "s-answer",
            parent,
            sidechain=True,
        ),
        record(
            "user",
            tool_result(
                "toolu_task1", "Subagent report: two connections, neither sets busy_timeout."
            ),
            "u2",
            "a1",
        ),
        record(
            "assistant",
            text("The importer and the report cron both write without a busy timeout."),
            "a2",
            "u2",
        ),
    ]
    return recs


def warmup_pair(parent: str | None = None) -> list[dict[str, Any]]:
    """2.0.x: the harness warms a subagent's cache with a sidechain `Warmup` prompt."""
    return [
        record("user", "Warmup", "w1", None, sidechain=True, version="2.0.14"),
        record(
            "assistant",
            text("I'm ready to help you search the codebase."),
            "w2",
            "w1",
            sidechain=True,
            version="2.0.14",
        ),
    ]


def slash_command(name: str, args: str, key: str, parent: str | None) -> dict[str, Any]:
    """A user record of a typed slash command, as Claude Code writes it."""
    body = (
        f"<command-message>{name.lstrip('/')} is running…</command-message>\n"
        f"<command-name>{name}</command-name>\n"
        f"<command-args>{args}</command-args>"
    )
    return record("user", body, key, parent, version="2.1.97")


def persisted_preview(path: Path, size_kb: float, preview: str) -> str:
    """The `<persisted-output>` wrapper Claude Code 2.1 leaves in place of a large result."""
    return (
        f"<persisted-output>\nOutput too large ({size_kb:.1f}KB). Full output saved to: {path}\n\n"
        f"Preview (first 2KB):\n{preview}\n</persisted-output>"
    )
