"""`funes remove <agent>`: take out exactly what `funes add` put in (never the memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.memory import Runtime, bind, load_bindings
from funes.traces import Harness

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.wiring import AgentChanges


def run_remove(rt: Runtime, harness: Harness) -> AgentChanges:
    """Take out exactly what `add` put in (and the agent's binding). Never touches the memory,
    a remote it was published to, or any transcript."""
    from funes.wiring import AgentChanges, call, context, remove_hook_script, run_checks

    done = call(harness, "uninstall", context(rt, harness))
    if harness.value in load_bindings(rt.paths):
        bind(rt.paths, harness.value, None)
    result = AgentChanges(
        harness.agent_name, list(done.changed), list(done.warnings), list(done.notes)
    )
    if not any(check.hooks or check.mcp for check in run_checks(rt)):
        # the launcher first: the hook folder goes with the hook when nothing else is in it
        launcher = rt.paths.launcher
        if launcher.exists():
            launcher.unlink()
            result.changed.append(str(launcher))
        result.changed.extend(remove_hook_script(rt))
    return result
