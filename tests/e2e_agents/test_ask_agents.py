"""`funes ask claude|codex` against the real agent CLIs and a scripted model on 127.0.0.1.

The CLIs are the pinned installs under AGENTS_DIR (default /var/cache/agent-e2e):
`claude/node_modules/.bin/claude` (2.1.332), `codex/node_modules/.bin/codex` (0.171.0).
The model is support/fakellm.py (from shared/agent-e2e/recipe/): it answers
`FAKE_REPLY: <first words of the prompt>` and logs every request, so the test reads what
the agent really sent. Each agent home is set up the way a user's is after `funes add`
would have set it up: an MCP server and hooks registered (the recipe's probes, which log
whenever they run). `ask` must use none of them, and leave no session behind for a later
`funes index` to pick up.
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
    HERE,
    agent_bin,
    base_env,
    fake_llm,
    requests_to,
    sample_memory,
)
from support.claude import SESSION_ID

pytestmark = pytest.mark.agent_e2e


@pytest.fixture
def fakellm(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with fake_llm(tmp_path) as llm:
        yield llm


@pytest.fixture
def memory(tmp_path: Path) -> dict[str, Any]:
    return sample_memory(tmp_path)


QUESTION = "Why did we switch the ledger database to WAL instead of moving to Postgres?"


def funes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "funes", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=AGENT_TIMEOUT_S + 120,
    )


def assert_grounded(prompt: str, memory: dict[str, Any]) -> None:
    assert f"Question: {QUESTION}" in prompt
    assert f"session {SESSION_ID} turn {memory['turn_ids'][4]}" in prompt
    assert "We rejected moving to Postgres" in prompt
    assert "(session <session_id>, turn <turn_id>)" in prompt


def assert_nothing_new_to_index(env: dict[str, str]) -> None:
    """A full sweep of the agents' homes after `ask` finds no session to add."""
    before = funes(env, "status", "--format", "agent").stdout
    swept = funes(env, "index", "--yes")
    assert swept.returncode == 0, swept.stderr
    after = funes(env, "status", "--format", "agent").stdout
    assert "chunks: 7  sessions: 1" in before
    assert "chunks: 7  sessions: 1" in after


def test_ask_claude_answers_from_recalled_passages_with_no_tools_mcp_hooks_or_saved_session(
    tmp_path: Path,
    fakellm: dict[str, Any],
    memory: dict[str, Any],
    funes_env: dict[str, str],
    isolated_env: Path,
) -> None:
    claude = agent_bin("claude")
    home = isolated_env
    probes = tmp_path / "probes"
    probes.mkdir()
    hook = f"{sys.executable} {HERE / 'hooklog.py'} --log={probes / 'hooks.jsonl'}"
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    event: [
                        {
                            "matcher": "*",
                            "hooks": [{"type": "command", "command": f"{hook} {event}"}],
                        }
                    ]
                    for event in (
                        "SessionStart",
                        "UserPromptSubmit",
                        "PreToolUse",
                        "PostToolUse",
                        "Stop",
                        "SessionEnd",
                    )
                }
            }
        )
    )
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ping": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": [str(HERE / "mcp_ping_stdlib.py")],
                        "env": {"MCPLOG": str(probes / "mcp.jsonl")},
                    }
                }
            }
        )
    )
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

    done = funes(env, "ask", "claude", QUESTION, "--timeout", str(AGENT_TIMEOUT_S))

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "FAKE_REPLY: Answer the question below using only the passages"
    ), done.stdout
    calls = requests_to(fakellm["log"], "/v1/messages")
    assert len(calls) == 1  # one turn, no tool round trips
    body = calls[0]["body"]
    assert body.get("tools", []) == []
    user_text = "\n".join(
        block["text"] if isinstance(block, dict) else str(block)
        for m in body["messages"]
        if m["role"] == "user"
        for block in (m["content"] if isinstance(m["content"], list) else [m["content"]])
        if not isinstance(block, dict) or block.get("type") == "text"
    )
    assert_grounded(user_text, memory)
    assert not (probes / "hooks.jsonl").exists(), "a hook ran"
    assert not (probes / "mcp.jsonl").exists(), "the registered MCP server was started"
    assert list((home / ".claude").glob("projects/**/*.jsonl")) == []
    assert_nothing_new_to_index(env)


def test_ask_codex_answers_from_recalled_passages_with_no_tools_mcp_notify_or_saved_session(
    tmp_path: Path,
    fakellm: dict[str, Any],
    memory: dict[str, Any],
    funes_env: dict[str, str],
    isolated_env: Path,
) -> None:
    codex = agent_bin("codex")
    home = isolated_env
    probes = tmp_path / "probes"
    probes.mkdir()
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f"""model = "fake-model"
model_provider = "fakellm"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
notify = ["{sys.executable}", "{HERE / "hooklog.py"}", "--log={probes / "notify.jsonl"}", "notify"]

[analytics]
enabled = false

[model_providers.fakellm]
name = "fakellm"
base_url = "{fakellm["url"]}/v1"
env_key = "FAKELLM_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.ping]
command = "{sys.executable}"
args = ["{HERE / "mcp_ping_stdlib.py"}"]
env = {{ MCPLOG = "{probes / "mcp.jsonl"}" }}
"""
    )
    env = {
        **base_env(home, codex, funes_env),
        "FAKELLM_API_KEY": FAKE_OPENAI_KEY,
    }

    done = funes(env, "ask", "codex", QUESTION, "--timeout", str(AGENT_TIMEOUT_S))

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "FAKE_REPLY: Answer the question below using only the passages"
    ), done.stdout
    calls = requests_to(fakellm["log"], "/v1/responses")
    assert len(calls) == 1
    body = calls[0]["body"]
    tools = {t.get("name") or t.get("type") for t in body.get("tools") or []}
    assert not any("ping" in name for name in tools), tools  # the MCP server's namespace
    assert "exec_command" not in tools and "shell" not in tools and "web_search" not in tools, tools
    prompts = [
        part.get("text", "")
        for item in body["input"]
        if item.get("role") == "user"
        for part in (item.get("content") or [])
        if isinstance(part, dict)
    ]
    assert_grounded("\n".join(prompts), memory)
    assert not (probes / "notify.jsonl").exists(), "notify ran"
    assert not (probes / "mcp.jsonl").exists(), "the registered MCP server was started"
    assert list((home / ".codex").glob("sessions/**/*.jsonl")) == []
    assert_nothing_new_to_index(env)
