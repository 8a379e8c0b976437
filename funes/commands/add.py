"""`funes add <agent>`: wire funes into an agent (hooks, MCP server) through its installer."""

from __future__ import annotations

import shutil

from funes.errors import AgentError
from funes.memory import Runtime
from funes.traces import AGENTS, Harness
from funes.wiring import AgentChanges, call, context, install_hook_script, launcher


def agent_missing(rt: Runtime, harness: Harness) -> str | None:
    """Why the agent looks absent from this machine (no home folder, no program on PATH), or
    None when it is here."""
    agent = AGENTS[harness]
    home = rt.homes.of(harness)
    if home.is_dir() or shutil.which(agent.name):
        return None
    return f"{agent.label} is not set up on this machine (no {home}, no `{agent.name}` on PATH)"


def run_add(
    rt: Runtime, harness: Harness, memory: str | None = None, *, force: bool = False
) -> AgentChanges:
    """Install funes' hooks and MCP server into an agent. Idempotent.

    Raises AgentError, and (unless `force`) before creating anything when the agent is not
    on this machine (`agent_missing`).
    """
    if not force and (missing := agent_missing(rt, harness)) is not None:
        raise AgentError(
            f"{missing}: nothing was changed",
            hint=f"install {AGENTS[harness].label} and run it once, or `funes add "
            f"{AGENTS[harness].name} --force` to prepare its configuration anyway",
        )
    hook_existed = rt.paths.installed_hook.exists()
    launcher_existed = rt.paths.launcher.exists()
    result = AgentChanges(harness.agent_name, hook_installed=install_hook_script(rt))
    relaunched = launcher.write(rt)  # hooks and the MCP server run this install from now on
    done = call(harness, "install", context(rt, harness, memory))
    result.changed, result.warnings, result.notes = (
        list(done.changed),
        list(done.warnings),
        list(done.notes),
    )
    result.created = list(getattr(done, "created", []))
    for path, written, existed in (
        (rt.paths.launcher, relaunched, launcher_existed),
        (rt.paths.installed_hook, result.hook_installed, hook_existed),
    ):
        if written:
            result.changed.insert(0, str(path))
            if not existed:
                result.created.insert(0, str(path))
    return result
