"""Shared pieces of the agent end-to-end tests: the pinned CLIs, the scripted model, a memory.

AGENTS_DIR (default /var/cache/agent-e2e) holds the pinned installs; a test whose CLI is
missing skips with the path it looked at. support/fakellm.py is the scripted model (funes' copy
of shared/agent-e2e/recipe/fakellm.py, shared with the per-agent hook and MCP tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from e2e_agents.support.harness import unavailable
from support.claude import CWD, SESSION_ID, index_into_local_memory, write_claude_session

HERE = Path(__file__).resolve().parent
AGENTS_DIR = Path(os.environ.get("AGENTS_DIR") or "/var/cache/agent-e2e")
AGENT_TIMEOUT_S = 600
# Keys the scripted model accepts; not secrets.
FAKE_ANTHROPIC_KEY = "sk-ant-fake"  # pragma: allowlist secret
FAKE_OPENAI_KEY = "sk-fake-000"  # pragma: allowlist secret


def agent_bin(name: str) -> Path:
    program = AGENTS_DIR / name / "node_modules" / ".bin" / name
    if not os.access(program, os.X_OK):
        unavailable(
            f"{name} CLI not installed at {program} (set AGENTS_DIR or install it as shared/agent-e2e/README.md says)"
        )
    return program


@contextmanager
def fake_llm(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Run fakellm.py on a free loopback port: yields {"url", "log"}; stopped on exit."""
    port_file = tmp_path / "fakellm.port"
    log = tmp_path / "fakellm-requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "support" / "fakellm.py"),
            "--port",
            "0",
            "--port-file",
            str(port_file),
        ],
        env={**os.environ, "FAKELLM_LOG": str(log)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None, "fakellm exited"
            assert time.monotonic() < deadline, "fakellm did not start"
            time.sleep(0.05)
        yield {"url": f"http://127.0.0.1:{port_file.read_text().strip()}", "log": log}
    finally:
        proc.terminate()
        proc.wait(10)


def requests_to(log: Path, suffix: str) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record["path"].split("?")[0].endswith(suffix):
            out.append(record)
    return out


def sample_memory(tmp_path: Path) -> dict[str, Any]:
    """Index the synthetic Claude Code session into the test's local memory."""
    written = write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD)
    assert index_into_local_memory(written.path) > 0
    return {"turn_ids": written.turn_ids}


def base_env(home: Path, program: Path, funes_env: dict[str, str]) -> dict[str, str]:
    """`env -i`-style: only what funes and the agent need, as the recipe runs them."""
    keep = ("FUNES_HOME", "FUNES_EMBEDDER", "FUNES_RERANKER", "HF_HUB_OFFLINE")
    return {
        "PATH": f"{program.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        **{k: funes_env[k] for k in keep if k in funes_env},
    }
