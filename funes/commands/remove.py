"""`funes remove <agent>`: take out exactly what `funes add` put in (never the memory)."""

from __future__ import annotations

from funes.memory import Runtime, bind, load_bindings
from funes.traces import Harness
from funes.wiring import AgentChanges, call, context, run_checks


def run_remove(rt: Runtime, harness: Harness) -> AgentChanges:
    """Take out exactly what `add` put in (and the agent's binding). Never touches the memory,
    a remote it was published to, or any transcript."""
    done = call(harness, "uninstall", context(rt, harness))
    if harness.value in load_bindings(rt.paths):
        bind(rt.paths, harness.value, None)
    result = AgentChanges(
        harness.agent_name, list(done.changed), list(done.warnings), list(done.notes)
    )
    if not any(check.hooks or check.mcp for check in run_checks(rt)):
        hook = rt.paths.installed_hook
        for path in (hook, rt.paths.launcher):  # the hook copy and the launcher
            if path.exists():
                path.unlink()
                result.changed.append(str(path))
        if hook.parent.is_dir() and not any(hook.parent.iterdir()):
            hook.parent.rmdir()
    return result
