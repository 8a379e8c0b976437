"""One agent = one record: what must agree with `funes.traces.AGENTS` is checked against it.

The hook script and the MCP tool list stay free of funes imports (start-up time), and the
installers are loaded from outside the package, so each keeps its own copy of what it needs;
these tests fail when a copy drifts from the record.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from funes.mcp_server import tool_list
from funes.traces import AGENTS, AgentHomes, Harness, installable
from funes.wiring import installer

REPO = Path(__file__).resolve().parents[2]


def _hook_constant(name: str) -> object:
    tree = ast.parse((REPO / "hooks" / "funes_hook.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"hooks/funes_hook.py has no {name}")


def test_every_agent_has_a_record_and_every_record_a_harness() -> None:
    assert set(AGENTS) == set(Harness)
    assert all(agent.harness is harness for harness, agent in AGENTS.items())
    names = [agent.name for agent in AGENTS.values()]
    assert len(set(names)) == len(names)


def test_the_hook_script_knows_every_installable_agent_and_home_variable() -> None:
    aliases = _hook_constant("AGENTS")
    assert isinstance(aliases, dict)
    for agent in installable():
        assert aliases[agent.name] == agent.harness.value
        assert aliases[agent.harness.value] == agent.harness.value
    assert set(aliases.values()) == {agent.harness.value for agent in installable()}
    home_vars = {agent.home_var for agent in AGENTS.values() if agent.home_var}
    assert set(_hook_constant("ENV_KEYS")) == home_vars  # type: ignore[arg-type]


@pytest.mark.parametrize("harness", [a.harness for a in installable()], ids=lambda h: h.value)
def test_each_installer_registers_the_hook_events_of_its_record(harness: Harness) -> None:
    agent = AGENTS[harness]
    module = installer(harness)
    assert harness.value == module.AGENT
    if harness is Harness.PI:  # the events live in the TypeScript extension it writes
        for event, sweep in agent.hook_events.items():
            call = f'pi.on("{event}", async (_event: any, ctx: any) => enqueue("{event}", ctx'
            assert call + (', ["--sweep"]));' if sweep else "));") in module.TEMPLATE
        return
    events = dict(getattr(module, "EVENTS", None) or module.HOOK_EVENTS)
    if harness is Harness.CODEX:
        events[module.NOTIFY_EVENT] = False
    assert events == dict(agent.hook_events)


@pytest.mark.parametrize("agent", installable(), ids=lambda a: a.name)
def test_each_session_boundary_that_publishes_is_an_event_the_installer_hooks(agent) -> None:  # type: ignore[no-untyped-def]
    """A bound memory is published after these events: each must reach the spool, and each
    agent has one (Claude Code SessionEnd, Codex SessionStart, pi session_shutdown, Hermes
    on_session_finalize, as issue 18 names them)."""
    assert agent.publish_events
    assert set(agent.publish_events) <= set(agent.hook_events)
    ends = {"claude": "SessionEnd", "codex": "SessionStart", "pi": "session_shutdown"}
    assert ends.get(agent.name, "on_session_finalize") in agent.publish_events


def test_the_mcp_harness_filter_offers_exactly_the_installable_agents() -> None:
    [recall] = [t for t in tool_list() if t["name"] == "recall"]
    enum = recall["inputSchema"]["properties"]["harness"]["enum"]
    assert enum == [agent.name for agent in installable()]


def test_agent_homes_follow_each_records_override_variable_and_default(tmp_path: Path) -> None:
    defaults = AgentHomes.resolve({"HOME": str(tmp_path)})
    overridden = AgentHomes.resolve(
        {"HOME": str(tmp_path)}
        | {a.home_var: str(tmp_path / a.name) for a in AGENTS.values() if a.home_var}
    )
    for agent in installable():
        assert defaults.of(agent.harness) == tmp_path.joinpath(*agent.home_default)
        assert overridden.of(agent.harness) == tmp_path / agent.name
    roots = defaults.session_roots()
    assert roots[Harness.CODEX] == [
        tmp_path / ".codex" / "sessions",
        tmp_path / ".codex" / "archived_sessions",
    ]
    assert roots[Harness.HERMES] == [tmp_path / ".hermes"]
    assert Harness.PARQUET not in roots
