"""Memory that follows you, with the real Claude Code on two simulated machines.

Host A and host B are two sandboxes (HOME with Claude's config, FUNES_HOME, HF cache and
token), both bound by `funes add claude team/agent-memory` to one dataset on the Hub stand-in
(tests/hubfake, on loopback; the token sits in each HOME's HF cache, as `hf auth login` leaves
it). Host A's Claude Code session ends: its hooks index the turn, and the worker they start
publishes it. Host B's Claude Code, asked by the scripted model to call funes' `recall` tool,
gets A's turn back through the MCP server `funes add` registered, bound to the dataset.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from e2e_agents.support.harness import (
    AgentRun,
    Sandbox,
    agent_bin,
    require_funes_mcp,
    sandbox,
)
from hubfake import HubFake
from support.hub import TOKENS, WRITE

pytestmark = [pytest.mark.agent_e2e, pytest.mark.hub]

REPO = "team/agent-memory"
LABEL = f"hf://datasets/{REPO}"
WORDS = "pangolin ledger for the quokka warehouse"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubFake]:
    with HubFake(tmp_path_factory.mktemp("hub"), TOKENS) as fake:
        yield fake


def machine(
    name: str, hub: HubFake, tmp_path_factory: pytest.TempPathFactory
) -> AbstractContextManager[Sandbox]:
    """One simulated machine reaching the Hub stand-in (entered by the caller)."""
    return sandbox(
        "claude",
        tmp_path_factory.mktemp(name),
        env={
            "HF_HUB_OFFLINE": None,  # this machine reaches the Hub (the stand-in)
            "HF_ENDPOINT": hub.url,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "FUNES_REMOTE_TTL_S": "0",
            "FUNES_PUSH_RETRY_S": "1,2",
        },
    )


def logged_in(box: Sandbox) -> None:
    """What `hf auth login` leaves: the token in the HOME's HF cache (never in an env var the
    agent's configuration would need)."""
    token = box.home / ".cache" / "huggingface" / "token"
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text(WRITE)


def claude(box: Sandbox, prompt: str, *tools: str, what: str) -> AgentRun:
    env = box.agent_env(
        ANTHROPIC_BASE_URL=box.model.url,
        ANTHROPIC_API_KEY="sk-ant-fake-000",  # pragma: allowlist secret
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        MCP_TIMEOUT="180000",
        ENABLE_TOOL_SEARCH="false",
    )
    argv = [str(agent_bin("claude")), "-p", prompt, "--output-format", "json"]
    if tools:
        argv += ["--allowedTools", *tools]
    return box.run_agent(argv, env, what=what)


def published_sessions(hub: HubFake, tmp_path: Path) -> set[str]:
    import lance

    head = hub.state.head("dataset", REPO)
    if head is None or not any(
        p.startswith("chunks.lance/") for p in hub.state.files("dataset", REPO, head)
    ):
        return set()
    tree = hub.checkout(REPO, tmp_path / f"checkout-{time.monotonic_ns()}")
    table = lance.dataset(str(tree / "chunks.lance")).to_table(columns=["session_id"])
    return set(table.column("session_id").to_pylist())


def test_a_session_ending_on_host_a_is_recalled_by_host_bs_claude_through_mcp(
    hub: HubFake, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    agent_bin("claude")
    require_funes_mcp()
    with machine("a", hub, tmp_path_factory) as a, machine("b", hub, tmp_path_factory) as b:
        for box in (a, b):
            logged_in(box)
            (box.home / ".claude").mkdir(parents=True, exist_ok=True)  # as its first run would
        made = a.funes("add", "claude", REPO, "--create", "--yes")
        assert f"bound to {LABEL}" in made.stderr, made.stderr
        servers = json.loads((a.home / ".claude.json").read_text())["mcpServers"]
        assert servers["funes"]["args"][-2:] == ["mcp", LABEL]

        run = claude(a, f"Audit the {WORDS}", what="host A: a session that ends")
        assert run.returncode == 0, run.explain()
        session_id = json.loads(run.stdout)["session_id"]
        a.wait_drained()  # the hook's worker indexed the turns, then published them
        requests = sum(int(n) for n in re.findall(r" publish-requests=(\d+)", a.worker_log()))
        assert requests == 2, a.worker_log()  # SessionStart (catch-up) and SessionEnd
        published = published_sessions(hub, tmp_path)
        assert session_id in published, (
            f"host A's session was not published at its end\nworker.log:\n{a.worker_log()}"
        )
        status = a.funes("status", "--format", "agent").stdout
        line = next(ln for ln in status.splitlines() if ln.startswith("binding claude_code:"))
        assert f"{LABEL}; last push " in line and "; 0 chunks in 0 sessions not pushed" in line

        joined = b.funes("add", "claude", REPO, "--yes")  # host B joins the same memory
        assert f"bound to {LABEL}" in joined.stderr, joined.stderr
        mark = b.model.mark()
        query = json.dumps({"query": WORDS, "k": 3})
        run = claude(
            b,
            f"What did we find about the warehouse? CALL_TOOL:recall{query}",
            "mcp__funes__recall",
            "WaitForMcpServers",
            what="host B: recall over MCP",
        )
        assert run.returncode == 0, run.explain()
        sent = b.model.requests_since(mark, "/messages")
        returned = [
            json.dumps(block, ensure_ascii=False)
            for r in sent
            for m in r["body"]["messages"]
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        assert any(
            f"→ get {session_id} " in text and f"--memory {LABEL}" in text for text in returned
        ), returned
        assert any(WORDS in text for text in returned), returned
