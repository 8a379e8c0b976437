"""Claude Code (the real `claude` CLI) with funes added: a turn is indexed by our hooks, and
the model can call funes' recall tool over MCP.

`funes add claude --yes` writes the hooks into ~/.claude/settings.json and the MCP server into
~/.claude.json; the test only points Claude at the scripted model (ANTHROPIC_BASE_URL and a
fake key: no config file is edited) and runs `claude -p` once per test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_agents.support.harness import (
    AgentRun,
    Sandbox,
    agent_bin,
    assert_turn_recalled,
    read_jsonl,
    require_funes_mcp,
    sandbox,
)

pytestmark = pytest.mark.agent_e2e

WORDS = "quokka ledger for the zanzibar depot"
NOTE = "the marmalade okapi guards the ledger"


def claude(box: Sandbox, prompt: str, *tools: str, what: str) -> AgentRun:
    env = box.agent_env(
        ANTHROPIC_BASE_URL=box.model.url,
        ANTHROPIC_API_KEY="sk-ant-fake-000",  # pragma: allowlist secret
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        MCP_TIMEOUT="180000",  # a cold `python -m funes mcp` can take a while on 2 busy cores
        ENABLE_TOOL_SEARCH="false",  # 2.1.332 hides MCP tools behind ToolSearch otherwise
    )
    argv = [str(agent_bin("claude")), "-p", prompt, "--output-format", "json"]
    if tools:
        argv += ["--allowedTools", *tools]
    return box.run_agent(argv, env, what=what)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    agent_bin("claude")
    with sandbox("claude", tmp_path_factory.mktemp("claude")) as box:
        box.add()
        yield box


@pytest.fixture(scope="module")
def first(box: Sandbox) -> tuple[AgentRun, dict[str, Any]]:
    """One `claude -p` session: the prompt makes the model Read a file, then answer."""
    note = box.project / "notes.txt"
    note.write_text(NOTE + "\n")
    prompt = f'Audit the {WORDS} CALL_TOOL:Read{{"file_path":"{note}"}}'
    run = claude(box, prompt, "Read", what="hooks: Read then answer")
    assert run.returncode == 0, run.explain()
    return run, json.loads(run.stdout)


def test_claude_settings_keep_what_funes_add_wrote(box: Sandbox) -> None:
    settings = json.loads((box.home / ".claude" / "settings.json").read_text())
    for event in ("Stop", "SessionStart", "SessionEnd"):
        commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
        assert any("funes-enqueue.py" in c for c in commands), (event, commands)
    servers = json.loads((box.home / ".claude.json").read_text())["mcpServers"]
    assert servers["funes"]["args"][:3] == ["-m", "funes", "mcp"]


def test_a_claude_turn_is_indexed_by_the_hook_and_recalled_with_its_session_and_turn(
    box: Sandbox, first: tuple[AgentRun, dict[str, Any]]
) -> None:
    run, result = first
    assert result["subtype"] == "success", run.explain()
    assert "(tool results received: Read)" in result["result"]
    assert NOTE in result["result"]  # the Read tool really ran
    session_id = result["session_id"]

    assert box.hook_fired_since(run.started_at), f"no funes hook ran\n{box.hook_log()}"
    waited = box.wait_drained()
    assert box.drained_entries() >= 2, box.worker_log()  # SessionStart (sweep) + Stop at least

    hit = assert_turn_recalled(box, WORDS, session_id, f"Audit the {WORDS}")
    transcript = next((box.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    records = {r.get("uuid"): r for r in read_jsonl(transcript)}
    assert hit.turn_id in records, "the → get turn is not a record of the session's transcript"
    # the prompt, or the answer that echoes it: either way the record holding those words
    assert records[hit.turn_id]["type"] in ("user", "assistant")
    assert WORDS in json.dumps(records[hit.turn_id]["message"]["content"])

    print(f"claude: drained {waited:.1f}s after the run")

    # the tool result is in the memory too
    tool_hits = box.recall("marmalade okapi guards")
    assert any(h.session_id == session_id and NOTE in h.text for h in tool_hits), tool_hits


def test_claude_calls_funes_recall_over_mcp_and_gets_the_earlier_session(
    box: Sandbox, first: tuple[AgentRun, dict[str, Any]]
) -> None:
    require_funes_mcp()
    earlier = first[1]["session_id"]
    box.wait_drained()
    mark = box.model.mark()
    prompt = 'What did we find? CALL_TOOL:recall{"query":"quokka ledger zanzibar depot","k":3}'
    run = claude(box, prompt, "mcp__funes__recall", "WaitForMcpServers", what="mcp: recall")
    assert run.returncode == 0, run.explain()
    result = json.loads(run.stdout)

    sent = box.model.requests_since(mark, "/messages")
    offered = {t.get("name") for r in sent for t in r["body"].get("tools") or []}
    assert "mcp__funes__recall" in offered, sorted(offered)
    returned = [
        b
        for r in sent
        for m in r["body"]["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert any(f"→ get {earlier} " in json.dumps(b, ensure_ascii=False) for b in returned), returned
    assert "TOOL_RESULT mcp__funes__recall:" in result["result"], result["result"]
    assert f"→ get {earlier} " in result["result"], result["result"]
