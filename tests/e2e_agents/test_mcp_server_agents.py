"""`funes mcp` started by the real Claude Code and Codex CLIs, called by a scripted model.

The server is registered by hand here, in each agent's own config format, exactly as the
recipe registers its ping server (registration by `funes add` is tested with the installers).
What this guards is the server side: the agent starts it, lists its tools on the first turn,
the scripted model calls `recall`, and the agent gets back a passage indexed earlier. Codex
0.171 `exec` leaves out the tools of servers that are not ready about a second after start,
so this also guards the early answers to `initialize`/`tools/list` (funes/mcp_server/wire.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import (
    AGENT_TIMEOUT_S,
    FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
    agent_bin,
    base_env,
    fake_llm,
    requests_to,
    sample_memory,
)

pytestmark = pytest.mark.agent_e2e


@pytest.fixture
def fakellm(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with fake_llm(tmp_path) as llm:
        yield llm


@pytest.fixture
def memory(tmp_path: Path) -> dict[str, Any]:
    return sample_memory(tmp_path)


PROMPT = (
    'Please CALL_TOOL:recall{"query":"why did we not move the ledger to postgres","k":2} and report'
)
PASSAGE = "We rejected moving to Postgres because the ledger must stay a single local file"


def server_env(funes_env: dict[str, str]) -> dict[str, str]:
    keep = ("FUNES_HOME", "FUNES_EMBEDDER", "FUNES_RERANKER", "HF_HUB_OFFLINE")
    return {k: funes_env[k] for k in keep if k in funes_env}


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=AGENT_TIMEOUT_S,
    )


def test_claude_code_starts_funes_mcp_and_gets_a_recalled_passage(
    tmp_path: Path,
    fakellm: dict[str, Any],
    memory: dict[str, Any],
    funes_env: dict[str, str],
    isolated_env: Path,
) -> None:
    claude = agent_bin("claude")
    home = isolated_env
    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "funes", "mcp"],
        "env": server_env(funes_env),
    }
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"funes": server}}))
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **base_env(home, claude, funes_env),
        "ANTHROPIC_BASE_URL": fakellm["url"],
        "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "MCP_TIMEOUT": "180000",
        "ENABLE_TOOL_SEARCH": "false",
    }
    argv = [str(claude), "-p", PROMPT, "--output-format", "json"]
    argv += ["--allowedTools", "mcp__funes__recall", "WaitForMcpServers"]

    done = run(argv, env, project)

    assert done.returncode == 0, done.stderr
    assert "mcp__funes__recall" in json.loads(done.stdout)["result"]
    offered = [
        {t["name"] for t in r["body"].get("tools", [])}
        for r in requests_to(fakellm["log"], "/v1/messages")
    ]
    assert any(
        {"mcp__funes__recall", "mcp__funes__get", "mcp__funes__status"} <= names
        for names in offered
    )
    results = [
        block
        for r in requests_to(fakellm["log"], "/v1/messages")
        for m in r["body"]["messages"]
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list)
    ]
    texts = [part.get("text", "") for block in results for part in block["content"]]
    assert any(PASSAGE in t and "→ get " in t for t in texts), texts


def test_codex_lists_funes_tools_on_the_first_turn_and_gets_a_recalled_passage(
    tmp_path: Path,
    fakellm: dict[str, Any],
    memory: dict[str, Any],
    funes_env: dict[str, str],
    isolated_env: Path,
) -> None:
    codex = agent_bin("codex")
    home = isolated_env
    project = tmp_path / "project"
    project.mkdir()
    env_table = ", ".join(f'{k} = "{v}"' for k, v in server_env(funes_env).items())
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f"""model = "fake-model"
model_provider = "fakellm"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fakellm]
name = "fakellm"
base_url = "{fakellm["url"]}/v1"
env_key = "FAKELLM_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.funes]
command = "{sys.executable}"
args = ["-m", "funes", "mcp"]
env = {{ {env_table} }}

[projects."{project}"]
trust_level = "trusted"
"""
    )
    env = {
        **base_env(home, codex, funes_env),
        "FAKELLM_API_KEY": FAKE_OPENAI_KEY,
    }

    done = run([str(codex), "exec", "--json", "--skip-git-repo-check", PROMPT], env, project)

    assert done.returncode == 0, done.stderr
    first = requests_to(fakellm["log"], "/v1/responses")[0]["body"]
    namespaces = {
        t["name"]: {c["name"] for c in t.get("tools", [])}
        for t in first["tools"]
        if t.get("type") == "namespace"
    }
    assert namespaces.get("mcp__funes") == {"recall", "get", "sessions", "status"}, namespaces
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    calls = [
        e["item"]
        for e in events
        if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"
    ]
    assert [(c["server"], c["tool"], c["status"]) for c in calls] == [
        ("funes", "recall", "completed")
    ]
    text = calls[0]["result"]["content"][0]["text"]
    assert PASSAGE in text and "→ get " in text
