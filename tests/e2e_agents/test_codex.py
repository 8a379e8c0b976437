"""Codex CLI (the real `codex exec`) with funes added: a turn is indexed through hooks.json
(trust bypassed, as a test may) and through `notify` alone (no trust needed), and the model can
call funes' recall tool over MCP.

`funes add codex --yes` writes `notify` and `[mcp_servers.funes]` into ~/.codex/config.toml and
Stop/SessionStart into ~/.codex/hooks.json. The test merges only the provider bits into
config.toml (model, provider, approval/sandbox, the project's trust), keeping what add wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import tomlkit
from e2e_agents.support.harness import (
    AgentRun,
    Sandbox,
    agent_bin,
    assert_turn_recalled,
    require_funes_mcp,
    sandbox,
)

pytestmark = pytest.mark.agent_e2e

WORDS = "pelican invoice for the kelpwater harbour"
NOTE = "the tangerine narwhal signs every invoice"


def configure(box: Sandbox) -> None:
    """Merge the scripted model's provider into the config.toml `funes add` wrote."""
    path = box.home / ".codex" / "config.toml"
    doc = tomlkit.parse(path.read_text())
    doc["model"] = "fake-model"
    doc["model_provider"] = "fakellm"
    doc["approval_policy"] = "never"
    doc["sandbox_mode"] = "danger-full-access"
    doc["check_for_update_on_startup"] = False
    analytics = tomlkit.table()
    analytics["enabled"] = False
    doc["analytics"] = analytics
    provider = tomlkit.table()
    provider.update(
        {
            "name": "fakellm",
            "base_url": f"{box.model.url}/v1",
            "env_key": "FAKELLM_API_KEY",
            "wire_api": "responses",  # 0.171 speaks only the Responses API
            "request_max_retries": 0,
            "stream_max_retries": 0,
        }
    )
    providers = tomlkit.table(is_super_table=True)
    providers["fakellm"] = provider
    doc["model_providers"] = providers
    project = tomlkit.table()
    project["trust_level"] = "trusted"
    projects = tomlkit.table(is_super_table=True)
    projects[str(box.project)] = project
    doc["projects"] = projects
    path.write_text(tomlkit.dumps(doc))


def codex(box: Sandbox, prompt: str, *, what: str, bypass_hook_trust: bool = True) -> AgentRun:
    env = box.agent_env(FAKELLM_API_KEY="sk-fake-000", RUST_LOG="warn")  # pragma: allowlist secret
    argv = [str(agent_bin("codex")), "exec", "--json", "--skip-git-repo-check"]
    if bypass_hook_trust:  # hooks.json hooks run only once trusted (the TUI's /hooks)
        argv.append("--dangerously-bypass-hook-trust")
    return box.run_agent([*argv, prompt], env, what=what)


def events(run: AgentRun) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def thread_id(run: AgentRun) -> str:
    return next(e["thread_id"] for e in events(run) if e["type"] == "thread.started")


def final_message(run: AgentRun) -> str:
    items = [e["item"] for e in events(run) if e["type"] == "item.completed"]
    return [i["text"] for i in items if i.get("type") == "agent_message"][-1]


def shell_prompt(box: Sandbox) -> str:
    (box.project / "notes.txt").write_text(NOTE + "\n")
    return f'Review the {WORDS} CALL_TOOL:exec_command{{"cmd":"cat notes.txt"}}'


@contextmanager
def new_box(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Sandbox]:
    agent_bin("codex")
    with sandbox("codex", tmp_path_factory.mktemp(name)) as box:
        box.add()
        configure(box)
        yield box


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with new_box(tmp_path_factory, "codex") as box:
        yield box


@pytest.fixture(scope="module")
def first(box: Sandbox) -> AgentRun:
    """One `codex exec` session, hooks trusted: the model runs a shell command, then answers."""
    run = codex(box, shell_prompt(box), what="hooks: exec_command then answer")
    assert run.returncode == 0, run.explain()
    return run


def test_codex_config_keeps_what_funes_add_wrote(box: Sandbox) -> None:
    doc = tomlkit.parse((box.home / ".codex" / "config.toml").read_text()).unwrap()
    assert any("funes-enqueue.py" in part for part in doc["notify"]), doc["notify"]
    assert doc["mcp_servers"]["funes"]["args"][:3] == ["-m", "funes", "mcp"]
    assert doc["model_providers"]["fakellm"]["wire_api"] == "responses"
    hooks = json.loads((box.home / ".codex" / "hooks.json").read_text())["hooks"]
    assert {"Stop", "SessionStart"} <= set(hooks)


def test_a_codex_turn_is_indexed_by_the_hooks_and_recalled_with_its_session_and_turn(
    box: Sandbox, first: AgentRun
) -> None:
    answer = final_message(first)
    assert "(tool results received: exec_command)" in answer, first.explain()
    assert NOTE in answer  # the command really ran
    assert box.hook_fired_since(first.started_at), f"no funes hook ran\n{box.hook_log()}"
    box.wait_drained()
    # SessionStart (sweep) and Stop from hooks.json, agent-turn-complete from notify (notify
    # alone gives one entry: the test below)
    assert box.drained_entries() >= 3, box.worker_log()
    assert_turn_recalled(box, WORDS, thread_id(first), f"Review the {WORDS}")
    tool_hits = box.recall("tangerine narwhal signs")
    assert any(h.session_id == thread_id(first) and NOTE in h.text for h in tool_hits), tool_hits


def test_codex_notify_alone_indexes_a_turn_when_the_hooks_are_not_trusted(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with new_box(tmp_path_factory, "codex-notify") as box:
        run = codex(
            box, shell_prompt(box), what="notify only (hooks untrusted)", bypass_hook_trust=False
        )
        assert run.returncode == 0, run.explain()
        assert box.hook_fired_since(run.started_at), f"notify did not run\n{box.hook_log()}"
        box.wait_drained()
        # one entry: notify's agent-turn-complete (untrusted hooks.json hooks are skipped)
        assert box.drained_entries() == 1, box.worker_log()
        assert_turn_recalled(box, WORDS, thread_id(run), f"Review the {WORDS}")


def test_codex_calls_funes_recall_over_mcp_and_gets_the_earlier_session(
    box: Sandbox, first: AgentRun
) -> None:
    require_funes_mcp()
    earlier = thread_id(first)
    box.wait_drained()
    mark = box.model.mark()
    prompt = 'What did we find? CALL_TOOL:recall{"query":"pelican invoice kelpwater harbour","k":3}'
    run = codex(box, prompt, what="mcp: recall")
    assert run.returncode == 0, run.explain()

    sent = box.model.requests_since(mark, "/responses")
    namespaces = {
        t["name"]: [c.get("name") for c in t.get("tools", [])]
        for r in sent
        for t in r["body"].get("tools") or []
        if t.get("type") == "namespace"
    }
    assert "recall" in namespaces.get("mcp__funes", []), namespaces
    outputs = [
        i
        for r in sent
        for i in r["body"].get("input") or []
        if i.get("type") == "function_call_output"
    ]
    assert any(f"→ get {earlier} " in json.dumps(o, ensure_ascii=False) for o in outputs), outputs
    answer = final_message(run)
    assert "TOOL_RESULT mcp__funes::recall:" in answer, answer
    assert f"→ get {earlier} " in answer, answer
    calls = [e["item"] for e in events(run) if e.get("item", {}).get("type") == "mcp_tool_call"]
    assert calls and calls[-1]["server"] == "funes" and calls[-1]["tool"] == "recall", calls
