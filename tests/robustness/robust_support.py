"""Shared pieces of the robustness tests: fixture paths, a Turn type check, corpus writers.

The corpus writers produce transcripts in the agents' exact native record shapes (the same
shapes as the committed fixtures), with deterministic, synthetic text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support.claude import record

from funes.chunks import chunk_turn
from funes.store.db import sqlite_module
from funes.traces import Block, BlockType, Harness, Role, Turn

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
FIXTURES = REPO / "fixtures"
CLAUDE_FIXTURES = sorted((FIXTURES / "claude").rglob("*.jsonl"))
CODEX_FIXTURES = sorted((FIXTURES / "codex").rglob("rollout-*.jsonl"))
PI_FIXTURES = sorted((FIXTURES / "pi").rglob("*.jsonl"))
HERMES_SQL = FIXTURES / "hermes" / "state.sql"
HERMES_LEGACY_SQL = FIXTURES / "hermes" / "state_legacy.sql"
PARQUET_FIXTURE = FIXTURES / "parquet" / "traces.parquet"
FAKE_FUNES = Path(__file__).resolve().parent / "fake_funes.py"

# The words synthetic turns are made of (plain English, no secrets, no real people).
WORDS = [
    "kiln",
    "glaze",
    "cobalt",
    "firing",
    "schedule",
    "pool",
    "connection",
    "retry",
    "cache",
    "index",
    "shard",
    "query",
    "latency",
    "timeout",
    "backoff",
    "migration",
    "schema",
    "column",
    "vector",
    "token",
    "parser",
    "buffer",
    "stream",
    "socket",
    "thread",
    "lock",
    "queue",
    "worker",
    "batch",
    "commit",
    "rollback",
    "snapshot",
    "replica",
    "leader",
    "follower",
    "quorum",
]


def scale(env_var: str, ci: int, full: int) -> int:
    """`ci` by default; `full` when the environment variable `env_var` is set to 1."""
    return full if os.environ.get(env_var) == "1" else ci


def check_turn(turn: Turn) -> None:
    """Assert every field of a turn has the type the store binds (no dicts, lists, huge ints)."""
    assert isinstance(turn, Turn)
    assert isinstance(turn.harness, Harness)
    for name in ("session_id", "turn_id", "ts", "source_path"):
        assert isinstance(getattr(turn, name), str), name
    for name in ("cwd", "parent_id", "git_branch", "host", "parent_session_id"):
        value = getattr(turn, name)
        assert value is None or isinstance(value, str), (name, type(value))
    assert isinstance(turn.seq, int) and -(2**63) <= turn.seq < 2**63
    assert isinstance(turn.role, Role)
    assert isinstance(turn.scaffold, bool)
    assert turn.blocks and all(isinstance(b, Block) for b in turn.blocks)
    for b in turn.blocks:
        assert isinstance(b.type, BlockType) and isinstance(b.text, str)
        assert "\x00" not in b.text
        assert b.tool_name is None or isinstance(b.tool_name, str)
        assert b.tool_use_id is None or isinstance(b.tool_use_id, str)
    for chunk in chunk_turn(turn):
        assert chunk.text.strip()


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _text(rng_seed: int, n_words: int) -> str:
    # A cheap deterministic word stream (no random module state shared between callers).
    out = []
    x = rng_seed * 2654435761 % 2**32 or 1
    for _ in range(n_words):
        x = (x * 1103515245 + 12345) % 2**31
        out.append(WORDS[x % len(WORDS)])
    return " ".join(out)


def _seed(session: str, n: int) -> int:
    return zlib.crc32(f"{session}:{n}".encode())


def claude_lines(session: str, turns: int, *, start: int = 0, words: int = 40) -> Iterator[str]:
    """Claude Code records: alternating user (string content) and assistant (text part) turns."""
    for n in range(start, start + turns):
        kind = "user" if n % 2 == 0 else "assistant"
        text = f"turn {n} of {session[:8]}: " + _text(_seed(session, n), words)
        content: Any = text if kind == "user" else [{"type": "text", "text": text}]
        yield _line(
            record(
                kind,
                content,
                session_id=session,
                uuid=f"{session[:8]}-{n:08d}",
                parent=None if n == 0 else f"{session[:8]}-{n - 1:08d}",
                timestamp=f"2026-03-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                cwd="/home/dev/src/kilnbook",
            )
        )


def codex_lines(session: str, turns: int, *, start: int = 0, words: int = 40) -> Iterator[str]:
    """Codex envelope records: session_meta first, then user/assistant response items."""
    if start == 0:
        yield _line(
            {
                "timestamp": "2026-03-14T09:12:05.118Z",
                "type": "session_meta",
                "payload": {
                    "id": session,
                    "timestamp": "2026-03-14T09:12:05.118Z",
                    "cwd": "/home/dev/src/kilnbook",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.171.0",
                },
            }
        )
    for n in range(start, start + turns):
        role = "user" if n % 2 == 0 else "assistant"
        part = "input_text" if role == "user" else "output_text"
        text = f"turn {n}: " + _text(_seed(session, n), words)
        yield _line(
            {
                "timestamp": f"2026-03-14T09:{12 + n // 60 % 40:02d}:{n % 60:02d}.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": role,
                    "content": [{"type": part, "text": text}],
                },
            }
        )


def pi_lines(session: str, turns: int, *, start: int = 0, words: int = 40) -> Iterator[str]:
    """pi v3 entries: the session header, then user/assistant message entries."""
    if start == 0:
        yield _line(
            {
                "type": "session",
                "version": 3,
                "id": session,
                "timestamp": "2026-03-21T10:20:33.118Z",
                "cwd": "/home/dev/src/kilnbook",
            }
        )
    for n in range(start, start + turns):
        role = "user" if n % 2 == 0 else "assistant"
        text = f"turn {n}: " + _text(_seed(session, n), words)
        yield _line(
            {
                "type": "message",
                "id": f"{n:08x}",
                "parentId": None if n == 0 else f"{n - 1:08x}",
                "timestamp": f"2026-03-21T10:{20 + n // 60 % 40:02d}:{n % 60:02d}.000Z",
                "message": {"role": role, "content": [{"type": "text", "text": text}]},
            }
        )


def build_hermes_db(path: Path, sql: Path = HERMES_SQL) -> Path:
    """A Hermes state.db from a fixture SQL script, in WAL mode as Hermes runs it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("pragma journal_mode=wal")
        conn.executescript(sql.read_text())
        conn.commit()
    finally:
        conn.close()
    return path


def run_fake_funes(
    args: list[str], env: dict[str, str], *, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run tests/robustness/fake_funes.py (the funes CLI with the bag-of-words embedder)."""
    return subprocess.run(
        [sys.executable, str(FAKE_FUNES), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_fake_batch(
    commands: list[list[str]], env: dict[str, str], work: Path
) -> list[dict[str, Any]]:
    """Run several funes commands in one fake_funes process; their argv, rc, stdout, stderr."""
    spec = work / "commands.json"
    spec.write_text(json.dumps(commands))
    done = run_fake_funes(["--batch", str(spec)], env, timeout=300)
    assert done.returncode == 0, done.stderr
    spec.unlink()
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def chunk_ids(db: Path) -> set[str]:
    """Every chunk id stored in the memory at `db` (read-only)."""
    # funes' own binding: a second SQLite library in this process would break its locks.
    conn = sqlite_module().connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("select id from chunks")}
    finally:
        conn.close()
