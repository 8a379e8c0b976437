"""`funes remove <agent>`: take out exactly what `funes add` put in (never the memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.memory import Runtime
from funes.traces import Harness

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.wiring import AgentChanges


def run_remove(rt: Runtime, harness: Harness) -> AgentChanges:
    """Take out exactly what `add` put in. Never touches the memory or any transcript."""
    from funes.wiring import AgentChanges, call, context, remove_hook_script, run_checks

    done = call(harness, "uninstall", context(rt, harness))
    result = AgentChanges(
        harness.agent_name, list(done.changed), list(done.warnings), list(done.notes)
    )
    if not any(check.hooks for check in run_checks(rt)):
        result.changed.extend(remove_hook_script(rt))
    return result
