"""`funes add <agent>`: wire funes into an agent (hooks, MCP server) through its installer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.memory import Runtime
from funes.traces import Harness

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.wiring import AgentChanges


def run_add(rt: Runtime, harness: Harness, memory: str | None = None) -> AgentChanges:
    """Install funes' hooks and MCP server into an agent. Idempotent. Raises AgentError."""
    from funes.wiring import AgentChanges, call, context, install_hook_script

    result = AgentChanges(harness.agent_name, hook_installed=install_hook_script(rt))
    done = call(harness, "install", context(rt, harness, memory))
    result.changed, result.warnings, result.notes = (
        list(done.changed),
        list(done.warnings),
        list(done.notes),
    )
    return result
